//! Percentile bootstrap intervals, for figures whose Student-t interval would leave the range
//! they can take (a count below 0, a share above 1).
//!
//! A resampled mean lies between the smallest and the largest value resampled, so the interval
//! stays inside whatever range the values do. The resamples come from a fixed-seed generator:
//! the same runs give the same interval every time.

use super::CONFIDENCE;

/// Resamples per interval: the 2.5 % and 97.5 % quantiles of so many move by well under a
/// percent of the interval between seeds.
const RESAMPLES: usize = 20_000;

/// The 95 % percentile bootstrap interval of the mean of `values` (`None` for fewer than two).
pub fn mean_interval(values: &[f64]) -> Option<(f64, f64)> {
    if values.len() < 2 {
        return None;
    }
    let mut draw = Draws::new();
    let mut means: Vec<f64> = (0..RESAMPLES).map(|_| draw.mean(values)).collect();
    Some(percentiles(&mut means))
}

/// The 95 % percentile bootstrap interval of `100 (mean(group) / mean(baseline) - 1)`, each
/// group resampled on its own: the change in percent of the baseline's mean, which cannot fall
/// below -100 % for values that cannot be negative. A resampled baseline mean of 0 gives +∞
/// (or 0 % when the group's resampled mean is 0 too), so the upper end is +∞ when the baseline
/// is 0 in so many runs that more than 2.5 % of resamples are all zeros. `None` for fewer than
/// two values on either side.
pub fn ratio_interval(group: &[f64], baseline: &[f64]) -> Option<(f64, f64)> {
    if group.len() < 2 || baseline.len() < 2 {
        return None;
    }
    let mut draw = Draws::new();
    let mut changes: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let (own, base) = (draw.mean(group), draw.mean(baseline));
            match (own, base) {
                (_, b) if b != 0.0 => 100.0 * (own / b - 1.0),
                (0.0, _) => 0.0,
                (o, _) => o.signum() * f64::INFINITY,
            }
        })
        .collect();
    Some(percentiles(&mut changes))
}

/// The (1 - CONFIDENCE) / 2 and (1 + CONFIDENCE) / 2 quantiles of `values`, each the smallest
/// value with at least that share of the values at or below it.
fn percentiles(values: &mut [f64]) -> (f64, f64) {
    values.sort_by(f64::total_cmp);
    let quantile = |q: f64| {
        let rank = (q * values.len() as f64).ceil() as usize;
        values[rank.clamp(1, values.len()) - 1]
    };
    let tail = (1.0 - CONFIDENCE) / 2.0;
    (quantile(tail), quantile(1.0 - tail))
}

/// SplitMix64 (Steele, Lea and Flood): a small generator whose fixed seed makes every interval
/// reproducible.
struct Draws(u64);

impl Draws {
    fn new() -> Draws {
        Draws(0x5eed_1ab5_c4ed_0b57)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// The mean of `values.len()` draws from `values` with replacement.
    fn mean(&mut self, values: &[f64]) -> f64 {
        let n = values.len() as u64;
        let sum: f64 = (0..n)
            // Lemire's multiply-shift maps 64 random bits onto 0..n without a division.
            .map(|_| values[((u128::from(self.next()) * u128::from(n)) >> 64) as usize])
            .sum();
        sum / n as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The exact bootstrap distribution, enumerating all n^n resamples in Python, and its
    // quantiles as `percentiles` takes them (the smallest value with at least q of the mass at
    // or below it):
    //
    //     means = sorted(sum(c) / n for c in itertools.product(x, repeat=n))
    //     low, high = means[ceil(0.025 * len(means)) - 1], means[ceil(0.975 * len(means)) - 1]
    //
    // A Monte Carlo quantile of 20,000 resamples lands on the exact one unless the exact
    // distribution function passes 2.5 % (97.5 %) within a fraction of a percent of an atom.
    #[test]
    fn the_mean_interval_is_the_exact_bootstraps_to_the_atom() {
        let cases: [(&[f64], (f64, f64)); 3] = [
            // A count that is 0 in three runs of four: Student's t gives (-0.546, 1.046).
            (&[0.0, 0.0, 0.0, 1.0], (0.0, 0.75)),
            (&[0.0, 1.0, 0.0, 2.0, 0.0], (0.0, 1.4)),
            // A share near its top: Student's t reaches 1.0077.
            (&[1.0, 0.98, 1.0, 0.99], (0.985, 1.0)),
        ];
        for (values, (low, high)) in cases {
            let (l, h) = mean_interval(values).unwrap();
            assert!(
                (l - low).abs() < 1e-12 && (h - high).abs() < 1e-12,
                "{values:?}: ({l}, {h}) != ({low}, {high})"
            );
        }
        assert_eq!(mean_interval(&[3.0]), None);
        assert_eq!(mean_interval(&[3.0, 3.0]), Some((3.0, 3.0)));
    }

    // The same enumeration over both groups' resamples, `100 * (mean(a*) / mean(b*) - 1)`.
    #[test]
    fn the_ratio_interval_never_falls_below_minus_100_percent() {
        // Exact: 31.6 % of the mass at -100 %, the 97.5 % quantile at -60 % (the distribution
        // function passes from 0.9718 to 0.9788 there). Welch's interval in percent of the
        // baseline's mean: -149 % … -26 %.
        let (low, high) = ratio_interval(&[0.0, 0.0, 1.0, 0.0], &[2.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(low, -100.0);
        assert!((high - -60.0).abs() < 1e-9, "{high}");
        // A baseline that is 0 in half its runs: one resample in sixteen is all zeros, so the
        // upper end is unbounded (exact: 2.5 % quantile +25 %).
        let (low, high) = ratio_interval(&[1.0, 2.0, 1.0, 1.0], &[0.0, 0.0, 1.0, 1.0]).unwrap();
        assert_eq!((low, high), (25.0, f64::INFINITY));
        assert_eq!(ratio_interval(&[1.0], &[1.0, 2.0]), None);
    }
}
