//! Aggregates from /proc placement samples, for runs without a perf trace.
//!
//! Estimates, at the sampling interval: the CPU time a thread gained between two samples is
//! booked on the CPU of the later sample, and a migration is a change of CPU between two
//! consecutive samples (so a thread that moves and comes back between samples is not seen to
//! move: a lower bound).

use std::collections::BTreeMap;

use schedlab_tables::PlacementRow;

use crate::headline::Headline;
use crate::thread::{ThreadKey, ThreadUsage};
use crate::{Aggregates, RunTables};

pub fn aggregate(run: &RunTables<'_>, startup_ns: i64) -> Aggregates {
    let mut threads: BTreeMap<i32, Vec<&PlacementRow>> = BTreeMap::new();
    for sample in &run.placement {
        threads.entry(sample.tid).or_default().push(sample);
    }
    let mut out = Aggregates::default();
    for samples in threads.values_mut() {
        samples.sort_by_key(|s| s.time_ns);
        let (first, last) = (samples[0], samples[samples.len() - 1]);
        let key = ThreadKey {
            workload: last.workload.clone().unwrap_or_default(),
            pid: last.pid,
            tid: last.tid,
            comm: last.comm.clone(),
        };
        let mut per_cpu: BTreeMap<i32, i64> = BTreeMap::new();
        let mut previous_cpu_time = 0;
        for sample in samples.iter() {
            *per_cpu.entry(sample.cpu).or_default() += sample.cpu_time_ns - previous_cpu_time;
            previous_cpu_time = sample.cpu_time_ns;
        }
        let migrations = samples
            .windows(2)
            .filter(|w| w[0].cpu != w[1].cpu)
            .map(|w| w[1].time_ns)
            .collect();
        ThreadUsage {
            key: &key,
            per_cpu,
            headline: Headline::Proc,
            traced: None,
            first_ns: first.time_ns,
            last_ns: last.time_ns,
            migrations,
            source: "placement",
            lost_events: None,
            proc_check: None,
        }
        .push_into(run, startup_ns, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(time_ns: i64, cpu: i32, cpu_time_ns: i64) -> PlacementRow {
        PlacementRow {
            run_id: "r".into(),
            time_ns,
            pid: 7,
            tid: 8,
            comm: "w".into(),
            cpu,
            cpu_time_ns,
            workload: Some("w".into()),
        }
    }

    #[test]
    fn cpu_time_is_booked_on_the_later_sample_and_moves_are_counted() {
        let rows = [
            sample(0, 0, 5),
            sample(200, 0, 15),
            sample(400, 1, 35),
            sample(600, 1, 40),
        ];
        let run = RunTables {
            placement: rows.iter().collect(),
            ..RunTables::for_tests(&[])
        };
        let out = aggregate(&run, 300);
        let shares: Vec<(i32, &str, i64)> = out
            .residency
            .iter()
            .map(|r| (r.cpu, r.class.as_str(), r.run_ns))
            .collect();
        assert_eq!(shares, [(0, "P", 15), (1, "E", 25)]);
        assert_eq!(out.cpu_time[0].cpu_time_ns, 40);
        assert_eq!(out.cpu_time[0].wall_ns, 600);
        let m = &out.migrations[0];
        assert_eq!(
            (m.migrations, m.startup_migrations, m.steady_migrations),
            (1, 0, 1)
        );
    }
}
