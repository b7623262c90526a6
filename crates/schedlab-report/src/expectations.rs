//! The summary's expectations table: each `expect:` entry per label, its figure in every run,
//! the mean over the runs, and whether it holds, from the `expectations` rows the summarize
//! stage judged.

use schedlab_spec::Unit;
use schedlab_tables::{ExpectationRow, Judgement};

use crate::table::{Align, Table};

/// The Markdown table, or `None` without expectations. One line per expectation and label.
pub fn expectations_table(rows: &[ExpectationRow]) -> Option<String> {
    let deciding: Vec<&ExpectationRow> = rows.iter().filter(|r| r.scope == "runs").collect();
    if deciding.is_empty() {
        return None;
    }
    let mut table = Table::new(&[
        ("#", Align::Right),
        ("figure", Align::Left),
        ("bound", Align::Left),
        ("label", Align::Left),
        ("per run", Align::Left),
        ("mean", Align::Right),
        ("result", Align::Left),
    ]);
    for d in deciding {
        let own = (rows.iter())
            .filter(|r| r.scope != "runs")
            .filter(|r| r.expectation == d.expectation && r.label == d.label);
        let unit = Unit::from_word(&d.unit);
        let value = |value: Option<f64>| match (value, unit) {
            (Some(value), Some(unit)) => unit.format(value),
            (Some(value), None) => format!("{value}"),
            (None, _) => "–".to_owned(),
        };
        let parts: Vec<String> = own
            .map(|r| {
                let mark = match r.judgement {
                    Judgement::Pass => "",
                    Judgement::Fail => " ✗",
                    Judgement::CannotJudge => " ?",
                };
                match &r.group {
                    Some(group) => match r.value {
                        Some(diff) => format!("{group}: {diff:+.2} %{mark}"),
                        None => format!("{group}: –{mark}"),
                    },
                    None => format!("{}{mark}", value(r.value)),
                }
            })
            .collect();
        let result = match (&d.judgement, &d.reason) {
            (judgement, Some(reason)) if *judgement != Judgement::Pass => {
                format!("{judgement}: {reason}")
            }
            (judgement, _) => judgement.to_string(),
        };
        table.row(vec![
            d.expectation.to_string(),
            d.figure.clone(),
            d.bound.clone(),
            d.label.clone().unwrap_or_else(|| "–".into()),
            if parts.is_empty() {
                "–".into()
            } else {
                parts.join(", ")
            },
            value(d.value),
            result,
        ]);
    }
    Some(table.markdown())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(scope: &str, value: Option<f64>, judgement: Judgement) -> ExpectationRow {
        ExpectationRow {
            expectation: 1,
            figure: "residency_rollup.share of sha (scope workload, class P)".into(),
            bound: ">= 0.95".into(),
            label: None,
            scope: scope.into(),
            run_id: (scope == "run").then(|| "r1".into()),
            group: None,
            run_ids: "r1".into(),
            value,
            worst: value,
            unit: "share".into(),
            judgement,
            reason: (judgement == Judgement::Fail).then(|| "1 of 2 runs: r2: 0.900".into()),
        }
    }

    #[test]
    fn a_line_per_expectation_and_label_with_each_runs_value_and_the_result() {
        let rows = [
            row("run", Some(0.98), Judgement::Pass),
            row("run", Some(0.9), Judgement::Fail),
            row("runs", Some(0.94), Judgement::Fail),
        ];
        assert_eq!(
            expectations_table(&rows).unwrap(),
            "| # | figure | bound | label | per run | mean | result |\n\
             |---:|---|---|---|---|---:|---|\n\
             | 1 | residency_rollup.share of sha (scope workload, class P) | \\>= 0.95 | – | \
             0.980, 0.900 ✗ | 0.940 | fail: 1 of 2 runs: r2: 0.900 |\n"
        );
        assert_eq!(expectations_table(&rows[..2]), None);
    }
}
