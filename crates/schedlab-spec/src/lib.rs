//! The pipeline model: YAML in, a checked and expanded [`Plan`] out.
//!
//! # Brief overview
//!
//! Configuration is read in two steps (as Vector does): the private `raw` module mirrors the YAML
//! with `deny_unknown_fields` so typos fail at their line, and [`compile()`] checks what the shape
//! cannot say (undefined `${vars}`, unknown parsers, one kind per monitor) and expands matrix ×
//! repeat into [`RunPlan`]s of resolved types ([`AggregateStep`], [`PeriodicOptions`], …), so that
//! how the YAML spells a key never reaches the stages. All errors come back at once as [`Diagnostic`]s with file:line:column, the line,
//! a caret and a hint.
//!
//! # Key design decision
//!
//! YAML is read with serde-saphyr rather than the archived serde_yaml: it is pure Rust, keeps
//! exact line:column for every error (including custom ones raised while deserializing a value,
//! such as a malformed duration), and `Spanned<T>` gives positions for the checks made after
//! deserialization. Keys and plain values have none, so `locate` indexes the file by YAML path
//! (`collect.workloads.<name>.nice`) from the same parser's events, flow style included.
//!
//! Which texts may name a directory (the pipeline, matrix variables and values) is the runner's
//! rule, passed in as [`CompileOptions::name_part`]: this crate knows nothing of the data layout.

mod compile;
mod diagnostic;
pub mod duration;
mod locate;
mod plan;
mod raw;
pub mod selector;

pub use compile::{CompileOptions, compile, compile_for_import, name_of, substitute};
pub use diagnostic::{Diagnostic, closest};
pub use plan::{
    AggregateStep, Bound, CollectPlan, CompareExpectation, CpuSamplerOptions, Direction,
    ExpectKind, Expectation, FigureExpectation, MonitorKind, MonitorPlan, Op, PerfSchedOptions,
    PeriodicOptions, PlacementOptions, Plan, PlotKind, Program, RecordingWindow, ReportFormat,
    RunPlan, StepKind, Summarize, TurbostatOptions, Unit, Window, WorkloadPlan, variant_text,
};
