//! The built-in periodic workload's report: one JSON file per process
//! (`raw/<workload>.<instance>.periodic.json`), written by the workload (`schedlab
//! periodic-worker`) and turned into `workload_metrics` rows by the parse stage.
//!
//! It is a file format between the collector and the parse stage, so it lives here, in the
//! contract, and neither side depends on the other for it.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::WorkloadMetricRow;

/// What one thread achieved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadReport {
    pub tid: i32,
    /// Periods whose busy part ran.
    pub periods: u64,
    /// Periods skipped because the previous one overran its deadline.
    pub missed: u64,
    /// How late each period's work started against its deadline.
    pub lateness_mean_ns: f64,
    pub lateness_p99_ns: i64,
    pub lateness_max_ns: i64,
    pub cpu_ns: i64,
    pub wall_ns: i64,
}

impl ThreadReport {
    pub fn duty_pct(&self) -> f64 {
        if self.wall_ns == 0 {
            0.0
        } else {
            100.0 * self.cpu_ns as f64 / self.wall_ns as f64
        }
    }
}

/// What one periodic process achieved, thread by thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub period_ns: i64,
    pub busy_ns: i64,
    pub threads: Vec<ThreadReport>,
}

impl Report {
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        crate::write_file_atomic(path, &text)
    }

    pub fn read(path: &Path) -> Result<Report, String> {
        let bytes = std::fs::read(path).map_err(|err| format!("{}: {err}", path.display()))?;
        serde_json::from_slice(&bytes)
            .map_err(|err| format!("{}: not a periodic report: {err}", path.display()))
    }

    /// The report as `workload_metrics` rows, one set per thread.
    pub fn metrics(&self, run_id: &str, workload: &str, instance: u32) -> Vec<WorkloadMetricRow> {
        let row = |tid: i32, metric: &str, value: f64, unit: &str| WorkloadMetricRow {
            run_id: run_id.to_owned(),
            workload: workload.to_owned(),
            instance,
            tid: Some(tid),
            tool: "periodic".into(),
            metric: metric.into(),
            value,
            unit: unit.into(),
        };
        self.threads
            .iter()
            .flat_map(|t| {
                [
                    row(t.tid, "periods", t.periods as f64, "count"),
                    row(t.tid, "missed_periods", t.missed as f64, "count"),
                    row(t.tid, "duty_cycle", t.duty_pct(), "%"),
                    row(t.tid, "lateness_mean", t.lateness_mean_ns, "ns"),
                    row(t.tid, "lateness_p99", t.lateness_p99_ns as f64, "ns"),
                    row(t.tid, "lateness_max", t.lateness_max_ns as f64, "ns"),
                    row(t.tid, "cpu_time", t.cpu_ns as f64, "ns"),
                ]
            })
            .collect()
    }
}
