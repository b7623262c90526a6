//! Repetitions into comparisons: is a difference between two configurations real, or noise?
//!
//! Seed 002 times kernel builds under three kernels, five times each, and asks whether a 2-3 %
//! difference is real. [`observations`] turns every completed run into one value per workload
//! and figure; [`compare`] groups the runs (by label, by variant, or by one matrix variable) and
//! reports, per group, the mean over its repetitions with a Student-t 95 % interval, and its
//! difference from the baseline group with Welch's 95 % interval. A difference whose interval
//! excludes zero is `higher` or `lower`; one whose interval includes zero is `within noise`.
//!
//! Welch's interval does not assume the groups have equal variance: a noisier kernel does not
//! borrow the quieter one's spread. Runs are compared only with runs that share everything but
//! the grouping key (the *context*), so `--by label` on a pipeline with a matrix compares each
//! variant across labels separately.

use std::collections::BTreeMap;

use crate::stats::Sample;
use schedlab_tables::manifest::RunStatus;
use schedlab_tables::{
    ComparisonRow, CpuActivityRow, CpuShareRow, CpuTimeRow, MigrationClassRow, NO_EARLIER_RUN,
    PlacementCostRow, ProcessRow, RunRow, SchedDelayWorkloadRow, ThroughputRow, Verdict,
    WakeupPlacementRow, WorkloadMetricRow,
};

/// What runs are grouped by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupBy {
    /// The `--label` a run was collected with (e.g. the kernel under test).
    Label,
    /// The whole matrix expansion (`workers=4,pin=none`).
    Variant,
    /// One matrix variable; the others become the context.
    Variable(String),
}

impl GroupBy {
    /// `label`, `variant`, or any other name: a matrix variable.
    pub fn from_name(name: &str) -> GroupBy {
        match name {
            "label" => GroupBy::Label,
            "variant" => GroupBy::Variant,
            other => GroupBy::Variable(other.to_owned()),
        }
    }

    /// The name `--by` takes, and the `by` column and file name say.
    pub fn name(&self) -> &str {
        match self {
            GroupBy::Label => "label",
            GroupBy::Variant => "variant",
            GroupBy::Variable(name) => name,
        }
    }
}

/// Why runs cannot be compared as asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompareError {
    #[error(
        "no completed run to compare ({failed} failed or interrupted; hint: `schedlab status` lists them)"
    )]
    NoCompletedRuns { failed: usize },
    #[error(
        "no run has the matrix variable `{name}` (hint: group by `label`, `variant`{})",
        known.iter().map(|k| format!(", `{k}`")).collect::<String>()
    )]
    UnknownVariable { name: String, known: Vec<String> },
    #[error("no group `{name}` to use as the baseline (groups: {})", known.join(", "))]
    UnknownBaseline { name: String, known: Vec<String> },
}

/// The tables a comparison reads: the parse stage's `runs`, `processes` and `workload_metrics`,
/// and the `cpu_time` and `throughput` aggregates where the pipeline computed them.
#[derive(Debug, Default)]
pub struct CompareInputs {
    /// The pipeline's matrix variants (`k=v,k=v`, as in `runs.variant`) in the order it lists
    /// them: groups of variants come in this order, so the default baseline is the matrix's first
    /// value even when `shuffle` ran another first.
    pub variant_order: Vec<String>,
    pub runs: Vec<RunRow>,
    pub processes: Vec<ProcessRow>,
    pub workload_metrics: Vec<WorkloadMetricRow>,
    pub cpu_time: Vec<CpuTimeRow>,
    pub throughput: Vec<ThroughputRow>,
    pub cpu_share: Vec<CpuShareRow>,
    pub cpu_activity: Vec<CpuActivityRow>,
    pub placement_cost: Vec<PlacementCostRow>,
    pub wakeup_placement: Vec<WakeupPlacementRow>,
    pub migration_classes: Vec<MigrationClassRow>,
    pub sched_delay_workloads: Vec<SchedDelayWorkloadRow>,
}

/// One figure of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    pub run_id: String,
    pub group: String,
    pub context: String,
    pub workload: String,
    pub metric: String,
    pub unit: String,
    pub value: f64,
}

/// A figure of a run: where several instances or threads report it, their mean; CPU time is
/// the sum over the workload's threads.
#[derive(Default)]
struct Figure {
    unit: String,
    sum: f64,
    count: u32,
    summed: bool,
}

