//! Aggregates from a perf trace: exact run time per CPU, every migration, every wakeup delay.

use std::collections::BTreeMap;

use schedlab_tables::{
    CpuTimeRow, MigrationRow, MigrationSummaryRow, ResidencyRow, SchedDelayRow, SchedSliceRow,
};

use crate::{Aggregates, RunTables};

/// Thread identity within a run, with what every aggregate row repeats about it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ThreadKey {
    pub workload: String,
    pub pid: i32,
    pub tid: i32,
    pub comm: String,
}

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
    let mut migrations: BTreeMap<i32, Vec<&MigrationRow>> = BTreeMap::new();
    for m in &run.migrations {
        migrations.entry(m.tid).or_default().push(m);
    }
    let mut out = Aggregates::default();
    for (tid, (key, slices)) in &threads {
        let total: i64 = slices.iter().map(|s| s.run_ns).sum();
        let first = slices.iter().map(|s| s.start_ns).min().unwrap_or(0);
        let last = slices.iter().map(|s| s.end_ns).max().unwrap_or(0);
        let mut per_cpu: BTreeMap<i32, i64> = BTreeMap::new();
        for s in slices {
            *per_cpu.entry(s.cpu).or_default() += s.run_ns;
        }
        out.residency
            .extend(per_cpu.into_iter().map(|(cpu, run_ns)| ResidencyRow {
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
                source: "sched".into(),
            }));
        out.cpu_time.push(CpuTimeRow {
            run_id: run.run_id.to_owned(),
            workload: key.workload.clone(),
            pid: key.pid,
            tid: key.tid,
            comm: key.comm.clone(),
            cpu_time_ns: total,
            wall_ns: last - first,
            source: "sched".into(),
        });
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
        let times: Vec<i64> = migrations
            .get(tid)
            .map(|ms| ms.iter().map(|m| m.time_ns).collect())
            .unwrap_or_default();
        out.migrations.push(summarize_migrations(
            run.run_id, key, &times, first, last, startup_ns, "sched",
        ));
    }
    out
}

/// Splits a thread's migration times at `first + startup_ns` and measures the steady rhythm.
pub fn summarize_migrations(
    run_id: &str,
    key: &ThreadKey,
    times: &[i64],
    first: i64,
    last: i64,
    startup_ns: i64,
    source: &str,
) -> MigrationSummaryRow {
    let mut times = times.to_vec();
    times.sort_unstable();
    let split = first + startup_ns;
    let steady: Vec<i64> = times.iter().copied().filter(|t| *t >= split).collect();
    let intervals: Vec<i64> = steady.windows(2).map(|w| w[1] - w[0]).collect();
    let lifetime_s = (last - first) as f64 / 1e9;
    MigrationSummaryRow {
        run_id: run_id.to_owned(),
        workload: key.workload.clone(),
        pid: key.pid,
        tid: key.tid,
        comm: key.comm.clone(),
        migrations: times.len() as i64,
        startup_migrations: (times.len() - steady.len()) as i64,
        steady_migrations: steady.len() as i64,
        steady_interval_mean_ns: (!intervals.is_empty())
            .then(|| intervals.iter().sum::<i64>() as f64 / intervals.len() as f64),
        per_second: (lifetime_s > 0.0).then(|| times.len() as f64 / lifetime_s),
        source: source.to_owned(),
    }
}
