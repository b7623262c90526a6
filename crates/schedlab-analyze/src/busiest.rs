//! The threads that ran longest in a run whose trace names no workload.
//!
//! A perf.data or trace.dat imported without `--workload` has slices but no workload thread,
//! so every per-thread aggregate is empty for it and the summary would show nothing of the
//! trace. For such runs this sums every thread's slices (and the kernel's own accounting, where
//! the trace has it) from the columns alone, a batch at a time, and keeps the busiest few: what
//! `perf sched timehist -s` would list first.

use std::collections::{BTreeMap, BTreeSet};

use schedlab_tables::{
    BUSIEST_THREADS, BusiestThreadRow, SchedRuntimeRow, SchedSliceRow, TableDir, TableError,
    read_columns,
};
use schedlab_topology::format_cpu_list;

use crate::slices::run_ranges;

/// One thread's sums over the trace.
#[derive(Default)]
struct Sums {
    pid: i32,
    comm: String,
    slice_ns: i64,
    kernel_ns: Option<i64>,
    slices: i64,
    cpus: BTreeSet<u32>,
}

/// One run's threads, and the span its slices cover.
#[derive(Default)]
struct RunSums {
    threads: BTreeMap<i32, Sums>,
    first_ns: i64,
    last_ns: i64,
}

/// The [`BUSIEST_THREADS`] threads by CPU time of each of `runs` in `dir`, the idle task left out.
pub fn busiest_threads(
    dir: &(impl TableDir + ?Sized),
    runs: &BTreeSet<String>,
) -> Result<Vec<BusiestThreadRow>, TableError> {
    let mut sums: BTreeMap<String, RunSums> = BTreeMap::new();
    if runs.is_empty() {
        return Ok(Vec::new());
    }
    const SLICE_COLUMNS: [&str; 7] = ["run_id", "cpu", "pid", "tid", "comm", "start_ns", "end_ns"];
    read_columns::<SchedSliceRow>(dir, &[&SLICE_COLUMNS[..], &["run_ns"]].concat(), |batch| {
        let (cpu, pid, tid) = (batch.i32s("cpu")?, batch.i32s("pid")?, batch.i32s("tid")?);
        let (start, end) = (batch.i64s("start_ns")?, batch.i64s("end_ns")?);
        let run_ns = batch.i64s("run_ns")?;
        let comm = batch.texts("comm")?;
        let comms: Vec<&str> = comm.dictionary().collect();
        for (run, rows) in run_ranges(batch)? {
            if !runs.contains(run) {
                continue;
            }
            let of_run = sums.entry(run.to_owned()).or_insert_with(|| RunSums {
                first_ns: i64::MAX,
                last_ns: i64::MIN,
                ..RunSums::default()
            });
            for row in rows {
                of_run.first_ns = of_run.first_ns.min(start.value(row));
                of_run.last_ns = of_run.last_ns.max(end.value(row));
                if tid.value(row) == 0 {
                    continue;
                }
                let thread = of_run.threads.entry(tid.value(row)).or_default();
                thread.pid = pid.value(row);
                let name = comm.key(row).map_or("", |k| comms[k]);
                if thread.comm != name {
                    thread.comm = name.to_owned();
                }
                thread.slice_ns += run_ns.value(row);
                thread.slices += 1;
                thread.cpus.insert(cpu.value(row).max(0) as u32);
            }
        }
        Ok(())
    })?;
    read_columns::<SchedRuntimeRow>(dir, &["run_id", "tid", "runtime_ns"], |batch| {
        let (tid, runtime_ns) = (batch.i32s("tid")?, batch.i64s("runtime_ns")?);
        for (run, rows) in run_ranges(batch)? {
            let Some(of_run) = sums.get_mut(run) else {
                continue;
            };
            for row in rows {
                if let Some(thread) = of_run.threads.get_mut(&tid.value(row)) {
                    *thread.kernel_ns.get_or_insert(0) += runtime_ns.value(row);
                }
            }
        }
        Ok(())
    })?;
    Ok(sums
        .into_iter()
        .flat_map(|(run, of_run)| ranked(&run, of_run))
        .collect())
}

/// A run's busiest threads, most CPU time first (equal times: lower tid first).
fn ranked(run_id: &str, of_run: RunSums) -> Vec<BusiestThreadRow> {
    let span_ns = (of_run.last_ns - of_run.first_ns).max(0);
    let mut threads: Vec<(i32, Sums)> = of_run.threads.into_iter().collect();
    let cpu_time = |s: &Sums| s.kernel_ns.unwrap_or(s.slice_ns);
    threads.sort_by_key(|(tid, s)| (std::cmp::Reverse(cpu_time(s)), *tid));
    (threads.into_iter().take(BUSIEST_THREADS).enumerate())
        .map(|(i, (tid, s))| BusiestThreadRow {
            run_id: run_id.to_owned(),
            rank: i as i32 + 1,
            pid: s.pid,
            tid,
            cpu_time_ns: cpu_time(&s),
            headline: if s.kernel_ns.is_some() {
                "kernel"
            } else {
                "slices"
            }
            .to_owned(),
            cpu_share: match span_ns {
                0 => 0.0,
                span => cpu_time(&s) as f64 / span as f64,
            },
            cpus: format_cpu_list(&s.cpus.into_iter().collect::<Vec<_>>()),
            comm: s.comm,
            slice_ns: s.slice_ns,
            kernel_ns: s.kernel_ns,
            slices: s.slices,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sums(slice_ns: i64, kernel_ns: Option<i64>) -> Sums {
        Sums {
            pid: 1,
            comm: "t".into(),
            slice_ns,
            kernel_ns,
            slices: 1,
            cpus: [0].into(),
        }
    }

    #[test]
    fn threads_rank_by_the_kernels_time_where_it_has_one_and_only_ten_are_kept() {
        let mut threads: BTreeMap<i32, Sums> = (1..=12)
            .map(|tid| (tid, sums(tid as i64 * 10, None)))
            .collect();
        // Its slices are the longest (an idle-blind CPU), but the kernel counted it least.
        threads.insert(99, sums(1_000, Some(5)));
        let rows = ranked(
            "r",
            RunSums {
                threads,
                first_ns: 0,
                last_ns: 200,
            },
        );
        assert_eq!(rows.len(), BUSIEST_THREADS);
        let tids: Vec<i32> = rows.iter().map(|r| r.tid).collect();
        assert_eq!(
            tids,
            [12, 11, 10, 9, 8, 7, 6, 5, 4, 3],
            "99 is not among them"
        );
        assert_eq!(rows[0].rank, 1);
        assert_eq!((rows[0].cpu_time_ns, rows[0].cpu_share), (120, 0.6));
        assert!(rows.iter().all(|r| r.headline == "slices"));
    }
}
