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
//! borrow the quieter one's spread. It does lean on near-normal means, which five runs cannot
//! show, so the exact Mann-Whitney U test checks it from the ranks alone; where the two disagree
//! the verdict is `inconclusive`. Each group's runs in collection order also get a least-squares
//! slope: one whose interval excludes zero is an order effect (second runs that behave
//! differently, a machine warming up). Runs are compared only with runs that share everything
//! but the grouping key (the *context*), so `--by label` on a pipeline with a matrix compares
//! each variant across labels separately. [`runs_needed`] turns the measured spread into the
//! repetitions a difference of a given size needs (`schedlab plan`).

use std::collections::BTreeMap;

use crate::stats::{self, MannWhitney, Sample, Trend};
use schedlab_tables::manifest::RunStatus;
use schedlab_tables::{
    ComparisonRow, CpuActivityRow, CpuShareRow, CpuTimeRow, MigrationClassRow, NO_EARLIER_RUN,
    PlacementCostRow, PowerStepRow, ProcessRow, ResidencyRollupRow, RunRow, RunsNeeded,
    SchedDelayWorkloadRow, ThroughputRow, TotalsRow, Verdict, WakeupPlacementRow,
    WorkloadMetricRow,
};

/// What runs are grouped by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupBy {
    /// The `--label` a run was collected with (e.g. the kernel under test).
    Label,
    /// The whole matrix expansion (`workers=4,pin=none`).
    Variant,
    /// The repetition number: did first runs differ from second runs? The label and variant
    /// become the context.
    Repetition,
    /// One matrix variable; the others become the context.
    Variable(String),
}

impl GroupBy {
    /// `label`, `variant`, `repetition`, or any other name: a matrix variable (so a variable
    /// named like one of the three cannot be grouped by alone; `--by variant` still shows it).
    pub fn from_name(name: &str) -> GroupBy {
        match name {
            "label" => GroupBy::Label,
            "variant" => GroupBy::Variant,
            "repetition" => GroupBy::Repetition,
            other => GroupBy::Variable(other.to_owned()),
        }
    }

