//! The values a figure can take, and intervals that stay among them.
//!
//! Student's interval of a mean is symmetric, so the mean of a count that is 0 in most runs gets
//! an interval reaching below 0 (`0.3333 migrations (-1.101 … 1.768)`), and Welch's interval of
//! such a figure's difference falls below -100 %. Where that happens the interval is a
//! percentile bootstrap, which stays between the smallest and the largest value resampled.

use crate::stats::{Sample, bootstrap};

/// `ci_method` and `diff_ci_method` of a bootstrap interval.
pub(super) const BOOTSTRAP: &str = "bootstrap";

/// The closed range a figure's values lie in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Range {
    low: f64,
    high: f64,
    count: bool,
}

/// The units of figures that count something.
const COUNTS: [&str; 5] = ["migrations", "wakeups", "count", "ops", "stressors"];

impl Range {
    /// The range of `metric` in `unit`, whose values are `values`: shares (`share`) lie in
    /// [0, 1] and turbostat's percentages in [0, 100]; the power step (a change, which can be a
    /// fall) and any figure seen below 0 are unbounded; every other figure (counts, durations,
    /// rates, CPUs, frequencies, a tool's figures) cannot be negative.
    pub fn of(metric: &str, unit: &str, mut values: impl Iterator<Item = f64>) -> Range {
        let (low, high) = match unit {
            _ if metric.starts_with("power_step/") => (f64::NEG_INFINITY, f64::INFINITY),
            "share" => (0.0, 1.0),
            "%" if metric.starts_with("turbostat/") => (0.0, 100.0),
            _ => (0.0, f64::INFINITY),
        };
        let count = COUNTS.contains(&unit);
        if values.any(|v| v < low || v > high) {
            return Range {
                low: f64::NEG_INFINITY,
                high: f64::INFINITY,
                count,
            };
        }
        Range { low, high, count }
    }

    /// Whether the figure counts something (migrations, wakeups, periods, operations) by its
    /// unit: its values are whole numbers, so its runs cannot differ by less than one.
    pub fn is_count(&self) -> bool {
        self.count
    }

    fn holds(&self, (low, high): (f64, f64)) -> bool {
        low >= self.low && high <= self.high
    }

    /// The 95 % interval of a group's mean, and how it was computed: Student's t, or where that
    /// leaves the range, the percentile bootstrap of `values` (`sample`'s values).
    pub fn mean_interval(
        &self,
        sample: &Sample,
        values: &[f64],
    ) -> (Option<(f64, f64)>, &'static str) {
        match sample.interval() {
            Some(interval) if !self.holds(interval) => {
                (bootstrap::mean_interval(values), BOOTSTRAP)
            }
            interval => (interval, "t"),
        }
    }

    /// Whether a change in percent of the baseline's mean cannot fall below -100 %: the figure
    /// cannot be negative.
    pub fn bounds_falls(&self) -> bool {
        self.low >= 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_shares_and_durations_keep_their_intervals_in_range() {
        let count = Range::of("migrations/count", "migrations", [0.0, 1.0].into_iter());
        // Student's t: 0.25 ± 3.182 × 0.25 = (-0.546, 1.046) by SciPy's `t.interval`.
        let values = [0.0, 0.0, 0.0, 1.0];
        let (interval, method) = count.mean_interval(&Sample::of(&values), &values);
        assert_eq!((interval, method), (Some((0.0, 0.75)), BOOTSTRAP));
        // A wide spread well away from 0 keeps Student's interval.
        let values = [10.0, 12.0, 11.0, 13.0];
        let (interval, method) = count.mean_interval(&Sample::of(&values), &values);
        assert_eq!((method, interval), ("t", Sample::of(&values).interval()));

        let share = Range::of("residency/P_share", "share", [1.0, 0.98].into_iter());
        let values = [1.0, 0.98, 1.0, 0.99];
        assert_eq!(
            share.mean_interval(&Sample::of(&values), &values).1,
            BOOTSTRAP
        );

        let step = Range::of("power_step/step_watt", "W", [2.0].into_iter());
        assert!(!step.bounds_falls());
        let seen_negative = Range::of("tool/offset", "s", [-1.0, 2.0].into_iter());
        assert!(!seen_negative.bounds_falls());
        assert!(Range::of("runner/wall_s", "s", [1.0].into_iter()).bounds_falls());
    }
}
