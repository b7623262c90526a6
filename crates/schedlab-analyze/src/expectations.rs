//! A pipeline's `expect:` judged against its aggregates: the `expectations` table.
//!
//! Each figure expectation picks, in every run of the label judged (and of its `variant`), the
//! rows of one aggregate that its selector names, and bounds one column. A run's figure is its
//! worst row's where the selector picks several (every thread of a workload, say), so "every
//! thread" holds when the run's figure does. The rule that decides is **every run**: an
//! expectation holds for a label when it holds in each of the label's runs, fails when it fails
//! in one, and cannot be judged when a run lacks the figure (or failed) and none fails. The
//! mean over the runs is shown beside it. A `compare` expectation compares the groups as
//! `schedlab compare` does (every run on disk, through [`crate::compare`]) and judges the
//! groups that hold runs of the label judged: the verdict it rules out fails it, and `too few
//! runs`, `no baseline runs` and `inconclusive` cannot judge.
//!
//! Labels are judged apart, as `schedlab check --label` judges one: a regression under a new
//! kernel is not averaged with the old kernel's runs.

use std::collections::BTreeMap;

use schedlab_spec::{CompareExpectation, Direction, ExpectKind, Expectation, FigureExpectation};
use schedlab_tables::manifest::RunStatus;
use schedlab_tables::{
    CpuActivityRow, CpuShareRow, ExpectationRow, Judgement, MigrationSummaryRow,
    ResidencyRollupRow, RunRow, SchedDelayWorkloadRow, TotalsRow, Verdict,
};

use crate::compare::{self, CompareInputs, GroupBy};

/// The parse stage's tables expectations read besides the aggregates: the runs' labels,
/// variants and status, and what a comparison reads of the processes and workloads' figures.
pub const TABLES_READ: [&str; 3] = ["runs", "processes", "workload_metrics"];

/// What the expectations read: compare's inputs (every aggregate a comparison reads, the
/// `runs` and `processes` tables), and each thread's migrations.
pub struct ExpectationInputs<'a> {
    pub compare: &'a CompareInputs,
    pub migrations: &'a [MigrationSummaryRow],
}

/// Judges every expectation for every label among the runs (in the order the labels were first
/// collected; unlabelled runs are one label): a row per run (per group for `compare`), then the
/// row over the label's runs that decides.
pub fn evaluate(expect: &[Expectation], inputs: &ExpectationInputs<'_>) -> Vec<ExpectationRow> {
    let labels = labels(&inputs.compare.runs);
    let mut rows = Vec::new();
    for (index, expectation) in expect.iter().enumerate() {
        let number = index as i64 + 1;
        let judge = Judge {
            number,
            figure: expectation.figure(),
            bound: expectation.bound(),
        };
        match expectation {
            Expectation::Figure(figure) => {
                for (label, runs) in &labels {
                    rows.extend(judge.figure(figure, label.as_deref(), runs, inputs));
                }
            }
            Expectation::Compare(compare) => {
                let compared = compared(compare, inputs.compare);
                for (label, runs) in &labels {
                    rows.extend(judge.compare(compare, &compared, label.as_deref(), runs));
                }
            }
        }
    }
    rows
}

/// The rows that decide for `label` (`scope` `runs`), one per expectation, in order.
pub fn deciding<'a>(rows: &'a [ExpectationRow], label: Option<&str>) -> Vec<&'a ExpectationRow> {
    (rows.iter())
        .filter(|r| r.scope == "runs" && r.label.as_deref() == label)
        .collect()
}

/// Whether a set of deciding rows holds: `Fail` when one fails, else `CannotJudge` when one
/// cannot be judged (or there are none), else `Pass`.
pub fn overall<'a>(rows: impl IntoIterator<Item = &'a ExpectationRow>) -> Judgement {
    combine(rows.into_iter().map(|r| r.judgement))
}

fn combine(judgements: impl IntoIterator<Item = Judgement>) -> Judgement {
    let mut any = false;
    let mut result = Judgement::Pass;
    for judgement in judgements {
        any = true;
        match judgement {
            Judgement::Fail => return Judgement::Fail,
            Judgement::CannotJudge => result = Judgement::CannotJudge,
            Judgement::Pass => {}
        }
    }
    if any { result } else { Judgement::CannotJudge }
}

