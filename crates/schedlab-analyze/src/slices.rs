//! One run's slices column by column: the numbers each figure needs as primitive columns, and
//! the texts (comm, workload, task state) as keys into one table of the run's texts.
//!
//! A whole-machine trace has about a million slices and a few hundred distinct texts, and the
//! figures do arithmetic on the numbers and only compare texts. Held as rows, each slice would
//! carry its strings and be decoded field by field through serde; held as columns it is read
//! from the Parquet columns it came from (only those, see [`schedlab_tables::read_columns`]), a
//! slice is its row number, and a text is compared by key. [`Slice`] is the view the figures
//! read a slice through.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::sync::Arc;

use schedlab_tables::{ColumnBatch, SchedSliceRow, TableDir, TableError, Texts, read_columns};

/// The key of a missing text (a slice of no workload).
pub(crate) const NO_TEXT: u32 = u32::MAX;

/// The priority of a slice whose source has none.
const NO_PRIO: i32 = i32::MIN;

/// The columns of `sched_slices` the figures read.
const COLUMNS: [&str; 13] = [
    "run_id",
    "cpu",
    "pid",
    "tid",
    "comm",
    "start_ns",
    "end_ns",
    "run_ns",
    "sched_delay_ns",
    "preempt_wait_ns",
    "prev_state",
    "workload",
    "prio",
];

/// One run's slices, in the order the table has them.
#[derive(Debug, Default)]
pub struct Slices {
    texts: Vec<Arc<str>>,
    cpu: Vec<i32>,
    pid: Vec<i32>,
    tid: Vec<i32>,
    start_ns: Vec<i64>,
    end_ns: Vec<i64>,
    run_ns: Vec<i64>,
    sched_delay_ns: Vec<i64>,
    preempt_wait_ns: Vec<i64>,
    prio: Vec<i32>,
    comm: Vec<u32>,
    prev_state: Vec<u32>,
    workload: Vec<u32>,
}

/// A run without slices.
pub static NO_SLICES: Slices = Slices {
    texts: Vec::new(),
    cpu: Vec::new(),
    pid: Vec::new(),
    tid: Vec::new(),
    start_ns: Vec::new(),
    end_ns: Vec::new(),
    run_ns: Vec::new(),
    sched_delay_ns: Vec::new(),
    preempt_wait_ns: Vec::new(),
    prio: Vec::new(),
    comm: Vec::new(),
    prev_state: Vec::new(),
    workload: Vec::new(),
};

/// The slices of every run in `dir`, by run; with `every_slice`, all of them, otherwise only the
/// workloads' (see [`crate::Tables::load`]).
pub fn read_slices(
    dir: &(impl TableDir + ?Sized),
    every_slice: bool,
) -> Result<BTreeMap<String, Slices>, TableError> {
    let mut runs: BTreeMap<String, (Slices, TextKeys)> = BTreeMap::new();
    read_columns::<SchedSliceRow>(dir, &COLUMNS, |batch| {
        let columns = Columns::of(batch)?;
        for (run, rows) in run_ranges(batch)? {
            let (slices, keys) = runs.entry(run.to_owned()).or_default();
            if every_slice && slices.is_empty() {
                slices.reserve(batch.file_rows());
            }
            slices.extend(keys, &columns, rows, every_slice);
        }
        Ok(())
    })?;
    Ok((runs.into_iter())
        .map(|(run, (mut slices, _))| {
            slices.shrink_to_fit();
            (run, slices)
        })
        .collect())
}

/// The key of each text of a run's [`Slices`], while they are read.
#[derive(Default)]
struct TextKeys(HashMap<Arc<str>, u32>);

impl TextKeys {
    /// The key of `text` in `texts`, where it is added if it is not there yet.
    fn key_of(&mut self, texts: &mut Vec<Arc<str>>, text: &str) -> u32 {
        if let Some(&key) = self.0.get(text) {
            return key;
        }
        let key = u32::try_from(texts.len()).expect("fewer texts than u32 keys");
        let text: Arc<str> = Arc::from(text);
        texts.push(text.clone());
        self.0.insert(text, key);
        key
    }

