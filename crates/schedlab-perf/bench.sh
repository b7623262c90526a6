#!/usr/bin/env bash
# Wall time and peak memory of schedlab-perf against `perf sched timehist` on one big trace.
#
# Records a >= 300 MB trace into /tmp (never committed) unless SCHEDLAB_BENCH_TRACE names an
# existing one, builds the read_sched example in release mode, then runs each side RUNS times
# with a warm page cache and reports the fastest wall time and the largest peak RSS of each.
# perf and `schedlab parse` run in alternation, so that a noisy neighbour slows both alike, and
# the min, median and max of the per-pair ratios are reported beside the ratio of the best times.
# perf's side is `perf sched timehist -M -V` (migrations and the CPU visualisation; the speed
# goal is stated against it) and the plain listing, output to /dev/null; ours streams the
# reader's compact batches (`read_sched FILE --compact`: the reader alone), its rows
# (`read_sched FILE`) and, for comparison, collects them all in memory (`--collect`).
# The last rows are the whole command, `schedlab parse perf-sched FILE… --out DIR`, which also
# encodes the tables and writes them as Parquet: on the trace, and on two copies of it (files
# parse in parallel; the ratios of that row are per file, against perf on one).
# PAIRS_ONLY=1 runs the alternating pairs alone (quicker, while iterating).
set -euo pipefail

cd "$(dirname "$0")/../.."
TRACE=${SCHEDLAB_BENCH_TRACE:-/tmp/schedlab-bench.data}
RUNS=${RUNS:-11}

. crates/schedlab-perf/bench/trace.sh
size=$(stat -c %s "$TRACE")
[ "$size" -ge 300000000 ] || echo "note: the trace has only $size bytes (< 300 MB)"

cargo build --release -q -p schedlab-perf --example read_sched
cargo build --release -q -p schedlab
READER=target/release/examples/read_sched
SCHEDLAB=target/release/schedlab
cat "$TRACE" >/dev/null # warm the page cache

TIMES=$(mktemp)
OUT=$(mktemp -d)
trap 'rm -rf "$TIMES" "$OUT"' EXIT

# best WALL_S, its CPU_S (user + system) and the largest MAX_RSS_KB, over $RUNS runs. CPU time
# is reported too because on a shared machine wall time also measures the neighbours.
measure() {
    local best="" cpu="" rss=0 wall user sys kb
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -o "$TIMES" -f "%e %U %S %M" "$@" >/dev/null 2>&1
        read -r wall user sys kb <"$TIMES"
        if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then
            best=$wall
            cpu=$(awk "BEGIN{print $user + $sys}")
        fi
        if [ "$kb" -gt "$rss" ]; then rss=$kb; fi
    done
    echo "$best $cpu $rss"
}