/// Each label's completed and failed runs in collection order, labels by their first run.
fn labels(runs: &[RunRow]) -> Vec<(Option<String>, Vec<&RunRow>)> {
    let mut sorted: Vec<&RunRow> = (runs.iter())
        .filter(|r| r.status != RunStatus::Interrupted)
        .collect();
    sorted.sort_by(|a, b| (&a.started_at, &a.run_id).cmp(&(&b.started_at, &b.run_id)));
    let mut labels: Vec<(Option<String>, Vec<&RunRow>)> = Vec::new();
    for run in sorted {
        match labels.iter_mut().find(|(label, _)| *label == run.label) {
            Some((_, runs)) => runs.push(run),
            None => labels.push((run.label.clone(), vec![run])),
        }
    }
    labels
}

/// One expectation's words, shared by its rows.
struct Judge {
    number: i64,
    figure: String,
    bound: String,
}

/// A run's figure: its value (the worst row's) and which row that was, or why there is none.
type RunFigure = Result<(f64, Option<String>), String>;

impl Judge {
    fn row(&self, label: Option<&str>, scope: &str) -> ExpectationRow {
        ExpectationRow {
            expectation: self.number,
            figure: self.figure.clone(),
            bound: self.bound.clone(),
            label: label.map(str::to_owned),
            scope: scope.to_owned(),
            run_id: None,
            group: None,
            run_ids: String::new(),
            value: None,
            worst: None,
            unit: String::new(),
            judgement: Judgement::CannotJudge,
            reason: None,
        }
    }

    fn figure(
        &self,
        e: &FigureExpectation,
        label: Option<&str>,
        runs: &[&RunRow],
        inputs: &ExpectationInputs<'_>,
    ) -> Vec<ExpectationRow> {
        let unit = e.unit.word().to_owned();
        let mut rows = Vec::new();
        let judged: Vec<&&RunRow> = (runs.iter())
            .filter(|run| variant_has(&run.variant, &e.variant))
            .collect();
        for run in &judged {
            let mut row = ExpectationRow {
                run_id: Some(run.run_id.clone()),
                run_ids: run.run_id.clone(),
                unit: unit.clone(),
                ..self.row(label, "run")
            };
            // A failed run, or one whose workload was stopped before it ended, measured only
            // part of what the pipeline asks: its figures cannot judge.
            let unjudged = match run.status {
                RunStatus::Failed => Some("the run failed (its quality rows say why)"),
                RunStatus::WorkloadStopped => Some(
                    "a workload was stopped at the end of collection before it ended (its quality rows say which)",
                ),
                _ => None,
            };
            if let Some(why) = unjudged {
                row.reason = Some(why.into());
                rows.push(row);
                continue;
            }
            match run_figure(e, &run.run_id, inputs) {
                Ok((value, which)) => {
                    row.value = Some(value);
                    row.judgement = if e.bound.holds(value) {
                        Judgement::Pass
                    } else {
                        Judgement::Fail
                    };
                    if row.judgement == Judgement::Fail {
                        let at = which.map(|w| format!(" ({w})")).unwrap_or_default();
                        row.reason = Some(format!(
                            "{}{at}, not {}",
                            e.unit.format(value),
                            e.bound.written
                        ));
                    }
                }
                Err(why) => row.reason = Some(why),
            }
            rows.push(row);
        }
        let values: Vec<f64> = rows.iter().filter_map(|r| r.value).collect();
        let mut all = ExpectationRow {
            run_ids: (judged.iter().map(|r| r.run_id.as_str()))
                .collect::<Vec<_>>()
                .join(","),
            unit,
            value: (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64),
            worst: values.iter().copied().reduce(|a, b| e.bound.op.worse(a, b)),
            judgement: combine(rows.iter().map(|r| r.judgement)),
            ..self.row(label, "runs")
        };
        all.reason = match all.judgement {
            _ if judged.is_empty() => Some(if e.variant.is_empty() {
                "no run to judge".to_owned()
            } else {
                format!("no run of variant {}", variant_words(&e.variant))
            }),
            Judgement::Pass => None,
            judgement => Some(runs_saying(&rows, judgement)),
        };
        rows.push(all);
        rows
    }

