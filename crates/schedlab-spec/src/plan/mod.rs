//! The checked, expanded pipeline: what the runner executes. Every `${var}` is substituted, every
//! matrix combination and repetition is its own [`RunPlan`], durations are resolved.
//! Nothing here mirrors the YAML: renaming a pipeline key changes the private `raw` module and
//! `compile`, not the stages that read a plan.

mod expect;
mod options;
mod steps;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use crate::selector::WorkloadSelector;

pub use expect::{
    Bound, CompareExpectation, Direction, ExpectKind, Expectation, FigureExpectation, Op, Unit,
};
pub use options::{
    CpuSamplerOptions, PerfSchedOptions, PeriodicOptions, PlacementOptions, RecordingWindow,
    TurbostatOptions,
};
pub use steps::{AggregateStep, PlotKind, ReportFormat, StepKind, Summarize, Window};

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub name: String,
    pub description: Option<String>,
    /// Runs in execution order: variants interleaved (a b c a b c …), so that drift over time
    /// does not masquerade as a difference between variants.
    pub runs: Vec<RunPlan>,
    /// The matrix's combinations in the order the pipeline lists its values (one empty map
    /// without a matrix): the order comparisons present them in, whatever order runs took.
    pub variants: Vec<BTreeMap<String, String>>,
    /// Core classes declared in the pipeline, overriding detection, fastest first.
    pub topology: Vec<(String, Vec<u32>)>,
    /// Core classes fastest first as the pipeline orders them (`class_order:`); empty: the
    /// order of the `cpus` table's `class_rank` (declared or detected).
    pub class_order: Vec<String>,
    /// `schedlab import`'s defaults: how each workload's threads are found in a recording made
    /// without schedlab (the command line's `--workload` adds to them and overrides them).
    pub import: Vec<WorkloadSelector>,
    pub aggregate: Vec<AggregateStep>,
    pub summarize: Summarize,
}

