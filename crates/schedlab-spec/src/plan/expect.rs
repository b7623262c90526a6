//! What a pipeline's `expect:` says must hold, resolved: each expectation a bound on one column
//! of one aggregate table, picked by a selector, or a `compare` verdict that must not come out.
//!
//! Bounds are in the column's own unit (`5ms` on `p99_ns` is 5,000,000), so the evaluator
//! compares numbers as the aggregate holds them and the report converts them back for reading.
//! The JSON of these types is part of the summarize stage's section (an edited expectation
//! re-evaluates the summary, nothing else).

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

/// One entry of `expect:`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Expectation {
    /// A bound on a figure of every run.
    Figure(FigureExpectation),
    /// A comparison's verdict between groups of runs that must not come out.
    Compare(CompareExpectation),
}

impl Expectation {
    /// What it checks, in words: `residency_rollup.share of sha (class P, pin=any)`,
    /// `compare by label: figures containing cpu_time`.
    pub fn figure(&self) -> String {
        match self {
            Expectation::Figure(f) => f.describe(),
            Expectation::Compare(c) => c.describe(),
        }
    }

    /// The bound, as the report prints it: `>= 0.95`, `<= 5ms`, `not higher than base`.
    pub fn bound(&self) -> String {
        match self {
            Expectation::Figure(f) => f.bound.written.clone(),
            Expectation::Compare(c) => match &c.baseline {
                Some(baseline) => format!("not {} than {baseline}", c.not),
                None => format!("not {} than the baseline", c.not),
            },
        }
    }
}

/// The aggregate an expectation reads: one table each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpectKind {
    /// `residency_rollup`: a workload's, process's or thread's share of CPU time on a class or
    /// CPU.
    Residency,
    /// `migrations`: each thread's migrations.
    Migrations,
    /// `sched_delay_workloads`: the workload's wakeup delay and waits after preemption.
    SchedDelay,
    /// `totals`: the workload's CPU time.
    CpuTime,
    /// `cpu_share`: the CPUs a workload received in a phase.
    CpuShare,
    /// `cpu_activity`: turbostat's figures over a window.
    CpuActivity,
}

impl ExpectKind {
    /// The key it is written under in `expect:`, which is also the aggregate step it needs.
    pub fn name(self) -> &'static str {
        match self {
            ExpectKind::Residency => "residency",
            ExpectKind::Migrations => "migrations",
            ExpectKind::SchedDelay => "sched_delay",
            ExpectKind::CpuTime => "cpu_time",
            ExpectKind::CpuShare => "cpu_share",
            ExpectKind::CpuActivity => "cpu_activity",
        }
    }

    /// The aggregate table its figures are columns of.
    pub fn table(self) -> &'static str {
        match self {
            ExpectKind::Residency => "residency_rollup",
            ExpectKind::Migrations => "migrations",
            ExpectKind::SchedDelay => "sched_delay_workloads",
            ExpectKind::CpuTime => "totals",
            ExpectKind::CpuShare => "cpu_share",
            ExpectKind::CpuActivity => "cpu_activity",
        }
    }

    /// Its bound keys, each with the column it bounds and that column's unit.
    pub fn figures(self) -> &'static [(&'static str, &'static str, Unit)] {
        use Unit::*;
        match self {
            ExpectKind::Residency => &[("share", "share", Share), ("seconds", "run_ns", Ns)],
            ExpectKind::Migrations => &[
                ("count", "migrations", Count),
                ("startup", "startup_migrations", Count),
                ("steady", "steady_migrations", Count),
                ("per_s", "per_second", PerSecond),
            ],
            ExpectKind::SchedDelay => &[
                ("mean", "mean_ns", Ns),
                ("p50", "p50_ns", Ns),
                ("p90", "p90_ns", Ns),
                ("p99", "p99_ns", Ns),
                ("max", "max_ns", Ns),
                ("preempt_wait_mean", "preempt_wait_mean_ns", Ns),
                ("preempt_wait_p50", "preempt_wait_p50_ns", Ns),
                ("preempt_wait_p90", "preempt_wait_p90_ns", Ns),
                ("preempt_wait_p99", "preempt_wait_p99_ns", Ns),
                ("preempt_wait_max", "preempt_wait_max_ns", Ns),
            ],
            ExpectKind::CpuTime => &[("seconds", "cpu_time_ns", Ns)],
            ExpectKind::CpuShare => &[("cpus", "cpus", Cpus), ("change_cpus", "change_cpus", Cpus)],
            ExpectKind::CpuActivity => &[
                ("busy_pct", "busy_pct", Percent),
                ("avg_mhz", "avg_mhz", Megahertz),
                ("bzy_mhz", "bzy_mhz", Megahertz),
                ("c1_pct", "c1_pct", Percent),
                ("c6_pct", "c6_pct", Percent),
                ("core_tmp_c_max", "core_tmp_c_max", Celsius),
                ("pkg_watt", "pkg_watt", Watts),
            ],
        }
    }
}