    /// The key in `texts` of each text of a batch's dictionary.
    fn keys_of(&mut self, texts: &mut Vec<Arc<str>>, column: &Texts<'_>) -> Vec<u32> {
        column
            .dictionary()
            .map(|text| self.key_of(texts, text))
            .collect()
    }
}

/// The rows of `batch` grouped by its `run_id` column: each run's name and a range of
/// consecutive rows of it (a run's rows come together, so there are few ranges).
pub(crate) fn run_ranges<'b>(
    batch: &'b ColumnBatch<'_>,
) -> Result<Vec<(&'b str, Range<usize>)>, TableError> {
    let runs = batch.texts("run_id")?;
    let names: Vec<&str> = runs.dictionary().collect();
    let mut ranges: Vec<(&str, Range<usize>)> = Vec::new();
    for row in 0..batch.rows() {
        let name = runs.key(row).map_or("", |k| names[k]);
        match ranges.last_mut() {
            Some((last, rows)) if *last == name => rows.end = row + 1,
            _ => ranges.push((name, row..row + 1)),
        }
    }
    Ok(ranges)
}

/// The columns of one batch of `sched_slices`.
struct Columns<'b> {
    cpu: schedlab_tables::Numbers<'b, i32>,
    pid: schedlab_tables::Numbers<'b, i32>,
    tid: schedlab_tables::Numbers<'b, i32>,
    start_ns: schedlab_tables::Numbers<'b, i64>,
    end_ns: schedlab_tables::Numbers<'b, i64>,
    run_ns: schedlab_tables::Numbers<'b, i64>,
    sched_delay_ns: schedlab_tables::Numbers<'b, i64>,
    preempt_wait_ns: schedlab_tables::Numbers<'b, i64>,
    prio: schedlab_tables::Numbers<'b, i32>,
    comm: Texts<'b>,
    prev_state: Texts<'b>,
    workload: Texts<'b>,
}

impl<'b> Columns<'b> {
    fn of(batch: &'b ColumnBatch<'_>) -> Result<Columns<'b>, TableError> {
        Ok(Columns {
            cpu: batch.i32s("cpu")?,
            pid: batch.i32s("pid")?,
            tid: batch.i32s("tid")?,
            start_ns: batch.i64s("start_ns")?,
            end_ns: batch.i64s("end_ns")?,
            run_ns: batch.i64s("run_ns")?,
            sched_delay_ns: batch.i64s("sched_delay_ns")?,
            preempt_wait_ns: batch.i64s("preempt_wait_ns")?,
            prio: batch.i32s("prio")?,
            comm: batch.texts("comm")?,
            prev_state: batch.texts("prev_state")?,
            workload: batch.texts("workload")?,
        })
    }
}

impl Slices {
    /// How many slices there are.
    pub fn len(&self) -> usize {
        self.cpu.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cpu.is_empty()
    }

    /// The run's texts: a slice's text keys index them.
    pub fn texts(&self) -> &[Arc<str>] {
        &self.texts
    }

