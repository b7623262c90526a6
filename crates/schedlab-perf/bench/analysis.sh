#!/usr/bin/env bash
# `schedlab analyze` end to end against `perf sched timehist -s` and against DuckDB's SQL, on the
# bench trace imported as a run, and each stage's peak RSS against the trace's size.
#
# The trace (SCHEDLAB_BENCH_TRACE, recorded as bench.sh records it when missing) is imported into
# a temporary data directory with a pipeline that asks for every aggregate step of the seed
# pipelines, over workload `stress` (comm:stress-ng*). Then, RUNS times in alternation:
# `perf sched timehist -s` (its summary, to /dev/null) and `schedlab analyze` from an empty
# tables/aggregates/report (parse, aggregate, summarize), each pair giving a wall-time ratio.
# After that, each stage alone (`schedlab run --only STAGE`, best of RUNS) for its time and peak
# RSS, and DuckDB (the notebooks' Python environment, .venv) computing residency and the
# scheduling delay per workload thread and CPU from the same sched_slices partition. DuckDB's two
# queries are set against the aggregate stage asked for those two steps only (the same pipeline
# with its other steps taken out), since the full stage also lays every slice on the timeline.
# The floors it reports: analyze faster than perf in every pair, the aggregate stage within 3x of
# DuckDB for the same figures, every stage under a quarter of the trace; and the moonshot,
# analyze within 2x of the parse stage alone.
set -euo pipefail

cd "$(dirname "$0")/../../.."
TRACE=${SCHEDLAB_BENCH_TRACE:-/tmp/schedlab-bench.data}
RUNS=${RUNS:-5}
PYTHON=${PYTHON:-.venv/bin/python}
SCHEDLAB=target/release/schedlab

. crates/schedlab-perf/bench/trace.sh
"$PYTHON" -c 'import duckdb' 2>/dev/null || {
    echo "$PYTHON cannot import duckdb (just python-env installs it)" >&2
    exit 1
}
cargo build --release -q -p schedlab
size=$(stat -c %s "$TRACE")
cat "$TRACE" >/dev/null # warm the page cache

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
DATA="$WORK/data"
PIPELINE="$WORK/bench-analysis.yaml"
cat >"$PIPELINE" <<'YAML'
name: bench-analysis
import:
  workloads:
    stress: "comm:stress-ng*"
aggregate:
  - residency: {}
  - migrations: {}
  - sched_delay: {}
  - cpu_time: {}
  - throughput: {}
  - cpu_activity: {}
  - cpu_share: { workload: stress }
  - power_step: {}
  - cpu_timeline: {}
  - placement_cost: {}
  - wakeup_placement: {}
summarize:
  report: [markdown, html]
  plots: [cpu_timeline, residency]
YAML
"$SCHEDLAB" import "$PIPELINE" "$TRACE" --data "$DATA" >/dev/null 2>&1
ROOT="$DATA/bench-analysis"
RUN=$(ls "$ROOT/runs")
TIMES="$WORK/times"

# Wall seconds and peak RSS in KiB of one command.
measure() {
    /usr/bin/time -o "$TIMES" -f "%e %M" "$@" >/dev/null 2>&1
    cat "$TIMES"
}