/// The unit a column holds its figure in, which decides how a bound on it is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// 0 to 1; written `0.95` or `95%`.
    Share,
    /// Nanoseconds; written as a duration (`5ms`, `1.5s`).
    Ns,
    /// A count; written as a number.
    Count,
    /// Per second; written `2` or `2/s`.
    PerSecond,
    /// CPUs (CPU time over a span's length); written as a number.
    Cpus,
    /// 0 to 100; written `90%`.
    Percent,
    /// Written `1200MHz` or `1.2GHz`.
    Megahertz,
    /// Written `4W` or `500mW`.
    Watts,
    /// Written `90C`.
    Celsius,
}

impl Unit {
    /// The unit's word in the `expectations` table's `unit` column.
    pub fn word(self) -> &'static str {
        match self {
            Unit::Share => "share",
            Unit::Ns => "ns",
            Unit::Count => "count",
            Unit::PerSecond => "1/s",
            Unit::Cpus => "CPUs",
            Unit::Percent => "%",
            Unit::Megahertz => "MHz",
            Unit::Watts => "W",
            Unit::Celsius => "°C",
        }
    }

    /// The unit of an `expectations` row's `unit` word.
    pub fn from_word(word: &str) -> Option<Unit> {
        use Unit::*;
        [
            Share, Ns, Count, PerSecond, Cpus, Percent, Megahertz, Watts, Celsius,
        ]
        .into_iter()
        .find(|unit| unit.word() == word)
    }

    /// A value in this unit as a reader wants it: nanoseconds as milliseconds, a share with
    /// three decimals.
    pub fn format(self, value: f64) -> String {
        match self {
            Unit::Share => format!("{value:.3}"),
            Unit::Ns => format!("{:.3} ms", value / 1e6),
            Unit::Count => format!("{value}"),
            Unit::PerSecond => format!("{value:.2}/s"),
            Unit::Cpus => format!("{value:.2} CPUs"),
            Unit::Percent => format!("{value:.1} %"),
            Unit::Megahertz => format!("{value:.0} MHz"),
            Unit::Watts => format!("{value:.2} W"),
            Unit::Celsius => format!("{value:.0} °C"),
        }
    }

    /// How a bound in this unit is written, for hints.
    pub fn how_written(self) -> &'static str {
        match self {
            Unit::Share => "a share from 0 to 1 or a percentage: `0.95`, `95%`",
            Unit::Ns => "a duration with its unit: `500us`, `5ms`, `1.5s`",
            Unit::Count => "a number: `10`",
            Unit::PerSecond => "a rate: `2` or `2/s`",
            Unit::Cpus => "a number of CPUs: `0.9`",
            Unit::Percent => "a percentage: `90%`",
            Unit::Megahertz => "a frequency: `1200MHz`, `1.2GHz`",
            Unit::Watts => "a power: `4W`, `500mW`",
            Unit::Celsius => "a temperature: `90C`",
        }
    }
}

/// How a value is compared with its bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Op {
    #[serde(rename = "<")]
    Less,
    #[serde(rename = "<=")]
    AtMost,
    #[serde(rename = ">")]
    Greater,
    #[serde(rename = ">=")]
    AtLeast,
}

impl Op {
    pub fn holds(self, value: f64, bound: f64) -> bool {
        match self {
            Op::Less => value < bound,
            Op::AtMost => value <= bound,
            Op::Greater => value > bound,
            Op::AtLeast => value >= bound,
        }
    }

