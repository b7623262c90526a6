//! The summary's CPU share table: how many CPUs each workload received per phase of a run,
//! and what a phase change took from it.

use std::collections::BTreeMap;
use std::fmt::Write;

use schedlab_tables::CpuShareRow;

/// The Markdown table, or `None` without rows. One line per run, reference, phase and
/// workload: its CPUs in total and per class, and its change from the phase before.
pub fn share_table(rows: &[CpuShareRow]) -> Option<String> {
    if rows.is_empty() {
        return None;
    }
    type Key<'a> = (&'a str, Option<&'a str>, i64, &'a str, &'a str);
    let mut lines: BTreeMap<Key<'_>, (f64, Vec<String>, i64)> = BTreeMap::new();
    for r in rows {
        let key = (
            r.run_id.as_str(),
            r.reference.as_deref(),
            r.phase_start_ns,
            r.phase.as_str(),
            r.workload.as_str(),
        );
        let line = lines.entry(key).or_default();
        line.2 = r.phase_end_ns - r.phase_start_ns;
        if r.class == "all" {
            line.0 = r.cpus;
        } else {
            line.1.push(format!("{}: {:.2}", r.class, r.cpus));
        }
    }
    let mut out = String::from(
        "| run | phase | length | workload | CPUs | per class | change from the phase before |\n\
         |---|---|---:|---|---:|---|---|\n",
    );
    let mut previous: BTreeMap<(&str, Option<&str>, &str), f64> = BTreeMap::new();
    for ((run, reference, _, phase, workload), (cpus, classes, length_ns)) in &lines {
        let phase = match reference {
            Some(reference) => format!("{phase} {reference}"),
            None => (*phase).to_owned(),
        };
        let change = previous
            .insert((run, *reference, workload), *cpus)
            .map_or_else(
                || "–".to_owned(),
                |before| {
                    format!(
                        "{:+.2} CPUs ({:+.2} CPU-s)",
                        cpus - before,
                        (cpus - before) * *length_ns as f64 / 1e9
                    )
                },
            );
        writeln!(
            out,
            "| {run} | {phase} | {:.2} s | {workload} | {cpus:.2} | {} | {change} |",
            *length_ns as f64 / 1e9,
            classes.join(", ")
        )
        .expect("writing to a String");
    }
    Some(out)
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
        }
    }

    #[test]
    fn phases_in_time_order_with_the_change_in_cpus_and_cpu_seconds() {
        let rows = [
            row("during", 50, "bg", "all", 15.07),
            row("during", 50, "bg", "P", 3.5),
            row("before", 0, "bg", "all", 15.96),
        ];
        let table = share_table(&rows).unwrap();
        let lines: Vec<&str> = table.lines().skip(2).collect();
        assert_eq!(
            lines,
            [
                "| r1 | before fg | 50.00 s | bg | 15.96 |  | – |",
                "| r1 | during fg | 50.00 s | bg | 15.07 | P: 3.50 | -0.89 CPUs (-44.50 CPU-s) |",
            ]
        );
    }
}
