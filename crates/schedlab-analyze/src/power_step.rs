//! The largest step in package power: when a processor leaves its turbo power budget.
//!
//! Seed page 8 saw package power settle to the sustained limit about 35 s after the foreground
//! started. The series is turbostat's PkgWatt per interval (its summary row), or the built-in
//! sampler's RAPL energy per interval where turbostat did not run. The step is the split of the
//! series into two levels with the least squared error (at least two intervals on each side),
//! so its time is known to the sampling interval.

use std::collections::BTreeMap;

use schedlab_tables::turbostat::TurbostatSample;
use schedlab_tables::{CpuSampleRow, PowerStepRow, ProcessRow};

use crate::stats::Sample;

/// A step smaller than this share of the earlier level is not called a change of regime.
const MIN_STEP: f64 = 0.10;
/// ...nor one smaller than this many standard deviations of either level (both levels must be
/// flat next to the step: a one-interval start-up spike is not a regime).
const MIN_STEP_SD: f64 = 3.0;

/// Package power of one run: (end of interval on the run clock, watts), in time order, and
/// where it came from.
#[derive(Debug, Default)]
pub struct PowerSeries {
    pub points: Vec<(i64, f64)>,
    pub source: &'static str,
}

/// Appends a point to `run`'s series, creating it with `source`.
fn push(
    series: &mut BTreeMap<String, PowerSeries>,
    run: &str,
    source: &'static str,
    point: (i64, f64),
) {
    let entry = series.entry(run.to_owned()).or_insert(PowerSeries {
        points: Vec::new(),
        source,
    });
    entry.points.push(point);
}

/// Package power per run.
pub fn power_series(
    turbostat: &[TurbostatSample],
    cpu_samples: &[CpuSampleRow],
) -> BTreeMap<String, PowerSeries> {
    let mut series: BTreeMap<String, PowerSeries> = BTreeMap::new();
    for s in turbostat.iter().filter(|s| s.summary) {
        if let (Some(time), Some(watt)) = (s.time_ns, s.pkg_watt) {
            push(&mut series, &s.run_id, "turbostat", (time, watt));
        }
    }
    // RAPL energy per interval, summed over packages, for the runs turbostat did not cover.
    let mut energy: BTreeMap<(&str, i64), i64> = BTreeMap::new();
    for s in cpu_samples {
        if let Some(uj) = s.package_energy_uj
            && !series.contains_key(&s.run_id)
        {
            *energy.entry((&s.run_id, s.time_ns)).or_default() += uj;
        }
    }
    let mut previous: Option<(&str, i64)> = None;
    for ((run, time), uj) in energy {
        if let Some((prev_run, prev_time)) = previous
            && prev_run == run
        {
            let watt = uj as f64 / 1e6 / ((time - prev_time) as f64 / 1e9);
            push(&mut series, run, "cpu_samples", (time, watt));
        }
        previous = Some((run, time));
    }
    for s in series.values_mut() {
        s.points.sort_by_key(|p| p.0);
    }
    series
}

/// The two levels a power series splits into best.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// Intervals before the step.
    pub split: usize,
    pub before: Sample,
    pub after: Sample,
    /// A change of regime, not noise: at least 10 % of the earlier level and three standard
    /// deviations of either level.
    pub significant: bool,
}

/// The least-squares two-level split of `values` (at least two on each side), or `None` with
/// fewer than four.
pub fn largest_step(values: &[f64]) -> Option<Step> {
    // Sum of squared deviations from the level's mean.
    let squares = |s: &Sample| s.stddev.map_or(0.0, |sd| sd * sd * (s.n - 1) as f64);
    let (split, before, after) = (2..=values.len().checked_sub(2)?)
        .map(|split| {
            (
                split,
                Sample::of(&values[..split]),
                Sample::of(&values[split..]),
            )
        })
        .min_by(|a, b| {
            (squares(&a.1) + squares(&a.2)).total_cmp(&(squares(&b.1) + squares(&b.2)))
        })?;
    let spread = (before.stddev.unwrap_or(0.0)).max(after.stddev.unwrap_or(0.0));
    let step = (after.mean - before.mean).abs();
    let significant = step >= MIN_STEP * before.mean.abs() && step >= MIN_STEP_SD * spread;
    Some(Step {
        split,
        before,
        after,
        significant,
    })
}

/// The step of every run with a power series, within `reference`'s lifetime when given.
pub fn power_steps(
    series: &BTreeMap<String, PowerSeries>,
    processes: &[ProcessRow],
    reference: Option<&str>,
) -> Vec<PowerStepRow> {
    let mut rows = Vec::new();
    for (run_id, PowerSeries { points, source }) in series {
        let own = (processes.iter())
            .filter(|p| p.run_id == *run_id && reference.is_none_or(|r| p.workload == r));
        let Some((start, end)) = crate::lifetime(own) else {
            continue;
        };
        let end = end.unwrap_or(i64::MAX);
        // Intervals that end inside the window (the first may have begun just before it): the
        // reference's lifetime, or from the run's first process start to its last end.
        let inside: Vec<(i64, f64)> = (points.iter())
            .filter(|(time, _)| start < *time && *time <= end)
            .copied()
            .collect();
        let values: Vec<f64> = inside.iter().map(|p| p.1).collect();
        let Some(step) = largest_step(&values) else {
            continue;
        };
        let time_ns = inside[step.split - 1].0;
        let (before, after) = (step.before.mean, step.after.mean);
        rows.push(PowerStepRow {
            run_id: run_id.clone(),
            reference: reference.map(str::to_owned),
            time_ns,
            after_start_s: (time_ns - start) as f64 / 1e9,
            before_watt: before,
            after_watt: after,
            step_watt: after - before,
            step_pct: (before != 0.0).then(|| 100.0 * (after - before) / before),
            samples_before: step.split as i64,
            samples_after: (inside.len() - step.split) as i64,
            significant: step.significant,
            source: (*source).to_owned(),
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn energy(cpu: i32, time_s: i64, uj: Option<i64>) -> CpuSampleRow {
        CpuSampleRow {
            run_id: "r".into(),
            time_ns: time_s * 1_000_000_000,
            cpu,
            busy_pct: None,
            freq_khz: None,
            idle_state_pct: None,
            package_energy_uj: uj,
        }
    }

    #[test]
    fn rapl_energy_per_interval_becomes_watts_summed_over_packages() {
        // Two packages (CPU 0 and CPU 2 carry the counters), sampled every 2 s; the first
        // sample's delta has no interval to divide by.
        let samples = [
            energy(0, 1, Some(5_000_000)),
            energy(2, 1, Some(5_000_000)),
            energy(0, 3, Some(20_000_000)),
            energy(1, 3, None),
            energy(2, 3, Some(10_000_000)),
            energy(0, 5, Some(8_000_000)),
            energy(2, 5, Some(8_000_000)),
        ];
        let series = power_series(&[], &samples);
        let run = &series["r"];
        assert_eq!(run.source, "cpu_samples");
        assert_eq!(run.points, [(3_000_000_000, 15.0), (5_000_000_000, 8.0)]);
    }
}
