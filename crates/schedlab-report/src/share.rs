//! The summary's CPU share table: how many CPUs each workload received per phase of a run,
//! and what a phase change took from it.

use std::collections::BTreeMap;

use schedlab_tables::CpuShareRow;

use crate::table::{Align, Table};

/// One line of the table: a workload in a phase.
#[derive(Default)]
struct Line<'a> {
    length_ns: i64,
    /// The row of all its CPUs.
    all: Option<&'a CpuShareRow>,
    /// `P: 3.50`, per class.
    classes: Vec<String>,
}

/// ` (kernel)`, ` (/proc)`: what a workload's CPUs were scaled to, where its slices were not its
/// threads' headline figures (see `cpu_share.source`).
fn corrected_by(source: &str) -> &'static str {
    match source {
        "kernel" => " (kernel)",
        "proc" => " (/proc)",
        _ => "",
    }
}

/// The Markdown table, or `None` without rows. One line per run, reference, phase and
/// workload: its CPUs in total and per class, and its change from the phase before.
pub fn share_table(rows: &[CpuShareRow]) -> Option<String> {
    if rows.is_empty() {
        return None;
    }
    type Key<'a> = (&'a str, Option<&'a str>, i64, &'a str, &'a str);
    let mut lines: BTreeMap<Key<'_>, Line<'_>> = BTreeMap::new();
    for r in rows {
        let key = (
            r.run_id.as_str(),
            r.reference.as_deref(),
            r.phase_start_ns,
            r.phase.as_str(),
            r.workload.as_str(),
        );
        let line = lines.entry(key).or_default();
        line.length_ns = r.phase_end_ns - r.phase_start_ns;
        if r.class == "all" {
            line.all = Some(r);
        } else {
            line.classes.push(format!("{}: {:.2}", r.class, r.cpus));
        }
    }
    let mut table = Table::new(&[
        ("run", Align::Left),
        ("phase", Align::Left),
        ("length", Align::Right),
        ("workload", Align::Left),
        ("CPUs", Align::Right),
        ("per class", Align::Left),
        ("change from the phase before", Align::Left),
    ]);
    for ((run, reference, _, phase, workload), line) in &lines {
        let phase = match reference {
            Some(reference) => format!("{phase} {reference}"),
            None => (*phase).to_owned(),
        };
        let all = line.all;
        let change = match all.and_then(|a| Some((a.change_cpus?, a.change_cpu_s?))) {
            Some((cpus, cpu_s)) => format!("{cpus:+.2} CPUs ({cpu_s:+.2} CPU-s)"),
            None => "–".to_owned(),
        };
        table.row(vec![
            (*run).to_owned(),
            phase,
            format!("{:.2} s", line.length_ns as f64 / 1e9),
            (*workload).to_owned(),
            format!(
                "{:.2}{}",
                all.map_or(0.0, |a| a.cpus),
                all.map_or("", |a| corrected_by(&a.source))
            ),
            line.classes.join(", "),
            change,
        ]);
    }
    Some(table.markdown())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(phase: &str, start_s: i64, workload: &str, class: &str, cpus: f64) -> CpuShareRow {
        CpuShareRow {
            run_id: "r1".into(),
            reference: Some("fg".into()),
            phase: phase.into(),
            phase_start_ns: start_s * 1_000_000_000,
            phase_end_ns: (start_s + 50) * 1_000_000_000,
            workload: workload.into(),
            class: class.into(),
            cpu_ns: 0,
            cpus,
            source: "sched".into(),
            change_cpus: None,
            change_cpu_s: None,
        }
    }

    #[test]
    fn phases_in_time_order_with_the_change_in_cpus_and_cpu_seconds() {
        let rows = [
            CpuShareRow {
                change_cpus: Some(-0.89),
                change_cpu_s: Some(-44.5),
                ..row("during", 50, "bg", "all", 15.07)
            },
            row("during", 50, "bg", "P", 3.5),
            CpuShareRow {
                source: "kernel".into(),
                ..row("before", 0, "bg", "all", 15.96)
            },
        ];
        let table = share_table(&rows).unwrap();
        let lines: Vec<&str> = table.lines().skip(2).collect();
        assert_eq!(
            lines,
            [
                "| r1 | before fg | 50.00 s | bg | 15.96 (kernel) |  | – |",
                "| r1 | during fg | 50.00 s | bg | 15.07 | P: 3.50 | -0.89 CPUs (-44.50 CPU-s) |",
            ]
        );
    }
}
