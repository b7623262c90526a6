//! Mean, spread and 95 % confidence intervals of repeated measurements, and the tests that tell
//! a difference from noise.
//!
//! Student's t for the interval of one mean; Welch's interval and p for the difference of two
//! means, which does not assume the two groups are equally noisy. Welch's test leans on the
//! means being roughly normal, which three to five runs cannot show, so the exact Mann-Whitney U
//! test (ranks only, no assumption about the distribution) checks it, and its Hodges–Lehmann
//! shift says how far apart the ranks put the groups ([`rank`]). Many figures tested at once are
//! adjusted together by Benjamini and Hochberg's false discovery rate. Where Student's interval
//! would leave the range a figure can take, a percentile bootstrap stays inside it
//! ([`bootstrap`]). A least-squares slope over collection order finds runs that drift (a warming
//! machine, a cache that fills). How many runs a difference needs comes from the power of
//! Welch's test, a noncentral t ([`power`]). Quantiles and densities come from statrs.

pub mod bootstrap;
pub mod power;
mod rank;

pub use power::{MAX_RUNS, RunsForPower, runs_to_detect};
pub use rank::{EXACT_LIMIT, HodgesLehmann, MannWhitney, hodges_lehmann, mann_whitney};

use statrs::distribution::{ContinuousCDF, StudentsT};

/// The confidence level of every interval.
const CONFIDENCE: f64 = 0.95;

/// The significance level of every test: a p below it rejects "no difference".
pub const ALPHA: f64 = 1.0 - CONFIDENCE;

/// The power [`runs_to_detect`] plans for: the chance of finding a difference that is there.
pub const POWER: f64 = 0.8;

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
        let welch = self.welch(baseline)?;
        if welch.se == 0.0 {
            return Some((welch.diff, welch.diff));
        }
        let half = t_quantile(welch.df)? * welch.se;
        Some((welch.diff - half, welch.diff + half))
    }

    /// The two-sided p of Welch's t-test of `self.mean - baseline.mean` against 0 (`None` where
    /// both groups are constant and equal: SciPy's `nan`).
    pub fn welch_p(&self, baseline: &Sample) -> Option<f64> {
        let welch = self.welch(baseline)?;
        if welch.se == 0.0 {
            return (welch.diff != 0.0).then_some(0.0);
        }
        let t = StudentsT::new(0.0, 1.0, welch.df).ok()?;
        Some(2.0 * t.sf((welch.diff / welch.se).abs()))
    }

    /// The difference of the means, its standard error and the Welch-Satterthwaite degrees of
    /// freedom (NaN when the standard error is 0).
    fn welch(&self, baseline: &Sample) -> Option<Welch> {
        let (a, b) = (self.stddev?, baseline.stddev?);
        let va = a * a / self.n as f64;
        let vb = b * b / baseline.n as f64;
        Some(Welch {
            diff: self.mean - baseline.mean,
            se: (va + vb).sqrt(),
            df: (va + vb).powi(2)
                / (va * va / (self.n as f64 - 1.0) + vb * vb / (baseline.n as f64 - 1.0)),
        })
    }
}

struct Welch {
    diff: f64,
    se: f64,
    df: f64,
}

/// A least-squares line through values in the order they were collected (x = 0, 1, 2, ...).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trend {
    /// Change per run, in the values' unit.
    pub slope: f64,
    /// The slope's 95 % interval (Student's t with n-2 degrees of freedom; from three values).
    pub interval: Option<(f64, f64)>,
    /// `(first - mean of the rest) / mean of the rest`, in percent (`None` when that mean is 0).
    pub first_vs_rest_pct: Option<f64>,
}