# The three in alternation, `perf sched timehist -M -V` (the listing with migrations and the CPU
# visualisation, what the speed goal is stated against), plain `perf sched timehist` and the
# whole command, so that a noisy neighbour slows all alike: best of each, largest RSS, and the
# RUNS per-pair wall-time ratios of each perf against schedlab parse (min, median and max: the
# goal holds for every pair, so the min matters).
pairs() {
    local mv=() plain=() m p c
    local mv_best="" mv_cpu="" mv_rss=0 perf_best="" perf_cpu="" perf_rss=0 cli_best="" cli_cpu="" cli_rss=0
    for _ in $(seq "$RUNS"); do
        read -r m < <(RUNS=1 measure perf sched timehist -M -V -i "$TRACE")
        read -r p < <(RUNS=1 measure perf sched timehist -i "$TRACE")
        # Into an empty directory, as a new run's partition is written: replacing last pair's
        # files would time ext4's writeback of a file renamed over another and the unlink of
        # the old one (about 10 ms, 3 % of the wall time), which perf's /dev/null never pays.
        rm -rf "$OUT/tables"
        sync
        read -r c < <(RUNS=1 measure "$SCHEDLAB" parse perf-sched "$TRACE" --out "$OUT/tables")
        set -- $m $p $c
        mv+=("$(awk "BEGIN{print $1 / $7}")")
        plain+=("$(awk "BEGIN{print $4 / $7}")")
        if [ -z "$mv_best" ] || awk "BEGIN{exit !($1 < $mv_best)}"; then mv_best=$1 mv_cpu=$2; fi
        if [ -z "$perf_best" ] || awk "BEGIN{exit !($4 < $perf_best)}"; then perf_best=$4 perf_cpu=$5; fi
        if [ -z "$cli_best" ] || awk "BEGIN{exit !($7 < $cli_best)}"; then cli_best=$7 cli_cpu=$8; fi
        if [ "$3" -gt "$mv_rss" ]; then mv_rss=$3; fi
        if [ "$6" -gt "$perf_rss" ]; then perf_rss=$6; fi
        if [ "$9" -gt "$cli_rss" ]; then cli_rss=$9; fi
    done
    echo "$mv_best $mv_cpu $mv_rss $perf_best $perf_cpu $perf_rss $cli_best $cli_cpu $cli_rss" \
        "$(spread "${mv[@]}") $(spread "${plain[@]}") $(at_least 5 "${mv[@]}")"
}

# How many of the numbers after the first are at least the first (the pairs that meet the 5x
# floor).
at_least() {
    local floor=$1
    shift
    printf '%s\n' "$@" | awk -v floor="$floor" '$1 >= floor {n++} END {print n + 0}'
}

# "min median max" of the numbers given.
spread() {
    printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END{
        printf "%s %s %s", v[1], (NR%2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2, v[NR]}'
}

read -r mv_s mv_c mv_kb perf_s perf_c perf_kb cli_s cli_c cli_kb mv_min mv_med mv_max \
    plain_min plain_med plain_max floor_pairs < <(pairs)
if [ -n "${PAIRS_ONLY:-}" ]; then
    awk -v runs="$RUNS" -v mv="$mv_min $mv_med $mv_max" -v plain="$plain_min $plain_med $plain_max" \
        -v lk="$cli_kb" -v size="$size" -v ls="$cli_s" -v floor="$floor_pairs" 'BEGIN {
        printf "%d pairs, perf / schedlab parse (best %.2f s), min median max: -M -V %s; plain %s\n", runs, ls, mv, plain
        printf "5x floor against -M -V met in %d of %d pairs\n", floor, runs
        printf "peak RSS %.0f MiB, %.3f of the trace\n", lk / 1024, lk * 1024 / size }'
    exit 0
fi
read -r comp_s comp_c comp_kb < <(measure "$READER" "$TRACE" --compact)
read -r ours_s ours_c ours_kb < <(measure "$READER" "$TRACE")
read -r coll_s coll_c coll_kb < <(measure "$READER" "$TRACE" --collect)
SECOND="$OUT/second-copy.data"
cp "$TRACE" "$SECOND"
read -r two_s two_c two_kb < <(measure "$SCHEDLAB" parse perf-sched "$TRACE" "$SECOND" --out "$OUT/two")
rm -rf "$SECOND" "$OUT/two"

