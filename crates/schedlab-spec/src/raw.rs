//! The pipeline as written: serde types that mirror the YAML, with `deny_unknown_fields`
//! everywhere so a typo is an error at its line instead of a silently ignored key.
//!
//! Nothing here is checked beyond its shape; [`crate::compile`] turns it into a [`crate::Plan`],
//! whose types are its own: nothing outside this crate sees these. Where the YAML value is already
//! the resolved one (a `window`, a report format), the plan's type is read directly.

use std::collections::BTreeMap;

use indexmap::IndexMap;

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::duration::Span;
use crate::plan::{PlotKind, ReportFormat, StepKind, Window};

mod expect;
pub use expect::*;

/// A YAML scalar used as a variable or matrix value; kept as text for substitution.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scalar::Int(v) => write!(f, "{v}"),
            Scalar::Float(v) => write!(f, "{v}"),
            Scalar::Bool(v) => write!(f, "{v}"),
            Scalar::Text(v) => f.write_str(v),
        }
    }
}

/// A CPU or a range of CPUs: `3` or `"4-11"`; in a workload's `cpus`, also a core class
/// (`P`, `"E:2"`) or a `${var}`, all of them text.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum CpuItem {
    One(u32),
    Range(String),
}

/// A duration that may be written with variables (`"${seconds}s"`, `"${run_for}"`), so that a
/// pipeline's short form can shorten it through `vars`. Without `${` it is read at once, and a
/// malformed one fails at its value, as [`Span`] does.
#[derive(Debug, Clone, PartialEq)]
pub enum RawDuration {
    Known(Span),
    /// Resolved per run, once its variables are known.
    WithVars(String),
}

impl<'de> Deserialize<'de> for RawDuration {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text.contains("${") {
            return Ok(RawDuration::WithVars(text));
        }
        crate::duration::parse_duration(&text)
            .map(|d| RawDuration::Known(Span(d)))
            .map_err(serde::de::Error::custom)
    }
}

/// A count that may be a variable: `4` or `"${nproc_except_P}"`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum RawCount {
    Number(u32),
    Text(String),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPipeline {
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// User variables, substituted into argv as `${name}`.
    #[serde(default)]
    pub vars: BTreeMap<String, Scalar>,
    /// Each combination of these values is one variant; also substituted as `${name}`.
    #[serde(default)]
    pub matrix: BTreeMap<String, Vec<Scalar>>,
    /// Runs per variant.
    #[serde(default)]
    pub repeat: Option<u32>,
    /// Run variants in a random order within each repetition, from this seed (recorded, so the
    /// order can be reproduced); without it variants are interleaved in matrix order.
    #[serde(default)]
    pub shuffle: Option<u64>,
    /// Core classes declared by hand, overriding detection: `{ P: [0-3], E: [4-11] }`, fastest
    /// class first (the order "faster class" figures use).
    #[serde(default)]
    pub topology: Option<IndexMap<String, Vec<CpuItem>>>,
    /// Core classes fastest first, overriding the order of the declared or detected classes.
    #[serde(default)]
    pub class_order: Option<Vec<Spanned<String>>>,
    /// The pipeline's short form (`--short`): what it changes to finish in seconds.
    #[serde(default)]
    pub short: Option<RawShort>,
    /// How runs are collected; a pipeline that only analyses recordings made by hand has an
    /// `import` section instead.
    #[serde(default)]
    pub collect: Option<RawCollect>,
    /// Defaults for `schedlab import`: how recordings made without schedlab are read.
    #[serde(default)]
    pub import: Option<RawImport>,
    #[serde(default)]
    pub aggregate: Vec<RawStep>,
    #[serde(default)]
    pub summarize: RawSummarize,
    /// What must hold in the runs (`schedlab check`), evaluated by the summarize stage.
    #[serde(default)]
    pub expect: Vec<RawExpectation>,
}