impl Trend {
    /// The trend of `values` in collection order; `None` for fewer than two.
    pub fn of(values: &[f64]) -> Option<Trend> {
        let n = values.len();
        if n < 2 {
            return None;
        }
        let x_mean = (n - 1) as f64 / 2.0;
        let y_mean = values.iter().sum::<f64>() / n as f64;
        let sxx: f64 = (0..n).map(|i| (i as f64 - x_mean).powi(2)).sum();
        let sxy: f64 = (values.iter().enumerate())
            .map(|(i, y)| (i as f64 - x_mean) * (y - y_mean))
            .sum();
        let slope = sxy / sxx;
        let interval = (n >= 3).then(|| {
            let residuals: f64 = (values.iter().enumerate())
                .map(|(i, y)| (y - y_mean - slope * (i as f64 - x_mean)).powi(2))
                .sum();
            let se = (residuals / (n - 2) as f64 / sxx).sqrt();
            if se == 0.0 {
                return Some((slope, slope));
            }
            let half = t_quantile((n - 2) as f64)? * se;
            Some((slope - half, slope + half))
        });
        let rest = values[1..].iter().sum::<f64>() / (n - 1) as f64;
        Some(Trend {
            slope,
            interval: interval.flatten(),
            first_vs_rest_pct: (rest != 0.0).then(|| 100.0 * (values[0] - rest) / rest),
        })
    }

    /// Whether the slope's interval excludes 0: the values drift with collection order.
    pub fn significant(&self) -> bool {
        self.interval
            .is_some_and(|(low, high)| low > 0.0 || high < 0.0)
    }
}

/// Benjamini–Hochberg adjusted p-values (q), as SciPy's `false_discovery_control(ps,
/// method="bh")`: the family is the `Some`s, each q is the smallest `p_(j) m / j` over the
/// p-values ranked at or above its own, capped at 1. Declaring every figure with q < 0.05 a
/// difference keeps the expected share of false ones among them under 5 %. `None`s (figures
/// with nothing to test) stay `None` and do not count in m.
pub fn benjamini_hochberg(ps: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut ranked: Vec<(usize, f64)> = (ps.iter().enumerate())
        .filter_map(|(i, p)| Some((i, (*p)?)))
        .collect();
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
    let m = ranked.len() as f64;
    let mut qs = vec![None; ps.len()];
    let mut smallest = 1.0f64;
    for (rank, (index, p)) in ranked.iter().enumerate().rev() {
        smallest = smallest.min(p * m / (rank + 1) as f64);
        qs[*index] = Some(smallest);
    }
    qs
}

