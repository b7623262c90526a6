//! Effective wall-clock throughput of `openssl speed` workloads (seed page 8: 8,799,429
//! operations of 16 KiB in 50.003 s is 2.883 GB/s, where openssl reported 3.099 GB/s on CPU time).
//!
//! The parse stage keeps openssl's figures per test (`sha256/16384/ops`, `…/cpu_time_s` or
//! `…/wall_time_s`, `…/bytes_per_s`); the runner knows when the process started and ended. A
//! process that ran several tests has its wall time shared out in proportion to each test's
//! measured time.

use std::collections::BTreeMap;

use schedlab_tables::{ProcessRow, ThroughputRow, WorkloadMetricRow};

/// One openssl test's figures, gathered from its metric rows.
#[derive(Default)]
struct Test {
    ops: Option<f64>,
    measured: Option<(f64, &'static str)>,
    reported: Option<f64>,
}

pub fn effective(metrics: &[WorkloadMetricRow], processes: &[ProcessRow]) -> Vec<ThroughputRow> {
    type Key<'a> = (&'a str, &'a str, u32);
    let mut tests: BTreeMap<Key<'_>, BTreeMap<String, Test>> = BTreeMap::new();
    for m in metrics.iter().filter(|m| m.tool == "openssl") {
        let Some((test, measure)) = m.metric.rsplit_once('/') else {
            continue;
        };
        let entry = tests
            .entry((&m.run_id, &m.workload, m.instance))
            .or_default()
            .entry(test.to_owned())
            .or_default();
        match measure {
            "ops" => entry.ops = Some(m.value),
            "cpu_time_s" => entry.measured = Some((m.value, "cpu")),
            "wall_time_s" => entry.measured = Some((m.value, "wall")),
            "bytes_per_s" => entry.reported = Some(m.value),
            _ => {}
        }
    }
    let wall: BTreeMap<Key<'_>, f64> = processes
        .iter()
        .filter_map(|p| {
            Some((
                (p.run_id.as_str(), p.workload.as_str(), p.instance),
                (p.end_ns? - p.start_ns) as f64 / 1e9,
            ))
        })
        .collect();
    let mut rows = Vec::new();
    for ((run_id, workload, instance), by_test) in &tests {
        let Some(&process_wall) = wall.get(&(*run_id, *workload, *instance)) else {
            continue;
        };
        let measured_total: f64 = by_test
            .values()
            .filter_map(|t| t.measured.map(|m| m.0))
            .sum();
        for (test, figures) in by_test {
            let (Some(ops), Some((measured_s, clock))) = (figures.ops, figures.measured) else {
                continue;
            };
            // Only block tests (`alg/16384`) move bytes; public-key tests are counted in operations.
            let Some(block_bytes) = test
                .rsplit_once('/')
                .and_then(|(_, size)| size.parse::<f64>().ok())
            else {
                continue;
            };
            let wall_s = if measured_total > 0.0 {
                process_wall * measured_s / measured_total
            } else {
                process_wall
            };
            rows.push(ThroughputRow {
                run_id: (*run_id).to_owned(),
                workload: (*workload).to_owned(),
                instance: *instance,
                test: test.clone(),
                ops,
                block_bytes,
                measured_s,
                measured_clock: clock.to_owned(),
                wall_s,
                reported_bytes_per_s: figures.reported,
                effective_bytes_per_s: ops * block_bytes / wall_s,
            });
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metric(name: &str, value: f64) -> WorkloadMetricRow {
        WorkloadMetricRow {
            run_id: "r".into(),
            workload: "fg".into(),
            instance: 0,
            tid: None,
            tool: "openssl".into(),
            metric: name.into(),
            value,
            unit: String::new(),
        }
    }

    #[test]
    fn seed_page_8_figures() {
        // 8,799,429 sha256 operations of 16384 bytes, 46.52 s of CPU time, over 50.003 s of wall time.
        let metrics = [
            metric("sha256/16384/ops", 8_799_429.0),
            metric("sha256/16384/cpu_time_s", 46.52),
            metric("sha256/16384/bytes_per_s", 3_099_000_000.0),
        ];
        let process = ProcessRow {
            run_id: "r".into(),
            workload: "fg".into(),
            instance: 0,
            pid: 1,
            start_ns: 0,
            end_ns: Some(50_003_000_000),
            exit_code: Some(0),
            nice: 0,
            affinity: None,
            argv: vec![],
        };
        let rows = effective(&metrics, &[process]);
        assert_eq!(rows.len(), 1);
        assert_eq!(
            format!("{:.3} GB/s", rows[0].effective_bytes_per_s / 1e9),
            "2.883 GB/s"
        );
        assert_eq!(rows[0].measured_clock, "cpu");
    }
}
