//! Mean, spread and 95 % confidence intervals of repeated measurements, and the tests that tell
//! a difference from noise.
//!
//! Student's t for the interval of one mean; Welch's interval and p for the difference of two
//! means, which does not assume the two groups are equally noisy. Welch's test leans on the
//! means being roughly normal, which three to five runs cannot show, so the exact Mann-Whitney U
//! test (ranks only, no assumption about the distribution) checks it. A least-squares slope over
//! collection order finds runs that drift (a warming machine, a cache that fills). How many runs
//! a difference needs comes from the power of Welch's test (a noncentral t). Quantiles and
//! densities come from statrs.

use statrs::distribution::{ChiSquared, Continuous, ContinuousCDF, Normal, StudentsT};

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

/// The exact Mann-Whitney U test of one group against another.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// Pairs (x, y) with x above y, ties counting half: SciPy's `statistic`, the U of `x`.
    pub u: f64,
    /// Two-sided p from the exact distribution of U (`None` above [`EXACT_LIMIT`] runs).
    pub p: Option<f64>,
    /// The smallest two-sided p these group sizes can give: above [`ALPHA`] (three runs
    /// against three: 0.1), the test cannot find any difference.
    pub smallest_p: f64,
}

/// The most runs (both groups together) whose exact U distribution is computed: its counts
/// are binomial coefficients, and C(120, 60) still fits an `i128` many times over.
pub const EXACT_LIMIT: usize = 120;

/// The exact two-sided Mann-Whitney U test of `x` against `y`, as SciPy's
/// `mannwhitneyu(x, y, method="exact")`: U from midranks, so a tie counts half; p is twice
/// the chance of a U at least as far from the middle, `floor(max(U, nm - U))`, under the
/// distribution without ties, capped at 1. With ties that distribution is only approximate
/// (SciPy's exact method ignores ties too); `None` when either group is empty.
pub fn mann_whitney(x: &[f64], y: &[f64]) -> Option<MannWhitney> {
    let (m, n) = (x.len(), y.len());
    if m == 0 || n == 0 {
        return None;
    }
    let u: f64 = (x.iter())
        .flat_map(|a| y.iter().map(move |b| (a, b)))
        .map(|(a, b)| match a.partial_cmp(b) {
            Some(std::cmp::Ordering::Greater) => 1.0,
            Some(std::cmp::Ordering::Equal) => 0.5,
            _ => 0.0,
        })
        .sum();
    let total = binomial(m + n, m);
    let smallest_p = (2.0 / total).min(1.0);
    let p = (m + n <= EXACT_LIMIT).then(|| {
        let counts = u_counts(m, n);
        let far = u.max((m * n) as f64 - u).floor() as usize;
        let tail: i128 = counts[far..].iter().sum();
        (2.0 * tail as f64 / total).min(1.0)
    });
    Some(MannWhitney { u, p, smallest_p })
}

/// `C(n, k)` as a float (exact while it is below 2^53).
fn binomial(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64)
}