/// The two-sided 95 % quantile of Student's t with `df` degrees of freedom (`None` when `df` is
/// not a positive number, as from values that are not finite): statrs's, refined by Newton's
/// method on [`power::student_t_cdf`], since statrs's is off in the sixth digit beyond some
/// ten thousand degrees of freedom (where the runs a small difference needs put it).
fn t_quantile(df: f64) -> Option<f64> {
    let t = StudentsT::new(0.0, 1.0, df).ok()?;
    let target = 1.0 - (1.0 - CONFIDENCE) / 2.0;
    let mut x = t.inverse_cdf(target);
    // ln of the density's constant: ln Γ((df+1)/2) - ln Γ(df/2) - ln(df π) / 2.
    let constant = statrs::function::gamma::ln_gamma((df + 1.0) / 2.0)
        - statrs::function::gamma::ln_gamma(df / 2.0)
        - (df * std::f64::consts::PI).ln() / 2.0;
    for _ in 0..2 {
        let density = (constant - (df + 1.0) / 2.0 * (x * x / df).ln_1p()).exp();
        x -= (power::student_t_cdf(x, df) - target) / density;
    }
    Some(x)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    // Expected values from SciPy 1.17.1, an independent implementation:
    // `stats.t.interval(0.95, n-1, loc=mean, scale=stats.sem(x))` and
    // `stats.ttest_ind(x, y, equal_var=False).confidence_interval(0.95)`.
    pub(crate) const A: [f64; 5] = [612.4, 609.8, 615.1, 611.0, 613.7];
    pub(crate) const B: [f64; 5] = [626.9, 631.2, 624.5, 629.8, 628.1];
    pub(crate) const C: [f64; 5] = [612.0, 618.3, 605.9, 614.4, 609.1];

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

    // Welch's p from SciPy 1.17.1: `stats.ttest_ind(x, y, equal_var=False).pvalue`.
    #[test]
    fn welchs_p_agrees_with_scipy() {
        let (a, b, c) = (Sample::of(&A), Sample::of(&B), Sample::of(&C));
        let cases = [
            (b.welch_p(&a), 7.945527173554463e-06),
            (c.welch_p(&a), 0.8507063199650885),
            (
                Sample::of(&G).welch_p(&Sample::of(&G_BASE)),
                0.029543306930222914,
            ),
        ];
        for (actual, expected) in cases {
            assert!(
                (actual.unwrap() - expected).abs() < 1e-6,
                "{actual:?} != {expected}"
            );
        }
        let same = Sample::of(&[4.0, 4.0]);
        assert_eq!(same.welch_p(&same), None, "SciPy says nan");
        assert_eq!(same.welch_p(&Sample::of(&[5.0, 5.0])), Some(0.0));
    }

    /// Four runs that are all a little above the baseline's but one.
    pub(crate) const G: [f64; 4] = [10.05, 10.3, 10.4, 10.35];
    pub(crate) const G_BASE: [f64; 4] = [10.0, 10.1, 9.9, 10.0];

    // Slope and standard error from SciPy 1.17.1: `stats.linregress(np.arange(5), v)`; the
    // interval is `slope ± stats.t.ppf(0.975, 3) * stderr`.
    #[test]
    fn the_trend_agrees_with_scipy() {
        let trend = Trend::of(&[10.0, 10.5, 11.2, 11.4, 12.1]).unwrap();
        assert!((trend.slope - 0.51).abs() < 1e-9);
        close(
            trend.interval.unwrap(),
            (0.3787843773545875, 0.6412156226454125),
        );
        assert!(trend.significant());
        let first = trend.first_vs_rest_pct.unwrap();
        assert!(
            (first - 100.0 * (10.0 - 11.3) / 11.3).abs() < 1e-9,
            "{first}"
        );
        let flat = Trend::of(&A).unwrap();
        assert!(!flat.significant(), "{flat:?}");
        assert_eq!(Trend::of(&[1.0, 2.0]).unwrap().interval, None);
        assert_eq!(Trend::of(&[1.0]), None);
    }

    // SciPy 1.17.1: `stats.false_discovery_control(ps, method="bh")`.
    #[test]
    fn benjamini_hochberg_agrees_with_scipy() {
        let cases: [(&[f64], &[f64]); 4] = [
            (
                &[0.01, 0.04, 0.03, 0.005, 0.2, 0.8],
                &[0.03, 0.06, 0.06, 0.03, 0.24, 0.8],
            ),
            (
                &[0.0286, 0.0286, 0.0286, 0.5],
                &[
                    0.03813333333333333,
                    0.03813333333333333,
                    0.03813333333333333,
                    0.5,
                ],
            ),
            (
                &[0.0, 1e-8, 0.049, 0.051, 0.9, 0.9, 0.3],
                &[0.0, 3.5e-08, 0.08925, 0.08925, 0.9, 0.9, 0.42],
            ),
            (&[0.04], &[0.04]),
        ];
        for (ps, expected) in cases {
            let some: Vec<Option<f64>> = ps.iter().copied().map(Some).collect();
            let qs = benjamini_hochberg(&some);
            for (q, e) in qs.iter().zip(expected) {
                assert!(
                    (q.unwrap() - e).abs() < 1e-12,
                    "{ps:?}: {qs:?} != {expected:?}"
                );
            }
        }
        // Figures with nothing to test are no part of the family.
        let qs = benjamini_hochberg(&[Some(0.01), None, Some(0.04)]);
        assert_eq!(qs[1], None);
        assert!((qs[0].unwrap() - 0.02).abs() < 1e-12 && (qs[2].unwrap() - 0.04).abs() < 1e-12);
    }

    // SciPy 1.17.1: `stats.t.ppf(0.975, df)`.
    #[test]
    fn the_t_quantile_holds_at_any_degrees_of_freedom() {
        for (df, expected) in [
            (1.0, 12.706204736174694),
            (3.0, 3.1824463052837078),
            (12.5, 2.1691859427125406),
            (34883.72931907695, 1.9600319919518276),
            (200_000.0, 1.959975845966768),
        ] {
            let t = t_quantile(df).unwrap();
            assert!(
                (t - expected).abs() < 1e-10 * expected,
                "df {df}: {t} != {expected}"
            );
        }
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
