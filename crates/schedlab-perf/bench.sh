#!/usr/bin/env bash
# Wall time and peak memory of schedlab-perf against `perf sched timehist` on one big trace.
#
# Records a >= 300 MB trace into /tmp (never committed) unless SCHEDLAB_BENCH_TRACE names an
# existing one, builds the read_sched example in release mode, then runs each side RUNS times
# with a warm page cache and reports the fastest wall time and the largest peak RSS of each.
# perf's side is the full listing (`perf sched timehist`, output to /dev/null); ours streams
# the tables (`read_sched FILE`) and, for comparison, collects them all in memory (`--collect`).
set -euo pipefail

cd "$(dirname "$0")/../.."
TRACE=${SCHEDLAB_BENCH_TRACE:-/tmp/schedlab-bench.data}
RUNS=${RUNS:-5}

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
READER=target/release/examples/read_sched
cat "$TRACE" >/dev/null # warm the page cache

# best WALL_S MAX_RSS_KB for a command, over $RUNS runs
measure() {
    local best="" rss=0 out wall kb
    for _ in $(seq "$RUNS"); do
        out=$( { /usr/bin/time -f "%e %M" "$@" >/dev/null 2>/dev/null; } 2>&1 | tail -1)
        read -r wall kb <<<"$out"
        if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then best=$wall; fi
        [ "$kb" -gt "$rss" ] && rss=$kb
    done
    echo "$best $rss"
}

read -r perf_s perf_kb < <(measure perf sched timehist -i "$TRACE")
read -r ours_s ours_kb < <(measure "$READER" "$TRACE")
read -r coll_s coll_kb < <(measure "$READER" "$TRACE" --collect)

"$READER" "$TRACE" | sed 's/^/  /'
awk -v size="$size" -v ps="$perf_s" -v pk="$perf_kb" -v os="$ours_s" -v ok="$ours_kb" \
    -v cs="$coll_s" -v ck="$coll_kb" -v runs="$RUNS" 'BEGIN {
    mb = size / 1048576
    printf "trace: %.0f MiB; best of %d runs, page cache warm, %s\n", mb, runs, "2 CPUs"
    printf "%-36s %8s %12s %10s %14s\n", "", "wall s", "peak RSS MiB", "speed-up", "RSS / file"
    printf "%-36s %8.2f %12.1f %10s %14.2f\n", "perf sched timehist (full listing)", ps, pk/1024, "1.0x", pk*1024/size
    printf "%-36s %8.2f %12.1f %9.1fx %14.2f\n", "schedlab-perf, streamed", os, ok/1024, ps/os, ok*1024/size
    printf "%-36s %8.2f %12.1f %9.1fx %14.2f\n", "schedlab-perf, all rows in memory", cs, ck/1024, ps/cs, ck*1024/size
}'