    /// The name `--by` takes, and the `by` column and file name say.
    pub fn name(&self) -> &str {
        match self {
            GroupBy::Label => "label",
            GroupBy::Variant => "variant",
            GroupBy::Repetition => "repetition",
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
    /// `--map a=b` names a workload one side lacks; the text lists both sides' workloads.
    #[error("{0}")]
    UnknownMappedWorkload(String),
    #[error("cannot plan for a difference of {0} % (hint: a positive size such as `--detect 2%`)")]
    BadDetect(f64),
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
    pub residency_rollup: Vec<ResidencyRollupRow>,
    pub totals: Vec<TotalsRow>,
    pub power_step: Vec<PowerStepRow>,
}

/// One figure of one run, grouped: a row of `compare/by-<BY>.observations.parquet`, so the
/// values a comparison was made of are what it writes.
pub type Observation = schedlab_tables::ObservationRow;

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
                GroupBy::Repetition => r.repetition as usize,
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

    for c in &inputs.cpu_share {
        let phase = match &c.reference {
            Some(reference) => format!("{} {reference}", c.phase),
            None => c.phase.clone(),
        };
        let metric = match c.class.as_str() {
            "all" => format!("cpu_share/{phase}"),
            class => format!("cpu_share/{phase}/{class}"),
        };
        add(&c.run_id, &c.workload, metric, "CPUs", c.cpus, false);
    }
    // Where the workload ran: its CPU time's share per core class.
    for r in (inputs.residency_rollup.iter()).filter(|r| r.scope == "workload" && r.cpu.is_none()) {
        let metric = format!("residency/{}_share", r.class);
        add(&r.run_id, &r.workload, metric, "share", r.share, false);
    }
    // Its migrations, in total and per second of its processes' lifetime.
    let lifetimes = workload_lifetimes(&inputs.processes);
    for t in inputs.totals.iter().filter(|t| t.scope == "workload") {
        let Some(migrations) = t.migrations else {
            continue;
        };
        let (run, workload) = (t.run_id.as_str(), t.workload.as_str());
        add(
            run,
            workload,
            "migrations/count".into(),
            "migrations",
            migrations as f64,
            true,
        );
        if let Some(seconds) = lifetimes.get(&(run, workload)).filter(|s| **s > 0.0) {
            let rate = migrations as f64 / seconds;
            add(run, workload, "migrations/per_s".into(), "1/s", rate, false);
        }
    }
    // The step in package power, under its reference workload (or `run`).
    for p in &inputs.power_step {
        let window = p.reference.as_deref().unwrap_or("run");
        add(
            &p.run_id,
            window,
            "power_step/step_watt".into(),
            "W",
            p.step_watt,
            false,
        );
        let after = p.after_start_s;
        add(
            &p.run_id,
            window,
            "power_step/after_start_s".into(),
            "s",
            after,
            false,
        );
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
        let delays = [
            ("mean_ms", d.mean_ns),
            ("p99_ms", d.p99_ns.map(|ns| ns as f64)),
            ("preempt_wait_mean_ms", d.preempt_wait_mean_ns),
            (
                "preempt_wait_p99_ms",
                d.preempt_wait_p99_ns.map(|ns| ns as f64),
            ),
        ];
        for (field, ns) in delays {
            if let Some(ns) = ns {
                let metric = format!("sched_delay/{field}");
                add(&d.run_id, &d.workload, metric, "ms", ns / 1e6, false);
            }
        }
    }
    // turbostat's figures for all CPUs and per core class, under the window's name (a
    // workload, or `run`).
    for a in inputs.cpu_activity.iter().filter(|a| a.scope != "cpu") {
        let scope = match (a.scope.as_str(), &a.class) {
            ("class", Some(class)) => format!("{class}/"),
            _ => String::new(),
        };
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
                    format!("turbostat/{scope}{field}"),
                    unit,
                    value,
                    false,
                );
            }
        }
    }

    let started: BTreeMap<&str, &str> = (completed.iter())
        .map(|r| (r.run_id.as_str(), r.started_at.as_str()))
        .collect();
    let observations = (figures.into_iter())
        .filter_map(|((run_id, workload, metric), figure)| {
            let (group, context) = placed.get(run_id.as_str())?;
            Some(Observation {
                started_at: started.get(run_id.as_str())?.to_string(),
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

/// Another pipeline's runs as the baseline of this one's (`schedlab compare A --against B`):
/// seed 003 sets foreground-vs-background's openssl against sustained-single-thread's isolated
/// runs. `theirs` are the other pipeline's observations grouped by variant; each of its groups
/// becomes `<pipeline>` (or `<pipeline>: <variant>`) and comes first, so the first is the
/// default baseline. Its workloads match ours by name, or as `map` says (`(ours, theirs)`);
/// its runs stand in every context of ours, since the two pipelines share none.
pub fn against(
    (ours, our_groups): (Vec<Observation>, Vec<String>),
    (theirs, their_groups): (Vec<Observation>, Vec<String>),
    pipeline: &str,
    map: &[(String, String)],
) -> Result<(Vec<Observation>, Vec<String>), CompareError> {
    let names = |observations: &[Observation]| {
        let mut names: Vec<String> = observations.iter().map(|o| o.workload.clone()).collect();
        names.sort();
        names.dedup();
        names
    };
    let (here, there) = (names(&ours), names(&theirs));
    for (mine, other) in map {
        let missing = if !here.contains(mine) {
            format!("this pipeline has no workload `{mine}` with figures")
        } else if !there.contains(other) {
            format!("{pipeline} has no workload `{other}` with figures")
        } else {
            continue;
        };
        return Err(CompareError::UnknownMappedWorkload(format!(
            "--map {mine}={other}: {missing} (workloads here: {}; in {pipeline}: {})",
            here.join(", "),
            there.join(", ")
        )));
    }
    let renamed = |group: &str| match their_groups[..] {
        [_] => pipeline.to_owned(),
        _ => format!("{pipeline}: {group}"),
    };
    let mut contexts: Vec<&str> = ours.iter().map(|o| o.context.as_str()).collect();
    contexts.sort_unstable();
    contexts.dedup();
    let mut all: Vec<Observation> = Vec::new();
    for o in &theirs {
        let workload = (map.iter())
            .find(|(_, other)| *other == o.workload)
            .map_or_else(|| o.workload.clone(), |(mine, _)| mine.clone());
        for context in &contexts {
            all.push(Observation {
                group: renamed(&o.group),
                context: (*context).to_owned(),
                workload: workload.clone(),
                ..o.clone()
            });
        }
    }
    let mut groups: Vec<String> = their_groups.iter().map(|g| renamed(g)).collect();
    groups.extend(our_groups);
    all.extend(ours);
    Ok((all, groups))
}

/// Each run's workloads' lifetimes in seconds: first process start to last process end (runs
/// with a process still running have none).
fn workload_lifetimes(processes: &[ProcessRow]) -> BTreeMap<(&str, &str), f64> {
    let mut spans: BTreeMap<(&str, &str), Vec<&ProcessRow>> = BTreeMap::new();
    for p in processes {
        spans.entry((&p.run_id, &p.workload)).or_default().push(p);
    }
    (spans.into_iter())
        .filter_map(|(key, own)| {
            let (start, end) = crate::lifetime(own.into_iter())?;
            Some((key, (end? - start) as f64 / 1e9))
        })
        .collect()
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
        GroupBy::Repetition => {
            let mut context = Vec::new();
            if !label.is_empty() {
                context.push(format!("label={label}"));
            }
            if !run.variant.is_empty() {
                context.push(run.variant.clone());
            }
            (format!("repetition={}", run.repetition), context.join(","))
        }
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

/// The index in `groups` of the baseline: `wanted` (a group's name, or a matrix value alone), or
/// the first group.
fn baseline_of(groups: &[String], wanted: Option<&str>) -> Result<usize, CompareError> {
    match wanted {
        None => Ok(0),
        Some(wanted) => (groups.iter())
            .position(|g| *g == wanted || g.split_once('=').is_some_and(|(_, v)| v == wanted))
            .ok_or_else(|| CompareError::UnknownBaseline {
                name: wanted.to_owned(),
                known: groups.to_vec(),
            }),
    }
}

/// (context, workload, metric, unit)
type CellKey<'a> = (&'a str, &'a str, &'a str, &'a str);

/// The observations per context, workload and figure, then per group (by its index in
/// `groups`), each group's runs in collection order.
fn cells<'a>(
    observations: &'a [Observation],
    groups: &[String],
) -> BTreeMap<CellKey<'a>, BTreeMap<usize, Vec<&'a Observation>>> {
    let mut cells: BTreeMap<CellKey<'_>, BTreeMap<usize, Vec<&Observation>>> = BTreeMap::new();
    for o in observations {
        let key = (
            o.context.as_str(),
            o.workload.as_str(),
            o.metric.as_str(),
            o.unit.as_str(),
        );
        let group = (groups.iter())
            .position(|g| *g == o.group)
            .expect("every observation's group is listed");
        cells
            .entry(key)
            .or_default()
            .entry(group)
            .or_default()
            .push(o);
    }
    for group in cells.values_mut().flat_map(|c| c.values_mut()) {
        group.sort_by(|a, b| (&a.started_at, &a.run_id).cmp(&(&b.started_at, &b.run_id)));
    }
    cells
}

fn values(group: &[&Observation]) -> Vec<f64> {
    group.iter().map(|o| o.value).collect()
}

/// Compares every group with the baseline (by default the first of `groups`), per context,
/// workload and figure.
pub fn compare(
    observations: &[Observation],
    groups: &[String],
    by: &GroupBy,
    baseline: Option<&str>,
) -> Result<Vec<ComparisonRow>, CompareError> {
    if groups.is_empty() {
        return Ok(Vec::new());
    }
    let base_index = baseline_of(groups, baseline)?;
    let baseline = &groups[base_index];

    let mut rows = Vec::new();
    for ((context, workload, metric, unit), by_group) in cells(observations, groups) {
        let base_values = by_group.get(&base_index).map(|group| values(group));
        for (index, group) in by_group {
            let own = values(&group);
            let sample = Sample::of(&own);
            let is_baseline = index == base_index;
            let against = base_values.as_deref().filter(|_| !is_baseline);
            let difference = against.map(|base_values| Difference::of(&own, base_values));
            let (verdict, verdict_note) = match (&difference, is_baseline) {
                (_, true) => (Verdict::Baseline, None),
                (Some(d), false) => d.verdict(),
                (None, false) => (Verdict::NoBaselineRuns, None),
            };
            let interval = sample.interval();
            let trend = Trend::of(&own);
            let slope_interval = trend.and_then(|t| t.interval);
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
                diff_pct: difference.as_ref().and_then(|d| d.percent(d.mean)),
                diff_ci_low_pct: difference.as_ref().and_then(|d| d.percent(d.interval?.0)),
                diff_ci_high_pct: difference.as_ref().and_then(|d| d.percent(d.interval?.1)),
                verdict,
                welch_p: difference.as_ref().and_then(|d| d.welch_p),
                mann_whitney_u: difference.as_ref().and_then(|d| Some(d.rank?.u)),
                mann_whitney_p: difference.as_ref().and_then(|d| d.rank?.p),
                verdict_note,
                first_vs_rest_pct: trend.and_then(|t| t.first_vs_rest_pct),
                slope_per_run: trend.map(|t| t.slope),
                slope_ci_low: slope_interval.map(|i| i.0),
                slope_ci_high: slope_interval.map(|i| i.1),
                order_effect: trend.is_some_and(|t| t.significant()),
            });
        }
    }
    Ok(rows)
}

/// A group's figure against the baseline's: Welch's interval and p, and the rank test.
struct Difference {
    /// The baseline's mean, which percentages are of.
    base_mean: f64,
    mean: f64,
    interval: Option<(f64, f64)>,
    welch_p: Option<f64>,
    rank: Option<MannWhitney>,
    /// Pairs (group run, baseline run): U's largest value.
    pairs: f64,
}

impl Difference {
    fn of(group: &[f64], baseline: &[f64]) -> Difference {
        let (sample, base) = (Sample::of(group), Sample::of(baseline));
        Difference {
            base_mean: base.mean,
            mean: sample.mean - base.mean,
            interval: sample.difference_interval(&base),
            welch_p: sample.welch_p(&base),
            rank: stats::mann_whitney(group, baseline),
            pairs: (group.len() * baseline.len()) as f64,
        }
    }

    /// `x` as a percentage of the baseline's mean (none of a mean of 0).
    fn percent(&self, x: f64) -> Option<f64> {
        (self.base_mean != 0.0).then(|| 100.0 * x / self.base_mean)
    }

    /// Welch's verdict, unless the rank test, able to find a difference with these many runs,
    /// disagrees: then `inconclusive`, with a note saying how.
    fn verdict(&self) -> (Verdict, Option<String>) {
        let welch = match self.interval {
            None => return (Verdict::TooFewRuns, None),
            Some((low, _)) if low > 0.0 => Verdict::Higher,
            Some((_, high)) if high < 0.0 => Verdict::Lower,
            Some(_) => Verdict::WithinNoise,
        };
        let Some(rank) = self.rank else {
            return (welch, None);
        };
        let Some(p) = rank.p else {
            return (welch, None);
        };
        if rank.smallest_p > stats::ALPHA {
            let note = format!(
                "the rank test cannot reach p < {:.2} with these runs (its smallest p is {:.2})",
                stats::ALPHA,
                rank.smallest_p
            );
            return (welch, Some(note));
        }
        // The rank test's direction: U above its middle means the group's values rank higher.
        let ranked = if p >= stats::ALPHA {
            Verdict::WithinNoise
        } else if 2.0 * rank.u > self.pairs {
            Verdict::Higher
        } else {
            Verdict::Lower
        };
        let says = |v: Verdict| match v {
            Verdict::WithinNoise => "does not".to_owned(),
            v => format!("says {v}"),
        };
        if ranked == welch {
            return (welch, None);
        }
        let note = match welch {
            Verdict::WithinNoise => {
                format!("Welch's interval includes 0, the rank test says {ranked} (p = {p:.3})")
            }
            _ => format!(
                "Welch says {welch}, the rank test {} (p = {p:.3})",
                says(ranked)
            ),
        };
        (Verdict::Inconclusive, Some(note))
    }
}

/// The lines that go under the comparison table: why a verdict is `inconclusive`, and which
/// groups drift with collection order.
pub fn notes(rows: &[ComparisonRow]) -> Vec<String> {
    let mut lines = Vec::new();
    for r in rows {
        let what = if r.context.is_empty() {
            format!("{} {}, {}", r.workload, r.metric, r.group)
        } else {
            format!("{} {} {}, {}", r.context, r.workload, r.metric, r.group)
        };
        if r.verdict == Verdict::Inconclusive {
            let note = r.verdict_note.as_deref().unwrap_or_default();
            lines.push(format!("- {what} vs {}: inconclusive: {note}", r.baseline));
        }
        if r.order_effect {
            // The slope in percent of the group's mean, readable whatever the unit; in the
            // unit itself for a mean of 0.
            let per_run = |x: f64| match r.mean {
                0.0 => format!("{x:+.4} {}", r.unit),
                mean => format!("{:+.2} %", 100.0 * x / mean),
            };
            let (slope, low, high) = (
                r.slope_per_run.unwrap_or_default(),
                r.slope_ci_low.unwrap_or_default(),
                r.slope_ci_high.unwrap_or_default(),
            );
            let first = match r.first_vs_rest_pct {
                Some(first) => format!("; the first run {first:+.2} % against the rest"),
                None => String::new(),
            };
            lines.push(format!(
                "- {what}: order effect: {} per run in collection order (95 % CI {} … {}){first}",
                per_run(slope),
                per_run(low),
                per_run(high),
            ));
        }
    }
    lines
}

/// Per context, workload, figure and group against the baseline: the runs each group needs for
/// Welch's test (two-sided, alpha 0.05, 80 % power) to find a difference of `detect_pct` percent
/// of the baseline's mean, from the spread measured so far, and how long the missing runs take
/// to collect (`runs` gives their durations).
pub fn runs_needed(
    observations: &[Observation],
    groups: &[String],
    baseline: Option<&str>,
    detect_pct: f64,
    runs: &[RunRow],
    cooldown_s: f64,
) -> Result<Vec<RunsNeeded>, CompareError> {
    if !(detect_pct > 0.0 && detect_pct.is_finite()) {
        return Err(CompareError::BadDetect(detect_pct));
    }
    if groups.is_empty() {
        return Ok(Vec::new());
    }
    let base_index = baseline_of(groups, baseline)?;
    let baseline = &groups[base_index];
    let durations: BTreeMap<&str, f64> = (runs.iter())
        .map(|r| (r.run_id.as_str(), r.duration_ns as f64 / 1e9))
        .collect();
    let mean_duration = |group: &[&Observation]| {
        let known: Vec<f64> = (group.iter())
            .filter_map(|o| durations.get(o.run_id.as_str()).copied())
            .collect();
        known.iter().sum::<f64>() / known.len().max(1) as f64
    };

    let mut rows = Vec::new();
    for ((context, workload, metric, _), by_group) in cells(observations, groups) {
        let Some(base) = by_group.get(&base_index) else {
            continue;
        };
        let base_sample = Sample::of(&values(base));
        for (index, group) in by_group.iter().filter(|(i, _)| **i != base_index) {
            let sample = Sample::of(&values(group));
            let delta = detect_pct / 100.0 * base_sample.mean;
            let spreads = sample.stddev.zip(base_sample.stddev);
            let needed = spreads
                .and_then(|(a, b)| stats::runs_to_detect(a, b, delta))
                .map(|n| n.ceil() as usize);
            let missing_of = |have: usize| needed.map_or(0, |n| n.saturating_sub(have));
            let (own_missing, base_missing) = (missing_of(sample.n), missing_of(base_sample.n));
            rows.push(RunsNeeded {
                context: context.to_owned(),
                workload: workload.to_owned(),
                metric: metric.to_owned(),
                group: groups[*index].clone(),
                baseline: baseline.clone(),
                runs: (sample.n, base_sample.n),
                spread_pct: spreads
                    .filter(|_| base_sample.mean != 0.0)
                    .map(|(a, b)| 100.0 * a.max(b) / base_sample.mean.abs()),
                needed,
                missing: own_missing + base_missing,
                collect_s: own_missing as f64 * (mean_duration(group) + cooldown_s)
                    + base_missing as f64 * (mean_duration(base) + cooldown_s),
            });
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use schedlab_tables::{PlacementCostRow, SchedDelayWorkloadRow};

    use super::*;

    use crate::stats::tests::{A, B, G, G_BASE};

    /// The `new` group's row of a comparison by label.
    fn new_row(inputs: &CompareInputs) -> ComparisonRow {
        let (seen, groups) = observations(inputs, &GroupBy::Label).unwrap();
        let rows = compare(&seen, &groups, &GroupBy::Label, None).unwrap();
        (rows.into_iter()).find(|r| r.group == "new").unwrap()
    }

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
            imported: false,
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

    /// Builds under an `old` kernel, then under a `new` one, a minute apart, each a minute long.
    fn labelled(old: &[f64], new: &[f64]) -> CompareInputs {
        let mut inputs = CompareInputs::default();
        for (label, values, hour) in [("old", old, 1), ("new", new, 2)] {
            for (i, value) in values.iter().enumerate() {
                let id = format!("x-{label}-r{i}");
                let started = format!("2026-11-30T0{hour}:{i:02}");
                let mut run = run(&id, Some(label), "", &started, RunStatus::Completed);
                run.repetition = i as u32 + 1;
                run.duration_ns = 60_000_000_000;
                inputs.runs.push(run);
                inputs.workload_metrics.push(wall(&id, *value));
            }
        }
        inputs
    }

    /// Two kernels, five builds each, labelled in the order they were booted; one failed run.
    fn two_kernels() -> CompareInputs {
        let mut inputs = labelled(&B, &A);
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
    fn every_aggregates_figures_are_compared_under_their_window_and_workload() {
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
        // The P class's share of the build's CPU time, its migrations over its 2 s lifetime, the
        // power step after it started, and turbostat's P-class Busy%.
        inputs.residency_rollup.push(ResidencyRollupRow {
            run_id: "x-new-r0".into(),
            workload: "build".into(),
            scope: "workload".into(),
            pid: None,
            tid: None,
            cpu: None,
            class: "P".into(),
            run_ns: 7,
            share: 0.7,
            source: "sched".into(),
            lost_events: Some(0),
        });
        inputs.totals.push(TotalsRow {
            run_id: "x-new-r0".into(),
            workload: "build".into(),
            scope: "workload".into(),
            pid: None,
            threads: 2,
            cpu_time_ns: None,
            migrations: Some(30),
            source: "sched".into(),
            lost_events: Some(0),
        });
        inputs.processes.push(ProcessRow {
            run_id: "x-new-r0".into(),
            workload: "build".into(),
            instance: 0,
            pid: 77,
            start_ns: 1_000_000_000,
            end_ns: Some(3_000_000_000),
            exit_code: Some(0),
            nice: 0,
            affinity: None,
            argv: vec![],
        });
        let mut p_class = inputs.cpu_activity[0].clone();
        (p_class.scope, p_class.class, p_class.busy_pct) =
            ("class".into(), Some("P".into()), Some(99.0));
        (p_class.bzy_mhz, p_class.core_tmp_c_max, p_class.pkg_watt) = (None, None, None);
        inputs.cpu_activity.push(p_class);
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
                ("build", "migrations/count", "migrations", 30.0),
                ("build", "migrations/per_s", "1/s", 15.0),
                ("build", "placement_cost/faster_idle_s", "s", 0.0),
                ("build", "placement_cost/slower_run_s", "s", 2.5),
                ("build", "placement_cost/wait_idle_s", "s", 0.0),
                ("build", "residency/P_share", "share", 0.7),
                ("build", "runner/wall_s", "s", 2.0),
                ("build", "sched_delay/mean_ms", "ms", 0.05),
                ("build", "sched_delay/p99_ms", "ms", 3.1),
                ("build", "turbostat/P/busy_pct", "%", 99.0),
                ("build", "turbostat/busy_pct", "%", 97.5),
                ("build", "turbostat/bzy_mhz", "MHz", 3900.0),
                ("build", "turbostat/pkg_watt", "W", 28.1),
                ("build", "cpu_share/during fg", "CPUs", 15.07),
            ]
        );
    }
    #[test]
    fn the_rank_test_agrees_disagrees_or_cannot_tell() {
        // Five builds a side, every new one faster: both tests say lower.
        let agree = new_row(&two_kernels());
        assert_eq!(
            (agree.verdict, agree.verdict_note.as_deref()),
            (Verdict::Lower, None)
        );
        assert_eq!(agree.mann_whitney_u, Some(0.0));
        assert!((agree.mann_whitney_p.unwrap() - 0.007936507936507936).abs() < 1e-9);
        assert!((agree.welch_p.unwrap() - 7.945527173554463e-06).abs() < 1e-9);

        // Welch's interval lies above 0, but one new run ranks below a baseline run.
        let welch_only = new_row(&labelled(&G_BASE, &G));
        assert_eq!(welch_only.verdict, Verdict::Inconclusive);
        assert_eq!(
            welch_only.verdict_note.as_deref(),
            Some("Welch says higher, the rank test does not (p = 0.057)")
        );
        assert_eq!(welch_only.mann_whitney_u, Some(15.0));

        // Every new run ranks above, but one outlier widens Welch's interval past 0.
        let outlier = [10.2, 10.3, 10.25, 10.15, 30.0];
        let rank_only = new_row(&labelled(&[10.0, 10.1, 9.9, 10.0, 10.05], &outlier));
        assert_eq!(rank_only.verdict, Verdict::Inconclusive);
        assert_eq!(
            rank_only.verdict_note.as_deref(),
            Some("Welch's interval includes 0, the rank test says higher (p = 0.008)")
        );
        let lines = notes(&[welch_only.clone(), rank_only]);
        assert_eq!(
            lines[0],
            "- build time/wall_time_s, new vs old: inconclusive: Welch says higher, the rank \
             test does not (p = 0.057)"
        );

        // Three runs a side: the rank test's smallest p is 0.1, so Welch's verdict stands.
        let three = new_row(&labelled(&[2.0, 1.0, 3.0], &[12.0, 11.0, 13.0]));
        assert_eq!(three.verdict, Verdict::Higher);
        assert_eq!(
            three.verdict_note.as_deref(),
            Some("the rank test cannot reach p < 0.05 with these runs (its smallest p is 0.10)")
        );
        assert!(notes(&[three]).is_empty());
    }

    #[test]
    fn a_group_that_drifts_with_collection_order_is_flagged() {
        // The old kernel's builds grow slower run by run (SciPy's linregress: slope 0.51 s,
        // 95 % interval 0.379 … 0.641); the new kernel's do not drift.
        let drifting = [10.0, 10.5, 11.2, 11.4, 12.1];
        let (seen, groups) = observations(&labelled(&drifting, &A), &GroupBy::Label).unwrap();
        let rows = compare(&seen, &groups, &GroupBy::Label, None).unwrap();
        let (old, new) = (&rows[0], &rows[1]);
        assert_eq!(old.run_ids, "x-old-r0,x-old-r1,x-old-r2,x-old-r3,x-old-r4");
        assert!(old.order_effect && !new.order_effect, "{rows:#?}");
        assert!((old.slope_per_run.unwrap() - 0.51).abs() < 1e-9);
        assert!((old.slope_ci_low.unwrap() - 0.3787843773545875).abs() < 1e-6);
        assert!((old.first_vs_rest_pct.unwrap() - 100.0 * (10.0 - 11.3) / 11.3).abs() < 1e-9);
        assert_eq!(
            notes(&rows),
            [
                "- build time/wall_time_s, old: order effect: +4.62 % per run in collection order \
              (95 % CI +3.43 % … +5.81 %); the first run -11.50 % against the rest"
            ]
        );

        // By repetition: the n-th run of each label together, the label as the context.
        let by = GroupBy::from_name("repetition");
        let (seen, groups) = observations(&labelled(&drifting, &A), &by).unwrap();
        assert_eq!(
            groups,
            (1..=5)
                .map(|i| format!("repetition={i}"))
                .collect::<Vec<_>>()
        );
        let rows = compare(&seen, &groups, &by, None).unwrap();
        let firsts: Vec<(&str, &str, f64)> = (rows.iter())
            .filter(|r| r.group == "repetition=1")
            .map(|r| (r.context.as_str(), r.run_ids.as_str(), r.mean))
            .collect();
        assert_eq!(
            firsts,
            [
                ("label=new", "x-new-r0", A[0]),
                ("label=old", "x-old-r0", 10.0)
            ]
        );
    }

    #[test]
    fn the_runs_needed_come_from_the_measured_spread_and_durations() {
        let (seen, groups) = observations(&two_kernels(), &GroupBy::Label).unwrap();
        let runs = two_kernels().runs;
        // A difference of 0.5 % of the old kernel's 628.1 s with the spreads measured (2.10 s
        // and 2.59 s): 9.976 runs a side by SciPy's noncentral t (see `runs_to_detect`'s
        // test), so 10: five more each, a minute each plus a 5 s cooldown.
        let plan = runs_needed(&seen, &groups, None, 0.5, &runs, 5.0).unwrap();
        assert_eq!(plan.len(), 1);
        let row = &plan[0];
        assert_eq!((row.group.as_str(), row.baseline.as_str()), ("new", "old"));
        assert_eq!((row.runs, row.needed, row.missing), ((5, 5), Some(10), 10));
        assert!((row.collect_s - 650.0).abs() < 1e-9, "{row:#?}");
        assert!((row.spread_pct.unwrap() - 100.0 * 2.593260495977997 / 628.1).abs() < 1e-9);
        // 5 % needs no more runs than are there.
        let plan = runs_needed(&seen, &groups, None, 5.0, &runs, 5.0).unwrap();
        assert_eq!((plan[0].needed, plan[0].missing), (Some(2), 0));
        let err = runs_needed(&seen, &groups, None, 0.0, &runs, 5.0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot plan for a difference of 0 % (hint: a positive size such as `--detect 2%`)"
        );
    }
}