# "min median max" of the numbers given.
spread() {
    printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END{
        printf "%s %s %s\n", v[1], (NR%2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2, v[NR]}'
}

# The best of RUNS runs of stage $2 of pipeline $1 alone, and its largest peak RSS.
stage() {
    local best="" rss=0 s kb
    for _ in $(seq "$RUNS"); do
        read -r s kb < <(measure "$SCHEDLAB" run "$1" --data "$DATA" --only "$2")
        if [ -z "$best" ] || awk "BEGIN{exit !($s < $best)}"; then best=$s; fi
        if [ "$kb" -gt "$rss" ]; then rss=$kb; fi
    done
    echo "$best $rss"
}

ratios=()
perf_best="" analyze_best="" analyze_kb=0
for _ in $(seq "$RUNS"); do
    read -r p _ < <(measure perf sched timehist -s -i "$TRACE")
    rm -rf "$ROOT/tables" "$ROOT/aggregates" "$ROOT/report" "$ROOT/state"
    sync
    read -r a kb < <(measure "$SCHEDLAB" analyze "$PIPELINE" --data "$DATA")
    ratios+=("$(awk "BEGIN{print $p / $a}")")
    if [ -z "$perf_best" ] || awk "BEGIN{exit !($p < $perf_best)}"; then perf_best=$p; fi
    if [ -z "$analyze_best" ] || awk "BEGIN{exit !($a < $analyze_best)}"; then analyze_best=$a; fi
    if [ "$kb" -gt "$analyze_kb" ]; then analyze_kb=$kb; fi
done
read -r rmin rmed rmax < <(spread "${ratios[@]}")
faster=$(printf '%s\n' "${ratios[@]}" | awk '$1 > 1 {n++} END {print n + 0}')
read -r parse_s parse_kb < <(stage "$PIPELINE" parse)
read -r aggregate_s aggregate_kb < <(stage "$PIPELINE" aggregate)
read -r summarize_s summarize_kb < <(stage "$PIPELINE" summarize)
# The same pipeline (same name, so the same tables) asking for DuckDB's two figures only; it
# rewrites the aggregates with those two tables, which the SQL side then checks against.
SQL_FIGURES="$WORK/bench-sql-figures.yaml"
awk '/^aggregate:/ {print; print "  - residency: {}"; print "  - sched_delay: {}"; skip=1; next}
     skip && /^  - / {next} {skip=0; print}' "$PIPELINE" >"$SQL_FIGURES"
read -r same_s same_kb < <(stage "$SQL_FIGURES" aggregate)
read -r sql_s agree threads < <("$PYTHON" crates/schedlab-perf/bench/analysis_sql.py \
    "$ROOT/tables" "$ROOT/aggregates" "$RUN" "$RUNS")
slices=$("$PYTHON" -c "import duckdb; print(duckdb.connect().execute(\"SELECT count(*) FROM read_parquet('$ROOT/tables/sched_slices/*/*.parquet')\").fetchone()[0])")

echo "analysis of the bench trace: $((size / 1048576)) MiB, $slices slices, run $RUN; load $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v size="$size" -v runs="$RUNS" -v ps="$perf_best" -v as="$analyze_best" -v ak="$analyze_kb" \
    -v r="$rmin $rmed $rmax" -v faster="$faster" \
    -v gs="$parse_s" -v gk="$parse_kb" -v ws="$aggregate_s" -v wk="$aggregate_kb" \
    -v ss="$summarize_s" -v sk="$summarize_kb" -v qs="$sql_s" -v agree="$agree" -v threads="$threads" \
    -v ms="$same_s" -v mk="$same_kb" 'BEGIN {
    printf "%-34s %7s %8s %9s\n", "", "wall s", "RSS MiB", "RSS/trace"
    row("perf sched timehist -s", ps, 0)
    row("schedlab analyze, end to end", as, ak)
    row("  parse stage alone", gs, gk)
    row("  aggregate stage alone", ws, wk)
    row("  summarize stage alone", ss, sk)
    row("aggregate: residency, sched_delay", ms, mk)
    row("DuckDB SQL: residency, sched_delay", qs, 0)
    split(r, a)
    printf "%d alternating pairs, perf sched timehist -s / schedlab analyze: %.2fx %.2fx %.2fx (min median max)\n", runs, a[1], a[2], a[3]
    printf "floor, analyze faster than perf in every pair: %d of %d pairs\n", faster, runs
    printf "floor, aggregate stage / DuckDB SQL, the same two figures: %.1fx (within 3x; every step: %.1fx); DuckDB agrees with sched_delay on %d of %d threads (wakeups, max)\n", ms / qs, ws / qs, agree, threads
    printf "floor, peak RSS under a quarter of the trace: parse %.3f, aggregate %.3f, summarize %.3f, analyze %.3f\n", gk * 1024 / size, wk * 1024 / size, sk * 1024 / size, ak * 1024 / size
    printf "moonshot, analyze / parse stage: %.2fx (within 2x)\n", as / gs
}
function row(name, s, k) {
    if (k > 0) printf "%-34s %7.2f %8.0f %9.3f\n", name, s, k / 1024, k * 1024 / size
    else printf "%-34s %7.2f %8s %9s\n", name, s, "", ""
}'
