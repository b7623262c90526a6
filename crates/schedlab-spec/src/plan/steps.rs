//! What the aggregate and summarize stages are asked for, resolved from the pipeline.
//!
//! Their JSON is digested into those stages' fingerprints (pinned by `tests/sections.rs`), so it
//! keeps the form the pipeline's own spelling once gave it: `{"residency":{"workload":…}}`.

use std::time::Duration;

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use crate::duration::serialize_option_as_written;
use crate::plan::Expectation;

/// One aggregate step: which table it computes and over what.
#[derive(Debug, Clone, PartialEq)]
pub struct AggregateStep {
    pub kind: StepKind,
    /// Restrict to one workload (all workloads when absent).
    pub workload: Option<String>,
    /// Migrations in the first `startup` of a workload count as start-up, the rest as steady.
    pub startup: Option<Duration>,
    /// The span of each run to aggregate over (the whole run when absent); only for the kinds
    /// that [`StepKind::takes_window`].
    pub window: Option<Window>,
}

/// Serialized as `{"<kind>": {"startup": …, "window": …, "workload": …}}`.
impl Serialize for AggregateStep {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Options<'a> {
            workload: &'a Option<String>,
            #[serde(serialize_with = "serialize_option_as_written")]
            startup: Option<Duration>,
            window: Option<Window>,
        }
        let options = Options {
            workload: &self.workload,
            startup: self.startup,
            window: self.window,
        };
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(self.kind.name(), &options)?;
        map.end()
    }
}

/// What an aggregate step computes: one table each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StepKind {
    /// Share of each thread's CPU time on each CPU and core class.
    Residency,
    /// Migration counts, start-up vs steady state, and the mean interval between them.
    Migrations,
    /// Scheduling delay (wakeup to run) mean and max.
    SchedDelay,
    /// CPU time against wall time per thread.
    CpuTime,
    /// Reported against effective wall-clock throughput (openssl speed).
    Throughput,
    /// turbostat's Busy%, Avg_MHz, Bzy_MHz, C1/C6, temperature and package power per CPU, core
    /// class and for all CPUs, over the run or (with `workload`) over that workload's lifetime.
    CpuActivity,
    /// CPUs each workload received before, during and after `workload`'s lifetime (over the
    /// whole run without it), in total and per core class.
    CpuShare,
    /// The largest step in package power (turbostat's PkgWatt, or RAPL energy from the `cpu`
    /// monitor) within `workload`'s lifetime, or over the run.
    PowerStep,
    /// Per CPU, stretches of idle, a workload thread running, or another task running, with
    /// the priority of what ran (from a trace).
    CpuTimeline,
    /// Per workload thread: time on a slower core class while an allowed faster CPU was idle or
    /// ran lower-priority work, and time waiting while an allowed CPU was idle (from a trace).
    PlacementCost,
    /// Per workload thread and pair of classes: where its wakeups placed it (from a trace).
    WakeupPlacement,
}

impl StepKind {
    /// The step's name, that of the table it writes.
    pub fn name(self) -> &'static str {
        match self {
            StepKind::Residency => "residency",
            StepKind::Migrations => "migrations",
            StepKind::SchedDelay => "sched_delay",
            StepKind::CpuTime => "cpu_time",
            StepKind::Throughput => "throughput",
            StepKind::CpuActivity => "cpu_activity",
            StepKind::CpuShare => "cpu_share",
            StepKind::PowerStep => "power_step",
            StepKind::CpuTimeline => "cpu_timeline",
            StepKind::PlacementCost => "placement_cost",
            StepKind::WakeupPlacement => "wakeup_placement",
        }
    }

    /// Whether `window: trace` applies: the steps computed per thread from a trace. The others
    /// set their span with `workload`, or do not come from a trace (throughput).
    pub fn takes_window(self) -> bool {
        matches!(
            self,
            StepKind::Residency | StepKind::Migrations | StepKind::SchedDelay | StepKind::CpuTime
        )
    }
}

/// A span of a run an aggregate can be restricted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Window {
    /// Where every CPU's perf trace has data (`runs.trace_window_start_ns` to `_end_ns`): per-CPU
    /// ring buffers start and stop at different times, so outside it some CPU's events are
    /// missing. Slices are cut at its edges; runs without a trace are not restricted.
    Trace,
}

/// What the summarize stage writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summarize {
    /// `markdown` (report/summary.md, always written) and `html` (report/index.html, the same
    /// tables with the plots).
    pub report: Vec<ReportFormat>,
    /// SVG plots per run under report/.
    pub plots: Vec<PlotKind>,
    /// What must hold in the runs, evaluated into `report/expectations.parquet` and the
    /// summary (`schedlab check` exits by them). Left out of the section while empty, so that a
    /// pipeline without `expect:` keeps its fingerprint.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<Expectation>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportFormat {
    Markdown,
    Html,
}

/// A plot of each run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlotKind {
    /// Which workload ran on which CPU when (a lane per CPU, labelled with its class).
    CpuTimeline,
    /// Seconds of each workload on each CPU, stacked.
    Residency,
}
