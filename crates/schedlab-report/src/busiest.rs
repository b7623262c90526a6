//! The summary's table of a run's busiest threads, for runs whose trace names no workload
//! (`busiest_threads`).

use schedlab_tables::BusiestThreadRow;

use crate::table::{Align, Table};

/// The Markdown table, or `None` without rows: per run, its busiest threads in rank order.
pub fn busiest_table(rows: &[BusiestThreadRow]) -> Option<String> {
    if rows.is_empty() {
        return None;
    }
    let mut table = Table::new(&[
        ("run", Align::Left),
        ("rank", Align::Right),
        ("pid", Align::Right),
        ("tid", Align::Right),
        ("comm", Align::Left),
        ("CPU time", Align::Right),
        ("share of a CPU", Align::Right),
        ("slices", Align::Right),
        ("CPUs", Align::Left),
        ("source", Align::Left),
    ]);
    let mut rows: Vec<&BusiestThreadRow> = rows.iter().collect();
    rows.sort_by(|a, b| (&a.run_id, a.rank).cmp(&(&b.run_id, b.rank)));
    for r in rows {
        table.row(vec![
            r.run_id.clone(),
            r.rank.to_string(),
            r.pid.to_string(),
            r.tid.to_string(),
            r.comm.clone(),
            format!("{:.3} s", r.cpu_time_ns as f64 / 1e9),
            format!("{:.1} %", r.cpu_share * 100.0),
            r.slices.to_string(),
            r.cpus.clone(),
            r.headline.clone(),
        ]);
    }
    Some(table.markdown())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(run: &str, rank: i32, comm: &str) -> BusiestThreadRow {
        BusiestThreadRow {
            run_id: run.into(),
            rank,
            pid: 10,
            tid: 10 + rank,
            comm: comm.into(),
            cpu_time_ns: 1_500_000_000,
            slice_ns: 1_600_000_000,
            kernel_ns: Some(1_500_000_000),
            headline: "kernel".into(),
            slices: 42,
            cpus: "0-1".into(),
            cpu_share: 0.75,
        }
    }

    #[test]
    fn rows_come_per_run_in_rank_order_with_their_figures() {
        let rows = [row("r2", 1, "b"), row("r1", 2, "y"), row("r1", 1, "x")];
        let table = busiest_table(&rows).unwrap();
        let lines: Vec<&str> = table.lines().skip(2).collect();
        assert!(lines[0].starts_with("| r1 | 1 |"), "{table}");
        assert!(lines[1].starts_with("| r1 | 2 |"), "{table}");
        assert!(lines[2].starts_with("| r2 | 1 |"), "{table}");
        assert!(
            lines[0].contains("| 1.500 s | 75.0 % | 42 | 0-1 | kernel |"),
            "{table}"
        );
        assert_eq!(busiest_table(&[]), None);
    }
}
