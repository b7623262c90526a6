//! `schedlab compare`'s table: one line per group and figure, the mean with its 95 % interval
//! and the difference from the baseline with its interval, q and verdict; and `schedlab plan`'s:
//! the runs each comparison needs.

use schedlab_tables::{ComparisonRow, Needed, RunsNeeded};

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
    if x.is_infinite() {
        return if x > 0.0 { "+∞ %" } else { "-∞ %" }.to_owned();
    }
    format!("{x:+.2} %")
}

/// An adjusted p with three decimals, or below 0.001 as `2e-5` (Markdown would escape `<`).
fn q_text(q: f64) -> String {
    if q == 0.0 {
        "0".to_owned()
    } else if q < 0.001 {
        format!("{q:.0e}")
    } else {
        format!("{q:.3}")
    }
}

/// A figure's name, and the names of the figures equal to it in every run that it stands for:
/// `cpu_share/run (= cpu_share/run/P)`.
fn figure_name(metric: &str, stands_for: Option<&str>) -> String {
    match stands_for {
        Some(others) => format!("{metric} (= {})", others.replace(',', ", ")),
        None => metric.to_owned(),
    }
}

/// A table whose first column is `context` (the matrix variant a comparison is within) when
/// some row has one, and absent otherwise.
struct WithContext {
    table: Table,
    with_context: bool,
}

impl WithContext {
    fn new<'a>(
        contexts: impl IntoIterator<Item = &'a str>,
        columns: &[(&'static str, Align)],
    ) -> Self {
        let with_context = contexts.into_iter().any(|c| !c.is_empty());
        let mut all = Vec::new();
        if with_context {
            all.push(("context", Align::Left));
        }
        all.extend_from_slice(columns);
        WithContext {
            table: Table::new(&all),
            with_context,
        }
    }

    fn row(&mut self, context: &str, cells: impl IntoIterator<Item = String>) {
        let mut all = Vec::new();
        if self.with_context {
            all.push(context.to_owned());
        }
        all.extend(cells);
        self.table.row(all);
    }

    fn markdown(&self) -> String {
        self.table.markdown()
    }
}

/// The Markdown table of a comparison (readable as plain text in a terminal). The context
/// column appears only when some row has one.
pub fn comparison_table(rows: &[ComparisonRow]) -> String {
    let columns = [
        "workload",
        "figure",
        "group",
        "runs",
        "mean (95 % CI)",
        "vs baseline (95 % CI)",
        "q",
        "verdict",
    ]
    .map(|name| (name, Align::Left));
    let mut table = WithContext::new(rows.iter().map(|r| r.context.as_str()), &columns);
    for r in rows {
        let unit = if r.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", r.unit)
        };
        let mark = |method: Option<&str>| {
            if method == Some("bootstrap") {
                "†"
            } else {
                ""
            }
        };
        let mean = match (r.ci_low, r.ci_high) {
            (Some(low), Some(high)) => format!(
                "{}{unit} ({} … {}){}",
                significant(r.mean),
                significant(low),
                significant(high),
                mark(Some(&r.ci_method))
            ),
            _ => format!("{}{unit}", significant(r.mean)),
        };
        let difference = match (r.diff_pct, r.diff_ci_low_pct, r.diff_ci_high_pct) {
            (Some(d), Some(low), Some(high)) => format!(
                "{} ({} … {}){}",
                signed_percent(d),
                signed_percent(low),
                signed_percent(high),
                mark(r.diff_ci_method.as_deref())
            ),
            (Some(d), _, _) => signed_percent(d),
            _ => "–".to_owned(),
        };
        let cells = [
            figure_name(&r.metric, r.stands_for.as_deref()),
            r.group.clone(),
            r.runs.to_string(),
            mean,
            difference,
            r.q.map_or("–".to_owned(), q_text),
            r.verdict.to_string(),
        ];
        let cells = std::iter::once(r.workload.clone()).chain(cells);
        table.row(&r.context, cells);
    }
    table.markdown()
}

/// `schedlab plan`'s Markdown table (the context column only when some row has one).
pub fn runs_needed_table(rows: &[RunsNeeded]) -> String {
    let columns = [
        ("workload", Align::Left),
        ("figure", Align::Left),
        ("group vs baseline", Align::Left),
        ("runs", Align::Left),
        ("spread", Align::Right),
        ("runs per group", Align::Left),
        ("to collect", Align::Left),
    ];
    let mut table = WithContext::new(rows.iter().map(|r| r.context.as_str()), &columns);
    for r in rows {
        let mut cells = vec![
            r.workload.clone(),
            figure_name(&r.metric, r.stands_for.as_deref()),
            format!("{} vs {}", r.group, r.baseline),
            format!("{} + {}", r.runs.0, r.runs.1),
            r.spread_pct.map_or("–".to_owned(), |s| format!("{s:.2} %")),
        ];
        match r.needed {
            Needed::Runs(n) => cells.extend([
                n.to_string(),
                format!("{} runs, {}", r.missing, duration_text(r.collect_s)),
            ]),
            Needed::MoreThan(cap) => cells.extend([
                format!("more than {cap} (the search stops there)"),
                "–".to_owned(),
            ]),
            Needed::NoSpread => {
                cells.extend(["– (needs 2 runs a group)".to_owned(), "–".to_owned()])
            }
            Needed::ZeroMean => {
                cells.extend(["– (the baseline's mean is 0)".to_owned(), "–".to_owned()])
            }
        }
        table.row(&r.context, cells);
    }
    table.markdown()
}