/// A short form: values that replace the pipeline's own, each optional. Replacing, never
/// adding, keeps it the same experiment: every variable it sets must be one of `vars`, every
/// matrix variable one of `matrix`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawShort {
    #[serde(default)]
    pub vars: BTreeMap<String, Scalar>,
    #[serde(default)]
    pub matrix: BTreeMap<String, Vec<Scalar>>,
    #[serde(default)]
    pub repeat: Option<u32>,
    /// Core classes declared for the short form, so that it runs on a machine without them.
    #[serde(default)]
    pub topology: Option<IndexMap<String, Vec<CpuItem>>>,
    /// The short form's expectations instead of the pipeline's (`[]`: none), for findings that
    /// need the machine the full form is written for.
    #[serde(default)]
    pub expect: Option<Vec<RawExpectation>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCollect {
    /// How long monitors record. Without it the run ends when the last workload ends.
    #[serde(default)]
    pub duration: Option<RawDuration>,
    /// Pause between two runs, so that heat and turbo budget recover.
    #[serde(default)]
    pub cooldown: Option<RawDuration>,
    #[serde(default)]
    pub monitors: BTreeMap<String, RawMonitor>,
    pub workloads: BTreeMap<String, RawWorkload>,
    /// Files recorded with the configuration in force at each run's start (globs:
    /// `/sys/kernel/debug/sched/*`).
    #[serde(default)]
    pub record: Vec<Spanned<String>>,
}

/// `import: { workloads: { openssl: "comm:openssl", bg: "tree:4400" } }`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawImport {
    /// Each workload's threads in an imported trace: `comm:NAME`, `pid:PID` or `tree:PID`.
    #[serde(default)]
    pub workloads: IndexMap<String, Spanned<String>>,
}

/// One monitor: exactly one kind key plus `optional`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMonitor {
    #[serde(rename = "perf-sched", default)]
    pub perf_sched: Option<RawPerfSched>,
    #[serde(default)]
    pub placement: Option<RawPlacement>,
    #[serde(default)]
    pub turbostat: Option<RawTurbostat>,
    #[serde(default)]
    pub command: Option<CommandOptions>,
    #[serde(default)]
    pub cpu: Option<RawCpuSampler>,
    /// When the monitor cannot start here, skip it with a recorded reason instead of failing.
    #[serde(default)]
    pub optional: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPerfSched {
    /// Ring-buffer size per CPU (`perf record -m`), e.g. `"64M"` or `"1024"` pages.
    #[serde(default)]
    pub buffer: Option<String>,
    /// Record only part of the run, so a long run does not produce gigabytes.
    #[serde(default)]
    pub window: Option<RawRecordingWindow>,
}

/// When a trace records, relative to the moment workloads' `start_after` counts from.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRecordingWindow {
    /// Start recording this long after the run starts (perf starts with its events disabled
    /// and is enabled then, through its control FIFO).
    #[serde(default)]
    pub start: Option<Span>,
    /// Stop recording after this long.
    #[serde(default)]
    pub duration: Option<Span>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPlacement {
    #[serde(default = "default_placement_interval")]
    pub interval: RawDuration,
}

