//! The summary's per-worker table (seed page 4's): for each instance of a workload that
//! reported throughput, where it ran and what it delivered.

use std::collections::BTreeMap;
use std::fmt::Write;

use schedlab_tables::{MigrationSummaryRow, ProcessRow, ResidencyRow, ThroughputRow};

/// The rows the table joins: throughput is per workload instance, placement per thread; the
/// `processes` table ties an instance to its pid.
pub struct WorkerInputs<'a> {
    pub throughput: &'a [ThroughputRow],
    pub processes: &'a [ProcessRow],
    pub residency: &'a [ResidencyRow],
    pub migrations: &'a [MigrationSummaryRow],
}

/// `3,858,018.84` (openssl prints kB/s with two decimals; the seeds quote it with separators).
fn thousands(x: f64) -> String {
    let text = format!("{x:.2}");
    let (whole, fraction) = text.split_once('.').expect("two decimals");
    let (sign, digits) = whole.strip_prefix('-').map_or(("", whole), |d| ("-", d));
    let mut grouped = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("{sign}{grouped}.{fraction}")
}

/// The Markdown table, or `None` when no workload reported throughput.
pub fn worker_table(inputs: &WorkerInputs<'_>) -> Option<String> {
    if inputs.throughput.is_empty() {
        return None;
    }
    let pid_of: BTreeMap<(&str, &str, u32), i32> = (inputs.processes.iter())
        .map(|p| ((p.run_id.as_str(), p.workload.as_str(), p.instance), p.pid))
        .collect();
    let mut out = String::from(
        "| run | worker | pid | CPU placement | migrations | test | reported kB/s | over wall time kB/s |\n\
         |---|---|---:|---|---:|---|---:|---:|\n",
    );
    for t in inputs.throughput {
        let pid = pid_of.get(&(t.run_id.as_str(), t.workload.as_str(), t.instance));
        let of_pid = |run: &str, p: i32| run == t.run_id && Some(&p) == pid;
        let mut placement: BTreeMap<(i32, &str), f64> = BTreeMap::new();
        let mut total = 0.0;
        for r in inputs.residency.iter().filter(|r| of_pid(&r.run_id, r.pid)) {
            *placement.entry((r.cpu, r.class.as_str())).or_default() += r.run_ns as f64;
            total += r.run_ns as f64;
        }
        let mut placement: Vec<((i32, &str), f64)> = placement.into_iter().collect();
        placement.sort_by(|a, b| b.1.total_cmp(&a.1));
        let placement: Vec<String> = (placement.iter())
            .map(|((cpu, class), ns)| format!("CPU {cpu} ({class}) {:.1}%", 100.0 * ns / total))
            .collect();
        let migrations: i64 = (inputs.migrations.iter())
            .filter(|m| of_pid(&m.run_id, m.pid))
            .map(|m| m.migrations)
            .sum();
        writeln!(
            out,
            "| {} | {}#{} | {} | {} | {migrations} | {} | {} | {} |",
            t.run_id,
            t.workload,
            t.instance,
            pid.map_or_else(|| "–".to_owned(), i32::to_string),
            placement.join(", "),
            t.test,
            t.reported_bytes_per_s
                .map_or_else(|| "–".to_owned(), |b| thousands(b / 1000.0)),
            thousands(t.effective_bytes_per_s / 1000.0),
        )
        .expect("writing to a String");
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kilobytes_per_second_as_the_seeds_quote_them() {
        assert_eq!(thousands(3_858_018.84), "3,858,018.84");
        assert_eq!(thousands(999.0), "999.00");
        assert_eq!(thousands(1000.0), "1,000.00");
        assert_eq!(thousands(-1234.5), "-1,234.50");
    }
}
