//! How many runs a difference needs: the power of Welch's test, from the noncentral t.
//!
//! With n runs a side, Welch's statistic is noncentral t with noncentrality
//! `delta / sqrt((sd_a² + sd_b²) / n)` and Welch-Satterthwaite degrees of freedom
//! `(n - 1)(sd_a² + sd_b²)² / (sd_a⁴ + sd_b⁴)`; its power is the chance of landing beyond the
//! central t's two-sided critical values. The noncentral t's distribution function is an
//! integral over the chi-squared part of the statistic, computed in logarithms (a chi-squared
//! density with hundreds of degrees of freedom overflows when computed directly) by
//! Gauss–Legendre quadrature, so it holds from two runs to [`MAX_RUNS`].

use std::sync::OnceLock;

use statrs::distribution::{ContinuousCDF, Normal};
use statrs::function::gamma::ln_gamma;

use super::{POWER, t_quantile};

/// The most runs per group [`runs_to_detect`] counts up to: a difference that needs more is
/// reported as beyond it (no one collects a hundred thousand runs of a configuration).
pub const MAX_RUNS: f64 = 100_000.0;

/// The runs per group a difference needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RunsForPower {
    /// Runs per group (equal groups), not rounded up; at least 2.
    Runs(f64),
    /// More than [`MAX_RUNS`] per group.
    BeyondCap,
}

