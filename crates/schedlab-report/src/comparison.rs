//! `schedlab compare`'s table: one line per group and figure, the mean with its 95 % interval
//! and the difference from the baseline with its interval and verdict.

use schedlab_tables::ComparisonRow;

use crate::table::{Align, Table};

/// `x` with four significant digits (and no exponent for the sizes figures come in).
fn significant(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = 3 - x.abs().log10().floor() as i32;
    format!("{:.*}", digits.max(0) as usize, x)
}

fn signed_percent(x: f64) -> String {
    format!("{x:+.2} %")
}

/// The Markdown table of a comparison (readable as plain text in a terminal). The context
/// column appears only when some row has one.
pub fn comparison_table(rows: &[ComparisonRow]) -> String {
    let with_context = rows.iter().any(|r| !r.context.is_empty());
    let mut columns = Vec::new();
    if with_context {
        columns.push(("context", Align::Left));
    }
    for name in [
        "workload",
        "figure",
        "group",
        "runs",
        "mean (95 % CI)",
        "vs baseline (95 % CI)",
        "verdict",
    ] {
        columns.push((name, Align::Left));
    }
    let mut table = Table::new(&columns);
    for r in rows {
        let unit = if r.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", r.unit)
        };
        let mean = match (r.ci_low, r.ci_high) {
            (Some(low), Some(high)) => format!(
                "{}{unit} ({} … {})",
                significant(r.mean),
                significant(low),
                significant(high)
            ),
            _ => format!("{}{unit}", significant(r.mean)),
        };
        let difference = match (r.diff_pct, r.diff_ci_low_pct, r.diff_ci_high_pct) {
            (Some(d), Some(low), Some(high)) => format!(
                "{} ({} … {})",
                signed_percent(d),
                signed_percent(low),
                signed_percent(high)
            ),
            (Some(d), _, _) => signed_percent(d),
            _ => "–".to_owned(),
        };
        let mut cells = Vec::new();
        if with_context {
            cells.push(r.context.clone());
        }
        cells.extend([
            r.workload.clone(),
            r.metric.clone(),
            r.group.clone(),
            r.runs.to_string(),
            mean,
            difference,
            r.verdict.to_string(),
        ]);
        table.row(cells);
    }
    table.markdown()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_significant_digits_whatever_the_size() {
        let cases = [
            (628.1, "628.1"),
            (0.012345, "0.01235"),
            (2_883_000_000.0, "2883000000"),
            (-15.7, "-15.70"),
            (0.0, "0"),
        ];
        for (x, text) in cases {
            assert_eq!(significant(x), text, "{x}");
        }
    }
}
