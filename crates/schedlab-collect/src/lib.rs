//! One run of an experiment: workloads, monitors, built-in samplers, host facts.
//!
//! # Brief overview
//!
//! [`collect`] executes one [`schedlab_spec::RunPlan`] into a run directory: monitors start
//! first ([`monitor`]: perf-sched, turbostat, placement, cpu, command), workloads start at their
//! `start_after` ([`process`]: argv without a shell, nice, affinity, own process group), then
//! everything stops in reverse and a [`Manifest`](schedlab_tables::manifest::Manifest) says what
//! happened (the manifest is a format of the contract crate, like the periodic report).
//! [`periodic`] is the built-in rt-app-like workload, run as a child process like any other.
//!
//! # Key design decision
//!
//! Every time is CLOCK_MONOTONIC nanoseconds ([`clock`]), the clock perf is told to use, so
//! process start/end times and trace events line up without conversion. The collector writes
//! only under the run directory it is given; where that directory lives is the runner's business.

pub mod clock;
mod host;
pub mod monitor;
pub mod periodic;
pub mod process;
mod record;
mod run;
mod sched_config;

use std::path::PathBuf;

pub use host::facts as host_facts;
pub use run::{RunRequest, collect, timeline};

/// Why a run could not be collected at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CollectError {
    #[error(
        "workload `{workload}`: program `{program}` not found on PATH (hint: install it, or give its full path)"
    )]
    MissingProgram { workload: String, program: String },
    #[error(
        "monitor `{monitor}` cannot run here: {reason} (hint: mark it `optional: true` to skip it instead)"
    )]
    MonitorUnavailable { monitor: String, reason: String },
    #[error("workload `{workload}`: cannot start `{argv}`: {source}")]
    Spawn {
        workload: String,
        argv: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
