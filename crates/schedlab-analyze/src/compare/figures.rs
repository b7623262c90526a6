//! Which aggregate columns become which figures: one [`Mapping`] per aggregate table, so that a
//! new aggregate is compared by adding its mapping to [`AGGREGATES`], not another loop.
//!
//! A figure's name is the table's part of it (`throughput/<test>/`, from the row) followed by the
//! column's (`effective_bytes_per_s`); its workload is the row's workload or window. The parse
//! stage's tables (`workload_metrics`, `processes`) name their figures from their rows alone and
//! are read in [`super::observations()`].

use std::collections::BTreeMap;

use schedlab_tables::{
    CpuActivityRow, CpuShareRow, CpuTimeRow, MigrationClassRow, NO_EARLIER_RUN, PlacementCostRow,
    PowerStepRow, ResidencyRollupRow, SchedDelayWorkloadRow, ThroughputRow, TotalsRow,
    WakeupPlacementRow,
};

use super::CompareInputs;

/// Each run's workloads' lifetimes in seconds, by (run, workload): what rates divide by.
pub(super) type Lifetimes<'a> = BTreeMap<(&'a str, &'a str), f64>;

/// A figure one row gives: (run, workload or window, name, unit, value, summed over the run's
/// rows rather than averaged).
pub(super) type RowFigure<'r> = (&'r str, &'r str, String, &'static str, f64, bool);

/// A column (or a value computed from a row) that becomes a figure.
struct Column<R> {
    /// The figure's name after the table's part of it.
    name: &'static str,
    unit: &'static str,
    /// Summed over a run's rows (threads, classes, windows of one workload); averaged otherwise.
    summed: bool,
    /// The row's value; `None`: this row gives no such figure.
    value: fn(&R, &Lifetimes<'_>) -> Option<f64>,
}

/// How one aggregate table becomes figures.
struct Mapping<R: 'static> {
    rows: fn(&CompareInputs) -> &[R],
    /// The rows that give figures.
    keep: fn(&R) -> bool,
    /// The run and the workload (or window) a row's figures are of.
    owner: fn(&R) -> (&str, &str),
    /// The table's part of the figure's name, with what the row is of.
    prefix: fn(&R) -> String,
    columns: &'static [Column<R>],
}

/// A [`Mapping`] of any row type.
pub(super) trait Figures: Sync {
    /// Every figure of every kept row of the table in `inputs`.
    fn of<'r>(&self, inputs: &'r CompareInputs, lifetimes: &Lifetimes<'_>) -> Vec<RowFigure<'r>>;
}

impl<R: Sync> Figures for Mapping<R> {
    fn of<'r>(&self, inputs: &'r CompareInputs, lifetimes: &Lifetimes<'_>) -> Vec<RowFigure<'r>> {
        let mut figures = Vec::new();
        for row in (self.rows)(inputs).iter().filter(|r| (self.keep)(r)) {
            let (run, workload) = (self.owner)(row);
            let prefix = (self.prefix)(row);
            for column in self.columns {
                if let Some(value) = (column.value)(row, lifetimes) {
                    let name = format!("{prefix}{}", column.name);
                    figures.push((run, workload, name, column.unit, value, column.summed));
                }
            }
        }
        figures
    }
}

fn every<R>(_: &R) -> bool {
    true
}

fn seconds(ns: i64) -> f64 {
    ns as f64 / 1e9
}

/// Every aggregate a comparison reads, each with its figures.
pub(super) static AGGREGATES: &[&dyn Figures] = &[
    &CPU_TIME,
    &THROUGHPUT,
    &CPU_SHARE,
    &RESIDENCY,
    &MIGRATIONS,
    &POWER_STEP,
    &PLACEMENT_COST,
    &WAKEUP_PLACEMENT,
    &MIGRATION_CLASSES,
    &SCHED_DELAY,
    &TURBOSTAT,
];