    fn compare(
        &self,
        e: &CompareExpectation,
        compared: &Result<Vec<schedlab_tables::ComparisonRow>, String>,
        label: Option<&str>,
        runs: &[&RunRow],
    ) -> Vec<ExpectationRow> {
        let mut all = ExpectationRow {
            run_ids: (runs.iter().map(|r| r.run_id.as_str()))
                .collect::<Vec<_>>()
                .join(","),
            unit: "%".into(),
            ..self.row(label, "runs")
        };
        let compared = match compared {
            Ok(rows) => rows,
            Err(why) => {
                all.reason = Some(why.clone());
                return vec![all];
            }
        };
        let judged_runs: Vec<&str> = runs.iter().map(|r| r.run_id.as_str()).collect();
        let in_group = |group: &str, wanted: &str| {
            group == wanted || group.split_once('=').is_some_and(|(_, v)| v == wanted)
        };
        let picked: Vec<&schedlab_tables::ComparisonRow> = (compared.iter())
            .filter(|c| c.metric.contains(&e.figure))
            .filter(|c| e.workload.as_ref().is_none_or(|w| *w == c.workload))
            .filter(|c| e.group.as_ref().is_none_or(|g| in_group(&c.group, g)))
            .filter(|c| c.run_ids.split(',').any(|id| judged_runs.contains(&id)))
            .collect();
        let mut rows = Vec::new();
        for c in picked.iter().filter(|c| c.verdict != Verdict::Baseline) {
            let context = match c.context.as_str() {
                "" => String::new(),
                context => format!(", {context}"),
            };
            let said = format!(
                "{} {}{context}: {} against {}",
                c.workload, c.metric, c.verdict, c.baseline
            );
            let (judgement, note) = match c.verdict {
                v if v == ruled_out(e.not) => (Judgement::Fail, None),
                Verdict::Higher | Verdict::Lower | Verdict::WithinNoise => (Judgement::Pass, None),
                _ => (Judgement::CannotJudge, c.verdict_note.clone()),
            };
            let reason = match note {
                Some(note) => format!("{said} ({note})"),
                None => said,
            };
            rows.push(ExpectationRow {
                group: Some(c.group.clone()),
                run_ids: c.run_ids.clone(),
                value: c.diff_pct,
                unit: "%".into(),
                judgement,
                reason: Some(reason),
                ..self.row(label, "group")
            });
        }
        all.judgement = combine(rows.iter().map(|r| r.judgement));
        all.worst = (rows.iter().filter_map(|r| r.value)).reduce(|a, b| match e.not {
            Direction::Higher => a.max(b),
            Direction::Lower => a.min(b),
        });
        all.reason = if rows.is_empty() {
            let baseline_only = picked.iter().any(|c| c.verdict == Verdict::Baseline);
            Some(if baseline_only {
                "these runs are the comparison's baseline".to_owned()
            } else {
                format!(
                    "no figure whose name contains `{}` compares these runs with a baseline \
                     (too few groups, or the figure is missing)",
                    e.figure
                )
            })
        } else {
            match all.judgement {
                Judgement::Pass => None,
                judgement => Some(
                    (rows.iter())
                        .filter(|r| r.judgement == judgement)
                        .filter_map(|r| r.reason.clone())
                        .collect::<Vec<_>>()
                        .join("; "),
                ),
            }
        };
        rows.push(all);
        rows
    }
}

fn ruled_out(direction: Direction) -> Verdict {
    match direction {
        Direction::Higher => Verdict::Higher,
        Direction::Lower => Verdict::Lower,
    }
}

/// The comparison a `compare` expectation reads, or why there is none.
fn compared(
    e: &CompareExpectation,
    inputs: &CompareInputs,
) -> Result<Vec<schedlab_tables::ComparisonRow>, String> {
    let by = GroupBy::from_name(&e.by);
    let (observations, groups) = compare::observations(inputs, &by).map_err(|e| e.to_string())?;
    let selection = compare::Selection {
        baseline: e.baseline.clone(),
        groups: Vec::new(),
    };
    compare::compare(&observations, &groups, &by, &selection, None).map_err(|e| e.to_string())
}

