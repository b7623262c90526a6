//! One thread's usage, whatever source measured it, turned into aggregate rows. Both sources
//! (perf trace, /proc samples) reduce a thread to the same facts: CPU time per CPU, the span it
//! was seen in, and when it changed CPU.

use std::collections::BTreeMap;

use schedlab_tables::{CpuTimeRow, MigrationSummaryRow, ResidencyRow};
use schedlab_topology::format_cpu_list;

use crate::headline::{Headline, trace_exceeds_proc};
use crate::{Aggregates, RunTables};

/// Thread identity within a run, with what every aggregate row repeats about it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ThreadKey {
    pub workload: String,
    pub pid: i32,
    pub tid: i32,
    pub comm: String,
}

/// What a trace measured of a thread's CPU time beside its headline figure.
pub struct Traced {
    /// The slices' run time per CPU.
    pub slices: BTreeMap<i32, i64>,
    /// The kernel's accounting per CPU, where the trace recorded it for the thread.
    pub kernel: Option<BTreeMap<i32, i64>>,
    /// The CPUs it had slices on whose idle went untraced.
    pub idle_blind: Vec<i32>,
}

/// What a source measured of one thread.
pub struct ThreadUsage<'a> {
    pub key: &'a ThreadKey,
    /// CPU time per CPU, ns, by the `headline` figure; their sum is the thread's CPU time (the
    /// denominator of residency shares).
    pub per_cpu: BTreeMap<i32, i64>,
    pub headline: Headline,
    /// From a trace: the figures beside the headline.
    pub traced: Option<Traced>,
    /// First and last time the thread was seen.
    pub first_ns: i64,
    pub last_ns: i64,
    /// Times it was seen to change CPU.
    pub migrations: Vec<i64>,
    /// `sched` or `placement`.
    pub source: &'static str,
    /// Events perf lost over the thread's span (`None`: not from a trace).
    pub lost_events: Option<i64>,
    /// (/proc CPU time, trace run time) over the span of the thread's /proc samples, when a
    /// trace and samples both exist.
    pub proc_check: Option<(i64, i64)>,
}

impl ThreadUsage<'_> {
    /// Appends the thread's residency, CPU-time and migration rows.
    pub fn push_into(self, run: &RunTables<'_>, startup_ns: i64, out: &mut Aggregates) {
        let key = self.key;
        let total: i64 = self.per_cpu.values().sum();
        let traced = self.traced.as_ref();
        let slices = traced.map(|t| &t.slices);
        let kernel = traced.and_then(|t| t.kernel.as_ref());
        let idle_blind = traced.map_or(&[][..], |t| t.idle_blind.as_slice());
        out.residency
            .extend(
                self.per_cpu
                    .iter()
                    .filter(|(_, ns)| **ns > 0)
                    .map(|(&cpu, &run_ns)| ResidencyRow {
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
                        source: self.source.into(),
                        lost_events: self.lost_events,
                        slice_ns: slices.map(|s| s.get(&cpu).copied().unwrap_or(0)),
                        kernel_ns: kernel.map(|k| k.get(&cpu).copied().unwrap_or(0)),
                        headline: self.headline.as_str().into(),
                        idle_blind: idle_blind.contains(&cpu),
                    }),
            );
        let blind: Vec<u32> = idle_blind.iter().map(|&c| c as u32).collect();
        out.cpu_time.push(CpuTimeRow {
            run_id: run.run_id.to_owned(),
            workload: key.workload.clone(),
            pid: key.pid,
            tid: key.tid,
            comm: key.comm.clone(),
            cpu_time_ns: total,
            wall_ns: self.last_ns - self.first_ns,
            source: self.source.into(),
            lost_events: self.lost_events,
            proc_check_ns: self.proc_check.map(|c| c.0),
            trace_check_ns: self.proc_check.map(|c| c.1),
            trace_exceeds_proc: self
                .proc_check
                .map(|(proc_ns, trace_ns)| trace_exceeds_proc(trace_ns, proc_ns)),
            slice_ns: slices.map(|s| s.values().sum()),
            kernel_ns: kernel.map(|k| k.values().sum()),
            headline: self.headline.as_str().into(),
            idle_blind_cpus: format_cpu_list(&blind),
        });
        out.migrations
            .push(summarize_migrations(run.run_id, key, &self, startup_ns));
    }
}

/// Splits a thread's migration times at `first + startup_ns` and measures the steady rhythm.
fn summarize_migrations(
    run_id: &str,
    key: &ThreadKey,
    usage: &ThreadUsage<'_>,
    startup_ns: i64,
) -> MigrationSummaryRow {
    let mut times = usage.migrations.clone();
    times.sort_unstable();
    let split = usage.first_ns + startup_ns;
    let steady: Vec<i64> = times.iter().copied().filter(|t| *t >= split).collect();
    let intervals: Vec<i64> = steady.windows(2).map(|w| w[1] - w[0]).collect();
    let lifetime_s = (usage.last_ns - usage.first_ns) as f64 / 1e9;
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
        source: usage.source.to_owned(),
        lost_events: usage.lost_events,
    }
}
