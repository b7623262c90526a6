//! The state machine's slices, held column by column as the `sched_slices` table stores them.
//!
//! A slice is written once, by the state machine, and read once per column of the table.
//! Held as rows (80 bytes each), building a block's batch read every row once for each of the
//! table's fourteen columns: 7 % of the CPU time of `schedlab parse perf-sched` on the bench
//! trace. Held as columns, most become Arrow arrays without a copy (see
//! [`CompactSlices`](crate::CompactSlices)), and the command names are already the text
//! column's keys.

use crate::le::Comm;
use crate::timehist::Slice;

/// Slices, a vector per field; row `i` is the `i`th value of each.
#[derive(Debug, Default)]
pub(crate) struct SliceColumns {
    pub cpu: Vec<i32>,
    pub pid: Vec<i32>,
    pub tid: Vec<i32>,
    /// Command names as their 16 bytes read little-endian: the key of the text column.
    pub comm: Vec<u128>,
    /// Times and durations in nanoseconds, as the table's `i64` (the trace's `u64` cast).
    pub start: Vec<i64>,
    pub end: Vec<i64>,
    pub wait: Vec<i64>,
    pub delay: Vec<i64>,
    pub preempted: Vec<bool>,
    pub state: Vec<i64>,
    pub workload: Vec<Option<u16>>,
    pub prio: Vec<i32>,
}

impl SliceColumns {
    pub(crate) fn with_capacity(n: usize) -> Self {
        SliceColumns {
            cpu: Vec::with_capacity(n),
            pid: Vec::with_capacity(n),
            tid: Vec::with_capacity(n),
            comm: Vec::with_capacity(n),
            start: Vec::with_capacity(n),
            end: Vec::with_capacity(n),
            wait: Vec::with_capacity(n),
            delay: Vec::with_capacity(n),
            preempted: Vec::with_capacity(n),
            state: Vec::with_capacity(n),
            workload: Vec::with_capacity(n),
            prio: Vec::with_capacity(n),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.cpu.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.cpu.is_empty()
    }

    pub(crate) fn push(&mut self, s: Slice) {
        self.cpu.push(s.cpu);
        self.pid.push(s.pid);
        self.tid.push(s.tid);
        self.comm.push(u128::from_le_bytes(s.comm));
        self.start.push(s.start as i64);
        self.end.push(s.end as i64);
        self.wait.push(s.wait as i64);
        self.delay.push(s.delay as i64);
        self.preempted.push(s.preempted);
        self.state.push(s.state);
        self.workload.push(s.workload);
        self.prio.push(s.prio);
    }

    /// Row `i`.
    pub(crate) fn get(&self, i: usize) -> Slice {
        Slice {
            cpu: self.cpu[i],
            pid: self.pid[i],
            tid: self.tid[i],
            comm: self.comm[i].to_le_bytes() as Comm,
            start: self.start[i] as u64,
            end: self.end[i] as u64,
            wait: self.wait[i] as u64,
            delay: self.delay[i] as u64,
            preempted: self.preempted[i],
            state: self.state[i],
            workload: self.workload[i],
            prio: self.prio[i],
        }
    }

    /// Each slice's time on the CPU ([`Slice::run`]).
    pub(crate) fn runs(&self) -> Vec<i64> {
        (self.end.iter().zip(&self.start))
            .map(|(&end, &start)| end.wrapping_sub(start))
            .collect()
    }

    /// Each slice's wait after a preemption ([`Slice::preempt_wait`]).
    pub(crate) fn preempt_waits(&self) -> Vec<i64> {
        (self.wait.iter().zip(&self.preempted))
            .map(|(&wait, &preempted)| if preempted { wait } else { 0 })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row comes back as it went in, and the derived columns agree with `Slice`'s own.
    #[test]
    fn rows_come_back_and_derived_columns_match_the_rows() {
        let slice = |i: u64, preempted: bool| Slice {
            cpu: i as i32,
            pid: 100 + i as i32,
            tid: 200 + i as i32,
            comm: *b"stress-ng-switch",
            // The first switch on a CPU: start == end, run 0; a time past i64::MAX wraps.
            start: [5, 1 << 63, 7][i as usize],
            end: [5, (1 << 63) + 9, 30][i as usize],
            wait: 3 + i,
            delay: 4 + i,
            preempted,
            state: [0, 1, 0x100][i as usize],
            workload: [None, Some(2), Some(0)][i as usize],
            prio: 120 - i as i32,
        };
        let rows = [slice(0, true), slice(1, false), slice(2, true)];
        let mut columns = SliceColumns::with_capacity(1);
        for s in &rows {
            columns.push(s.clone());
        }
        assert_eq!(columns.len(), 3);
        for (i, s) in rows.iter().enumerate() {
            assert_eq!(format!("{:?}", columns.get(i)), format!("{s:?}"));
        }
        let runs: Vec<i64> = rows.iter().map(|s| s.run() as i64).collect();
        assert_eq!(columns.runs(), runs);
        assert_eq!(columns.runs(), [0, 9, 23]);
        let waits: Vec<i64> = rows.iter().map(|s| s.preempt_wait() as i64).collect();
        assert_eq!(columns.preempt_waits(), waits);
        assert_eq!(columns.preempt_waits(), [3, 0, 5]);
        assert_eq!(columns.comm[0].to_le_bytes(), *b"stress-ng-switch");
    }
}