    /// Of two values, the one further from holding: the lower under `>`/`>=`, the higher under
    /// `<`/`<=`. A run's figure over several rows (one per thread) is its worst row's.
    pub fn worse(self, a: f64, b: f64) -> f64 {
        match self {
            Op::Less | Op::AtMost => a.max(b),
            Op::Greater | Op::AtLeast => a.min(b),
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            Op::Less => "<",
            Op::AtMost => "<=",
            Op::Greater => ">",
            Op::AtLeast => ">=",
        }
    }
}

/// A bound: the operator, the value in the column's unit, and the text as written.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bound {
    pub op: Op,
    pub value: f64,
    /// `>= 0.95`, `<= 5ms`: as the pipeline wrote it, spaces tidied.
    pub written: String,
}

impl Bound {
    pub fn holds(&self, value: f64) -> bool {
        self.op.holds(value, self.value)
    }
}

/// A bound on one column of one aggregate, over the rows a selector picks in each run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureExpectation {
    pub kind: ExpectKind,
    /// The bound key as written (`share`, `p99`, `per_s`).
    pub key: String,
    /// The aggregate column it bounds (`share`, `p99_ns`, `per_second`).
    pub column: String,
    pub unit: Unit,
    pub bound: Bound,
    /// The workload (for `cpu_activity`: none; its window names one).
    pub workload: Option<String>,
    /// Only the runs with these matrix values (every run when empty).
    pub variant: BTreeMap<String, String>,
    /// `residency`: `thread`, `process` or `workload` (each thread or process must hold);
    /// `cpu_activity`: `all`, `class` or `cpu`, from which of `class` and `cpu` is given.
    pub scope: Option<String>,
    pub class: Option<String>,
    pub cpu: Option<i32>,
    /// `cpu_share`: the phase (`before`, `during`, `after`, or `run`) and its reference workload.
    pub phase: Option<String>,
    pub reference: Option<String>,
    /// `cpu_activity`: the window (`run`, or the workload whose lifetime it is).
    pub window: Option<String>,
}

impl FigureExpectation {
    /// `residency_rollup.share of sha (workload, class P, pin=any)`.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if let Some(scope) = &self.scope {
            parts.push(format!("scope {scope}"));
        }
        if let Some(class) = &self.class {
            parts.push(format!("class {class}"));
        }
        if let Some(cpu) = self.cpu {
            parts.push(format!("CPU {cpu}"));
        }
        if let Some(phase) = &self.phase {
            match &self.reference {
                Some(reference) => parts.push(format!("phase {phase} {reference}")),
                None => parts.push(format!("phase {phase}")),
            }
        }
        parts.extend(self.variant.iter().map(|(k, v)| format!("{k}={v}")));
        let whose = match (&self.workload, &self.window) {
            (Some(workload), _) => format!(" of {workload}"),
            (None, Some(window)) => format!(" over {window}"),
            (None, None) => String::new(),
        };
        let figure = format!("{}.{}{whose}", self.kind.table(), self.column);
        if parts.is_empty() {
            figure
        } else {
            format!("{figure} ({})", parts.join(", "))
        }
    }
}

/// A verdict of `schedlab compare` that must not come out for the groups of the runs judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareExpectation {
    /// `label`, `variant`, `repetition` or a matrix variable, as `compare --by` takes it.
    pub by: String,
    /// The baseline group (`compare --baseline`); the default baseline without it.
    pub baseline: Option<String>,
    /// Only this group (a matrix value alone will do); every group but the baseline without it.
    pub group: Option<String>,
    pub workload: Option<String>,
    /// The figures whose name contains this text (as `compare --metric`).
    pub figure: String,
    pub not: Direction,
}

impl CompareExpectation {
    /// `compare by label: cpu_time of sha (group new)`.
    pub fn describe(&self) -> String {
        let whose = match &self.workload {
            Some(workload) => format!(" of {workload}"),
            None => String::new(),
        };
        let group = match &self.group {
            Some(group) => format!(" (group {group})"),
            None => String::new(),
        };
        format!("compare by {}: {}{whose}{group}", self.by, self.figure)
    }
}

/// The verdict a `compare` expectation rules out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Higher,
    Lower,
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Higher => "higher",
            Direction::Lower => "lower",
        })
    }
}
