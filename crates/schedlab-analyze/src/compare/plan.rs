//! `schedlab plan`: the runs each comparison needs to find a difference of a given size.

use std::collections::BTreeMap;

use schedlab_tables::{Needed, RunRow, RunsNeeded};

use super::cells::cells;
use super::{CompareError, Observation, Selection, values};
use crate::stats::{self, RunsForPower, Sample};

/// Per context, workload, figure and group against the baseline: the runs each group needs for
/// Welch's test (two-sided, alpha 0.05, 80 % power) to find a difference of `detect_pct` percent
/// of the baseline's mean, from the spread measured so far, and how long the missing runs take
/// to collect (`runs` gives their durations). Groups and baseline as `selection` says, as in
/// [`super::compare`].
pub fn runs_needed(
    observations: &[Observation],
    groups: &[String],
    selection: &Selection,
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
    let (groups, base_index) = selection.apply(observations, groups)?;
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
    for cell in cells(observations, &groups) {
        let (context, workload, metric, _) = cell.key;
        let Some(base) = cell.groups.get(&base_index) else {
            continue;
        };
        let base_sample = Sample::of(&values(base));
        for (index, group) in cell.groups.iter().filter(|(i, _)| **i != base_index) {
            let sample = Sample::of(&values(group));
            let delta = detect_pct / 100.0 * base_sample.mean;
            let spreads = sample.stddev.zip(base_sample.stddev);
            let needed = match spreads {
                None => Needed::NoSpread,
                Some((a, b)) => match stats::runs_to_detect(a, b, delta) {
                    Some(RunsForPower::Runs(n)) => Needed::Runs(n.ceil() as usize),
                    Some(RunsForPower::BeyondCap) => Needed::MoreThan(stats::MAX_RUNS as usize),
                    None => Needed::ZeroMean,
                },
            };
            let missing_of = |have: usize| match needed {
                Needed::Runs(n) => n.saturating_sub(have),
                _ => 0,
            };
            let (own_missing, base_missing) = (missing_of(sample.n), missing_of(base_sample.n));
            rows.push(RunsNeeded {
                context: context.to_owned(),
                workload: workload.to_owned(),
                metric: metric.to_owned(),
                stands_for: (!cell.stands_for.is_empty()).then(|| cell.stands_for.join(",")),
                group: groups[*index].clone(),
                baseline: baseline.clone(),
                runs: (sample.n, base_sample.n),
                baseline_mean: base_sample.mean,
                stddevs: (sample.stddev, base_sample.stddev),
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