/// How many of the `C(m+n, m)` orderings of `m` and `n` distinct values give each U from 0 to
/// `mn`: the coefficients of the Gaussian binomial `[m+n choose m]_q`, built one x-value at a
/// time as `[n+i choose i] = [n+i-1 choose i-1] (1 - q^(n+i)) / (1 - q^i)`. The division by
/// `1 - q^i` is a running sum with stride `i`; each step's coefficients are counts again.
fn u_counts(m: usize, n: usize) -> Vec<i128> {
    let top = m * n;
    let mut counts = vec![0i128; top + 1];
    counts[0] = 1;
    for i in 1..=m {
        for k in (n + i..=top).rev() {
            counts[k] -= counts[k - n - i];
        }
        for k in i..=top {
            counts[k] += counts[k - i];
        }
    }
    counts
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

/// Runs per group (equal groups) for a two-sided Welch test at [`ALPHA`] to find a difference
/// of `delta` with [`POWER`], when the groups' standard deviations are `sd_a` and `sd_b`; not
/// rounded up, and at least 2.
///
/// A noncentral-t search: with n runs a side, Welch's statistic is noncentral t with
/// noncentrality `delta / sqrt((sd_a² + sd_b²) / n)` and Welch-Satterthwaite degrees of freedom
/// `(n - 1)(sd_a² + sd_b²)² / (sd_a⁴ + sd_b⁴)`; its power is the chance of landing beyond the
/// central t's critical values. n is found by bisection. With equal spreads this is the pooled
/// t-test's power, as statsmodels' `TTestIndPower` computes it. `None` for a `delta` of 0 or
/// spreads that are not finite.
pub fn runs_to_detect(sd_a: f64, sd_b: f64, delta: f64) -> Option<f64> {
    let (va, vb) = (sd_a * sd_a, sd_b * sd_b);
    if delta == 0.0 || !(va + vb).is_finite() || !delta.is_finite() {
        return None;
    }
    if va + vb == 0.0 {
        return Some(2.0);
    }
    let power = |n: f64| -> Option<f64> {
        let df = (n - 1.0) * (va + vb).powi(2) / (va * va + vb * vb);
        let nc = delta.abs() / ((va + vb) / n).sqrt();
        let critical = t_quantile(df)?;
        Some(1.0 - noncentral_t_cdf(critical, df, nc)? + noncentral_t_cdf(-critical, df, nc)?)
    };
    let (mut low, mut high) = (2.0, 4.0);
    if power(low)? >= POWER {
        return Some(low);
    }
    while power(high)? < POWER {
        (low, high) = (high, high * 2.0);
        if high > 1e9 {
            return None;
        }
    }
    while high - low > 1e-9 * high {
        let mid = (low + high) / 2.0;
        if power(mid)? < POWER {
            low = mid;
        } else {
            high = mid;
        }
    }
    Some(high)
}

/// P(T ≤ t) for T noncentral t with `df` degrees of freedom and noncentrality `nc`: T is
/// (Z + nc) / S with S = sqrt(V / df), V chi-squared, so P(T ≤ t) = E[Φ(t S - nc)], integrated
/// over S by Simpson's rule where S's density is not negligible (12 of its standard deviations,
/// about 1 / sqrt(2 df), either side of 1).
fn noncentral_t_cdf(t: f64, df: f64, nc: f64) -> Option<f64> {
    const STEPS: usize = 4000;
    let chi = ChiSquared::new(df).ok()?;
    let normal = Normal::standard();
    let spread = 12.0 / (2.0 * df).sqrt();
    let (low, high) = ((1.0 - spread).max(0.0), 1.0 + spread);
    let h = (high - low) / STEPS as f64;
    let integrand = |s: f64| {
        // The density of S = sqrt(V / df) at s.
        let density = if s == 0.0 {
            0.0
        } else {
            chi.pdf(df * s * s) * 2.0 * df * s
        };
        normal.cdf(t * s - nc) * density
    };
    let inner: f64 = (1..STEPS)
        .map(|i| integrand(low + i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 })
        .sum();
    Some((integrand(low) + inner + integrand(high)) * h / 3.0)
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

    // U and p from SciPy 1.17.1: `stats.mannwhitneyu(x, y, method="exact")`, which ignores
    // ties in p (U from midranks; p from the distribution without ties at floor(max(U, mn-U))).
    #[test]
    fn the_exact_mann_whitney_test_agrees_with_scipy() {
        let thirty: Vec<f64> = (0..30).map(f64::from).collect();
        let shifted: Vec<f64> = thirty.iter().map(|x| x + 9.5).collect();
        let cases: [(&[f64], &[f64], f64, f64); 8] = [
            (&B, &A, 25.0, 0.007936507936507936),
            (&C, &A, 11.0, 0.8412698412698413),
            (
                &[3.1, 2.7, 3.9],
                &[2.2, 2.9, 2.5, 2.4],
                11.0,
                0.11428571428571428,
            ),
            (&G, &G_BASE, 15.0, 0.05714285714285714),
            // Ties.
            (
                &[1.0, 2.0, 2.0, 3.0, 4.0],
                &[2.0, 3.0, 3.0, 5.0, 6.0, 7.0],
                6.0,
                0.12554112554112554,
            ),
            (
                &[1.0, 2.0, 3.5, 4.0],
                &[2.0, 3.0, 5.0, 6.0, 0.5],
                8.5,
                0.9047619047619049,
            ),
            (
                &[2.0, 3.0, 5.0, 6.0, 0.5],
                &[1.0, 2.0, 3.5, 4.0],
                11.5,
                0.9047619047619049,
            ),
            (&shifted, &thirty, 690.0, 0.0002749445544676173),
        ];
        for (x, y, u, p) in cases {
            let test = mann_whitney(x, y).unwrap();
            assert_eq!(test.u, u, "{x:?} vs {y:?}");
            assert!(
                (test.p.unwrap() - p).abs() < 1e-6,
                "{x:?} vs {y:?}: {test:?} != {p}"
            );
        }
        let three = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert_eq!((three.u, three.p), (0.0, Some(0.1)));
        assert!((three.smallest_p - 0.1).abs() < 1e-12, "2 / C(6, 3)");
        assert_eq!(mann_whitney(&[], &[1.0]), None);
    }

    #[test]
    fn the_u_counts_are_the_orderings() {
        // m = 2, n = 2: the six orderings of xxyy give U = 0, 1, 2, 2, 3, 4.
        assert_eq!(u_counts(2, 2), [1, 1, 2, 1, 1]);
        let counts = u_counts(40, 40);
        assert_eq!(counts.iter().sum::<i128>() as f64, binomial(80, 40));
    }

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

    // statsmodels 0.15.0: `TTestIndPower().solve_power(effect_size=d, alpha=0.05, power=0.8,
    // ratio=1.0)` for d = delta / sd.
    #[test]
    fn runs_to_detect_agrees_with_statsmodels() {
        for (d, expected) in [
            (0.5, 63.76561058891169),
            (1.0, 16.714722446954024),
            (2.0, 5.08999456823225),
            (3.0, 3.070009095559428),
            (4.0, 2.4138943186784325),
        ] {
            let n = runs_to_detect(3.0, 3.0, 3.0 * d).unwrap();
            assert!((n - expected).abs() < 1e-4, "d = {d}: {n} != {expected}");
        }
        // Unequal spreads, against SciPy 1.17.1's noncentral t with the same degrees of freedom:
        // `brentq(lambda n: nct.sf(c, df, nc) + nct.cdf(-c, df, nc) - 0.8, 2, 200)` with
        // `df = (n-1)(va+vb)²/(va²+vb²)`, `nc = delta / sqrt((va+vb)/n)`, `c = t.ppf(0.975, df)`.
        let n = runs_to_detect(1.0, 2.0, 1.0).unwrap();
        assert!((n - 40.58046728697046).abs() < 1e-4, "{n}");
        assert_eq!(runs_to_detect(0.0, 0.0, 1.0), Some(2.0));
        assert_eq!(runs_to_detect(1.0, 1.0, 0.0), None);
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