/// `2 of 3 runs: a-r2 0.80 (tid 7), …`: the runs whose rows came to `judgement`.
fn runs_saying(rows: &[ExpectationRow], judgement: Judgement) -> String {
    let said: Vec<String> = (rows.iter())
        .filter(|r| r.judgement == judgement)
        .map(|r| {
            let run = r.run_id.as_deref().unwrap_or_default();
            match &r.reason {
                Some(reason) => format!("{run}: {reason}"),
                None => run.to_owned(),
            }
        })
        .collect();
    format!("{} of {} runs: {}", said.len(), rows.len(), said.join("; "))
}

/// Whether a run's variant text (`k=v,k=v`) has every value of `wanted`.
fn variant_has(variant: &str, wanted: &BTreeMap<String, String>) -> bool {
    let values: BTreeMap<&str, &str> = (variant.split(','))
        .filter_map(|pair| pair.split_once('='))
        .collect();
    (wanted.iter()).all(|(k, v)| values.get(k.as_str()) == Some(&v.as_str()))
}

fn variant_words(variant: &BTreeMap<String, String>) -> String {
    (variant.iter())
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The figure of one run: the worst of the rows `e` picks, in its column's unit.
fn run_figure(e: &FigureExpectation, run: &str, inputs: &ExpectationInputs<'_>) -> RunFigure {
    let tables = inputs.compare;
    let workload = e.workload.as_deref().unwrap_or_default();
    let mine = |row_run: &str, row_workload: &str| row_run == run && row_workload == workload;
    let missing = || {
        format!(
            "no {} rows of {} in this run",
            e.kind.table(),
            e.workload
                .as_deref()
                .or(e.window.as_deref())
                .unwrap_or("it")
        )
    };
    // (value, which row) per row the selector picks; `None` where the row lacks the figure.
    let picked: Vec<(Option<f64>, Option<String>)> = match e.kind {
        ExpectKind::Residency => residency(e, &tables.residency_rollup, &mine),
        ExpectKind::Migrations => (inputs.migrations.iter())
            .filter(|m| mine(&m.run_id, &m.workload))
            .map(|m| {
                (
                    migrations_column(m, &e.column),
                    Some(format!("tid {}", m.tid)),
                )
            })
            .collect(),
        ExpectKind::SchedDelay => (tables.sched_delay_workloads.iter())
            .filter(|d| mine(&d.run_id, &d.workload))
            .map(|d| (sched_delay_column(d, &e.column), None))
            .collect(),
        ExpectKind::CpuTime => (tables.totals.iter())
            .filter(|t| mine(&t.run_id, &t.workload) && t.scope == "workload")
            .map(|t: &TotalsRow| (t.cpu_time_ns.map(|ns| ns as f64), None))
            .collect(),
        ExpectKind::CpuShare => cpu_share(e, &tables.cpu_share, &mine),
        ExpectKind::CpuActivity => (tables.cpu_activity.iter())
            .filter(|a| a.run_id == run && Some(a.window.as_str()) == e.window.as_deref())
            .filter(|a| Some(a.scope.as_str()) == e.scope.as_deref())
            .filter(|a| e.class.is_none() || a.class == e.class)
            .filter(|a| e.cpu.is_none() || a.cpu == e.cpu)
            .map(|a| {
                let which = a.cpu.map(|cpu| format!("CPU {cpu}"));
                (activity_column(a, &e.column), which)
            })
            .collect(),
    };
    if picked.is_empty() {
        return Err(missing());
    }
    let known: Vec<(f64, Option<String>)> = (picked.into_iter())
        .filter_map(|(value, which)| Some((value?, which)))
        .collect();
    known
        .into_iter()
        .reduce(|a, b| {
            if e.bound.op.worse(a.0, b.0) == a.0 {
                a
            } else {
                b
            }
        })
        .ok_or_else(|| format!("{}.{} is empty in this run", e.kind.table(), e.column))
}

/// `residency_rollup`: per workload, process or thread (the scope), its row of the class or CPU,
/// and 0 for one that has rows but none there (it never ran on that class).
fn residency(
    e: &FigureExpectation,
    rows: &[ResidencyRollupRow],
    mine: &dyn Fn(&str, &str) -> bool,
) -> Vec<(Option<f64>, Option<String>)> {
    let scope = e.scope.as_deref().unwrap_or("workload");
    // (pid, tid) → the row that matches, if any.
    let mut units: BTreeMap<(Option<i32>, Option<i32>), Option<&ResidencyRollupRow>> =
        BTreeMap::new();
    for r in rows
        .iter()
        .filter(|r| mine(&r.run_id, &r.workload) && r.scope == scope)
    {
        let matches = match (e.cpu, &e.class) {
            (Some(cpu), _) => r.cpu == Some(cpu),
            (None, Some(class)) => r.cpu.is_none() && r.class == *class,
            (None, None) => false,
        };
        let unit = units.entry((r.pid, r.tid)).or_default();
        if matches {
            *unit = Some(r);
        }
    }
    (units.into_iter())
        .map(|((pid, tid), row)| {
            let value = match row {
                Some(r) if e.column == "run_ns" => r.run_ns as f64,
                Some(r) => r.share,
                None => 0.0,
            };
            let which = match (tid, pid) {
                (Some(tid), _) => Some(format!("tid {tid}")),
                (None, Some(pid)) => Some(format!("pid {pid}")),
                _ => None,
            };
            (Some(value), which)
        })
        .collect()
}

/// `cpu_share`: the workload's row of the phase and class, 0 for a class it had no time on in a
/// phase it has rows in.
fn cpu_share(
    e: &FigureExpectation,
    rows: &[CpuShareRow],
    mine: &dyn Fn(&str, &str) -> bool,
) -> Vec<(Option<f64>, Option<String>)> {
    let in_phase: Vec<&CpuShareRow> = (rows.iter())
        .filter(|c| mine(&c.run_id, &c.workload))
        .filter(|c| c.reference == e.reference && Some(c.phase.as_str()) == e.phase.as_deref())
        .collect();
    if in_phase.is_empty() {
        return Vec::new();
    }
    let class = e.class.as_deref().unwrap_or("all");
    let value = match in_phase.iter().find(|c| c.class == class) {
        Some(c) if e.column == "change_cpus" => c.change_cpus,
        Some(c) => Some(c.cpus),
        None if e.column == "change_cpus" => None,
        None => Some(0.0),
    };
    vec![(value, None)]
}

fn migrations_column(m: &MigrationSummaryRow, column: &str) -> Option<f64> {
    match column {
        "migrations" => Some(m.migrations as f64),
        "startup_migrations" => Some(m.startup_migrations as f64),
        "steady_migrations" => Some(m.steady_migrations as f64),
        "per_second" => m.per_second,
        _ => None,
    }
}

fn sched_delay_column(d: &SchedDelayWorkloadRow, column: &str) -> Option<f64> {
    let int = |v: Option<i64>| v.map(|v| v as f64);
    match column {
        "mean_ns" => d.mean_ns,
        "p50_ns" => int(d.p50_ns),
        "p90_ns" => int(d.p90_ns),
        "p99_ns" => int(d.p99_ns),
        "max_ns" => int(d.max_ns),
        "preempt_wait_mean_ns" => d.preempt_wait_mean_ns,
        "preempt_wait_p50_ns" => int(d.preempt_wait_p50_ns),
        "preempt_wait_p90_ns" => int(d.preempt_wait_p90_ns),
        "preempt_wait_p99_ns" => int(d.preempt_wait_p99_ns),
        "preempt_wait_max_ns" => int(d.preempt_wait_max_ns),
        _ => None,
    }
}

fn activity_column(a: &CpuActivityRow, column: &str) -> Option<f64> {
    match column {
        "busy_pct" => a.busy_pct,
        "avg_mhz" => a.avg_mhz,
        "bzy_mhz" => a.bzy_mhz,
        "c1_pct" => a.c1_pct,
        "c6_pct" => a.c6_pct,
        "core_tmp_c_max" => a.core_tmp_c_max,
        "pkg_watt" => a.pkg_watt,
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use schedlab_spec::{CompileOptions, compile};
    use schedlab_tables::WorkloadMetricRow;

    use super::*;

    /// The `expect:` of a pipeline with a workload `w` (and a matrix `pin: [a, b]`).
    fn expect(entries: &str) -> Vec<Expectation> {
        let yaml = format!(
            "name: t\nmatrix: {{ pin: [a, b] }}\ncollect:\n  workloads:\n    w: {{ run: [x] }}\nexpect:\n{entries}"
        );
        let classes = [("P".to_owned(), vec![0]), ("E".to_owned(), vec![1])];
        let options = CompileOptions {
            parsers: &[],
            nproc: 2,
            classes: &classes,
            short: false,
            name_part: |_| Ok(()),
            repeat: None,
        };
        compile("t.yaml", &yaml, &options).unwrap().summarize.expect
    }

    fn run(id: &str, label: Option<&str>, variant: &str, status: RunStatus) -> RunRow {
        RunRow {
            run_id: id.into(),
            pipeline: "t".into(),
            label: label.map(Into::into),
            variant: variant.into(),
            repetition: 1,
            host: "h".into(),
            kernel: "k".into(),
            cpu_model: "c".into(),
            started_at: format!("2026-12-01T00:00:{id}"),
            status,
            duration_ns: 1,
            trace_window_start_ns: None,
            trace_window_end_ns: None,
            kernel_build: None,
            kernel_config_digest: None,
            sched_config: None,
            imported: false,
        }
    }

    fn share(
        run: &str,
        scope: &str,
        tid: Option<i32>,
        class: &str,
        share: f64,
    ) -> ResidencyRollupRow {
        ResidencyRollupRow {
            run_id: run.into(),
            workload: "w".into(),
            scope: scope.into(),
            pid: tid.map(|_| 1),
            tid,
            cpu: None,
            class: class.into(),
            run_ns: 1,
            share,
            source: "sched".into(),
            lost_events: Some(0),
        }
    }

    fn judge(expect: &[Expectation], inputs: &CompareInputs) -> Vec<ExpectationRow> {
        evaluate(
            expect,
            &ExpectationInputs {
                compare: inputs,
                migrations: &[],
            },
        )
    }

    /// (scope, run or group, value, judgement, reason) of each row.
    type Said = (String, String, Option<f64>, Judgement, Option<String>);

    fn said(rows: &[ExpectationRow]) -> Vec<Said> {
        (rows.iter())
            .map(|r| {
                let at = r.run_id.clone().or(r.group.clone()).unwrap_or_default();
                (r.scope.clone(), at, r.value, r.judgement, r.reason.clone())
            })
            .collect()
    }

    fn row(
        scope: &str,
        at: &str,
        value: Option<f64>,
        judgement: Judgement,
        reason: Option<&str>,
    ) -> Said {
        (
            scope.into(),
            at.into(),
            value,
            judgement,
            reason.map(Into::into),
        )
    }

    #[test]
    fn a_figure_holds_when_it_holds_in_every_run_and_the_mean_is_shown() {
        let mut inputs = CompareInputs::default();
        for id in ["01", "02"] {
            inputs
                .runs
                .push(run(id, None, "pin=a", RunStatus::Completed));
        }
        inputs.residency_rollup = vec![
            share("01", "workload", None, "P", 0.98),
            share("01", "workload", None, "E", 0.02),
            share("02", "workload", None, "P", 0.90),
            share("02", "workload", None, "E", 0.10),
        ];
        let rows = judge(
            &expect("  - residency: { workload: w, class: P, share: \">= 0.95\" }\n"),
            &inputs,
        );
        assert_eq!(
            said(&rows),
            [
                row("run", "01", Some(0.98), Judgement::Pass, None),
                row(
                    "run",
                    "02",
                    Some(0.90),
                    Judgement::Fail,
                    Some("0.900, not >= 0.95")
                ),
                row(
                    "runs",
                    "",
                    Some(0.94),
                    Judgement::Fail,
                    Some("1 of 2 runs: 02: 0.900, not >= 0.95")
                ),
            ]
        );
        assert_eq!(rows[2].worst, Some(0.90));
        assert_eq!(rows[2].run_ids, "01,02");
        assert_eq!(overall(deciding(&rows, None)), Judgement::Fail);
        // The same runs hold a lower bound.
        let rows = judge(
            &expect("  - residency: { workload: w, class: P, share: \">= 0.9\" }\n"),
            &inputs,
        );
        assert_eq!(overall(deciding(&rows, None)), Judgement::Pass);
    }

    #[test]
    fn every_thread_must_hold_and_a_class_it_never_ran_on_is_a_share_of_zero() {
        let mut inputs = CompareInputs::default();
        inputs
            .runs
            .push(run("01", None, "pin=a", RunStatus::Completed));
        inputs.residency_rollup = vec![
            share("01", "thread", Some(7), "P", 1.0),
            share("01", "thread", Some(8), "E", 1.0),
        ];
        let rows = judge(
            &expect("  - residency: { workload: w, scope: thread, class: P, share: \">= 0.5\" }\n"),
            &inputs,
        );
        assert_eq!(rows[0].value, Some(0.0));
        assert_eq!(rows[0].reason.as_deref(), Some("0.000 (tid 8), not >= 0.5"));
    }

    #[test]
    fn a_missing_figure_a_failed_run_and_a_variant_without_runs_cannot_be_judged() {
        let mut inputs = CompareInputs::default();
        inputs
            .runs
            .push(run("01", None, "pin=a", RunStatus::Completed));
        inputs
            .runs
            .push(run("02", None, "pin=a", RunStatus::Failed));
        inputs.residency_rollup = vec![share("02", "workload", None, "P", 1.0)];
        let rows = judge(
            &expect(
                "  - residency: { workload: w, class: P, share: \">= 0.5\" }
  - residency: { workload: w, class: P, share: \">= 0.5\", variant: { pin: b } }\n",
            ),
            &inputs,
        );
        assert_eq!(
            said(&rows),
            [
                row(
                    "run",
                    "01",
                    None,
                    Judgement::CannotJudge,
                    Some("no residency_rollup rows of w in this run")
                ),
                row(
                    "run",
                    "02",
                    None,
                    Judgement::CannotJudge,
                    Some("the run failed (its quality rows say why)")
                ),
                row(
                    "runs",
                    "",
                    None,
                    Judgement::CannotJudge,
                    Some(
                        "2 of 2 runs: 01: no residency_rollup rows of w in this run; 02: the run \
                         failed (its quality rows say why)"
                    )
                ),
                row(
                    "runs",
                    "",
                    None,
                    Judgement::CannotJudge,
                    Some("no run of variant pin=b")
                ),
            ]
        );
    }

    fn wall(run: &str, seconds: f64) -> WorkloadMetricRow {
        WorkloadMetricRow {
            run_id: run.into(),
            workload: "w".into(),
            instance: 0,
            tid: None,
            tool: "time".into(),
            metric: "wall_time_s".into(),
            value: seconds,
            unit: "s".into(),
        }
    }

    #[test]
    fn labels_are_judged_apart_and_a_compare_fails_the_label_whose_group_has_the_verdict() {
        let mut inputs = CompareInputs::default();
        // The `old` kernel's builds take 10 s, the `new` one's 12 s.
        for (id, label, seconds) in [
            ("01", "old", 10.0),
            ("02", "old", 10.1),
            ("03", "old", 9.9),
            ("04", "new", 12.0),
            ("05", "new", 12.1),
            ("06", "new", 11.9),
        ] {
            inputs
                .runs
                .push(run(id, Some(label), "pin=a", RunStatus::Completed));
            inputs.workload_metrics.push(wall(id, seconds));
        }
        let rows = judge(
            &expect("  - compare: { figure: wall_time, not: higher }\n"),
            &inputs,
        );
        let old = deciding(&rows, Some("old"));
        assert_eq!(old[0].judgement, Judgement::CannotJudge);
        assert_eq!(
            old[0].reason.as_deref(),
            Some("these runs are the comparison's baseline")
        );
        let new = deciding(&rows, Some("new"));
        assert_eq!(new[0].judgement, Judgement::Fail);
        assert_eq!(
            new[0].reason.as_deref(),
            Some("w time/wall_time_s, pin=a: higher against old")
        );
        let group = rows.iter().find(|r| r.scope == "group").unwrap();
        assert_eq!(group.run_ids, "04,05,06");
        assert!((group.value.unwrap() - 20.0).abs() < 1e-9, "{group:?}");
        // Ruling out `lower` instead, the new kernel passes.
        let rows = judge(
            &expect("  - compare: { figure: wall_time, not: lower }\n"),
            &inputs,
        );
        assert_eq!(overall(deciding(&rows, Some("new"))), Judgement::Pass);
        // One run a side: too few for a verdict.
        inputs
            .runs
            .retain(|r| ["01", "04"].contains(&r.run_id.as_str()));
        let rows = judge(
            &expect("  - compare: { figure: wall_time, not: higher }\n"),
            &inputs,
        );
        assert_eq!(
            overall(deciding(&rows, Some("new"))),
            Judgement::CannotJudge
        );
    }
}
