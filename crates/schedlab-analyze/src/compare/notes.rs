//! The lines under a comparison table: how its p-values were adjusted, why a verdict is
//! `inconclusive`, which groups drift with collection order, what a `†` means.

use schedlab_tables::{ComparisonRow, Verdict};

use super::range;
use crate::stats;

/// The line that says how the verdicts were reached: how many p-values were adjusted together
/// (`None` when no row was tested).
pub fn adjustment(rows: &[ComparisonRow]) -> Option<String> {
    let tested = rows.iter().filter(|r| r.q.is_some()).count();
    (tested > 0).then(|| {
        format!(
            "q: the p of each of the {tested} differences tested, adjusted together \
             (Benjamini–Hochberg); `higher` and `lower` need q < {:.2}",
            stats::ALPHA
        )
    })
}

/// The lines that go under the comparison table: why a verdict is `inconclusive`, which groups
/// drift with collection order, and what a `†` on an interval means.
pub fn notes(rows: &[ComparisonRow]) -> Vec<String> {
    let mut lines = Vec::new();
    for r in rows {
        let what = if r.context.is_empty() {
            format!("{} {}, {}", r.workload, r.metric, r.group)
        } else {
            format!("{} {} {}, {}", r.context, r.workload, r.metric, r.group)
        };
        if r.verdict == Verdict::Inconclusive {
            let note = r.verdict_note.as_deref().unwrap_or_default();
            lines.push(format!("- {what} vs {}: inconclusive: {note}", r.baseline));
        }
        if r.order_effect {
            // The slope in percent of the group's mean, readable whatever the unit; in the
            // unit itself for a mean of 0.
            let per_run = |x: f64| match r.mean {
                0.0 => format!("{x:+.4} {}", r.unit),
                mean => format!("{:+.2} %", 100.0 * x / mean),
            };
            let (slope, low, high) = (
                r.slope_per_run.unwrap_or_default(),
                r.slope_ci_low.unwrap_or_default(),
                r.slope_ci_high.unwrap_or_default(),
            );
            let first = match r.first_vs_rest_pct {
                Some(first) => format!("; the first run {first:+.2} % against the rest"),
                None => String::new(),
            };
            lines.push(format!(
                "- {what}: order effect: {} per run in collection order (95 % CI {} … {}){first}",
                per_run(slope),
                per_run(low),
                per_run(high),
            ));
        }
    }
    let bootstrapped = (rows.iter()).any(|r| {
        r.ci_method == range::BOOTSTRAP || r.diff_ci_method.as_deref() == Some(range::BOOTSTRAP)
    });
    if bootstrapped {
        lines.push(
            "- intervals marked † are percentile bootstrap intervals: Student's or Welch's would \
             leave the range the figure can take (a count below 0, a share above 1, a fall of \
             more than 100 %)"
                .to_owned(),
        );
    }
    lines
}