impl Figure {
    fn value(&self) -> f64 {
        if self.summed {
            self.sum
        } else {
            self.sum / f64::from(self.count)
        }
    }
}

/// One value per completed run, workload and figure, with the run's group and context; and the
/// groups in order: labels as first collected, variants as the pipeline lists them (the default
/// baseline is the first).
pub fn observations(
    inputs: &CompareInputs,
    by: &GroupBy,
) -> Result<(Vec<Observation>, Vec<String>), CompareError> {
    let completed: Vec<&RunRow> = (inputs.runs.iter())
        .filter(|r| r.status == RunStatus::Completed)
        .collect();
    if completed.is_empty() {
        return Err(CompareError::NoCompletedRuns {
            failed: inputs.runs.len(),
        });
    }
    let mut placed: BTreeMap<&str, (String, String)> = BTreeMap::new();
    for run in &completed {
        let Some(place) = group_and_context(run, by) else {
            continue;
        };
        placed.insert(&run.run_id, place);
    }
    if placed.is_empty() {
        let mut known: Vec<String> = (completed.iter())
            .flat_map(|r| variables(&r.variant).map(|(k, _)| k.to_owned()))
            .collect();
        known.sort();
        known.dedup();
        return Err(CompareError::UnknownVariable {
            name: by.name().to_owned(),
            known,
        });
    }

    // Labels in the order they were first collected; variants in the pipeline's order, then
    // (for variants no longer in the pipeline) by when they were collected.
    let mut order: Vec<(usize, &str, &str)> = (completed.iter())
        .filter_map(|r| {
            let (group, _) = placed.get(r.run_id.as_str())?;
            let rank = match by {
                GroupBy::Label => 0,
                _ => (inputs.variant_order.iter())
                    .position(|v| *v == r.variant)
                    .unwrap_or(usize::MAX),
            };
            Some((rank, r.started_at.as_str(), group.as_str()))
        })
        .collect();
    order.sort();
    let mut groups: Vec<String> = Vec::new();
    for (_, _, group) in order {
        if !groups.iter().any(|g| g == group) {
            groups.push(group.to_owned());
        }
    }

    // (run, workload, metric)
    let mut figures: BTreeMap<(String, String, String), Figure> = BTreeMap::new();
    // Figures that are not finite (a tool's `nan`, a rate over zero seconds) are left out: they
    // have no mean.
    let mut add = |run: &str, workload: &str, metric: String, unit: &str, value: f64, summed| {
        if !value.is_finite() {
            return;
        }
        let key = (run.to_owned(), workload.to_owned(), metric);
        let figure = figures.entry(key).or_default();
        figure.unit = unit.to_owned();
        figure.sum += value;
        figure.count += 1;
        figure.summed = summed;
    };
    for m in &inputs.workload_metrics {
        let metric = format!("{}/{}", m.tool, m.metric);
        add(&m.run_id, &m.workload, metric, &m.unit, m.value, false);
    }
    for p in &inputs.processes {
        if let Some(end) = p.end_ns {
            let wall_s = (end - p.start_ns) as f64 / 1e9;
            add(
                &p.run_id,
                &p.workload,
                "runner/wall_s".into(),
                "s",
                wall_s,
                false,
            );
        }
    }
    for c in &inputs.cpu_time {
        let metric = format!("{}/cpu_time_s", c.source);
        add(
            &c.run_id,
            &c.workload,
            metric,
            "s",
            c.cpu_time_ns as f64 / 1e9,
            true,
        );
    }
    for t in &inputs.throughput {
        let metric = format!("throughput/{}/effective_bytes_per_s", t.test);
        add(
            &t.run_id,
            &t.workload,
            metric,
            "B/s",
            t.effective_bytes_per_s,
            false,
        );
    }

    for c in inputs.cpu_share.iter().filter(|c| c.class == "all") {
        let phase = match &c.reference {
            Some(reference) => format!("{} {reference}", c.phase),
            None => c.phase.clone(),
        };
        let metric = format!("cpu_share/{phase}");
        add(&c.run_id, &c.workload, metric, "CPUs", c.cpus, false);
    }
    // "Why here?", summed over the workload's threads.
    for c in &inputs.placement_cost {
        let seconds = [
            ("slower_run_s", Some(c.slower_run_ns)),
            ("faster_idle_s", Some(c.faster_idle_ns)),
            ("faster_lower_prio_s", c.faster_lower_prio_ns),
            ("wait_idle_s", Some(c.wait_idle_ns)),
        ];
        for (field, ns) in seconds {
            if let Some(ns) = ns {
                let metric = format!("placement_cost/{field}");
                add(&c.run_id, &c.workload, metric, "s", ns as f64 / 1e9, true);
            }
        }
    }
    for w in &inputs.wakeup_placement {
        let moved = w.from_class != w.to_class && w.from_class != NO_EARLIER_RUN;
        let other_class = if moved { w.wakeups } else { 0 };
        let counts = [
            ("wakeups_to_other_class", other_class),
            ("wakeups_onto_busy_while_idle", w.onto_busy_while_idle),
        ];
        for (field, count) in counts {
            let metric = format!("wakeup_placement/{field}");
            add(
                &w.run_id,
                &w.workload,
                metric,
                "wakeups",
                count as f64,
                true,
            );
        }
    }
    for m in &inputs.migration_classes {
        for (field, count) in [("at_wakeup", m.at_wakeup), ("while_runnable", m.runnable)] {
            let metric = format!("migration_classes/{field}");
            add(
                &m.run_id,
                &m.workload,
                metric,
                "migrations",
                count as f64,
                true,
            );
        }
    }
    for d in &inputs.sched_delay_workloads {
        let tails = [
            ("p99_ms", d.p99_ns),
            ("preempt_wait_p99_ms", d.preempt_wait_p99_ns),
        ];
        for (field, ns) in tails {
            if let Some(ns) = ns {
                let metric = format!("sched_delay/{field}");
                add(&d.run_id, &d.workload, metric, "ms", ns as f64 / 1e6, false);
            }
        }
    }
    // turbostat's whole-machine figures, under the window's name (a workload, or `run`).
    for a in inputs.cpu_activity.iter().filter(|a| a.scope == "all") {
        let fields = [
            ("busy_pct", "%", a.busy_pct),
            ("avg_mhz", "MHz", a.avg_mhz),
            ("bzy_mhz", "MHz", a.bzy_mhz),
            ("c6_pct", "%", a.c6_pct),
            ("pkg_watt", "W", a.pkg_watt),
        ];
        for (field, unit, value) in fields {
            if let Some(value) = value {
                add(
                    &a.run_id,
                    &a.window,
                    format!("turbostat/{field}"),
                    unit,
                    value,
                    false,
                );
            }
        }
    }

    let observations = (figures.into_iter())
        .filter_map(|((run_id, workload, metric), figure)| {
            let (group, context) = placed.get(run_id.as_str())?;
            Some(Observation {
                run_id,
                group: group.clone(),
                context: context.clone(),
                workload,
                metric,
                unit: figure.unit.clone(),
                value: figure.value(),
            })
        })
        .collect();
    Ok((observations, groups))
}