static CPU_TIME: Mapping<CpuTimeRow> = Mapping {
    rows: |i| &i.cpu_time,
    keep: every,
    owner: |c| (&c.run_id, &c.workload),
    prefix: |c| format!("{}/", c.source),
    columns: &[Column {
        name: "cpu_time_s",
        unit: "s",
        summed: true,
        value: |c, _| Some(seconds(c.cpu_time_ns)),
    }],
};

static THROUGHPUT: Mapping<ThroughputRow> = Mapping {
    rows: |i| &i.throughput,
    keep: every,
    owner: |t| (&t.run_id, &t.workload),
    prefix: |t| format!("throughput/{}/", t.test),
    columns: &[Column {
        name: "effective_bytes_per_s",
        unit: "B/s",
        summed: false,
        value: |t, _| Some(t.effective_bytes_per_s),
    }],
};

/// The CPUs a workload received per phase (and reference workload), on all CPUs or one class:
/// the row names the whole figure.
static CPU_SHARE: Mapping<CpuShareRow> = Mapping {
    rows: |i| &i.cpu_share,
    keep: every,
    owner: |c| (&c.run_id, &c.workload),
    prefix: |c| {
        let phase = match &c.reference {
            Some(reference) => format!("{} {reference}", c.phase),
            None => c.phase.clone(),
        };
        match c.class.as_str() {
            "all" => format!("cpu_share/{phase}"),
            class => format!("cpu_share/{phase}/{class}"),
        }
    },
    columns: &[Column {
        name: "",
        unit: "CPUs",
        summed: false,
        value: |c, _| Some(c.cpus),
    }],
};

/// Where the workload ran: its CPU time's share per core class.
static RESIDENCY: Mapping<ResidencyRollupRow> = Mapping {
    rows: |i| &i.residency_rollup,
    keep: |r| r.scope == "workload" && r.cpu.is_none(),
    owner: |r| (&r.run_id, &r.workload),
    prefix: |r| format!("residency/{}", r.class),
    columns: &[Column {
        name: "_share",
        unit: "share",
        summed: false,
        value: |r, _| Some(r.share),
    }],
};

/// Its migrations, in total and per second of its processes' lifetime.
static MIGRATIONS: Mapping<TotalsRow> = Mapping {
    rows: |i| &i.totals,
    keep: |t| t.scope == "workload" && t.migrations.is_some(),
    owner: |t| (&t.run_id, &t.workload),
    prefix: |_| "migrations/".to_owned(),
    columns: &[
        Column {
            name: "count",
            unit: "migrations",
            summed: true,
            value: |t, _| Some(t.migrations? as f64),
        },
        Column {
            name: "per_s",
            unit: "1/s",
            summed: false,
            value: |t, lifetimes| {
                let key = (t.run_id.as_str(), t.workload.as_str());
                let seconds = lifetimes.get(&key).filter(|s| **s > 0.0)?;
                Some(t.migrations? as f64 / seconds)
            },
        },
    ],
};

/// The step in package power, under its reference workload (or `run`).
static POWER_STEP: Mapping<PowerStepRow> = Mapping {
    rows: |i| &i.power_step,
    keep: every,
    owner: |p| (&p.run_id, p.reference.as_deref().unwrap_or("run")),
    prefix: |_| "power_step/".to_owned(),
    columns: &[
        Column {
            name: "step_watt",
            unit: "W",
            summed: false,
            value: |p, _| Some(p.step_watt),
        },
        Column {
            name: "after_start_s",
            unit: "s",
            summed: false,
            value: |p, _| Some(p.after_start_s),
        },
    ],
};

/// "Why here?", summed over the workload's threads.
static PLACEMENT_COST: Mapping<PlacementCostRow> = Mapping {
    rows: |i| &i.placement_cost,
    keep: every,
    owner: |c| (&c.run_id, &c.workload),
    prefix: |_| "placement_cost/".to_owned(),
    columns: &[
        Column {
            name: "slower_run_s",
            unit: "s",
            summed: true,
            value: |c, _| Some(seconds(c.slower_run_ns)),
        },
        Column {
            name: "faster_idle_s",
            unit: "s",
            summed: true,
            value: |c, _| Some(seconds(c.faster_idle_ns)),
        },
        Column {
            name: "faster_lower_prio_s",
            unit: "s",
            summed: true,
            value: |c, _| Some(seconds(c.faster_lower_prio_ns?)),
        },
        Column {
            name: "wait_idle_s",
            unit: "s",
            summed: true,
            value: |c, _| Some(seconds(c.wait_idle_ns)),
        },
    ],
};

