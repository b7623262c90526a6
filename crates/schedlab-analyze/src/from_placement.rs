//! Aggregates from /proc placement samples, for runs without a perf trace.
//!
//! Estimates, at the sampling interval: the CPU time a thread gained between two samples is
//! booked on the CPU of the later sample, and a migration is a change of CPU between two
//! consecutive samples (so a thread that moves and comes back between samples is not seen to
//! move: a lower bound).

use std::collections::BTreeMap;

use schedlab_tables::{CpuTimeRow, PlacementRow, ResidencyRow};

use crate::from_sched::{ThreadKey, summarize_migrations};
use crate::{Aggregates, RunTables};

pub fn aggregate(run: &RunTables<'_>, startup_ns: i64) -> Aggregates {
    let mut threads: BTreeMap<i32, Vec<&PlacementRow>> = BTreeMap::new();
    for sample in &run.placement {
        threads.entry(sample.tid).or_default().push(sample);
    }
    let mut out = Aggregates::default();
    for samples in threads.values_mut() {
        samples.sort_by_key(|s| s.time_ns);
        let last = samples.last().expect("grouped samples are non-empty");
        let key = ThreadKey {
            workload: last.workload.clone().unwrap_or_default(),
            pid: last.pid,
            tid: last.tid,
            comm: last.comm.clone(),
        };
        let mut per_cpu: BTreeMap<i32, i64> = BTreeMap::new();
        let mut previous_cpu_time = 0;
        let mut moves = Vec::new();
        for (i, sample) in samples.iter().enumerate() {
            *per_cpu.entry(sample.cpu).or_default() += sample.cpu_time_ns - previous_cpu_time;
            previous_cpu_time = sample.cpu_time_ns;
            if i > 0 && samples[i - 1].cpu != sample.cpu {
                moves.push(sample.time_ns);
            }
        }
        let total = last.cpu_time_ns;
        out.residency.extend(
            per_cpu
                .into_iter()
                .filter(|(_, ns)| *ns > 0)
                .map(|(cpu, run_ns)| ResidencyRow {
                    run_id: run.run_id.to_owned(),
                    workload: key.workload.clone(),
                    pid: key.pid,
                    tid: key.tid,
                    comm: key.comm.clone(),
                    cpu,
                    class: run.class(cpu),
                    run_ns,
                    share: if total > 0 {
                        run_ns as f64 / total as f64
                    } else {
                        0.0
                    },
                    source: "placement".into(),
                }),
        );
        let first_ns = samples[0].time_ns;
        out.cpu_time.push(CpuTimeRow {
            run_id: run.run_id.to_owned(),
            workload: key.workload.clone(),
            pid: key.pid,
            tid: key.tid,
            comm: key.comm.clone(),
            cpu_time_ns: total,
            wall_ns: last.time_ns - first_ns,
            source: "placement".into(),
        });
        out.migrations.push(summarize_migrations(
            run.run_id,
            &key,
            &moves,
            first_ns,
            last.time_ns,
            startup_ns,
            "placement",
        ));
    }
    out
}
