//! Repetitions into comparisons: is a difference between two configurations real, or noise?
//!
//! Seed 002 times kernel builds under three kernels, five times each, and asks whether a 2-3 %
//! difference is real. [`observations()`] turns every completed run into one value per workload
//! and figure; [`compare`] groups the runs (by label, by variant, or by one matrix variable) and
//! reports, per group, the mean over its repetitions with a Student-t 95 % interval, and its
//! difference from the baseline group with Welch's 95 % interval and p.
//!
//! A comparison tests every figure at once, so the p-values of all its rows are adjusted
//! together (Benjamini–Hochberg): a difference is `higher` or `lower` when its q is below 0.05,
//! `within noise` otherwise, and `--min-effect` declares differences smaller than a size of
//! interest noise whatever q says. Welch's interval does not assume the groups have equal
//! variance: a noisier kernel does not borrow the quieter one's spread. It does lean on
//! near-normal means, which five runs cannot show, so the exact Mann-Whitney U test checks it
//! from the ranks alone (with the Hodges–Lehmann shift it implies); where the two disagree the
//! verdict is `inconclusive` ([`verdict`]). A figure equal to another in every run (the CPUs of
//! the one core class a machine has, and of all its CPUs) is compared once ([`cells`]). Means
//! and differences of figures that cannot be negative (counts, durations, shares) get intervals
//! that stay in that range ([`range`]).
//!
//! Each group's runs in collection order also get a least-squares slope: one whose interval
//! excludes zero is an order effect (second runs that behave differently, a machine warming
//! up). Runs are compared only with runs that share everything but the grouping key (the
//! *context*), so `--by label` on a pipeline with a matrix compares each variant across labels
//! separately. [`runs_needed`] turns the measured spread into the repetitions a difference of a
//! given size needs (`schedlab plan`).
mod against;
mod cells;
mod figures;
mod notes;
mod observations;
mod plan;
mod range;
mod selection;
#[cfg(test)]
mod tests;
mod verdict;

pub use against::against;
pub use notes::{adjustment, notes};
pub use observations::observations;
pub use plan::runs_needed;
pub use selection::{Selection, default_baseline};

use crate::stats::{self, Sample, Trend};
use schedlab_tables::{
    ComparisonRow, CpuActivityRow, CpuShareRow, CpuTimeRow, MigrationClassRow, PlacementCostRow,
    PowerStepRow, ProcessRow, ResidencyRollupRow, RunRow, SchedDelayWorkloadRow, ThroughputRow,
    TotalsRow, Verdict, WakeupPlacementRow, WorkloadMetricRow,
};

use cells::cells;
use range::Range;
use verdict::Difference;

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
    #[error("--groups names no group `{name}` (groups: {})", known.join(", "))]
    UnknownGroup { name: String, known: Vec<String> },
    #[error("--min-effect takes a positive size such as `2%`, not {0} %")]
    BadMinEffect(f64),
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

fn values(group: &[&Observation]) -> Vec<f64> {
    group.iter().map(|o| o.value).collect()
}

/// Compares every group `selection` keeps with its baseline, per context, workload and figure,
/// adjusting every row's p together; differences smaller than `min_effect_pct` percent of the
/// baseline's mean are `within noise` whatever their q.
pub fn compare(
    observations: &[Observation],
    groups: &[String],
    by: &GroupBy,
    selection: &Selection,
    min_effect_pct: Option<f64>,
) -> Result<Vec<ComparisonRow>, CompareError> {
    if let Some(min) = min_effect_pct.filter(|m| !(*m > 0.0 && m.is_finite())) {
        return Err(CompareError::BadMinEffect(min));
    }
    if groups.is_empty() {
        return Ok(Vec::new());
    }
    let (groups, base_index) = selection.apply(observations, groups)?;
    let baseline = &groups[base_index];

    let mut rows = Vec::new();
    let mut differences: Vec<Option<Difference>> = Vec::new();
    for cell in cells(observations, &groups) {
        let (context, workload, metric, unit) = cell.key;
        let range = Range::of(metric, unit, cell.values());
        let base_values = cell.groups.get(&base_index).map(|group| values(group));
        for (&index, group) in &cell.groups {
            let own = values(group);
            let sample = Sample::of(&own);
            let is_baseline = index == base_index;
            let against = base_values.as_deref().filter(|_| !is_baseline);
            let difference = against.map(|base| Difference::of(&own, base, &range));
            let (interval, ci_method) = range.mean_interval(&sample, &own);
            let trend = Trend::of(&own);
            let slope_interval = trend.and_then(|t| t.interval);
            let shift = difference.as_ref().and_then(|d| d.shift);
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
                diff_ci_low_pct: difference.as_ref().and_then(|d| Some(d.interval_pct?.0)),
                diff_ci_high_pct: difference.as_ref().and_then(|d| Some(d.interval_pct?.1)),
                verdict: if is_baseline {
                    Verdict::Baseline
                } else {
                    Verdict::NoBaselineRuns
                },
                welch_p: difference.as_ref().and_then(|d| d.welch_p),
                mann_whitney_u: difference.as_ref().and_then(|d| Some(d.rank?.u)),
                mann_whitney_p: difference.as_ref().and_then(|d| d.rank?.p),
                verdict_note: None,
                first_vs_rest_pct: trend.and_then(|t| t.first_vs_rest_pct),
                slope_per_run: trend.map(|t| t.slope),
                slope_ci_low: slope_interval.map(|i| i.0),
                slope_ci_high: slope_interval.map(|i| i.1),
                order_effect: trend.is_some_and(|t| t.significant()),
                verdict_p: difference.as_ref().and_then(|d| d.p),
                q: None,
                hodges_lehmann: shift.map(|s| s.shift),
                hodges_lehmann_ci_low: shift.and_then(|s| Some(s.interval?.0)),
                hodges_lehmann_ci_high: shift.and_then(|s| Some(s.interval?.1)),
                ci_method: ci_method.to_owned(),
                diff_ci_method: difference
                    .as_ref()
                    .and_then(|d| d.interval_pct.map(|_| d.interval_method.to_owned())),
                stands_for: (!cell.stands_for.is_empty()).then(|| cell.stands_for.join(",")),
            });
            differences.push(difference);
        }
    }

    // One family: every row's p; and each test's own, for saying which one found what.
    let family = |p: &dyn Fn(&Difference) -> Option<f64>| {
        let ps: Vec<Option<f64>> = differences.iter().map(|d| p(d.as_ref()?)).collect();
        stats::benjamini_hochberg(&ps)
    };
    let qs = family(&|d| d.p);
    let welch_qs = family(&|d| d.welch_p);
    let rank_qs = family(&|d| d.usable_rank_p());
    for (i, (row, difference)) in rows.iter_mut().zip(&differences).enumerate() {
        row.q = qs[i];
        if let Some(d) = difference {
            (row.verdict, row.verdict_note) =
                d.verdict(qs[i], (welch_qs[i], rank_qs[i]), min_effect_pct);
        }
    }
    Ok(rows)
}