fn default_placement_interval() -> RawDuration {
    RawDuration::Known(Span(std::time::Duration::from_millis(200)))
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTurbostat {
    #[serde(default = "default_one_second")]
    pub interval: RawDuration,
    /// Columns for `--show`, e.g. `[CPU, Core, Busy%, Bzy_MHz]`.
    #[serde(default)]
    pub show: Vec<String>,
}

fn default_one_second() -> RawDuration {
    RawDuration::Known(Span(std::time::Duration::from_secs(1)))
}

/// The built-in per-CPU sampler: busy %, frequency, idle-state residency, package energy.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCpuSampler {
    #[serde(default = "default_one_second")]
    pub interval: RawDuration,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandOptions {
    pub run: Vec<Spanned<String>>,
    #[serde(default)]
    pub parse: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWorkload {
    /// An external program as an argv list, run without a shell.
    #[serde(default)]
    pub run: Option<Vec<Spanned<String>>>,
    /// The built-in periodic load, instead of `run`.
    #[serde(default)]
    pub periodic: Option<RawPeriodic>,
    #[serde(default)]
    pub start_after: Option<RawDuration>,
    #[serde(default)]
    pub nice: Option<i32>,
    /// CPUs the workload may run on: `[0, 2-3]`, `[P]`, `["E:1"]`.
    #[serde(default)]
    pub cpus: Option<Vec<CpuItem>>,
    /// Stop the workload after this long.
    #[serde(default)]
    pub timeout: Option<RawDuration>,
    /// Identical processes started together.
    #[serde(default)]
    pub instances: Option<RawCount>,
    /// Parser for the workload's output (`stress-ng`, `openssl`, `time`, …).
    #[serde(default)]
    pub parse: Option<Spanned<String>>,
    /// `monitors`: start the workload again each time it ends, until the collection ends.
    #[serde(default)]
    pub repeat_until: Option<Spanned<String>>,
    /// Start the workload only in runs where this is true (`on`/`off`, `yes`/`no` too), usually
    /// a matrix variable: `when: "${foreground}"` with `matrix: { foreground: [on, off] }`.
    #[serde(default)]
    pub when: Option<Spanned<Scalar>>,
    /// `expected`: schedlab stopping the workload (at the collection's end, or its timeout) is
    /// part of the experiment (a `sleep` filler), so the run stays `completed`.
    #[serde(default)]
    pub stop: Option<Spanned<String>>,
}

/// rt-app-like periodic threads: each wakes every `period`, spins for `busy` (or `duty` percent
/// of the period), and sleeps until the next period.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPeriodic {
    #[serde(default = "one")]
    pub threads: u32,
    pub period: Span,
    #[serde(default)]
    pub busy: Option<Span>,
    /// Percent of each period spent busy, instead of `busy`.
    #[serde(default)]
    pub duty: Option<f64>,
    pub duration: Span,
}

fn one() -> u32 {
    1
}

/// One aggregate step: `- residency: { workload: burst }`. What each computes is
/// [`StepKind`]'s documentation.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RawStep {
    Residency(RawStepOptions),
    Migrations(RawStepOptions),
    SchedDelay(RawStepOptions),
    CpuTime(RawStepOptions),
    Throughput(RawStepOptions),
    CpuActivity(RawStepOptions),
    CpuShare(RawStepOptions),
    PowerStep(RawStepOptions),
    CpuTimeline(RawStepOptions),
    PlacementCost(RawStepOptions),
    WakeupPlacement(RawStepOptions),
}

impl RawStep {
    pub fn kind(&self) -> StepKind {
        match self {
            RawStep::Residency(_) => StepKind::Residency,
            RawStep::Migrations(_) => StepKind::Migrations,
            RawStep::SchedDelay(_) => StepKind::SchedDelay,
            RawStep::CpuTime(_) => StepKind::CpuTime,
            RawStep::Throughput(_) => StepKind::Throughput,
            RawStep::CpuActivity(_) => StepKind::CpuActivity,
            RawStep::CpuShare(_) => StepKind::CpuShare,
            RawStep::PowerStep(_) => StepKind::PowerStep,
            RawStep::CpuTimeline(_) => StepKind::CpuTimeline,
            RawStep::PlacementCost(_) => StepKind::PlacementCost,
            RawStep::WakeupPlacement(_) => StepKind::WakeupPlacement,
        }
    }

    pub fn options(&self) -> &RawStepOptions {
        match self {
            RawStep::Residency(o)
            | RawStep::Migrations(o)
            | RawStep::SchedDelay(o)
            | RawStep::CpuTime(o)
            | RawStep::Throughput(o)
            | RawStep::CpuActivity(o)
            | RawStep::CpuShare(o)
            | RawStep::PowerStep(o)
            | RawStep::CpuTimeline(o)
            | RawStep::PlacementCost(o)
            | RawStep::WakeupPlacement(o) => o,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStepOptions {
    /// Restrict to one workload (all workloads when absent).
    #[serde(default)]
    pub workload: Option<Spanned<String>>,
    /// Migrations in the first `startup` of a workload count as start-up, the rest as steady.
    #[serde(default)]
    pub startup: Option<Span>,
    /// The span of each run to aggregate over (the whole run by default).
    #[serde(default)]
    pub window: Option<Window>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSummarize {
    /// `markdown` (report/summary.md, always written) and `html` (report/index.html, the same
    /// tables with the plots).
    #[serde(default = "default_reports")]
    pub report: Vec<ReportFormat>,
    /// SVG plots per run under report/.
    #[serde(default)]
    pub plots: Vec<PlotKind>,
}

impl Default for RawSummarize {
    fn default() -> Self {
        RawSummarize {
            report: default_reports(),
            plots: Vec::new(),
        }
    }
}

fn default_reports() -> Vec<ReportFormat> {
    vec![ReportFormat::Markdown]
}
