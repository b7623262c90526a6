//! The one clock: CLOCK_MONOTONIC in nanoseconds, the clock `perf record -k CLOCK_MONOTONIC`
//! stamps its events with, so runner times and trace times can be compared directly.

use std::time::Duration;

use rustix::time::{ClockId, Timespec, clock_gettime};

pub fn monotonic_ns() -> i64 {
    to_ns(clock_gettime(ClockId::Monotonic))
}

/// CPU time the calling thread has used so far.
pub fn thread_cpu_ns() -> i64 {
    to_ns(clock_gettime(ClockId::ThreadCPUTime))
}

fn to_ns(ts: Timespec) -> i64 {
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

pub fn timespec(ns: i64) -> Timespec {
    Timespec {
        tv_sec: ns.div_euclid(1_000_000_000),
        tv_nsec: ns.rem_euclid(1_000_000_000),
    }
}

pub fn ns(d: Duration) -> i64 {
    i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
}
