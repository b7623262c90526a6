//! What each monitor and the built-in periodic load are given, resolved: defaults filled in,
//! durations as [`Duration`]s. How the YAML spells them is the `raw` module's business alone.
//!
//! Durations serialize as the pipeline writes them (`"200ms"`): these types are part of the
//! collect section, whose digest prefixes every run id (pinned by `tests/sections.rs`).

use std::time::Duration;

use serde::Serialize;

use crate::duration::{serialize_as_written, serialize_option_as_written};

/// `perf sched record` of every CPU.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerfSchedOptions {
    /// Ring-buffer size per CPU (`perf record -m`), e.g. `"64M"` or `"1024"` pages.
    pub buffer: Option<String>,
    /// Record only part of the run, so a long run does not produce gigabytes.
    pub window: Option<RecordingWindow>,
}

/// When a trace records, relative to the moment workloads' `start_after` counts from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordingWindow {
    /// Start recording this long after the run starts (perf starts with its events disabled
    /// and is enabled then, through its control FIFO).
    #[serde(serialize_with = "serialize_option_as_written")]
    pub start: Option<Duration>,
    /// Stop recording after this long.
    #[serde(serialize_with = "serialize_option_as_written")]
    pub duration: Option<Duration>,
}

/// The built-in sampler of which CPU each tracked thread is on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlacementOptions {
    #[serde(serialize_with = "serialize_as_written")]
    pub interval: Duration,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurbostatOptions {
    #[serde(serialize_with = "serialize_as_written")]
    pub interval: Duration,
    /// Columns for `--show`, e.g. `[CPU, Core, Busy%, Bzy_MHz]` (all when empty).
    pub show: Vec<String>,
}

/// The built-in per-CPU sampler: busy %, frequency, idle-state residency, package energy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuSamplerOptions {
    #[serde(serialize_with = "serialize_as_written")]
    pub interval: Duration,
}

/// rt-app-like periodic threads: each wakes every `period`, spins for `busy` (or `duty` percent
/// of the period; exactly one of them is set), and sleeps until the next period.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeriodicOptions {
    pub threads: u32,
    #[serde(serialize_with = "serialize_as_written")]
    pub period: Duration,
    #[serde(serialize_with = "serialize_option_as_written")]
    pub busy: Option<Duration>,
    /// Percent of each period spent busy, instead of `busy`.
    pub duty: Option<f64>,
    #[serde(serialize_with = "serialize_as_written")]
    pub duration: Duration,
}
