//! The kernel's own accounting of CPU time: sched_stat_runtime's `runtime`, summed per thread
//! and CPU (table `sched_runtime`).
//!
//! The kernel reports the CPU time a task ran since its last update whenever it updates it (at
//! every tick, switch, wakeup or load balance it is part of), on its task clock. Where a trace
//! misses events (a CPU whose idle context is not traced, so slices there run on from the last
//! switch the trace saw), the sums still say what the task ran.
//!
//! Sums do not depend on the order of their events, so they are taken while the chunks decode
//! in parallel: these events, about one per switch, never go through the ordering or the state
//! machine, which would cost about as much as the switches themselves.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use schedlab_tables::rows::SchedRuntimeRow;

use crate::intern::Names;
use crate::le::{Comm, comm_str};
use crate::threads::{IdHasher, Threads};

/// One thread's updates on one CPU.
#[derive(Debug, Clone, Copy)]
struct Sum {
    runtime: u64,
    events: u64,
    first: u64,
    last: u64,
    /// The thread's process when the kernel said (an update of the task the CPU ran), else -1.
    pid: i32,
    /// The command name of the first update seen.
    comm: Comm,
}

/// Slots of `RuntimeSums::recent`.
const RECENT: usize = 32;
/// The key that marks an empty slot: no thread and CPU make it (both would be -1).
const NO_KEY: u64 = u64::MAX;

/// The sums of a chunk, a block or a whole file, by thread and CPU.
#[derive(Debug)]
pub(crate) struct RuntimeSums {
    sums: Vec<(u64, Sum)>,
    /// Key → index into `sums`.
    index: HashMap<u64, usize, BuildHasherDefault<IdHasher>>,
    /// The last keys updated, by tid modulo its size: a chunk's updates are of the few threads
    /// its CPUs ran, and a comparison here answers most of them without the map (its lookups
    /// took most of this module's time).
    recent: [(u64, usize); RECENT],
}

impl Default for RuntimeSums {
    fn default() -> Self {
        RuntimeSums {
            sums: Vec::new(),
            index: HashMap::default(),
            recent: [(NO_KEY, 0); RECENT],
        }
    }
}

/// The map's key: the tid in the low half, which the multiplicative hash spreads over the
/// buckets as it does for tids alone.
fn key(tid: i32, cpu: i32) -> u64 {
    (u64::from(cpu as u32) << 32) | u64::from(tid as u32)
}

fn tid_cpu(key: u64) -> (i32, i32) {
    (key as u32 as i32, (key >> 32) as u32 as i32)
}

impl RuntimeSums {
    /// One update of thread `tid`, recorded on `cpu` at `time`. `pid` is the thread's process
    /// when the sample said it; `comm` is read only for a thread and CPU not seen before.
    pub(crate) fn add(
        &mut self,
        (cpu, tid, pid): (i32, i32, Option<i32>),
        runtime: u64,
        time: u64,
        comm: impl FnOnce() -> Comm,
    ) {
        let k = key(tid, cpu);
        let slot = &mut self.recent[(tid as u32 as usize ^ cpu as u32 as usize) % RECENT];
        let i = if slot.0 == k {
            slot.1
        } else {
            let sums = &mut self.sums;
            let i = *self.index.entry(k).or_insert_with(|| {
                let first = Sum {
                    runtime: 0,
                    events: 0,
                    first: time,
                    last: time,
                    pid: -1,
                    comm: comm(),
                };
                sums.push((k, first));
                sums.len() - 1
            });
            *slot = (k, i);
            i
        };
        let sum = &mut self.sums[i].1;
        sum.runtime = sum.runtime.saturating_add(runtime);
        sum.events += 1;
        sum.first = sum.first.min(time);
        sum.last = sum.last.max(time);
        if let Some(pid) = pid.filter(|&p| p > 0) {
            sum.pid = pid;
        }
    }

