//! Aggregate tables: the numbers the seed articles report, one file each under `aggregates/`.
//!
//! Every row says which `source` it was computed from: `sched` (a perf trace: exact) or
//! `placement` (/proc samples: an estimate at the sampling interval). Rows from a trace also say
//! how many events perf lost while the thread was seen (`lost_events`): figures over a span with
//! losses are flagged, not silently low.

use serde::{Deserialize, Serialize};

use crate::Table;

/// Share of a thread's CPU time on one CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResidencyRow {
    pub run_id: String,
    pub workload: String,
    pub pid: i32,
    pub tid: i32,
    pub comm: String,
    pub cpu: i32,
    pub class: String,
    pub run_ns: i64,
    /// `run_ns` over the thread's CPU time in this run, 0..=1.
    pub share: f64,
    pub source: String,
    /// Events perf lost (ring-buffer overflows, table `losses`) while the thread was seen: when
    /// not 0 this row's figures are incomplete. Null for rows not computed from a trace.
    pub lost_events: Option<i64>,
}

impl Table for ResidencyRow {
    const NAME: &'static str = "residency";
}

/// Migrations of one thread, split at the end of the start-up window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MigrationSummaryRow {
    pub run_id: String,
    pub workload: String,
    pub pid: i32,
    pub tid: i32,
    pub comm: String,
    pub migrations: i64,
    pub startup_migrations: i64,
    pub steady_migrations: i64,
    /// Mean time between consecutive steady-state migrations.
    pub steady_interval_mean_ns: Option<f64>,
    /// Migrations per second of the thread's lifetime.
    pub per_second: Option<f64>,
    pub source: String,
    /// Events perf lost (ring-buffer overflows, table `losses`) while the thread was seen: when
    /// not 0 this row's figures are incomplete. Null for rows not computed from a trace.
    pub lost_events: Option<i64>,
}

impl Table for MigrationSummaryRow {
    const NAME: &'static str = "migrations";
}

/// Scheduling delay (wakeup to run) of one thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchedDelayRow {
    pub run_id: String,
    pub workload: String,
    pub pid: i32,
    pub tid: i32,
    pub comm: String,
    /// Slices that began with a wakeup (delay measured).
    pub wakeups: i64,
    pub mean_ns: Option<f64>,
    pub max_ns: Option<i64>,
    /// Events perf lost (ring-buffer overflows, table `losses`) while the thread was seen: when
    /// not 0 this row's figures are incomplete. Null for rows not computed from a trace.
    pub lost_events: Option<i64>,
}

impl Table for SchedDelayRow {
    const NAME: &'static str = "sched_delay";
}

/// CPU time against wall time of one thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuTimeRow {
    pub run_id: String,
    pub workload: String,
    pub pid: i32,
    pub tid: i32,
    pub comm: String,
    pub cpu_time_ns: i64,
    /// First to last time the thread was seen.
    pub wall_ns: i64,
    pub source: String,
    /// Events perf lost (ring-buffer overflows, table `losses`) while the thread was seen: when
    /// not 0 this row's figures are incomplete. Null for rows not computed from a trace.
    pub lost_events: Option<i64>,
    /// A cross-check, where the placement monitor sampled the thread beside a trace: its CPU
    /// time by /proc (utime + stime, in 10 ms ticks) from its first to its last sample...
    pub proc_check_ns: Option<i64>,
    /// ...and the trace's run time over the same span. A trace figure well above /proc's means
    /// the trace counts time the thread did not have the CPU (missing events; see `quality`).
    pub trace_check_ns: Option<i64>,
}

impl Table for CpuTimeRow {
    const NAME: &'static str = "cpu_time";
}

/// Throughput a workload reported against what it achieved in wall-clock time: `openssl speed`
/// measures CPU time unless `-elapsed`, so a descheduled process reports more than it delivered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThroughputRow {
    pub run_id: String,
    pub workload: String,
    pub instance: u32,
    /// The test, e.g. `sha256/16384`.
    pub test: String,
    pub ops: f64,
    pub block_bytes: f64,
    /// The time the tool measured, on its own clock (`cpu` or `wall`).
    pub measured_s: f64,
    pub measured_clock: String,
    /// The process's wall-clock share for this test (runner's start and end times, shared out
    /// between tests in proportion to their measured time).
    pub wall_s: f64,
    pub reported_bytes_per_s: Option<f64>,
    /// `ops * block_bytes / wall_s`.
    pub effective_bytes_per_s: f64,
}

impl Table for ThroughputRow {
    const NAME: &'static str = "throughput";
}
