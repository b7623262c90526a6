//! A run's workload slices grouped by thread, each thread's in time order: the one grouping
//! that every per-thread figure reads.
//!
//! The figures of a thread (its run time per CPU, its delays, its state at a migration, what
//! its placement cost it) each walk that thread's slices. Grouped once per run as row numbers
//! of the run's [`Slices`], the grouping costs four bytes a workload slice, and the steps that
//! run at the same time share it instead of each holding its own copy.

use std::collections::BTreeMap;

use crate::slices::{NO_TEXT, Slice, Slices};

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
    /// The slices of `of` that belong to a workload, grouped. Each thread's rows are placed in
    /// table order, which is time order for every source (each slice ends at a switch and the
    /// parsers write them as they end); a thread whose rows are not is sorted.
    pub fn workloads(of: &'a Slices) -> ByThread<'a> {
        let of_workload = || of.iter().filter(|s| s.workload_key() != NO_TEXT);
        // Counted and placed through the slices' task keys, which index a table: no lookup
        // per slice.
        let mut per_task = vec![0u32; of.task_count()];
        for s in of_workload() {
            per_task[s.task_key() as usize] += 1;
        }
        let mut per_thread: BTreeMap<i32, u32> = BTreeMap::new();
        for (task, &n) in (0u32..).zip(&per_task).filter(|&(_, &n)| n > 0) {
            *per_thread.entry(of.task_tid(task)).or_default() += n;
        }
        let threads: Vec<i32> = per_thread.keys().copied().collect();
        // A task of no workload has no place, and none of its slices is placed.
        let thread_of_task: Vec<usize> = (0..per_task.len() as u32)
            .map(|task| {
                threads
                    .binary_search(&of.task_tid(task))
                    .unwrap_or(usize::MAX)
            })
            .collect();
        let mut ends: Vec<(i32, u32)> = Vec::with_capacity(threads.len());
        let mut next: Vec<u32> = Vec::with_capacity(threads.len());
        for (tid, n) in per_thread {
            let start = ends.last().map_or(0, |&(_, end)| end);
            next.push(start);
            ends.push((tid, start + n));
        }
        let mut rows = vec![0u32; ends.last().map_or(0, |&(_, end)| end as usize)];
        for s in of_workload() {
            let at = &mut next[thread_of_task[s.task_key() as usize]];
            rows[*at as usize] = u32::try_from(s.row()).expect("fewer slices than u32 rows");
            *at += 1;
        }
        let mut start = 0;
        for &(_, end) in &ends {
            let own = &mut rows[start..end as usize];
            let start_of = |row: &u32| of.get(*row as usize).start_ns();
            if !own.is_sorted_by_key(start_of) {
                own.sort_by_key(start_of);
            }
            start = end as usize;
        }
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
}