    /// Slice `row`.
    pub fn get(&self, row: usize) -> Slice<'_> {
        Slice { of: self, row }
    }

    /// Every slice, in order.
    pub fn iter(&self) -> impl Iterator<Item = Slice<'_>> + '_ {
        (0..self.len()).map(|row| self.get(row))
    }

    /// Appends rows `rows` of a batch's `columns`; without `every_slice` only those of a
    /// workload.
    fn extend(
        &mut self,
        keys: &mut TextKeys,
        columns: &Columns<'_>,
        rows: Range<usize>,
        every_slice: bool,
    ) {
        let comm = keys.keys_of(&mut self.texts, &columns.comm);
        let prev_state = keys.keys_of(&mut self.texts, &columns.prev_state);
        let workload = keys.keys_of(&mut self.texts, &columns.workload);
        let text =
            |keys: &[u32], texts: &Texts<'_>, row| texts.key(row).map_or(NO_TEXT, |k| keys[k]);
        for row in rows {
            let of_workload = text(&workload, &columns.workload, row);
            if !every_slice && of_workload == NO_TEXT {
                continue;
            }
            self.cpu.push(columns.cpu.value(row));
            self.pid.push(columns.pid.value(row));
            self.tid.push(columns.tid.value(row));
            self.start_ns.push(columns.start_ns.value(row));
            self.end_ns.push(columns.end_ns.value(row));
            self.run_ns.push(columns.run_ns.value(row));
            self.sched_delay_ns.push(columns.sched_delay_ns.value(row));
            self.preempt_wait_ns
                .push(columns.preempt_wait_ns.value(row));
            self.prio.push(columns.prio.get(row).unwrap_or(NO_PRIO));
            self.comm.push(text(&comm, &columns.comm, row));
            self.prev_state
                .push(text(&prev_state, &columns.prev_state, row));
            self.workload.push(of_workload);
        }
    }

    fn reserve(&mut self, rows: usize) {
        self.cpu.reserve(rows);
        self.pid.reserve(rows);
        self.tid.reserve(rows);
        self.start_ns.reserve(rows);
        self.end_ns.reserve(rows);
        self.run_ns.reserve(rows);
        self.sched_delay_ns.reserve(rows);
        self.preempt_wait_ns.reserve(rows);
        self.prio.reserve(rows);
        self.comm.reserve(rows);
        self.prev_state.reserve(rows);
        self.workload.reserve(rows);
    }

    fn shrink_to_fit(&mut self) {
        self.cpu.shrink_to_fit();
        self.pid.shrink_to_fit();
        self.tid.shrink_to_fit();
        self.start_ns.shrink_to_fit();
        self.end_ns.shrink_to_fit();
        self.run_ns.shrink_to_fit();
        self.sched_delay_ns.shrink_to_fit();
        self.preempt_wait_ns.shrink_to_fit();
        self.prio.shrink_to_fit();
        self.comm.shrink_to_fit();
        self.prev_state.shrink_to_fit();
        self.workload.shrink_to_fit();
    }

    /// A copy of slice `s` (of a store with the same texts) appended.
    fn push_copy(&mut self, s: Slice<'_>) {
        let (of, row) = (s.of, s.row);
        self.cpu.push(of.cpu[row]);
        self.pid.push(of.pid[row]);
        self.tid.push(of.tid[row]);
        self.start_ns.push(of.start_ns[row]);
        self.end_ns.push(of.end_ns[row]);
        self.run_ns.push(of.run_ns[row]);
        self.sched_delay_ns.push(of.sched_delay_ns[row]);
        self.preempt_wait_ns.push(of.preempt_wait_ns[row]);
        self.prio.push(of.prio[row]);
        self.comm.push(of.comm[row]);
        self.prev_state.push(of.prev_state[row]);
        self.workload.push(of.workload[row]);
    }

    /// The parts of `slices` (all of this store) inside `[start, end]`, cut at its edges. A
    /// slice that began before `start` loses its scheduling delay, which happened outside.
    pub fn clipped(&self, slices: &[Slice<'_>], (start, end): (i64, i64)) -> Slices {
        let mut out = Slices {
            texts: self.texts.clone(),
            ..Slices::default()
        };
        for &s in slices
            .iter()
            .filter(|s| s.end_ns() > start && s.start_ns() < end)
        {
            debug_assert!(std::ptr::eq(s.of, self), "a slice of another run");
            out.push_copy(s);
            let last = out.len() - 1;
            if out.start_ns[last] < start {
                out.start_ns[last] = start;
                out.sched_delay_ns[last] = 0;
                out.preempt_wait_ns[last] = 0;
            }
            out.end_ns[last] = out.end_ns[last].min(end);
            out.run_ns[last] = out.end_ns[last] - out.start_ns[last];
        }
        out
    }

    /// The slices of `rows`, for tests that write them as rows.
    #[cfg(test)]
    pub fn from_rows(rows: &[SchedSliceRow]) -> Slices {
        let (mut out, mut keys) = (Slices::default(), TextKeys::default());
        for r in rows {
            let comm = keys.key_of(&mut out.texts, &r.comm);
            let prev_state = keys.key_of(&mut out.texts, &r.prev_state);
            let workload =
                (r.workload.as_deref()).map_or(NO_TEXT, |w| keys.key_of(&mut out.texts, w));
            out.cpu.push(r.cpu);
            out.pid.push(r.pid);
            out.tid.push(r.tid);
            out.start_ns.push(r.start_ns);
            out.end_ns.push(r.end_ns);
            out.run_ns.push(r.run_ns);
            out.sched_delay_ns.push(r.sched_delay_ns);
            out.preempt_wait_ns.push(r.preempt_wait_ns);
            out.prio.push(r.prio.unwrap_or(NO_PRIO));
            out.comm.push(comm);
            out.prev_state.push(prev_state);
            out.workload.push(workload);
        }
        out
    }
}

