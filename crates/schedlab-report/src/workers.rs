//! The summary's per-worker table (seed page 4's): for each instance of a workload that
//! reported throughput, where it ran and what it delivered.

use std::collections::BTreeMap;

use schedlab_tables::{ProcessRow, ResidencyRollupRow, ThroughputRow, TotalsRow};

use crate::table::{Align, Table};

/// The rows the table joins: throughput is per workload instance, placement and migrations per
/// process; the `processes` table ties an instance to its pid.
pub struct WorkerInputs<'a> {
    pub throughput: &'a [ThroughputRow],
    pub processes: &'a [ProcessRow],
    pub residency: &'a [ResidencyRollupRow],
    pub totals: &'a [TotalsRow],
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
    /// A process's share of one CPU: (cpu, class, share).
    type OnCpu<'a> = (i32, &'a str, f64);
    let mut placement_of: BTreeMap<(&str, i32), Vec<OnCpu<'_>>> = BTreeMap::new();
    for r in inputs.residency.iter().filter(|r| r.scope == "process") {
        if let (Some(pid), Some(cpu)) = (r.pid, r.cpu) {
            let cpus = placement_of.entry((&r.run_id, pid)).or_default();
            cpus.push((cpu, &r.class, r.share));
        }
    }
    let migrations_of: BTreeMap<(&str, i32), i64> = (inputs.totals.iter())
        .filter(|t| t.scope == "process")
        .filter_map(|t| Some(((t.run_id.as_str(), t.pid?), t.migrations.unwrap_or(0))))
        .collect();
    let mut table = Table::new(&[
        ("run", Align::Left),
        ("worker", Align::Left),
        ("pid", Align::Right),
        ("CPU placement", Align::Left),
        ("migrations", Align::Right),
        ("test", Align::Left),
        ("reported kB/s", Align::Right),
        ("over wall time kB/s", Align::Right),
    ]);
    for t in inputs.throughput {
        let pid = pid_of.get(&(t.run_id.as_str(), t.workload.as_str(), t.instance));
        let key = pid.map(|pid| (t.run_id.as_str(), *pid));
        let mut placement = (key.and_then(|key| placement_of.get(&key)))
            .cloned()
            .unwrap_or_default();
        placement.sort_by(|a, b| b.2.total_cmp(&a.2));
        let placement: Vec<String> = (placement.iter())
            .map(|(cpu, class, share)| format!("CPU {cpu} ({class}) {:.1}%", 100.0 * share))
            .collect();
        let migrations = key.and_then(|key| migrations_of.get(&key));
        table.row(vec![
            t.run_id.clone(),
            format!("{}#{}", t.workload, t.instance),
            pid.map_or_else(|| "–".to_owned(), i32::to_string),
            placement.join(", "),
            migrations.copied().unwrap_or(0).to_string(),
            t.test.clone(),
            t.reported_bytes_per_s
                .map_or_else(|| "–".to_owned(), |b| thousands(b / 1000.0)),
            thousands(t.effective_bytes_per_s / 1000.0),
        ]);
    }
    Some(table.markdown())
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
