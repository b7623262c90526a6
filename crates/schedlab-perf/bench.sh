#!/usr/bin/env bash
# Wall time and peak memory of schedlab-perf against `perf sched timehist` on one big trace.
#
# Records a >= 300 MB trace into /tmp (never committed) unless SCHEDLAB_BENCH_TRACE names an
# existing one, builds the read_sched example in release mode, then runs each side RUNS times
# with a warm page cache and reports the fastest wall time and the largest peak RSS of each.
# perf and `schedlab parse` run in alternation, so that a noisy neighbour slows both alike, and
# the median of the per-pair ratios is reported beside the ratio of the best times.
# perf's side is the full listing (`perf sched timehist`, output to /dev/null); ours streams the
# reader's compact batches (`read_sched FILE --compact`: the reader alone), its rows
# (`read_sched FILE`) and, for comparison, collects them all in memory (`--collect`).
# The last rows are the whole command, `schedlab parse perf-sched FILE… --out DIR`, which also
# encodes the tables and writes them as Parquet: on the trace, and on two copies of it (files
# parse in parallel; the ratios of that row are per file, against perf on one).
set -euo pipefail

cd "$(dirname "$0")/../.."
TRACE=${SCHEDLAB_BENCH_TRACE:-/tmp/schedlab-bench.data}
RUNS=${RUNS:-11}

command -v /usr/bin/time >/dev/null || apt-get install -y time >/dev/null
command -v stress-ng >/dev/null || apt-get install -y stress-ng >/dev/null
if [ ! -s "$TRACE" ]; then
    mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
    echo "recording $TRACE ..."
    perf sched record -a -k CLOCK_MONOTONIC -o "$TRACE" -- stress-ng --switch 2 --timeout 4s \
        >/dev/null 2>&1
fi
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

# perf and the whole command in alternation: best of each, largest RSS, and the median of the
# RUNS per-pair wall-time ratios.
pairs() {
    local ratios=() p c
    local perf_best="" perf_cpu="" perf_rss=0 cli_best="" cli_cpu="" cli_rss=0
    for _ in $(seq "$RUNS"); do
        read -r p < <(RUNS=1 measure perf sched timehist -i "$TRACE")
        read -r c < <(RUNS=1 measure "$SCHEDLAB" parse perf-sched "$TRACE" --out "$OUT")
        set -- $p $c
        ratios+=("$(awk "BEGIN{print $1 / $4}")")
        if [ -z "$perf_best" ] || awk "BEGIN{exit !($1 < $perf_best)}"; then perf_best=$1 perf_cpu=$2; fi
        if [ -z "$cli_best" ] || awk "BEGIN{exit !($4 < $cli_best)}"; then cli_best=$4 cli_cpu=$5; fi
        if [ "$3" -gt "$perf_rss" ]; then perf_rss=$3; fi
        if [ "$6" -gt "$cli_rss" ]; then cli_rss=$6; fi
    done
    local median
    median=$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}')
    echo "$perf_best $perf_cpu $perf_rss $cli_best $cli_cpu $cli_rss $median"
}

read -r perf_s perf_c perf_kb cli_s cli_c cli_kb pair_ratio < <(pairs)
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
    -v ps="$perf_s" -v pc="$perf_c" -v pk="$perf_kb" \
    -v ms="$comp_s" -v mc="$comp_c" -v mk="$comp_kb" \
    -v os="$ours_s" -v oc="$ours_c" -v ok="$ours_kb" \
    -v cs="$coll_s" -v cc="$coll_c" -v ck="$coll_kb" \
    -v ls="$cli_s" -v lc="$cli_c" -v lk="$cli_kb" \
    -v ts="$two_s" -v tc="$two_c" -v tk="$two_kb" -v pr="$pair_ratio" 'BEGIN {
    printf "trace: %.0f MiB; best of %d runs, page cache warm, %d CPUs\n", size / 1048576, runs, nproc
    printf "%-36s %7s %9s %6s %9s %6s %8s\n", "", "wall s", "speed-up", "cpu s", "cpu gain", "RSS MiB", "RSS/file"
    row("perf sched timehist (full listing)", ps, pc, pk)
    row("schedlab-perf, compact batches", ms, mc, mk)
    row("schedlab-perf, streamed rows", os, oc, ok)
    row("schedlab-perf, all rows in memory", cs, cc, ck)
    row("schedlab parse perf-sched (Parquet)", ls, lc, lk)
    row("same, two files, per file", ts / 2, tc / 2, tk / 2)
    printf "median of %d alternating perf / schedlab parse pairs: %.1fx\n", runs, pr
}
function row(name, s, c, k) {
    printf "%-36s %7.2f %8.1fx %6.2f %8.1fx %6.0f %8.2f\n", name, s, ps / s, c, pc / c, k / 1024, k * 1024 / size
}'