    /// Adds `other`'s sums.
    pub(crate) fn merge(&mut self, other: RuntimeSums) {
        for (k, theirs) in other.sums {
            match self.index.get(&k) {
                None => {
                    self.index.insert(k, self.sums.len());
                    self.sums.push((k, theirs));
                }
                Some(&i) => {
                    let mine = &mut self.sums[i].1;
                    mine.runtime = mine.runtime.saturating_add(theirs.runtime);
                    mine.events += theirs.events;
                    if theirs.first < mine.first {
                        mine.comm = theirs.comm;
                    }
                    mine.first = mine.first.min(theirs.first);
                    mine.last = mine.last.max(theirs.last);
                    if mine.pid <= 0 {
                        mine.pid = theirs.pid;
                    }
                }
            }
        }
    }

    /// The rows, by tid and CPU. Process, command name and workload are the thread's as the
    /// trace left it (the `threads` table's), where the trace knows the thread.
    pub(crate) fn rows(&self, names: &Names, threads: &Threads) -> Vec<SchedRuntimeRow> {
        let mut sums: Vec<(i32, i32, &Sum)> = (self.sums.iter())
            .map(|(k, sum)| {
                let (tid, cpu) = tid_cpu(*k);
                (tid, cpu, sum)
            })
            .collect();
        sums.sort_unstable_by_key(|&(tid, cpu, _)| (tid, cpu));
        (sums.into_iter())
            .map(|(tid, cpu, sum)| {
                let thread = threads.get(tid);
                let pid = match (thread, sum.pid) {
                    (Some(t), _) => t.pid,
                    (None, pid) if pid > 0 => pid,
                    (None, _) => tid,
                };
                let comm = (thread.map(|t| &t.comm))
                    .filter(|c| c[0] != 0)
                    .unwrap_or(&sum.comm);
                let to_i64 = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
                SchedRuntimeRow {
                    run_id: names.run_id.to_string(),
                    cpu,
                    pid,
                    tid,
                    comm: comm_str(comm),
                    runtime_ns: to_i64(sum.runtime),
                    events: to_i64(sum.events),
                    first_ns: to_i64(sum.first),
                    last_ns: to_i64(sum.last),
                    workload: (names.workload(thread.and_then(|t| t.workload)))
                        .map(|w| w.to_string()),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task_state::TaskStates;

    fn comm(name: &str) -> Comm {
        crate::le::comm_from(name.as_bytes())
    }

    /// Two chunks' updates: thread 42 on cpus 1 and 0, then on cpu 1 again and a thread -1.
    fn chunks() -> (RuntimeSums, RuntimeSums) {
        let update = |sums: &mut RuntimeSums, cpu, tid, runtime, time, name: &str| {
            sums.add((cpu, tid, Some(7)), runtime, time, || comm(name))
        };
        let (mut early, mut late) = (RuntimeSums::default(), RuntimeSums::default());
        update(&mut early, 1, 42, 100, 10, "early");
        update(&mut early, 0, 42, 5, 11, "early");
        update(&mut late, 1, 42, 200, 30, "late");
        update(&mut late, 1, -1, 9, 31, "odd");
        (early, late)
    }

    #[test]
    fn sums_are_the_same_whichever_chunk_is_merged_first() {
        let names = Names::new("r", &[], TaskStates::since_4_14());
        let threads = Threads::new(Vec::new());
        let rows = |sums: RuntimeSums| -> Vec<_> {
            (sums.rows(&names, &threads).into_iter())
                .map(|r| {
                    let span = (r.first_ns, r.last_ns);
                    (r.tid, r.cpu, r.pid, r.runtime_ns, r.events, span, r.comm)
                })
                .collect()
        };
        let (early, late) = chunks();
        let mut forward = RuntimeSums::default();
        forward.merge(early);
        forward.merge(late);
        let (early, late) = chunks();
        let mut backward = RuntimeSums::default();
        backward.merge(late);
        backward.merge(early);
        let forward = rows(forward);
        assert_eq!(
            forward,
            [
                (-1, 1, 7, 9, 1, (31, 31), "odd".to_string()),
                (42, 0, 7, 5, 1, (11, 11), "early".to_string()),
                (42, 1, 7, 300, 2, (10, 30), "early".to_string()),
            ]
        );
        assert_eq!(forward, rows(backward));
    }
}