impl Plan {
    /// Every workload name the pipeline knows: its collected workloads, then its imported ones.
    pub fn workload_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        let collected = self.runs.iter().flat_map(|r| &r.collect.workloads);
        for name in (collected.map(|w| w.name.as_str()))
            .chain(self.import.iter().map(|w| w.workload.as_str()))
        {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    /// Every run of the pipeline, as compiled: what the first schedlab versions named run sets by
    /// (its digest prefixed their run ids, so raising `repeat` re-keyed every run). Kept only so
    /// that the runner can recognise the runs those versions collected and rename them to their
    /// [`RunPlan::identity`] names once.
    pub fn collect_section(&self) -> serde_json::Value {
        serde_json::json!({ "runs": self.runs })
    }

    /// The part that decides how raw files become tables.
    pub fn parse_section(&self) -> serde_json::Value {
        serde_json::json!({ "topology": self.topology })
    }

    pub fn aggregate_section(&self) -> serde_json::Value {
        serde_json::json!({ "aggregate": self.aggregate, "class_order": self.class_order })
    }

    pub fn summarize_section(&self) -> serde_json::Value {
        serde_json::json!({ "summarize": self.summarize })
    }
}

/// The version of [`RunPlan::identity`]'s form, part of the identity itself. Raise it only when
/// runs must no longer match the runs collected before; a field added to the plan stays out of
/// the identity while it holds its default (`skip_serializing_if`), so that adding it re-keys no
/// run. `crates/schedlab-spec/tests/sections.rs` pins every shipped pipeline's identities.
pub const RUN_IDENTITY_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct RunPlan {
    /// `workers=4-r2`, or `r2` without a matrix: unique within the plan.
    pub key: String,
    /// This run's matrix values.
    pub variant: BTreeMap<String, String>,
    /// 1-based repetition number.
    pub repetition: u32,
    pub collect: CollectPlan,
}

impl RunPlan {
    /// What this run does, in a canonical, versioned form: its matrix values and what its
    /// collection runs (duration, monitors, workloads, all substituted). Not its repetition
    /// number, nor `repeat`, `cooldown` or `shuffle`: they say how often and when runs are
    /// collected, not what one does. The runner names a run by this form's digest, its label,
    /// matrix values and repetition, so raising `repeat` or continuing a label in a later boot
    /// finds the runs already collected and adds only the missing ones.
    pub fn identity(&self) -> serde_json::Value {
        let mut identity = serde_json::json!({
            "identity": RUN_IDENTITY_VERSION,
            "variant": self.variant,
            "duration": self.collect.duration,
            "monitors": self.collect.monitors,
            "workloads": self.collect.workloads,
        });
        // What a run records is part of what it is; without `record:` the identity is as it was.
        if !self.collect.record.is_empty() {
            identity["record"] = serde_json::json!(self.collect.record);
        }
        identity
    }
}

/// Matrix values as `k=v,k=v` (empty without a matrix): the `variant` column of `runs`.
pub fn variant_text(variant: &BTreeMap<String, String>) -> String {
    (variant.iter())
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[derive(Debug, Clone, Serialize)]
pub struct CollectPlan {
    pub duration: Option<Duration>,
    pub cooldown: Option<Duration>,
    pub monitors: Vec<MonitorPlan>,
    pub workloads: Vec<WorkloadPlan>,
    /// Files (glob patterns) recorded with the configuration in force at the run's start.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub record: Vec<String>,
}

impl CollectPlan {
    /// When the last workload is expected to end (None when one has no known end).
    pub fn last_workload_end(&self) -> Option<Duration> {
        let ends: Option<Vec<Duration>> = self
            .workloads
            .iter()
            .map(WorkloadPlan::expected_end)
            .collect();
        ends?.into_iter().max()
    }

    /// How long collecting this run is expected to take: its `duration`, or until the last
    /// workload ends (None when that is unknown).
    pub fn expected_length(&self) -> Option<Duration> {
        self.duration.or_else(|| self.last_workload_end())
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct MonitorPlan {
    pub name: String,
    pub kind: MonitorKind,
    pub optional: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MonitorKind {
    PerfSched(PerfSchedOptions),
    Placement(PlacementOptions),
    Turbostat(TurbostatOptions),
    Cpu(CpuSamplerOptions),
    Command {
        argv: Vec<String>,
        parse: Option<String>,
    },
}

impl MonitorKind {
    pub fn name(&self) -> &'static str {
        match self {
            MonitorKind::PerfSched(_) => "perf-sched",
            MonitorKind::Placement(_) => "placement",
            MonitorKind::Turbostat(_) => "turbostat",
            MonitorKind::Cpu(_) => "cpu",
            MonitorKind::Command { .. } => "command",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct WorkloadPlan {
    pub name: String,
    pub program: Program,
    pub start_after: Duration,
    pub nice: i32,
    pub cpus: Option<Vec<u32>>,
    pub timeout: Option<Duration>,
    pub instances: u32,
    pub parse: Option<String>,
    /// Restart the workload whenever it ends successfully, until the collection ends.
    pub repeat_until_end: bool,
    /// `stop: expected`: schedlab stopping it (the collection's end, its timeout) is part of
    /// the experiment, not a workload cut short. Left out of the identity while false, so the
    /// runs of pipelines without the key keep their ids.
    #[serde(skip_serializing_if = "is_false")]
    pub stop_expected: bool,
}

fn is_false(value: &bool) -> bool {
    !value
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Program {
    /// An external program, run without a shell.
    External { argv: Vec<String> },
    /// schedlab's built-in periodic load.
    Periodic(PeriodicOptions),
}

impl WorkloadPlan {
    /// When this workload is expected to end, relative to the run's start (None: unknown).
    pub fn expected_end(&self) -> Option<Duration> {
        let own = match &self.program {
            Program::Periodic(p) => Some(p.duration),
            Program::External { .. } => None,
        };
        let bound = match (own, self.timeout) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        bound.map(|d| self.start_after + d)
    }
}
