//! A run's workload slices grouped by thread, each thread's in time order: the one grouping
//! that every per-thread figure reads.
//!
//! The figures of a thread (its run time per CPU, its delays, its state at a migration, what
//! its placement cost it) each walk that thread's slices. Grouped once per run as row numbers
//! of the run's [`Slices`], the grouping costs four bytes a workload slice, and the steps that
//! run at the same time share it instead of each holding its own copy.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::slices::{NO_TEXT, Slice, Slices, rows_by_group};

/// The workload slices of one store, by thread (ascending tid), each thread's by start.
#[derive(Debug)]
pub struct ByThread<'a> {
    of: &'a Slices,
    /// The rows of every thread's slices, thread after thread.
    rows: Vec<u32>,
    /// Per thread, its tid and where its rows end in `rows`.
    ends: Vec<(i32, u32)>,
}

impl<'a> ByThread<'a> {
    /// The slices of `of` that belong to a workload, grouped (see [`rows_by_group`]).
    pub fn workloads(of: &'a Slices) -> ByThread<'a> {
        // Every thread with a workload slice, and each task's thread among them: a slice finds
        // its group through its task key, an index, with no lookup per slice.
        let mut threads: Vec<i32> = (0..of.task_count() as u32)
            .filter(|&task| of.task_workload(task) != NO_TEXT)
            .map(|task| of.task_tid(task))
            .collect();
        threads.sort_unstable();
        threads.dedup();
        let thread_of_task: Vec<Option<usize>> = (0..of.task_count() as u32)
            .map(|task| match of.task_workload(task) {
                NO_TEXT => None,
                _ => threads.binary_search(&of.task_tid(task)).ok(),
            })
            .collect();
        let (rows, ends) =
            rows_by_group(of, threads.len(), |s| thread_of_task[s.task_key() as usize]);
        // A thread of tasks with no slices here (a clipped store keeps its source's tasks)
        // is no thread of this grouping.
        let starts = std::iter::once(0).chain(ends.clone());
        let ends = (threads.into_iter().zip(ends).zip(starts))
            .filter(|&((_, end), start)| end > start)
            .map(|(thread, _)| thread)
            .collect();
        ByThread { of, rows, ends }
    }

    /// A grouping of no slices.
    pub fn empty(of: &'a Slices) -> ByThread<'a> {
        ByThread {
            of,
            rows: Vec::new(),
            ends: Vec::new(),
        }
    }

    /// Whether there are no workload slices.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Every thread, by ascending tid, with its slices.
    pub fn threads(&self) -> impl Iterator<Item = (i32, ThreadSlices<'_>)> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().map(|&(_, end)| end));
        (self.ends.iter().zip(starts)).map(|(&(tid, end), start)| (tid, self.slice(start, end)))
    }

    /// The slices of thread `tid` (none for a thread without workload slices).
    pub fn thread(&self, tid: i32) -> ThreadSlices<'_> {
        match self.ends.binary_search_by_key(&tid, |&(t, _)| t) {
            Ok(at) => {
                let start = at.checked_sub(1).map_or(0, |before| self.ends[before].1);
                self.slice(start, self.ends[at].1)
            }
            Err(_) => self.slice(0, 0),
        }
    }

    /// The texts its slices' keys index (see [`Slices::texts`]).
    pub fn texts(&self) -> &'a [Arc<str>] {
        self.of.texts()
    }

    /// Every workload slice, thread after thread.
    pub fn slices(&self) -> impl Iterator<Item = Slice<'_>> + '_ {
        self.slice(0, self.rows.len() as u32).iter()
    }

    fn slice(&self, start: u32, end: u32) -> ThreadSlices<'_> {
        ThreadSlices {
            of: self.of,
            rows: &self.rows[start as usize..end as usize],
        }
    }
}

/// One thread's slices in time order (see [`ByThread`]).
#[derive(Debug, Clone, Copy)]
pub struct ThreadSlices<'a> {
    of: &'a Slices,
    rows: &'a [u32],
}

impl<'a> ThreadSlices<'a> {
    /// The `i`th slice in time order.
    pub fn get(self, i: usize) -> Slice<'a> {
        self.of.get(self.rows[i] as usize)
    }

    pub fn iter(self) -> impl Iterator<Item = Slice<'a>> {
        self.rows.iter().map(move |&row| self.of.get(row as usize))
    }

    /// How many slices start before `time` (they are in time order).
    pub fn started_before(self, time: i64) -> usize {
        (self.rows).partition_point(|&row| self.of.get(row as usize).start_ns() < time)
    }

    /// The run time of the slices on each CPU they ran on. A thread's consecutive slices are
    /// mostly on one CPU: each run of them is summed before the map is asked.
    pub fn run_ns_by_cpu(self) -> BTreeMap<i32, i64> {
        let mut by_cpu: BTreeMap<i32, i64> = BTreeMap::new();
        let mut current: Option<(i32, i64)> = None;
        for s in self.iter() {
            match &mut current {
                Some((cpu, ns)) if *cpu == s.cpu() => *ns += s.run_ns(),
                _ => {
                    if let Some((cpu, ns)) = current.replace((s.cpu(), s.run_ns())) {
                        *by_cpu.entry(cpu).or_default() += ns;
                    }
                }
            }
        }
        if let Some((cpu, ns)) = current {
            *by_cpu.entry(cpu).or_default() += ns;
        }
        by_cpu
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::from_sched::tests::slice;

    #[test]
    fn threads_come_by_tid_and_their_slices_by_start_whatever_the_table_order() {
        let mut idle = slice(0, 0, 0, 5);
        idle.workload = None;
        let rows = [
            slice(7, 0, 30, 40),
            idle,
            slice(3, 1, 20, 25),
            slice(7, 1, 10, 20),
            slice(3, 0, 0, 10),
        ];
        let slices = Slices::from_rows(&rows);
        let grouped = ByThread::workloads(&slices);
        let seen: Vec<(i32, Vec<i64>)> = (grouped.threads())
            .map(|(tid, own)| (tid, own.iter().map(|s| s.start_ns()).collect()))
            .collect();
        assert_eq!(seen, [(3, vec![0, 20]), (7, vec![10, 30])]);
        let starts = |tid| {
            grouped
                .thread(tid)
                .iter()
                .map(|s| s.start_ns())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            (starts(7), starts(3), starts(0)),
            (vec![10, 30], vec![0, 20], vec![])
        );
        assert_eq!(grouped.thread(7).started_before(30), 1);
        assert_eq!(
            grouped.slices().count(),
            4,
            "the idle slice is no workload's"
        );
    }

    #[test]
    fn a_threads_run_time_is_summed_per_cpu_across_its_moves() {
        let rows = [
            slice(7, 0, 0, 10),
            slice(7, 0, 10, 20),
            slice(7, 1, 20, 25),
            slice(7, 0, 30, 40),
            slice(7, 2, 40, 40),
            slice(8, 1, 0, 100),
        ];
        let slices = Slices::from_rows(&rows);
        let grouped = ByThread::workloads(&slices);
        assert_eq!(
            grouped.thread(7).run_ns_by_cpu(),
            BTreeMap::from([(0, 30), (1, 5), (2, 0)])
        );
    }
}