/// One slice of a [`Slices`]: its row there.
#[derive(Clone, Copy)]
pub struct Slice<'a> {
    of: &'a Slices,
    row: usize,
}

impl std::fmt::Debug for Slice<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slice")
            .field("cpu", &self.cpu())
            .field("tid", &self.tid())
            .field("start_ns", &self.start_ns())
            .field("end_ns", &self.end_ns())
            .finish_non_exhaustive()
    }
}

impl<'a> Slice<'a> {
    /// Its row in its store.
    pub fn row(self) -> usize {
        self.row
    }

    pub fn cpu(self) -> i32 {
        self.of.cpu[self.row]
    }

    pub fn pid(self) -> i32 {
        self.of.pid[self.row]
    }

    pub fn tid(self) -> i32 {
        self.of.tid[self.row]
    }

    pub fn start_ns(self) -> i64 {
        self.of.start_ns[self.row]
    }

    pub fn end_ns(self) -> i64 {
        self.of.end_ns[self.row]
    }

    pub fn run_ns(self) -> i64 {
        self.of.run_ns[self.row]
    }

    /// Wakeup to switch-in (see [`SchedSliceRow::sched_delay_ns`]).
    pub fn sched_delay_ns(self) -> i64 {
        self.of.sched_delay_ns[self.row]
    }

    /// Runnable after a preemption (see [`SchedSliceRow::preempt_wait_ns`]).
    pub fn preempt_wait_ns(self) -> i64 {
        self.of.preempt_wait_ns[self.row]
    }

    /// The task's kernel priority, where the source has it.
    pub fn prio(self) -> Option<i32> {
        Some(self.of.prio[self.row]).filter(|&p| p != NO_PRIO)
    }

    pub fn comm(self) -> &'a Arc<str> {
        &self.of.texts[self.of.comm[self.row] as usize]
    }

    /// The task state at switch-out, as perf prints it.
    pub fn prev_state(self) -> &'a str {
        &self.of.texts[self.of.prev_state[self.row] as usize]
    }

    /// The key of its comm among its store's [`texts`](Slices::texts).
    pub fn comm_key(self) -> u32 {
        self.of.comm[self.row]
    }

    pub fn workload(self) -> Option<&'a str> {
        match self.workload_key() {
            NO_TEXT => None,
            key => Some(&self.of.texts[key as usize]),
        }
    }

    /// The key of its workload among its store's [`texts`](Slices::texts), [`NO_TEXT`] for none.
    pub fn workload_key(self) -> u32 {
        self.of.workload[self.row]
    }

    /// Whether it is the idle task's.
    pub fn is_idle(self) -> bool {
        self.tid() == 0
    }

    /// How long it ran inside `[start, end]` (0 when it lies outside).
    pub fn overlap_ns(self, (start, end): (i64, i64)) -> i64 {
        (self.end_ns().min(end) - self.start_ns().max(start)).max(0)
    }
}
