#!/usr/bin/env bash
# What adding a run costs as history grows: `schedlab analyze` after run 2 is added to 1 stored
# run, against `schedlab analyze` after run 21 is added to 20 (the issue's bound: within 1.5x),
# and the peak RSS of the analysis, of the parse stage and of the aggregate stage over all 21
# runs against the largest trace (the parse stage's bound: a quarter of it).
#
# Collects 21 runs of bench/incremental.yaml (perf sched record of `stress-ng --switch`) into a
# temporary data directory (SCHEDLAB_BENCH_DATA keeps it between invocations), one at a time
# with `--only collect`, and analyses after each. Needs root (perf) and stress-ng.
set -euo pipefail

cd "$(dirname "$0")/../../.."
PIPELINE=crates/schedlab-runner/bench/incremental.yaml
DATA=${SCHEDLAB_BENCH_DATA:-$(mktemp -d)}
SCHEDLAB=target/release/schedlab
TIMES=$(mktemp)
trap 'rm -f "$TIMES"; [ -n "${SCHEDLAB_BENCH_DATA:-}" ] || rm -rf "$DATA"' EXIT

command -v /usr/bin/time >/dev/null || apt-get install -y time >/dev/null
command -v stress-ng >/dev/null || apt-get install -y stress-ng >/dev/null
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
cargo build --release -q -p schedlab

# Collects repetitions up to $1, then times the `analyze` that adds it: prints wall seconds and
# peak RSS in KiB.
add_until() {
    "$SCHEDLAB" run "$PIPELINE" --data "$DATA" --repeat "$1" --only collect >/dev/null 2>&1
    /usr/bin/time -o "$TIMES" -f "%e %M" "$SCHEDLAB" analyze "$PIPELINE" --data "$DATA" >/dev/null 2>&1
    cat "$TIMES"
}

add_until 1 >/dev/null
read -r two_s two_kb < <(add_until 2)
for n in $(seq 3 20); do add_until "$n" >/dev/null; done
read -r last_s last_kb < <(add_until 21)
largest=$(find "$DATA/bench-incremental/runs" -name '*.data' -printf '%s\n' | sort -n | tail -1)
# The parse stage alone over every stored run (`--only parse` recomputes them all), then the
# aggregate stage alone (every aggregate, the why-here ones included).
/usr/bin/time -o "$TIMES" -f "%e %M" "$SCHEDLAB" run "$PIPELINE" --data "$DATA" --only parse >/dev/null 2>&1
read -r parse_s parse_kb <"$TIMES"
/usr/bin/time -o "$TIMES" -f "%e %M" "$SCHEDLAB" run "$PIPELINE" --data "$DATA" --only aggregate >/dev/null 2>&1
read -r aggregate_s aggregate_kb <"$TIMES"
echo "schedlab analyze after adding one run (largest trace $((largest / 1048576)) MiB; load $(cut -d' ' -f1-3 /proc/loadavg))"
awk -v a="$two_s" -v b="$last_s" -v ak="$two_kb" -v bk="$last_kb" -v trace="$largest" \
    -v ps="$parse_s" -v pk="$parse_kb" -v gs="$aggregate_s" -v gk="$aggregate_kb" 'BEGIN {
    printf "  run 2 added to 1:   %6.2f s, peak RSS %4.0f MiB = %.3f of the largest trace\n", a, ak / 1024, ak * 1024 / trace
    printf "  run 21 added to 20: %6.2f s, peak RSS %4.0f MiB = %.3f of the largest trace\n", b, bk / 1024, bk * 1024 / trace
    printf "  ratio run 21 / run 2: %.2fx (bound 1.5x)\n", b / a
    printf "parse stage over all 21 runs: %.2f s, peak RSS %.0f MiB = %.3f of the largest trace (bound 0.25)\n", ps, pk / 1024, pk * 1024 / trace
    printf "aggregate stage over all 21 runs: %.2f s, peak RSS %.0f MiB = %.3f of the largest trace\n", gs, gk / 1024, gk * 1024 / trace
}'
