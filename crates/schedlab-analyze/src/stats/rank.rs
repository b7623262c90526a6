//! The exact Mann-Whitney U test, and the shift it estimates (Hodges–Lehmann) with its interval.
//!
//! Both come from one distribution: the counts of U over the `C(m+n, m)` orderings of two groups
//! of distinct values. The test's p is a tail of it; the shift's interval is the set of shifts
//! the test does not reject, whose ends are order statistics of the pairwise differences.

use super::ALPHA;

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

impl MannWhitney {
    /// Whether the group's values rank above the other's: U above its middle.
    pub fn ranks_higher(&self, pairs: f64) -> bool {
        2.0 * self.u > pairs
    }
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

/// The Hodges–Lehmann estimate of how far `x` lies above `y`, with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HodgesLehmann {
    /// The median of the pairwise differences `x_i - y_j`.
    pub shift: f64,
    /// The shifts `d` for which the exact test of `x - d` against `y` gives p ≥ 0.05: from the
    /// k-th smallest to the k-th largest pairwise difference, k - 1 being the largest U whose
    /// two-sided tail stays below 0.05. `None` where no U is that rare (three runs against three
    /// or four) or beyond [`EXACT_LIMIT`] runs.
    pub interval: Option<(f64, f64)>,
}

/// The Hodges–Lehmann shift of `x` against `y` and the interval that inverts the exact
/// Mann-Whitney test (the one R's `wilcox.test(x, y, conf.int = TRUE)` gives without ties);
/// `None` when either group is empty.
pub fn hodges_lehmann(x: &[f64], y: &[f64]) -> Option<HodgesLehmann> {
    let (m, n) = (x.len(), y.len());
    if m == 0 || n == 0 {
        return None;
    }
    let mut differences: Vec<f64> = (x.iter())
        .flat_map(|a| y.iter().map(move |b| a - b))
        .collect();
    differences.sort_by(f64::total_cmp);
    let pairs = differences.len();
    let shift = if pairs % 2 == 1 {
        differences[pairs / 2]
    } else {
        (differences[pairs / 2 - 1] + differences[pairs / 2]) / 2.0
    };
    let interval = (m + n <= EXACT_LIMIT)
        .then(|| {
            let counts = u_counts(m, n);
            let total: i128 = counts.iter().sum();
            // How many of the smallest U values have a two-sided tail below ALPHA.
            let mut below = 0;
            let mut tail = 0i128;
            for &count in &counts[..pairs / 2 + 1] {
                tail += count;
                if 2.0 * tail as f64 >= ALPHA * total as f64 {
                    break;
                }
                below += 1;
            }
            (below > 0).then(|| (differences[below - 1], differences[pairs - below]))
        })
        .flatten();
    Some(HodgesLehmann { shift, interval })
}

/// `C(n, k)` as a float (exact while it is below 2^53).
pub(super) fn binomial(n: usize, k: usize) -> f64 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::tests::{A, B, C, G, G_BASE};

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

    // The shift is numpy's `median(subtract.outer(x, y))`; the interval is the shifts SciPy
    // 1.17.1's exact test does not reject, found by trying a shift inside every gap between the
    // sorted pairwise differences `d` (and beyond both ends):
    //
    //     ok = [mannwhitneyu(x - c, y, method="exact").pvalue >= 0.05 for c in candidates]
    //     interval = None if ok[0] or ok[-1] else (d[first_ok - 1], d[last_ok])
    #[test]
    fn the_hodges_lehmann_shift_and_interval_invert_scipys_test() {
        let thirty: Vec<f64> = (0..30).map(f64::from).collect();
        let shifted: Vec<f64> = thirty.iter().map(|x| x + 9.5).collect();
        let outlier = [10.2, 10.3, 10.25, 10.15, 30.0];
        // (x, y, shift, interval)
        type Case<'a> = (&'a [f64], &'a [f64], f64, Option<(f64, f64)>);
        let cases: [Case<'_>; 6] = [
            (&B, &A, 15.9, Some((11.8, 20.0))),
            (&G, &G_BASE, 0.3, Some((-0.05, 0.5))),
            // Three runs against four: no U is rare enough (2 / C(7, 3) = 0.057).
            (&[3.1, 2.7, 3.9], &[2.2, 2.9, 2.5, 2.4], 0.65, None),
            // Ties.
            (
                &[1.0, 2.0, 2.0, 3.0, 4.0],
                &[2.0, 3.0, 3.0, 5.0, 6.0, 7.0],
                -2.0,
                Some((-5.0, 1.0)),
            ),
            // One outlier moves the shift hardly at all.
            (
                &outlier,
                &[10.0, 10.1, 9.9, 10.0, 10.05],
                0.25,
                Some((0.1, 20.0)),
            ),
            (&shifted, &thirty, 9.5, Some((4.5, 14.5))),
        ];
        for (x, y, shift, interval) in cases {
            let hl = hodges_lehmann(x, y).unwrap();
            assert!((hl.shift - shift).abs() < 1e-9, "{x:?} vs {y:?}: {hl:?}");
            match (hl.interval, interval) {
                (Some((low, high)), Some((l, h))) => assert!(
                    (low - l).abs() < 1e-9 && (high - h).abs() < 1e-9,
                    "{x:?} vs {y:?}: {hl:?} != {interval:?}"
                ),
                (actual, expected) => assert_eq!(actual, expected, "{x:?} vs {y:?}"),
            }
        }
        assert_eq!(hodges_lehmann(&[1.0], &[]), None);
    }
}
