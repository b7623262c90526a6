//! Aggregates from a perf trace: exact run time per CPU, every migration, every wakeup delay.

use std::collections::BTreeMap;

use schedlab_tables::{SchedDelayRow, SchedSliceRow};

use crate::thread::{ThreadKey, ThreadUsage};
use crate::{Aggregates, RunTables};

pub fn aggregate(run: &RunTables<'_>, startup_ns: i64) -> Aggregates {
    let mut threads: BTreeMap<i32, (ThreadKey, Vec<&SchedSliceRow>)> = BTreeMap::new();
    for slice in &run.sched_slices {
        let key = ThreadKey {
            workload: slice.workload.as_deref().unwrap_or_default().to_owned(),
            pid: slice.pid,
            tid: slice.tid,
            comm: slice.comm.to_string(),
        };
        threads
            .entry(slice.tid)
            .or_insert_with(|| (key, Vec::new()))
            .1
            .push(slice);
    }
    let mut migrations: BTreeMap<i32, Vec<i64>> = BTreeMap::new();
    for m in &run.migrations {
        migrations.entry(m.tid).or_default().push(m.time_ns);
    }
    let mut out = Aggregates::default();
    for (tid, (key, slices)) in &threads {
        let mut per_cpu: BTreeMap<i32, i64> = BTreeMap::new();
        for s in slices {
            *per_cpu.entry(s.cpu).or_default() += s.run_ns;
        }
        let delays: Vec<i64> = slices
            .iter()
            .map(|s| s.sched_delay_ns)
            .filter(|d| *d > 0)
            .collect();
        out.sched_delay.push(SchedDelayRow {
            run_id: run.run_id.to_owned(),
            workload: key.workload.clone(),
            pid: key.pid,
            tid: key.tid,
            comm: key.comm.clone(),
            wakeups: delays.len() as i64,
            mean_ns: (!delays.is_empty())
                .then(|| delays.iter().sum::<i64>() as f64 / delays.len() as f64),
            max_ns: delays.iter().max().copied(),
        });
        ThreadUsage {
            key,
            per_cpu,
            total_ns: slices.iter().map(|s| s.run_ns).sum(),
            first_ns: slices.iter().map(|s| s.start_ns).min().unwrap_or(0),
            last_ns: slices.iter().map(|s| s.end_ns).max().unwrap_or(0),
            migrations: migrations.remove(tid).unwrap_or_default(),
            source: "sched",
        }
        .push_into(run, startup_ns, &mut out);
    }
    out
}