/// Seconds as `42 s`, `12.5 min` or `3.2 h`.
fn duration_text(seconds: f64) -> String {
    if seconds < 120.0 {
        format!("{seconds:.0} s")
    } else if seconds < 7200.0 {
        format!("{:.1} min", seconds / 60.0)
    } else {
        format!("{:.1} h", seconds / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_tables::Verdict;

    fn plan_row(context: &str, workload: &str, needed: Needed, runs: (usize, usize)) -> RunsNeeded {
        RunsNeeded {
            context: context.into(),
            workload: workload.into(),
            metric: "time/wall_time_s".into(),
            stands_for: None,
            group: "new".into(),
            baseline: "old".into(),
            runs,
            baseline_mean: 628.1,
            stddevs: (Some(2.593260495977997), Some(2.103568397)),
            spread_pct: Some(100.0 * 2.593260495977997 / 628.1),
            needed,
            missing: 10,
            collect_s: 650.0,
        }
    }

    #[test]
    fn the_plan_table_says_what_to_collect_and_why_a_count_is_missing() {
        let table = runs_needed_table(&[
            plan_row("", "build", Needed::Runs(10), (5, 5)),
            plan_row("", "one|run", Needed::NoSpread, (1, 5)),
            plan_row("", "tiny", Needed::MoreThan(100_000), (5, 5)),
        ]);
        assert_eq!(
            table,
            "| workload | figure | group vs baseline | runs | spread | runs per group | to collect |\n\
             |---|---|---|---|---:|---|---|\n\
             | build | time/wall_time_s | new vs old | 5 + 5 | 0.41 % | 10 | 10 runs, 10.8 min |\n\
             | one\\|run | time/wall_time_s | new vs old | 1 + 5 | 0.41 % | – (needs 2 runs a group) | – |\n\
             | tiny | time/wall_time_s | new vs old | 5 + 5 | 0.41 % | more than 100000 (the search stops there) | – |\n"
        );
        let with_context =
            runs_needed_table(&[plan_row("t=0.5", "build", Needed::Runs(10), (5, 5))]);
        assert!(
            with_context.starts_with("| context | workload |")
                && with_context.contains("| t=0.5 | build |"),
            "{with_context}"
        );
    }

    fn comparison_row(verdict: Verdict) -> ComparisonRow {
        ComparisonRow {
            run_ids: "r1,r2,r3,r4".into(),
            by: "label".into(),
            context: String::new(),
            group: "b".into(),
            baseline: "a".into(),
            workload: "periodic".into(),
            metric: "migrations/count".into(),
            unit: "migrations".into(),
            runs: 4,
            mean: 0.25,
            stddev: Some(0.5),
            ci_low: Some(0.0),
            ci_high: Some(0.75),
            diff_pct: Some(-87.5),
            diff_ci_low_pct: Some(-100.0),
            diff_ci_high_pct: Some(-60.0),
            verdict,
            welch_p: Some(0.0067),
            mann_whitney_u: Some(0.5),
            mann_whitney_p: Some(0.0286),
            verdict_note: None,
            first_vs_rest_pct: None,
            slope_per_run: None,
            slope_ci_low: None,
            slope_ci_high: None,
            order_effect: false,
            verdict_p: Some(0.0286),
            q: Some(0.0572),
            hodges_lehmann: Some(-2.0),
            hodges_lehmann_ci_low: Some(-3.0),
            hodges_lehmann_ci_high: Some(-1.0),
            ci_method: "bootstrap".into(),
            diff_ci_method: Some("bootstrap".into()),
            stands_for: Some("migration_classes/at_wakeup,wakeup_placement/x".into()),
        }
    }

    #[test]
    fn the_comparison_table_gives_q_the_names_a_figure_stands_for_and_bootstrap_marks() {
        let mut tiny = comparison_row(Verdict::Higher);
        (tiny.q, tiny.stands_for, tiny.ci_method) = (Some(0.00002), None, "t".into());
        (tiny.diff_ci_high_pct, tiny.diff_ci_method) = (Some(f64::INFINITY), Some("welch".into()));
        let table = comparison_table(&[comparison_row(Verdict::WithinNoise), tiny]);
        assert_eq!(
            table,
            "| workload | figure | group | runs | mean (95 % CI) | vs baseline (95 % CI) | q | verdict |\n\
             |---|---|---|---|---|---|---|---|\n\
             | periodic | migrations/count (= migration_classes/at_wakeup, wakeup_placement/x) | b | 4 | 0.2500 migrations (0 … 0.7500)† | -87.50 % (-100.00 % … -60.00 %)† | 0.057 | within noise |\n\
             | periodic | migrations/count | b | 4 | 0.2500 migrations (0 … 0.7500) | -87.50 % (-100.00 % … +∞ %) | 2e-5 | higher |\n"
        );
    }

    #[test]
    fn durations_read_in_the_unit_that_fits() {
        assert_eq!(duration_text(42.4), "42 s");
        assert_eq!(duration_text(650.0), "10.8 min");
        assert_eq!(duration_text(3.2 * 3600.0), "3.2 h");
    }

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