static WAKEUP_PLACEMENT: Mapping<WakeupPlacementRow> = Mapping {
    rows: |i| &i.wakeup_placement,
    keep: every,
    owner: |w| (&w.run_id, &w.workload),
    prefix: |_| "wakeup_placement/".to_owned(),
    columns: &[
        Column {
            name: "wakeups_to_other_class",
            unit: "wakeups",
            summed: true,
            value: |w, _| {
                let moved = w.from_class != w.to_class && w.from_class != NO_EARLIER_RUN;
                Some(if moved { w.wakeups as f64 } else { 0.0 })
            },
        },
        Column {
            name: "wakeups_onto_busy_while_idle",
            unit: "wakeups",
            summed: true,
            value: |w, _| Some(w.onto_busy_while_idle as f64),
        },
    ],
};

static MIGRATION_CLASSES: Mapping<MigrationClassRow> = Mapping {
    rows: |i| &i.migration_classes,
    keep: every,
    owner: |m| (&m.run_id, &m.workload),
    prefix: |_| "migration_classes/".to_owned(),
    columns: &[
        Column {
            name: "at_wakeup",
            unit: "migrations",
            summed: true,
            value: |m, _| Some(m.at_wakeup as f64),
        },
        Column {
            name: "while_runnable",
            unit: "migrations",
            summed: true,
            value: |m, _| Some(m.runnable as f64),
        },
    ],
};

static SCHED_DELAY: Mapping<SchedDelayWorkloadRow> = Mapping {
    rows: |i| &i.sched_delay_workloads,
    keep: every,
    owner: |d| (&d.run_id, &d.workload),
    prefix: |_| "sched_delay/".to_owned(),
    columns: &[
        Column {
            name: "mean_ms",
            unit: "ms",
            summed: false,
            value: |d, _| Some(d.mean_ns? / 1e6),
        },
        Column {
            name: "p99_ms",
            unit: "ms",
            summed: false,
            value: |d, _| Some(d.p99_ns? as f64 / 1e6),
        },
        Column {
            name: "preempt_wait_mean_ms",
            unit: "ms",
            summed: false,
            value: |d, _| Some(d.preempt_wait_mean_ns? / 1e6),
        },
        Column {
            name: "preempt_wait_p99_ms",
            unit: "ms",
            summed: false,
            value: |d, _| Some(d.preempt_wait_p99_ns? as f64 / 1e6),
        },
    ],
};

/// turbostat's figures for all CPUs and per core class, under the window's name (a workload, or
/// `run`).
static TURBOSTAT: Mapping<CpuActivityRow> = Mapping {
    rows: |i| &i.cpu_activity,
    keep: |a| a.scope != "cpu",
    owner: |a| (&a.run_id, &a.window),
    prefix: |a| match (a.scope.as_str(), &a.class) {
        ("class", Some(class)) => format!("turbostat/{class}/"),
        _ => "turbostat/".to_owned(),
    },
    columns: &[
        Column {
            name: "busy_pct",
            unit: "%",
            summed: false,
            value: |a, _| a.busy_pct,
        },
        Column {
            name: "avg_mhz",
            unit: "MHz",
            summed: false,
            value: |a, _| a.avg_mhz,
        },
        Column {
            name: "bzy_mhz",
            unit: "MHz",
            summed: false,
            value: |a, _| a.bzy_mhz,
        },
        Column {
            name: "c6_pct",
            unit: "%",
            summed: false,
            value: |a, _| a.c6_pct,
        },
        Column {
            name: "pkg_watt",
            unit: "W",
            summed: false,
            value: |a, _| a.pkg_watt,
        },
    ],
};