/// The `key=value` pairs of a run's variant.
fn variables(variant: &str) -> impl Iterator<Item = (&str, &str)> {
    (variant.split(',')).filter_map(|pair| pair.split_once('='))
}

/// A run's group under `by`, and what else tells it apart; `None` when the run lacks the
/// grouping variable.
fn group_and_context(run: &RunRow, by: &GroupBy) -> Option<(String, String)> {
    let label = run.label.clone().unwrap_or_default();
    Some(match by {
        GroupBy::Label => (
            run.label.clone().unwrap_or_else(|| "(no label)".to_owned()),
            run.variant.clone(),
        ),
        GroupBy::Variant => (
            if run.variant.is_empty() {
                "(no matrix)".to_owned()
            } else {
                run.variant.clone()
            },
            label,
        ),
        GroupBy::Variable(name) => {
            let (_, value) = variables(&run.variant).find(|(k, _)| k == name)?;
            let mut rest: Vec<String> = (variables(&run.variant))
                .filter(|(k, _)| k != name)
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            if !label.is_empty() {
                rest.insert(0, format!("label={label}"));
            }
            (format!("{name}={value}"), rest.join(","))
        }
    })
}

/// Compares every group with the baseline (by default the first of `groups`), per context,
/// workload and figure.
pub fn compare(
    observations: &[Observation],
    groups: &[String],
    by: &GroupBy,
    baseline: Option<&str>,
) -> Result<Vec<ComparisonRow>, CompareError> {
    let Some(first) = groups.first() else {
        return Ok(Vec::new());
    };
    let baseline = match baseline {
        None => first.clone(),
        Some(wanted) => (groups.iter())
            .find(|g| *g == wanted || g.split_once('=').is_some_and(|(_, v)| v == wanted))
            .cloned()
            .ok_or_else(|| CompareError::UnknownBaseline {
                name: wanted.to_owned(),
                known: groups.to_vec(),
            })?,
    };
    let rank = |group: &str| groups.iter().position(|g| g == group);

    type Key<'a> = (&'a str, &'a str, &'a str, &'a str);
    let mut cells: BTreeMap<Key<'_>, BTreeMap<usize, Vec<&Observation>>> = BTreeMap::new();
    for o in observations {
        let key = (
            o.context.as_str(),
            o.workload.as_str(),
            o.metric.as_str(),
            o.unit.as_str(),
        );
        let group = rank(&o.group).expect("every observation's group is listed");
        cells
            .entry(key)
            .or_default()
            .entry(group)
            .or_default()
            .push(o);
    }

    let mut rows = Vec::new();
    for ((context, workload, metric, unit), by_group) in cells {
        let sample_of =
            |group: &[&Observation]| Sample::of(&group.iter().map(|o| o.value).collect::<Vec<_>>());
        let base = (by_group.get(&rank(&baseline).expect("baseline is a group")))
            .map(|group| sample_of(group));
        for (index, group) in by_group {
            let sample = sample_of(&group);
            let is_baseline = groups[index] == baseline;
            let difference = base.filter(|_| !is_baseline).map(|base| {
                let percent = |x: f64| (base.mean != 0.0).then(|| 100.0 * x / base.mean);
                let interval = sample.difference_interval(&base);
                let verdict = match interval {
                    None => Verdict::TooFewRuns,
                    Some((low, _)) if low > 0.0 => Verdict::Higher,
                    Some((_, high)) if high < 0.0 => Verdict::Lower,
                    Some(_) => Verdict::WithinNoise,
                };
                (
                    percent(sample.mean - base.mean),
                    interval.and_then(|(low, high)| Some((percent(low)?, percent(high)?))),
                    verdict,
                )
            });
            let verdict = match (&difference, is_baseline) {
                (_, true) => Verdict::Baseline,
                (Some((_, _, verdict)), false) => *verdict,
                (None, false) => Verdict::NoBaselineRuns,
            };
            let interval = sample.interval();
            rows.push(ComparisonRow {
                run_ids: (group.iter().map(|o| o.run_id.as_str()))
                    .collect::<Vec<_>>()
                    .join(","),
                by: by.name().to_owned(),
                context: context.to_owned(),
                group: groups[index].clone(),
                baseline: baseline.clone(),
                workload: workload.to_owned(),
                metric: metric.to_owned(),
                unit: unit.to_owned(),
                runs: sample.n as i64,
                mean: sample.mean,
                stddev: sample.stddev,
                ci_low: interval.map(|i| i.0),
                ci_high: interval.map(|i| i.1),
                diff_pct: difference.as_ref().and_then(|d| d.0),
                diff_ci_low_pct: difference.as_ref().and_then(|d| d.1.map(|i| i.0)),
                diff_ci_high_pct: difference.as_ref().and_then(|d| d.1.map(|i| i.1)),
                verdict,
            });
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use schedlab_tables::{PlacementCostRow, SchedDelayWorkloadRow};

    use super::*;

    use crate::stats::tests::{A, B};

    fn run(
        id: &str,
        label: Option<&str>,
        variant: &str,
        started: &str,
        status: RunStatus,
    ) -> RunRow {
        RunRow {
            run_id: id.into(),
            pipeline: "p".into(),
            label: label.map(Into::into),
            variant: variant.into(),
            repetition: 1,
            host: "h".into(),
            kernel: "k".into(),
            cpu_model: "c".into(),
            started_at: started.into(),
            status,
            duration_ns: 1,
            trace_window_start_ns: None,
            trace_window_end_ns: None,
            kernel_build: None,
            kernel_config_digest: None,
            sched_config: None,
        }
    }

    fn wall(run_id: &str, seconds: f64) -> WorkloadMetricRow {
        WorkloadMetricRow {
            run_id: run_id.into(),
            workload: "build".into(),
            instance: 0,
            tid: None,
            tool: "time".into(),
            metric: "wall_time_s".into(),
            value: seconds,
            unit: "s".into(),
        }
    }

    /// Two kernels, five builds each, labelled in the order they were booted; one failed run.
    fn two_kernels() -> CompareInputs {
        let mut inputs = CompareInputs::default();
        for (i, (a, b)) in A.iter().zip(B).enumerate() {
            let (ra, rb) = (format!("x-new-r{i}"), format!("x-old-r{i}"));
            inputs.runs.push(run(
                &ra,
                Some("new"),
                "",
                &format!("2026-11-30T02:0{i}"),
                RunStatus::Completed,
            ));
            inputs.runs.push(run(
                &rb,
                Some("old"),
                "",
                &format!("2026-11-30T01:0{i}"),
                RunStatus::Completed,
            ));
            inputs.workload_metrics.push(wall(&ra, *a));
            inputs.workload_metrics.push(wall(&rb, b));
        }
        inputs.runs.push(run(
            "x-old-r9",
            Some("old"),
            "",
            "2026-11-30T01:09",
            RunStatus::Failed,
        ));
        inputs.workload_metrics.push(wall("x-old-r9", 1e6));
        inputs
    }

    #[test]
    fn labels_are_compared_with_the_first_booted_and_failed_runs_are_left_out() {
        let (seen, groups) = observations(&two_kernels(), &GroupBy::Label).unwrap();
        assert_eq!(
            groups,
            ["old", "new"],
            "the label whose first run started first leads"
        );
        let rows = compare(&seen, &groups, &GroupBy::Label, None).unwrap();
        assert_eq!(rows.len(), 2);
        let (old, new) = (&rows[0], &rows[1]);
        assert_eq!(
            (old.group.as_str(), old.verdict),
            ("old", Verdict::Baseline)
        );
        assert_eq!(old.runs, 5, "the failed run is not counted");
        assert!((old.mean - 628.1).abs() < 1e-9);
        assert_eq!(new.verdict, Verdict::Lower);
        assert!((new.diff_pct.unwrap() - (-15.7 / 628.1 * 100.0)).abs() < 1e-9);
        let (low, high) = (new.diff_ci_low_pct.unwrap(), new.diff_ci_high_pct.unwrap());
        assert!(
            (low - (-19.169271074446154 / 628.1 * 100.0)).abs() < 1e-6,
            "{low}"
        );
        assert!(
            (high - (-12.23072892555371 / 628.1 * 100.0)).abs() < 1e-6,
            "{high}"
        );

        let rows = compare(&seen, &groups, &GroupBy::Label, Some("new")).unwrap();
        assert_eq!(
            (rows[0].group.as_str(), rows[0].verdict),
            ("old", Verdict::Higher)
        );
        assert_eq!(rows[1].verdict, Verdict::Baseline);
        let err = compare(&seen, &groups, &GroupBy::Label, Some("nope")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no group `nope` to use as the baseline (groups: old, new)"
        );
    }

    #[test]
    fn a_matrix_variable_groups_and_the_other_values_become_the_context() {
        let mut inputs = CompareInputs::default();
        for (i, (variant, seconds)) in [
            ("workers=1,pin=none", 10.0),
            ("workers=2,pin=none", 20.0),
            ("workers=1,pin=0", 11.0),
            ("workers=2,pin=0", 22.0),
        ]
        .into_iter()
        .enumerate()
        {
            let id = format!("r{i}");
            inputs.runs.push(run(
                &id,
                None,
                variant,
                &format!("t{i}"),
                RunStatus::Completed,
            ));
            inputs.workload_metrics.push(wall(&id, seconds));
        }
        let by = GroupBy::from_name("workers");
        let (seen, groups) = observations(&inputs, &by).unwrap();
        assert_eq!(groups, ["workers=1", "workers=2"]);
        let rows = compare(&seen, &groups, &by, Some("1")).unwrap();
        let summary: Vec<(&str, &str, Verdict)> = (rows.iter())
            .map(|r| (r.context.as_str(), r.group.as_str(), r.verdict))
            .collect();
        assert_eq!(
            summary,
            [
                ("pin=0", "workers=1", Verdict::Baseline),
                ("pin=0", "workers=2", Verdict::TooFewRuns),
                ("pin=none", "workers=1", Verdict::Baseline),
                ("pin=none", "workers=2", Verdict::TooFewRuns),
            ]
        );
        assert_eq!(rows[1].diff_pct, Some(100.0));

        // The pipeline's order wins over the order runs happened to start in (`shuffle`).
        inputs.variant_order = ["workers=2,pin=none", "workers=1,pin=none"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            observations(&inputs, &by).unwrap().1,
            ["workers=2", "workers=1"]
        );

        let err = observations(&inputs, &GroupBy::from_name("nproc")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no run has the matrix variable `nproc` (hint: group by `label`, `variant`, `pin`, `workers`)"
        );
    }

    #[test]
    fn turbostat_cpu_share_and_placement_figures_are_compared_under_their_window_and_workload() {
        let mut inputs = two_kernels();
        inputs.cpu_activity.push(CpuActivityRow {
            run_id: "x-new-r0".into(),
            window: "build".into(),
            window_start_ns: Some(0),
            window_end_ns: Some(1),
            scope: "all".into(),
            cpu: None,
            class: None,
            samples: 600,
            busy_pct: Some(97.5),
            avg_mhz: None,
            bzy_mhz: Some(3900.0),
            c1_pct: None,
            c6_pct: None,
            core_tmp_c_max: Some(90.0),
            pkg_watt: Some(28.1),
            source: "turbostat".into(),
            busy: None,
        });
        inputs.cpu_share.push(CpuShareRow {
            run_id: "x-old-r0".into(),
            reference: Some("fg".into()),
            phase: "during".into(),
            phase_start_ns: 0,
            phase_end_ns: 1,
            workload: "build".into(),
            class: "all".into(),
            cpu_ns: 1,
            cpus: 15.07,
            source: "sched".into(),
            change_cpus: None,
            change_cpu_s: None,
        });
        // Two threads of one run: their seconds on a slower class add up.
        for (tid, slower_s) in [(1, 2.0), (2, 0.5)] {
            inputs.placement_cost.push(PlacementCostRow {
                run_id: "x-new-r0".into(),
                workload: "build".into(),
                pid: 1,
                tid,
                comm: "cc1".into(),
                prio: None,
                allowed_cpus: "0-1".into(),
                allowed_source: "unbound".into(),
                run_ns: 3_000_000_000,
                slower_run_ns: (slower_s * 1e9) as i64,
                faster_idle_ns: 0,
                faster_idle_share: 0.0,
                faster_idle_cpus: String::new(),
                faster_lower_prio_ns: None,
                faster_lower_prio_share: None,
                faster_lower_prio_cpus: String::new(),
                wait_ns: 0,
                wait_idle_ns: 0,
                wait_idle_share: 0.0,
                wait_idle_cpus: String::new(),
                lost_events: Some(0),
            });
        }
        inputs.sched_delay_workloads.push(SchedDelayWorkloadRow {
            run_id: "x-new-r0".into(),
            workload: "build".into(),
            threads: 2,
            wakeups: 100,
            mean_ns: Some(50_000.0),
            p50_ns: Some(40_000),
            p90_ns: Some(90_000),
            p99_ns: Some(3_100_000),
            max_ns: Some(4_000_000),
            preemptions: 0,
            preempt_wait_mean_ns: None,
            preempt_wait_p50_ns: None,
            preempt_wait_p90_ns: None,
            preempt_wait_p99_ns: None,
            preempt_wait_max_ns: None,
            source: "sched".into(),
            lost_events: Some(0),
        });
        let (seen, _) = observations(&inputs, &GroupBy::Label).unwrap();
        let figures: Vec<(&str, &str, &str, f64)> = (seen.iter())
            .filter(|o| !o.metric.starts_with("time/"))
            .map(|o| {
                (
                    o.workload.as_str(),
                    o.metric.as_str(),
                    o.unit.as_str(),
                    o.value,
                )
            })
            .collect();
        assert_eq!(
            figures,
            [
                ("build", "placement_cost/faster_idle_s", "s", 0.0),
                ("build", "placement_cost/slower_run_s", "s", 2.5),
                ("build", "placement_cost/wait_idle_s", "s", 0.0),
                ("build", "sched_delay/p99_ms", "ms", 3.1),
                ("build", "turbostat/busy_pct", "%", 97.5),
                ("build", "turbostat/bzy_mhz", "MHz", 3900.0),
                ("build", "turbostat/pkg_watt", "W", 28.1),
                ("build", "cpu_share/during fg", "CPUs", 15.07),
            ]
        );
    }
}
