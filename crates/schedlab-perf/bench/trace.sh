# Sourced by the bench scripts: the tools they need, and the bench trace in $TRACE, recorded
# (`stress-ng --switch 2` under `perf sched record`, a few hundred MB) when it is missing.
command -v /usr/bin/time >/dev/null || apt-get install -y time >/dev/null
command -v stress-ng >/dev/null || apt-get install -y stress-ng >/dev/null
if [ ! -s "$TRACE" ]; then
    mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
    echo "recording $TRACE ..."
    perf sched record -a -k CLOCK_MONOTONIC -o "$TRACE" -- stress-ng --switch 2 --timeout 4s \
        >/dev/null 2>&1
fi
