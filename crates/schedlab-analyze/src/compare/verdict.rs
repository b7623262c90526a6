//! One figure of one group against the baseline's, and its verdict once every figure's p has
//! been adjusted for the others.
//!
//! Two tests look at each difference. Welch's leans on near-normal means, which four or five
//! runs cannot show: a figure that takes two values (the CPU a thread happened to land on, a
//! count that is 0 in some runs and 2 in others) gives it tiny p-values for chance splits of the
//! runs. The exact Mann-Whitney test assumes nothing but that the runs could have come in any
//! order, so its p is exact whatever the values look like, but it can go no lower than
//! 2 / C(m+n, m). A difference is declared where both find it: the p the verdict rests on is the
//! larger of the two (an intersection-union test: valid when either test is), wherever the rank
//! test can reach 0.05 with these runs. With three runs a side it cannot, and Welch's stands
//! alone, as the verdict's note says.
//!
//! A group whose runs are all equal gives Welch's test nothing to go on: for a count, whose
//! spread cannot show below one, it is taken as the spread of a group with one run off by one
//! (1/√n); for any other figure, only the rank test can speak for it.

use crate::stats::{self, ALPHA, HodgesLehmann, MannWhitney, Sample, bootstrap};
use schedlab_tables::Verdict;

use super::range::{BOOTSTRAP, Range};

/// The sample of `values` for Welch's test: for a count whose runs all counted the same, the
/// spread of `n` runs one of which counted one more (1/√n), the least a count can show.
fn welch_sample(values: &[f64], range: &Range) -> Sample {
    let sample = Sample::of(values);
    match sample.stddev {
        Some(sd) if sd == 0.0 && range.is_count() => Sample {
            stddev: Some(1.0 / (sample.n as f64).sqrt()),
            ..sample
        },
        _ => sample,
    }
}

/// A group's figure against the baseline's.
pub(super) struct Difference {
    /// The baseline's mean, which percentages are of.
    base_mean: f64,
    /// The group's mean minus the baseline's.
    pub mean: f64,
    /// Welch's 95 % interval of the difference (`None` with a single run on either side).
    welch_interval: Option<(f64, f64)>,
    /// The difference's interval in percent of the baseline's mean: Welch's, or the bootstrap
    /// of the ratio of the means where Welch's falls below -100 % for a figure that cannot.
    pub interval_pct: Option<(f64, f64)>,
    /// `welch` or `bootstrap`.
    pub interval_method: &'static str,
    pub welch_p: Option<f64>,
    pub rank: Option<MannWhitney>,
    pub shift: Option<HodgesLehmann>,
    /// The p the verdict rests on, before adjustment: the larger of Welch's and the rank
    /// test's where the rank test can reach [`ALPHA`] (or a group is constant), Welch's
    /// otherwise; `None` when nothing differs.
    pub p: Option<f64>,
    /// Pairs (group run, baseline run): U's largest value.
    pairs: f64,
}

impl Difference {
    pub fn of(group: &[f64], baseline: &[f64], range: &Range) -> Difference {
        let (sample, base) = (Sample::of(group), Sample::of(baseline));
        let (welch_group, welch_base) = (welch_sample(group, range), welch_sample(baseline, range));
        let welch_interval = welch_group.difference_interval(&welch_base);
        let welch_p = welch_group.welch_p(&welch_base);
        let rank = stats::mann_whitney(group, baseline);
        let percent = |x: f64| (base.mean != 0.0).then(|| 100.0 * x / base.mean);
        let welch_pct =
            welch_interval.and_then(|(low, high)| Some((percent(low)?, percent(high)?)));
        let (interval_pct, interval_method) = match welch_pct {
            Some((low, _)) if low < -100.0 && range.bounds_falls() => {
                (bootstrap::ratio_interval(group, baseline), BOOTSTRAP)
            }
            interval => (interval, "welch"),
        };
        // Nothing differs between two constant groups of the same value: no test.
        let same =
            sample.stddev == Some(0.0) && base.stddev == Some(0.0) && sample.mean == base.mean;
        let constant = welch_group.stddev == Some(0.0) || welch_base.stddev == Some(0.0);
        let p = match (rank.and_then(|r| r.p), welch_p) {
            _ if same => None,
            (Some(rank_p), Some(welch)) if reaches(rank) || constant => Some(welch.max(rank_p)),
            (_, welch) => welch,
        };
        Difference {
            base_mean: base.mean,
            mean: sample.mean - base.mean,
            welch_interval,
            interval_pct,
            interval_method,
            welch_p,
            rank,
            shift: stats::hodges_lehmann(group, baseline),
            p,
            pairs: (group.len() * baseline.len()) as f64,
        }
    }

