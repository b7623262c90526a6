//! Mean, spread and 95 % confidence intervals of repeated measurements.
//!
//! Student's t for the interval of one mean; Welch's interval for the difference of two means,
//! which does not assume the two groups are equally noisy. Quantiles come from statrs.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// The confidence level of every interval.
const CONFIDENCE: f64 = 0.95;

/// Mean, sample standard deviation and count of a group's values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub n: usize,
    pub mean: f64,
    pub stddev: Option<f64>,
}

impl Sample {
    /// The sample of `values`; callers pass at least one finite value.
    pub fn of(values: &[f64]) -> Sample {
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n as f64;
        let stddev = (n >= 2).then(|| {
            let squares: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
            (squares / (n - 1) as f64).sqrt()
        });
        Sample { n, mean, stddev }
    }

    /// The 95 % confidence interval of the mean (Student's t with n-1 degrees of freedom).
    pub fn interval(&self) -> Option<(f64, f64)> {
        let sd = self.stddev?;
        let half = t_quantile(self.n as f64 - 1.0)? * sd / (self.n as f64).sqrt();
        Some((self.mean - half, self.mean + half))
    }

    /// Welch's 95 % confidence interval of `self.mean - baseline.mean`.
    pub fn difference_interval(&self, baseline: &Sample) -> Option<(f64, f64)> {
        let (a, b) = (self.stddev?, baseline.stddev?);
        let diff = self.mean - baseline.mean;
        let va = a * a / self.n as f64;
        let vb = b * b / baseline.n as f64;
        let se = (va + vb).sqrt();
        if se == 0.0 {
            return Some((diff, diff));
        }
        // Welch-Satterthwaite degrees of freedom.
        let df = (va + vb).powi(2)
            / (va * va / (self.n as f64 - 1.0) + vb * vb / (baseline.n as f64 - 1.0));
        let half = t_quantile(df)? * se;
        Some((diff - half, diff + half))
    }
}

/// The two-sided 95 % quantile of Student's t with `df` degrees of freedom (`None` when `df` is
/// not a positive number, as from values that are not finite).
fn t_quantile(df: f64) -> Option<f64> {
    let t = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(t.inverse_cdf(1.0 - (1.0 - CONFIDENCE) / 2.0))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    // Expected values from SciPy 1.17.1, an independent implementation:
    // `stats.t.interval(0.95, n-1, loc=mean, scale=stats.sem(x))` and
    // `stats.ttest_ind(x, y, equal_var=False).confidence_interval(0.95)`.
    pub(crate) const A: [f64; 5] = [612.4, 609.8, 615.1, 611.0, 613.7];
    pub(crate) const B: [f64; 5] = [626.9, 631.2, 624.5, 629.8, 628.1];
    const C: [f64; 5] = [612.0, 618.3, 605.9, 614.4, 609.1];

    fn close(actual: (f64, f64), expected: (f64, f64)) {
        let ok = (actual.0 - expected.0).abs() < 1e-6 && (actual.1 - expected.1).abs() < 1e-6;
        assert!(ok, "{actual:?} != {expected:?}");
    }

    #[test]
    fn the_mean_interval_agrees_with_scipy() {
        let a = Sample::of(&A);
        assert_eq!(a.n, 5);
        assert!((a.stddev.unwrap() - 2.103568397).abs() < 1e-8);
        close(
            a.interval().unwrap(),
            (609.7880748539388, 615.0119251460611),
        );
        close(
            Sample::of(&C).interval().unwrap(),
            (606.0159483244825, 617.8640516755174),
        );
    }

    #[test]
    fn welchs_interval_agrees_with_scipy() {
        let (a, b, c) = (Sample::of(&A), Sample::of(&B), Sample::of(&C));
        close(
            b.difference_interval(&a).unwrap(),
            (12.23072892555371, 19.169271074446154),
        );
        close(
            c.difference_interval(&a).unwrap(),
            (-6.294419217249497, 5.374419217249424),
        );
    }

    #[test]
    fn one_run_has_no_interval_and_equal_constants_have_a_point_interval() {
        assert_eq!(Sample::of(&[3.0]).interval(), None);
        let same = Sample::of(&[4.0, 4.0, 4.0]);
        assert_eq!(same.difference_interval(&same), Some((0.0, 0.0)));
    }

    #[test]
    fn a_spread_that_is_not_finite_gives_no_welch_interval_instead_of_a_panic() {
        let nan = Sample::of(&[1.0, f64::NAN]);
        assert_eq!(Sample::of(&[1.0, 2.0]).difference_interval(&nan), None);
    }
}