/// Runs per group (equal groups) for a two-sided Welch test at [`super::ALPHA`] to find a
/// difference of `delta` with [`POWER`], when the groups' standard deviations are `sd_a` and
/// `sd_b`. With equal spreads this is the pooled t-test's power, as statsmodels'
/// `TTestIndPower().solve_power` computes it. `None` for a `delta` of 0 or spreads that are not
/// finite.
pub fn runs_to_detect(sd_a: f64, sd_b: f64, delta: f64) -> Option<RunsForPower> {
    let (va, vb) = (sd_a * sd_a, sd_b * sd_b);
    if delta == 0.0 || !(va + vb).is_finite() || !delta.is_finite() {
        return None;
    }
    if va + vb == 0.0 {
        return Some(RunsForPower::Runs(2.0));
    }
    let power = |n: f64| -> Option<f64> {
        let df = (n - 1.0) * (va + vb).powi(2) / (va * va + vb * vb);
        let nc = delta.abs() / ((va + vb) / n).sqrt();
        let critical = t_quantile(df)?;
        let below = noncentral_t_cdf(-critical, df, nc);
        let above = 1.0 - noncentral_t_cdf(critical, df, nc);
        Some(above + below)
    };
    // Power grows with n: double until it suffices, then bisect.
    let (mut low, mut high) = (2.0f64, 2.0f64);
    if power(low)? >= POWER {
        return Some(RunsForPower::Runs(low));
    }
    loop {
        (low, high) = (high, (high * 2.0).min(MAX_RUNS));
        if power(high)? >= POWER {
            break;
        }
        if high >= MAX_RUNS {
            return Some(RunsForPower::BeyondCap);
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
    Some(RunsForPower::Runs(high))
}

/// P(T ≤ t) for T noncentral t with `df` degrees of freedom and noncentrality `nc`.
///
/// T is (Z + nc) / S with S = sqrt(V / df), V chi-squared with `df` degrees of freedom, so
/// P(T ≤ t) = E[Φ(t S - nc)]. S's density is taken in logarithms and integrated where it is not
/// negligible: 12 of its standard deviations (about 1 / sqrt(2 df)) either side of 1, cut at 0,
/// in [`PANELS`] panels of a 16-point Gauss–Legendre rule.
fn noncentral_t_cdf(t: f64, df: f64, nc: f64) -> f64 {
    let normal = Normal::standard();
    let spread = 12.0 / (2.0 * df).sqrt();
    let (low, high) = ((1.0 - spread).max(0.0), 1.0 + spread);
    // ln of the chi-squared density's constant: -(df/2) ln 2 - ln Γ(df/2).
    let half = df / 2.0;
    let constant = -half * std::f64::consts::LN_2 - ln_gamma(half);
    // The density of S at s: the chi-squared density at x = df s², times dx/ds = 2 df s.
    let density = |s: f64| {
        if s <= 0.0 {
            return 0.0;
        }
        let x = df * s * s;
        (constant + (half - 1.0) * x.ln() - x / 2.0 + (2.0 * df * s).ln()).exp()
    };
    let rule = legendre_16();
    // Each panel's integral of Φ(t s - nc) times the density, and of the density alone: the
    // quotient of the two sums cancels what the density's constant loses to rounding (ln Γ of
    // tens of thousands is a million, known to its last few digits).
    let panel = |start: f64, end: f64| {
        let (middle, radius) = ((start + end) / 2.0, (end - start) / 2.0);
        (rule.iter()).fold((0.0, 0.0), |(weighted, mass), &(node, weight)| {
            let s = middle + radius * node;
            let d = weight * radius * density(s);
            (weighted + normal.cdf(t * s - nc) * d, mass + d)
        })
    };
    let add = |(a, b): (f64, f64), (c, d): (f64, f64)| (a + c, b + d);
    let width = (high - low) / PANELS as f64;
    let mut sum = (1..PANELS)
        .map(|i| panel(low + i as f64 * width, low + (i + 1) as f64 * width))
        .fold((0.0, 0.0), add);
    if low > 0.0 {
        sum = add(sum, panel(low, low + width));
    } else {
        // With fewer than two degrees of freedom S's density grows like s^(df - 1) from 0, which
        // no polynomial follows: panels halving towards 0 each see it smooth, and below the last
        // the density's mass is ~2^(-60 df).
        let mut end = width;
        for _ in 0..60 {
            sum = add(sum, panel(end / 2.0, end));
            end /= 2.0;
        }
    }
    sum.0 / sum.1
}

/// P(T ≤ t) for T Student's t with `df` degrees of freedom: the noncentral t with
/// noncentrality 0, which stays accurate where statrs's incomplete-beta form loses digits (a
/// few millionths at 10^5 degrees of freedom).
pub(super) fn student_t_cdf(t: f64, df: f64) -> f64 {
    noncentral_t_cdf(t, df, 0.0)
}

/// Panels of the noncentral t integral: each spans two standard deviations of S or less, over
/// which a 16-point rule integrates its near-normal density to rounding error.
const PANELS: usize = 12;

/// The nodes and weights of 16-point Gauss–Legendre quadrature on [-1, 1]: the roots of the
/// Legendre polynomial P16 by Newton's method from Tricomi's estimate, and 2 / ((1 - x²)
/// P16'(x)²).
fn legendre_16() -> &'static [(f64, f64); 16] {
    static RULE: OnceLock<[(f64, f64); 16]> = OnceLock::new();
    RULE.get_or_init(|| {
        const N: usize = 16;
        let mut rule = [(0.0, 0.0); N];
        for (i, point) in rule.iter_mut().enumerate() {
            let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (N as f64 + 0.5)).cos();
            let mut derivative = 0.0;
            for _ in 0..100 {
                // P_N(x) and P_N'(x) by the three-term recurrence.
                let (mut p, mut previous) = (1.0, 0.0);
                for k in 1..=N {
                    (p, previous) = (
                        ((2 * k - 1) as f64 * x * p - (k - 1) as f64 * previous) / k as f64,
                        p,
                    );
                }
                derivative = N as f64 * (x * p - previous) / (x * x - 1.0);
                let step = p / derivative;
                x -= step;
                if step.abs() < 1e-15 {
                    break;
                }
            }
            *point = (x, 2.0 / ((1.0 - x * x) * derivative * derivative));
        }
        rule
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(sd_a: f64, sd_b: f64, delta: f64) -> f64 {
        match runs_to_detect(sd_a, sd_b, delta) {
            Some(RunsForPower::Runs(n)) => n,
            other => panic!("{sd_a} {sd_b} {delta}: {other:?}"),
        }
    }

    #[test]
    fn the_quadrature_integrates_polynomials_exactly() {
        let rule = legendre_16();
        let integral = |f: &dyn Fn(f64) -> f64| rule.iter().map(|(x, w)| w * f(*x)).sum::<f64>();
        assert!((integral(&|_| 1.0) - 2.0).abs() < 1e-14);
        assert!((integral(&|x| x.powi(30)) - 2.0 / 31.0).abs() < 1e-14);
    }

    // SciPy 1.17.1: `stats.nct.cdf(t, df, nc)`.
    #[test]
    fn the_noncentral_t_agrees_with_scipy() {
        for (t, df, nc, expected) in [
            (2.0, 3.0, 1.0, 0.7436298684076654),
            (-1.0, 1.0, 0.5, 0.13092587339173373),
            (1.96, 200_000.0, 2.8, 0.20045463722915263),
            (2.1, 12.5, 2.8, 0.2464202434806634),
            (1.5, 1.3, 0.0, 0.8343851880071966),
            (-2.2, 7.0, 2.8, 6.160145400248979e-06),
        ] {
            let actual = noncentral_t_cdf(t, df, nc);
            assert!(
                (actual - expected).abs() < 1e-9,
                "nct.cdf({t}, {df}, {nc}) = {expected}, not {actual}"
            );
        }
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
            (0.05, 6280.048916291407),
            (0.03, 17442.872659538418),
        ] {
            let n = runs(3.0, 3.0, 3.0 * d);
            assert!((n - expected).abs() < 1e-4, "d = {d}: {n} != {expected}");
        }
        // Unequal spreads, against SciPy 1.17.1's noncentral t with the same degrees of freedom:
        // `brentq(lambda n: nct.sf(c, df, nc) + nct.cdf(-c, df, nc) - 0.8, 2, 200)` with
        // `df = (n-1)(va+vb)²/(va²+vb²)`, `nc = delta / sqrt((va+vb)/n)`, `c = t.ppf(0.975, df)`.
        let n = runs(1.0, 2.0, 1.0);
        assert!((n - 40.58046728697046).abs() < 1e-4, "{n}");
        assert_eq!(runs_to_detect(0.0, 0.0, 1.0), Some(RunsForPower::Runs(2.0)));
        assert_eq!(runs_to_detect(1.0, 1.0, 0.0), None);
        // d = 0.01 needs 156978.17 runs a side (statsmodels): beyond the cap, and said so.
        assert_eq!(
            runs_to_detect(3.0, 3.0, 0.03),
            Some(RunsForPower::BeyondCap)
        );
    }
}