"$READER" "$TRACE" | sed 's/^/  /'
echo "Parquet tables written by schedlab parse: $(du -sm "$OUT" | cut -f1) MiB"
echo "load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v size="$size" -v runs="$RUNS" -v nproc="$(nproc)" \
    -v ps="$mv_s" -v pc="$mv_c" -v pk="$mv_kb" \
    -v qs="$perf_s" -v qc="$perf_c" -v qk="$perf_kb" \
    -v ms="$comp_s" -v mc="$comp_c" -v mk="$comp_kb" \
    -v os="$ours_s" -v oc="$ours_c" -v ok="$ours_kb" \
    -v cs="$coll_s" -v cc="$coll_c" -v ck="$coll_kb" \
    -v ls="$cli_s" -v lc="$cli_c" -v lk="$cli_kb" \
    -v ts="$two_s" -v tc="$two_c" -v tk="$two_kb" \
    -v mv="$mv_min $mv_med $mv_max" -v plain="$plain_min $plain_med $plain_max" \
    -v floor="$floor_pairs" 'BEGIN {
    printf "trace: %.0f MiB; best of %d runs, page cache warm, %d CPUs\n", size / 1048576, runs, nproc
    printf "%-36s %7s %9s %6s %9s %6s %8s\n", "", "wall s", "speed-up", "cpu s", "cpu gain", "RSS MiB", "RSS/file"
    row("perf sched timehist -M -V", ps, pc, pk)
    row("perf sched timehist", qs, qc, qk)
    row("schedlab-perf, compact batches", ms, mc, mk)
    row("schedlab-perf, streamed rows", os, oc, ok)
    row("schedlab-perf, all rows in memory", cs, cc, ck)
    row("schedlab parse perf-sched (Parquet)", ls, lc, lk)
    row("same, two files, per file", ts / 2, tc / 2, tk / 2)
    split(mv, a); split(plain, b)
    printf "%d alternating pairs, perf wall / schedlab parse wall, min median max:\n", runs
    printf "  perf sched timehist -M -V: %.2fx %.2fx %.2fx\n", a[1], a[2], a[3]
    printf "  perf sched timehist:       %.2fx %.2fx %.2fx\n", b[1], b[2], b[3]
    printf "5x floor against -M -V met in %d of %d pairs\n", floor, runs
    printf "peak RSS of schedlab parse: %.0f MiB, %.3f of the trace (%.0f MiB)\n", lk / 1024, lk * 1024 / size, size / 1048576
}
function row(name, s, c, k) {
    printf "%-36s %7.2f %8.1fx %6.2f %8.1fx %6.0f %8.2f\n", name, s, ps / s, c, pc / c, k / 1024, k * 1024 / size
}'

# The same workload recorded with compressed records (`perf sched record -z`), which schedlab
# decompresses into a temporary file before reading: perf against schedlab parse on that file, in
# alternating pairs. The 5x floor is stated for uncompressed traces; this row shows what -z costs.
ZTRACE=${SCHEDLAB_BENCH_ZTRACE:-/tmp/schedlab-bench-z.data}
if [ ! -s "$ZTRACE" ]; then
    echo "recording $ZTRACE ..."
    perf sched record -z -a -k CLOCK_MONOTONIC -o "$ZTRACE" -- stress-ng --switch 2 --timeout 4s \
        >/dev/null 2>&1
fi
cat "$ZTRACE" >/dev/null
zpairs=()
for _ in $(seq "${ZRUNS:-5}"); do
    read -r zp < <(RUNS=1 measure perf sched timehist -M -V -i "$ZTRACE")
    rm -rf "$OUT/ztables"
    read -r zs < <(RUNS=1 measure "$SCHEDLAB" parse perf-sched "$ZTRACE" --out "$OUT/ztables")
    zpairs+=("$(awk "BEGIN{print $zp / $zs}")")
done
zsize=$(stat -c %s "$ZTRACE")
read -r zmin zmed zmax < <(spread "${zpairs[@]}")
printf 'compressed trace (-z): %.0f MiB; %d pairs, perf sched timehist -M -V / schedlab parse: %.2fx %.2fx %.2fx\n' \
    "$(awk "BEGIN{print $zsize / 1048576}")" "${#zpairs[@]}" "$zmin" "$zmed" "$zmax"

# What a user waits for after the parse: `schedlab analyze` of the same trace, against
# `perf sched timehist -s` and DuckDB's SQL, and each stage's peak RSS.
SCHEDLAB_BENCH_TRACE="$TRACE" crates/schedlab-perf/bench/analysis.sh