    /// `x` as a percentage of the baseline's mean (none of a mean of 0).
    pub fn percent(&self, x: f64) -> Option<f64> {
        (self.base_mean != 0.0).then(|| 100.0 * x / self.base_mean)
    }

    /// The rank test's p where it can reach [`ALPHA`] with these runs.
    pub fn usable_rank_p(&self) -> Option<f64> {
        self.rank.filter(|r| reaches(Some(*r)))?.p
    }

    /// The verdict from `q` (this row's p adjusted with every other row's), and from Welch's
    /// and the rank test's p adjusted alone (`welch_q`, `rank_q`): `higher` or `lower` when
    /// q < [`ALPHA`] and the two tests agree on the direction; `inconclusive` when one test
    /// finds, after adjustment, a difference the other does not; `within noise` otherwise, and
    /// for any difference smaller than `min_effect_pct` percent of the baseline's mean. The note
    /// says why.
    pub fn verdict(
        &self,
        q: Option<f64>,
        (welch_q, rank_q): (Option<f64>, Option<f64>),
        min_effect_pct: Option<f64>,
    ) -> (Verdict, Option<String>) {
        if self.welch_interval.is_none() {
            return (Verdict::TooFewRuns, None);
        }
        if let (Some(min), Some(change)) = (min_effect_pct, self.percent(self.mean))
            && change.abs() < min
        {
            let note = format!("{change:+.2} % is within --min-effect {min} %");
            return (Verdict::WithinNoise, Some(note));
        }
        let welch_direction = if self.mean > 0.0 {
            Verdict::Higher
        } else {
            Verdict::Lower
        };
        let found = |q: Option<f64>| q.is_some_and(|q| q < ALPHA);
        let text = |q: Option<f64>| q.map_or("–".to_owned(), |q| format!("{q:.3}"));
        let Some(rank) = self.rank.filter(|r| reaches(Some(*r))) else {
            let verdict = if found(q) {
                welch_direction
            } else {
                Verdict::WithinNoise
            };
            let note = self.rank.and_then(|r| r.p.map(|_| r)).map(|r| {
                format!(
                    "the rank test cannot reach p < {ALPHA:.2} with these runs (its smallest p \
                     is {:.2})",
                    r.smallest_p
                )
            });
            return (verdict, note);
        };
        let rank_p = rank.p.unwrap_or(1.0);
        let rank_direction = if rank.ranks_higher(self.pairs) {
            Verdict::Higher
        } else {
            Verdict::Lower
        };
        if found(q) && rank_direction == welch_direction {
            return (welch_direction, None);
        }
        let note = match (found(welch_q), found(rank_q)) {
            (true, true) => format!(
                "Welch says {welch_direction}, the rank test says {rank_direction} (p = \
                 {rank_p:.3})"
            ),
            (true, false) => format!(
                "Welch says {welch_direction} (q = {}), the rank test does not confirm it (p = \
                 {rank_p:.3}, q = {})",
                text(welch_q),
                text(rank_q)
            ),
            (false, true) => format!(
                "the rank test says {rank_direction} (p = {rank_p:.3}, q = {}), Welch's test does \
                 not (q = {})",
                text(rank_q),
                text(welch_q)
            ),
            (false, false) => return (Verdict::WithinNoise, None),
        };
        (Verdict::Inconclusive, Some(note))
    }
}

/// Whether the rank test can reach [`ALPHA`] with these runs (four against four can, three
/// against three cannot: its smallest p is 0.1).
fn reaches(rank: Option<MannWhitney>) -> bool {
    rank.is_some_and(|r| r.smallest_p <= ALPHA && r.p.is_some())
}
