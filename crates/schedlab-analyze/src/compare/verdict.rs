//! One figure of one group against the baseline's, and its verdict once every figure's p has
//! been adjusted for the others.
//!
//! Welch's test gives the difference, its interval and the p the verdict rests on; the exact
//! Mann-Whitney test, which assumes nothing about the shape of the values, must agree. Where a
//! group's runs are all equal, Welch's test has one group's spread to go on, or none (two
//! groups of constant counts, 0 0 0 0 against 1 1 1 1, give p = 0 and no adjustment can undo
//! it), so there the rank test's p bounds Welch's from below: it is what the ordering of the runs
//! alone can show.

use crate::stats::{self, ALPHA, HodgesLehmann, MannWhitney, Sample, bootstrap};
use schedlab_tables::Verdict;

use super::range::{BOOTSTRAP, Range};

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
    /// The p the verdict rests on, before adjustment.
    pub p: Option<f64>,
    /// Which group's runs are all equal, when that bounded `p` by the rank test's.
    constant: Option<&'static str>,
    /// Pairs (group run, baseline run): U's largest value.
    pairs: f64,
}

impl Difference {
    pub fn of(group: &[f64], baseline: &[f64], range: &Range) -> Difference {
        let (sample, base) = (Sample::of(group), Sample::of(baseline));
        let welch_interval = sample.difference_interval(&base);
        let welch_p = sample.welch_p(&base);
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
        let constant = if base.stddev == Some(0.0) {
            Some("the baseline's")
        } else if sample.stddev == Some(0.0) {
            Some("the group's")
        } else {
            None
        };
        let rank_p = rank.filter(|r| r.smallest_p <= ALPHA).and_then(|r| r.p);
        let (p, constant) = match (welch_p, rank_p, constant) {
            (Some(welch), Some(rank), Some(which)) if rank > welch => (Some(rank), Some(which)),
            (welch, _, _) => (welch, None),
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
            constant,
            pairs: (group.len() * baseline.len()) as f64,
        }
    }

    /// `x` as a percentage of the baseline's mean (none of a mean of 0).
    pub fn percent(&self, x: f64) -> Option<f64> {
        (self.base_mean != 0.0).then(|| 100.0 * x / self.base_mean)
    }

    /// The rank test's p where it can reach [`ALPHA`] with these runs.
    pub fn usable_rank_p(&self) -> Option<f64> {
        let rank = self.rank.filter(|r| r.smallest_p <= ALPHA)?;
        rank.p
    }

    /// The verdict from `q` (this row's p adjusted with every other row's) and `rank_q` (the
    /// rank test's, adjusted likewise): `higher` or `lower` when q < [`ALPHA`] and the rank test,
    /// where these runs let it reach [`ALPHA`], agrees; `inconclusive` when one of the two finds a
    /// difference the other does not; `within noise` otherwise, and for any difference smaller
    /// than `min_effect_pct` percent of the baseline's mean. The note says why.
    pub fn verdict(
        &self,
        q: Option<f64>,
        rank_q: Option<f64>,
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
        let welch = match q {
            Some(q) if q < ALPHA && self.mean > 0.0 => Verdict::Higher,
            Some(q) if q < ALPHA && self.mean < 0.0 => Verdict::Lower,
            _ => Verdict::WithinNoise,
        };
        let q_text = q.map_or("–".to_owned(), |q| format!("{q:.3}"));
        let bounded = self.constant.map(|which| {
            format!(
                "{which} runs are all equal, so the rank test's p ({:.3}) bounds Welch's ({:.3})",
                self.p.unwrap_or_default(),
                self.welch_p.unwrap_or_default()
            )
        });
        let (Some(rank), Some(p)) = (self.rank, self.rank.and_then(|r| r.p)) else {
            return (welch, bounded);
        };
        if rank.smallest_p > ALPHA {
            let note = format!(
                "the rank test cannot reach p < {ALPHA:.2} with these runs (its smallest p is {:.2})",
                rank.smallest_p
            );
            return (welch, Some(note));
        }
        let direction = if rank.ranks_higher(self.pairs) {
            Verdict::Higher
        } else {
            Verdict::Lower
        };
        match welch {
            Verdict::WithinNoise => match rank_q {
                Some(rank_q) if rank_q < ALPHA => {
                    let note = format!(
                        "Welch's test does not find it (q = {q_text}), the rank test says \
                         {direction} (p = {p:.3}, q = {rank_q:.3})"
                    );
                    (Verdict::Inconclusive, Some(note))
                }
                _ => (Verdict::WithinNoise, bounded),
            },
            welch if p < ALPHA && direction == welch => (welch, bounded),
            welch => {
                let says = if p < ALPHA {
                    format!("says {direction}")
                } else {
                    "does not".to_owned()
                };
                let note =
                    format!("Welch says {welch} (q = {q_text}), the rank test {says} (p = {p:.3})");
                (Verdict::Inconclusive, Some(note))
            }
        }
    }
}
