//! The summary's CPU activity table: turbostat's figures per window, for all CPUs, per core
//! class, and for each CPU that was busy.

use schedlab_tables::{BUSY_CPU_PCT, CpuActivityRow};

use crate::table::{Align, Table};

fn cell(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "–".to_owned(), |v| format!("{v:.decimals$}"))
}

/// The Markdown table, or `None` without turbostat rows. A CPU that was not `busy` is left out
/// (it stays in `cpu_activity.parquet`).
/// What the activity table shows, and for runs without turbostat, where their figures come
/// from.
pub fn activity_note(rows: &[CpuActivityRow]) -> String {
    let mut note = format!(
        "All CPUs, each core class, and each CPU busy at least {BUSY_CPU_PCT}% of the window."
    );
    if rows.iter().any(|r| r.source == "cpu_freq_idle") {
        note.push_str(
            " Runs without turbostat take Busy% and MHz from their trace.dat's cpu_idle and \
             cpu_frequency events (`intervals` counts the spans between them).",
        );
    }
    note
}

pub fn activity_table(rows: &[CpuActivityRow]) -> Option<String> {
    if rows.is_empty() {
        return None;
    }
    let mut table = Table::new(&[
        ("run", Align::Left),
        ("window", Align::Left),
        ("CPUs", Align::Left),
        ("intervals", Align::Right),
        ("Busy%", Align::Right),
        ("Avg_MHz", Align::Right),
        ("Bzy_MHz", Align::Right),
        ("C1%", Align::Right),
        ("C6%", Align::Right),
        ("max °C", Align::Right),
        ("PkgWatt", Align::Right),
    ]);
    for r in rows
        .iter()
        .filter(|r| r.scope != "cpu" || r.busy == Some(true))
    {
        let cpus = match (r.scope.as_str(), r.cpu, &r.class) {
            ("cpu", Some(cpu), Some(class)) => format!("cpu {cpu} ({class})"),
            ("class", _, Some(class)) => format!("class {class}"),
            _ => "all".to_owned(),
        };
        table.row(vec![
            r.run_id.clone(),
            r.window.clone(),
            cpus,
            r.samples.to_string(),
            cell(r.busy_pct, 2),
            cell(r.avg_mhz, 0),
            cell(r.bzy_mhz, 0),
            cell(r.c1_pct, 2),
            cell(r.c6_pct, 2),
            cell(r.core_tmp_c_max, 0),
            cell(r.pkg_watt, 2),
        ]);
    }
    Some(table.markdown())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(scope: &str, cpu: Option<i32>, class: Option<&str>, busy: f64) -> CpuActivityRow {
        CpuActivityRow {
            run_id: "r1".into(),
            window: "burst".into(),
            window_start_ns: Some(0),
            window_end_ns: Some(1),
            scope: scope.into(),
            cpu,
            class: class.map(Into::into),
            samples: 60,
            busy_pct: Some(busy),
            avg_mhz: Some(4183.0),
            bzy_mhz: Some(4198.0),
            c1_pct: Some(0.0),
            c6_pct: None,
            core_tmp_c_max: Some(71.0),
            pkg_watt: (scope == "all").then_some(25.5),
            source: "turbostat".into(),
            busy: (scope == "cpu").then_some(busy >= 10.0),
        }
    }

    #[test]
    fn idle_cpus_are_left_out_and_missing_fields_show_a_dash() {
        let rows = [
            row("all", None, None, 7.2),
            row("class", None, Some("P"), 25.1),
            row("cpu", Some(2), Some("P"), 99.65),
            row("cpu", Some(3), Some("P"), 0.4),
        ];
        let table = activity_table(&rows).unwrap();
        let lines: Vec<&str> = table.lines().skip(2).collect();
        assert_eq!(
            lines,
            [
                "| r1 | burst | all | 60 | 7.20 | 4183 | 4198 | 0.00 | – | 71 | 25.50 |",
                "| r1 | burst | class P | 60 | 25.10 | 4183 | 4198 | 0.00 | – | 71 | – |",
                "| r1 | burst | cpu 2 (P) | 60 | 99.65 | 4183 | 4198 | 0.00 | – | 71 | – |",
            ]
        );
        assert_eq!(activity_table(&[]), None);
    }
}
