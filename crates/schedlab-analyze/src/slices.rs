//! One run's slices column by column: the numbers each figure needs as primitive columns, and
//! the texts (comm, workload) as keys into one table of the run's texts.
//!
//! A whole-machine trace has about a million slices and a few hundred distinct texts, and the
//! figures do arithmetic on the numbers and only compare texts. Held as rows, each slice would
//! carry its strings and be decoded field by field through serde; held as columns it is read
//! from the Parquet columns it came from (only those, see [`schedlab_tables::read_columns`]), a
//! slice is its row number, and a text is compared by key. A run's slices are held whole while
//! its figures are computed, so each is held in as few bytes as its figures allow: the run time
//! and the delays in four (the `narrow` module), the task state as whether it was runnable.
//! [`Slice`] is the view the figures read a slice through.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::sync::Arc;

use crate::narrow::NarrowColumn;
use rayon::prelude::*;
use schedlab_tables::{
    ColumnBatch, RowGroup, SchedSliceRow, TableDir, TableError, Texts, row_groups,
};

/// The key of a missing text (a slice of no workload).
pub(crate) const NO_TEXT: u32 = u32::MAX;

/// The priority of a slice whose source has none.
const NO_PRIO: i32 = i32::MIN;

/// The columns of `sched_slices` the figures read.
const COLUMNS: [&str; 12] = [
    "run_id",
    "cpu",
    "pid",
    "tid",
    "comm",
    "start_ns",
    "end_ns",
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
    /// Every distinct task the slices ran: a thread keeps its identity and priority for most
    /// of its slices, so a slice holds only the key of its own.
    tasks: Vec<Task>,
    cpu: Vec<i32>,
    task: Vec<u32>,
    start_ns: Vec<i64>,
    /// `end_ns - start_ns`.
    run_ns: NarrowColumn,
    sched_delay_ns: NarrowColumn,
    preempt_wait_ns: NarrowColumn,
    /// Whether the task was switched out runnable (`prev_state` `R` or `R+`): the one thing
    /// the figures ask of the state.
    runnable: Vec<bool>,
}

/// A run without slices.
pub static NO_SLICES: Slices = Slices {
    texts: Vec::new(),
    tasks: Vec::new(),
    cpu: Vec::new(),
    task: Vec::new(),
    start_ns: Vec::new(),
    run_ns: NarrowColumn::new(),
    sched_delay_ns: NarrowColumn::new(),
    preempt_wait_ns: NarrowColumn::new(),
    runnable: Vec::new(),
};

/// Who ran a slice: the thread, its process, its comm and workload (keys of the store's
/// texts) and its priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Task {
    tid: i32,
    pid: i32,
    comm: u32,
    workload: u32,
    prio: i32,
}

/// The values of one slice, as a [`Slices`] holds them.
struct Values {
    cpu: i32,
    task: u32,
    start_ns: i64,
    end_ns: i64,
    sched_delay_ns: i64,
    preempt_wait_ns: i64,
    runnable: bool,
}

/// The slices of every run in `dir`, by run; with `every_slice`, all of them, otherwise only the
/// workloads' (see [`crate::Tables::load`]).
///
/// The table's row groups are read a few at a time on rayon's threads, each into stores of its
/// own, which are appended to the runs' in the table's order while the next few are read: the
/// order the figures rely on is kept, and no more than two waves of row groups' slices are held
/// twice.
pub fn read_slices(
    dir: &(impl TableDir + ?Sized),
    every_slice: bool,
) -> Result<BTreeMap<String, Slices>, TableError> {
    let groups = row_groups::<SchedSliceRow>(dir, &COLUMNS)?;
    let mut runs: BTreeMap<String, (Slices, Keys)> = BTreeMap::new();
    let mut read = Vec::new();
    for wave in groups.chunks(2 * rayon::current_num_threads()) {
        let (appended, next) = rayon::join(
            || append_parts(&mut runs, std::mem::take(&mut read)),
            || {
                (wave.par_iter())
                    .map(|group| read_group(group, every_slice))
                    .collect::<Vec<_>>()
            },
        );
        appended?;
        read = next;
    }
    append_parts(&mut runs, read)?;
    Ok((runs.into_iter())
        .map(|(run, (mut slices, _))| {
            slices.shrink_to_fit();
            (run, slices)
        })
        .collect())
}

/// The slices of one row group, by run, and how many rows its file has.
type Part = (usize, BTreeMap<String, (Slices, Keys)>);

/// Reads the slices of `group` into stores of its own.
fn read_group(group: &RowGroup, every_slice: bool) -> Result<Part, TableError> {
    let mut part: BTreeMap<String, (Slices, Keys)> = BTreeMap::new();
    group.read(|batch| {
        let columns = Columns::of(batch)?;
        for (run, rows) in run_ranges(batch)? {
            let (slices, keys) = part.entry(run.to_owned()).or_default();
            if slices.is_empty() {
                slices.reserve(group.rows());
            }
            slices.extend(keys, &columns, rows, every_slice);
        }
        Ok(())
    })?;
    Ok((group.file_rows(), part))
}

/// Appends the slices of `parts`, in order, to the runs'.
fn append_parts(
    runs: &mut BTreeMap<String, (Slices, Keys)>,
    parts: Vec<Result<Part, TableError>>,
) -> Result<(), TableError> {
    for part in parts {
        let (file_rows, part) = part?;
        for (run, (part, _)) in part {
            let (slices, keys) = runs.entry(run).or_default();
            // Room for every row of the file, also where only the workloads' are kept: pages
            // never written are never resident, and growing by doubling would copy the columns
            // and hold both copies for a moment.
            if slices.is_empty() {
                slices.reserve(file_rows);
            }
            slices.append(keys, &part);
        }
    }
    Ok(())
}

/// The rows of `of` that `group_of` places in one of `groups` groups, group after group, and
/// where each group's rows end. A group's rows come in time order: they are placed in table
/// order, which is time order in every source (each slice ends at a switch and the parsers
/// write them as they end), and only a group whose rows are not is sorted (stably, by start).
/// `group_of` is asked twice a slice, so it should be an index, not a search of the trace.
pub(crate) fn rows_by_group(
    of: &Slices,
    groups: usize,
    group_of: impl Fn(Slice<'_>) -> Option<usize>,
) -> (Vec<u32>, Vec<u32>) {
    let mut ends = vec![0u32; groups];
    for group in of.iter().filter_map(&group_of) {
        ends[group] += 1;
    }
    let mut next = Vec::with_capacity(groups);
    let mut total = 0;
    for end in &mut ends {
        next.push(total);
        total += *end;
        *end = total;
    }
    let mut rows = vec![0u32; total as usize];
    for s in of.iter() {
        if let Some(group) = group_of(s) {
            rows[next[group] as usize] =
                u32::try_from(s.row()).expect("fewer slices than u32 rows");
            next[group] += 1;
        }
    }
    let start_of = |row: &u32| of.get(*row as usize).start_ns();
    let mut start = 0;
    for &end in &ends {
        let own = &mut rows[start..end as usize];
        if !own.is_sorted_by_key(start_of) {
            own.sort_by_key(start_of);
        }
        start = end as usize;
    }
    (rows, ends)
}

/// The key of each text and task of a run's [`Slices`], while they are read.
struct Keys {
    texts: HashMap<Arc<str>, u32>,
    /// Looked up for every slice, so with a hash made for speed.
    tasks: foldhash::HashMap<Task, u32>,
    /// The task last seen of a thread and its key, by the thread's tid modulo [`RECENT`]: a
    /// thread keeps its task over most of its slices, and comparing is cheaper than hashing.
    recent: Vec<Option<(Task, u32)>>,
}

/// How many threads' last tasks [`Keys`] keeps.
const RECENT: usize = 256;

impl Default for Keys {
    fn default() -> Keys {
        Keys {
            texts: HashMap::new(),
            tasks: foldhash::HashMap::default(),
            recent: vec![None; RECENT],
        }
    }
}

impl Keys {
    /// The key of `text` in `texts`, where it is added if it is not there yet.
    fn key_of(&mut self, texts: &mut Vec<Arc<str>>, text: &str) -> u32 {
        if let Some(&key) = self.texts.get(text) {
            return key;
        }
        let key = u32::try_from(texts.len()).expect("fewer texts than u32 keys");
        let text: Arc<str> = Arc::from(text);
        texts.push(text.clone());
        self.texts.insert(text, key);
        key
    }

    /// The key of `task` in `tasks`, where it is added if it is not there yet.
    #[inline]
    fn task_key(&mut self, tasks: &mut Vec<Task>, task: Task) -> u32 {
        let recent = &mut self.recent[task.tid.unsigned_abs() as usize % RECENT];
        if let Some((known, key)) = *recent
            && known == task
        {
            return key;
        }
        let key = *self.tasks.entry(task).or_insert_with(|| {
            tasks.push(task);
            u32::try_from(tasks.len() - 1).expect("fewer tasks than u32 keys")
        });
        *recent = Some((task, key));
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
    // Compared by dictionary key, row by row, and by name only where the key changes: a
    // batch's dictionary may name a run twice.
    let mut ranges: Vec<(&str, Range<usize>)> = Vec::new();
    let mut last_key = None;
    for row in 0..batch.rows() {
        let key = runs.key(row);
        if last_key != Some(key) {
            last_key = Some(key);
            let name = key.map_or("", |k| names[k]);
            if ranges.last().is_none_or(|(last, _)| *last != name) {
                ranges.push((name, row..row));
            }
        }
        ranges.last_mut().expect("a range is open").1.end = row + 1;
    }
    Ok(ranges)
}

/// `rows`, in increasing order, as runs of consecutive rows.
fn consecutive(rows: impl Iterator<Item = usize>) -> Vec<Range<usize>> {
    let mut runs: Vec<Range<usize>> = Vec::new();
    for row in rows {
        match runs.last_mut() {
            Some(run) if run.end == row => run.end += 1,
            _ => runs.push(row..row + 1),
        }
    }
    runs
}

/// The columns of one batch of `sched_slices`.
struct Columns<'b> {
    cpu: schedlab_tables::Numbers<'b, i32>,
    pid: schedlab_tables::Numbers<'b, i32>,
    tid: schedlab_tables::Numbers<'b, i32>,
    start_ns: schedlab_tables::Numbers<'b, i64>,
    end_ns: schedlab_tables::Numbers<'b, i64>,
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

    /// How many distinct tasks ran the slices (see [`Slice::task_key`]).
    pub(crate) fn task_count(&self) -> usize {
        self.tasks.len()
    }

    /// The thread of task `key`.
    pub(crate) fn task_tid(&self, key: u32) -> i32 {
        self.tasks[key as usize].tid
    }

    /// The workload of task `key`, [`NO_TEXT`] for none.
    pub(crate) fn task_workload(&self, key: u32) -> u32 {
        self.tasks[key as usize].workload
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
    /// workload. The rows kept are found first, then each column is copied for them in a loop
    /// of its own.
    fn extend(
        &mut self,
        keys: &mut Keys,
        columns: &Columns<'_>,
        rows: Range<usize>,
        every_slice: bool,
    ) {
        let comm = keys.keys_of(&mut self.texts, &columns.comm);
        let workload = keys.keys_of(&mut self.texts, &columns.workload);
        let runnable: Vec<bool> = (columns.prev_state.dictionary())
            .map(|state| matches!(state, "R" | "R+"))
            .collect();
        let text =
            |keys: &[u32], texts: &Texts<'_>, row| texts.key(row).map_or(NO_TEXT, |k| keys[k]);
        // The rows kept, as runs of consecutive rows: the numbers are copied a run at a time,
        // and a workload's trace keeps nearly every row.
        let kept: Vec<Range<usize>> = match every_slice {
            true => vec![rows],
            false => consecutive(rows.filter(|&row| columns.workload.key(row).is_some())),
        };
        for rows in kept {
            let tasks = &mut self.tasks;
            self.task.extend(rows.clone().map(|row| {
                let task = Task {
                    tid: columns.tid.value(row),
                    pid: columns.pid.value(row),
                    comm: text(&comm, &columns.comm, row),
                    workload: text(&workload, &columns.workload, row),
                    prio: columns.prio.get(row).unwrap_or(NO_PRIO),
                };
                keys.task_key(tasks, task)
            }));
            self.cpu.extend_from_slice(columns.cpu.values(rows.clone()));
            let start_ns = columns.start_ns.values(rows.clone());
            self.start_ns.extend_from_slice(start_ns);
            (self.run_ns).extend(
                (columns.end_ns.values(rows.clone()).iter())
                    .zip(start_ns)
                    .map(|(end, start)| end.wrapping_sub(*start)),
            );
            (self.sched_delay_ns)
                .extend(columns.sched_delay_ns.values(rows.clone()).iter().copied());
            (self.preempt_wait_ns)
                .extend(columns.preempt_wait_ns.values(rows.clone()).iter().copied());
            (self.runnable)
                .extend(rows.map(|row| columns.prev_state.key(row).is_some_and(|k| runnable[k])));
        }
    }

    /// Appends the slices of `part`, another store, their texts and tasks keyed as this one's.
    fn append(&mut self, keys: &mut Keys, part: &Slices) {
        let texts: Vec<u32> = (part.texts.iter())
            .map(|text| keys.key_of(&mut self.texts, text))
            .collect();
        let text = |key: u32| match key {
            NO_TEXT => NO_TEXT,
            key => texts[key as usize],
        };
        let tasks: Vec<u32> = (part.tasks.iter())
            .map(|task| {
                let task = Task {
                    comm: text(task.comm),
                    workload: text(task.workload),
                    ..*task
                };
                keys.task_key(&mut self.tasks, task)
            })
            .collect();
        self.cpu.extend_from_slice(&part.cpu);
        (self.task).extend(part.task.iter().map(|&task| tasks[task as usize]));
        self.start_ns.extend_from_slice(&part.start_ns);
        self.run_ns.append(&part.run_ns);
        self.sched_delay_ns.append(&part.sched_delay_ns);
        self.preempt_wait_ns.append(&part.preempt_wait_ns);
        self.runnable.extend_from_slice(&part.runnable);
    }

    fn push(&mut self, v: Values) {
        self.cpu.push(v.cpu);
        self.task.push(v.task);
        self.start_ns.push(v.start_ns);
        self.run_ns.push(v.end_ns.wrapping_sub(v.start_ns));
        self.sched_delay_ns.push(v.sched_delay_ns);
        self.preempt_wait_ns.push(v.preempt_wait_ns);
        self.runnable.push(v.runnable);
    }

    fn reserve(&mut self, rows: usize) {
        self.cpu.reserve(rows);
        self.task.reserve(rows);
        self.start_ns.reserve(rows);
        self.run_ns.reserve(rows);
        self.sched_delay_ns.reserve(rows);
        self.preempt_wait_ns.reserve(rows);
        self.runnable.reserve(rows);
    }

    fn shrink_to_fit(&mut self) {
        self.tasks.shrink_to_fit();
        self.cpu.shrink_to_fit();
        self.task.shrink_to_fit();
        self.start_ns.shrink_to_fit();
        self.run_ns.shrink_to_fit();
        self.sched_delay_ns.shrink_to_fit();
        self.preempt_wait_ns.shrink_to_fit();
        self.runnable.shrink_to_fit();
    }

    /// The parts of `slices` (all of this store) inside `[start, end]`, cut at its edges. A
    /// slice that began before `start` loses its scheduling delay, which happened outside.
    pub fn clipped<'s>(
        &self,
        slices: impl Iterator<Item = Slice<'s>>,
        (start, end): (i64, i64),
    ) -> Slices {
        let mut out = Slices {
            texts: self.texts.clone(),
            tasks: self.tasks.clone(),
            ..Slices::default()
        };
        for s in slices.filter(|s| s.end_ns() > start && s.start_ns() < end) {
            debug_assert!(std::ptr::eq(s.of, self), "a slice of another run");
            let cut = s.start_ns() < start;
            out.push(Values {
                cpu: s.cpu(),
                task: self.task[s.row],
                start_ns: s.start_ns().max(start),
                end_ns: s.end_ns().min(end),
                sched_delay_ns: if cut { 0 } else { s.sched_delay_ns() },
                preempt_wait_ns: if cut { 0 } else { s.preempt_wait_ns() },
                runnable: s.switched_out_runnable(),
            });
        }
        out
    }

    /// The slices of `rows`, for tests that write them as rows.
    #[cfg(test)]
    pub fn from_rows(rows: &[SchedSliceRow]) -> Slices {
        let (mut out, mut keys) = (Slices::default(), Keys::default());
        for r in rows {
            let task = Task {
                tid: r.tid,
                pid: r.pid,
                comm: keys.key_of(&mut out.texts, &r.comm),
                workload: (r.workload.as_deref())
                    .map_or(NO_TEXT, |w| keys.key_of(&mut out.texts, w)),
                prio: r.prio.unwrap_or(NO_PRIO),
            };
            let task = keys.task_key(&mut out.tasks, task);
            out.push(Values {
                cpu: r.cpu,
                task,
                start_ns: r.start_ns,
                end_ns: r.end_ns,
                sched_delay_ns: r.sched_delay_ns,
                preempt_wait_ns: r.preempt_wait_ns,
                runnable: matches!(&*r.prev_state, "R" | "R+"),
            });
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

    /// Who ran it.
    fn task(self) -> &'a Task {
        &self.of.tasks[self.task_key() as usize]
    }

    /// The key of who ran it (its thread, comm, workload and priority) among its store's
    /// `task_count()` tasks: slices with one key have all of those in common.
    pub(crate) fn task_key(self) -> u32 {
        self.of.task[self.row]
    }

    pub fn pid(self) -> i32 {
        self.task().pid
    }

    pub fn tid(self) -> i32 {
        self.task().tid
    }

    #[inline]
    pub fn start_ns(self) -> i64 {
        self.of.start_ns[self.row]
    }

    #[inline]
    pub fn end_ns(self) -> i64 {
        self.start_ns().wrapping_add(self.run_ns())
    }

    /// Time on the CPU: `end_ns - start_ns`, as every parser writes the table's `run_ns`.
    #[inline]
    pub fn run_ns(self) -> i64 {
        self.of.run_ns.get(self.row)
    }

    /// Wakeup to switch-in (see [`SchedSliceRow::sched_delay_ns`]).
    pub fn sched_delay_ns(self) -> i64 {
        self.of.sched_delay_ns.get(self.row)
    }

    /// Runnable after a preemption (see [`SchedSliceRow::preempt_wait_ns`]).
    pub fn preempt_wait_ns(self) -> i64 {
        self.of.preempt_wait_ns.get(self.row)
    }

    /// The task's kernel priority, where the source has it.
    pub fn prio(self) -> Option<i32> {
        Some(self.task().prio).filter(|&p| p != NO_PRIO)
    }

    pub fn comm(self) -> &'a Arc<str> {
        &self.of.texts[self.comm_key() as usize]
    }

    /// Whether the task was switched out runnable (`prev_state` `R` or `R+`): preempted, so it
    /// waited for a CPU afterwards instead of sleeping.
    pub fn switched_out_runnable(self) -> bool {
        self.of.runnable[self.row]
    }

    /// The key of its comm among its store's [`texts`](Slices::texts).
    pub fn comm_key(self) -> u32 {
        self.task().comm
    }

    pub fn workload(self) -> Option<&'a str> {
        match self.workload_key() {
            NO_TEXT => None,
            key => Some(&self.of.texts[key as usize]),
        }
    }

    /// The key of its workload among its store's [`texts`](Slices::texts), [`NO_TEXT`] for none.
    pub fn workload_key(self) -> u32 {
        self.task().workload
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::from_sched::tests::slice;

    /// What a test compares of a slice: everything the store keeps.
    fn kept(s: Slice<'_>) -> String {
        format!(
            "{:?}",
            (
                (s.cpu(), s.pid(), s.tid(), s.start_ns(), s.end_ns()),
                (
                    s.sched_delay_ns(),
                    s.preempt_wait_ns(),
                    s.switched_out_runnable()
                ),
                (s.workload(), s.prio(), s.comm()),
            )
        )
    }

    #[test]
    fn a_table_of_many_row_groups_reads_back_in_its_order_run_by_run() {
        // Two runs whose rows alternate in stretches, over many row groups, with threads of
        // no workload among them (dropped without `every_slice`).
        // Numbers that do not compress, so that the row groups are many (cut at about 1 MiB).
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut noise = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as i64
        };
        let rows: Vec<SchedSliceRow> = (0..400_000i64)
            .map(|i| {
                let start = i * (1 << 25) + noise();
                let mut row = slice((i % 7) as i32, (i % 2) as i32, start, start + noise());
                row.run_id = ["a", "b"][(i / 30_000 % 2) as usize].into();
                row.comm = format!("comm{}", i % 5).into();
                row.sched_delay_ns = noise() * (1 << 10);
                row.prev_state = ["R", "S", "R+"][(i % 3) as usize].into();
                row.prio = (i % 11 != 0).then_some(100 + (i % 3) as i32);
                if i % 7 == 3 {
                    row.workload = None;
                }
                row
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = schedlab_tables::write_table(dir.path(), &rows).unwrap();
        let groups = row_groups::<SchedSliceRow>(dir.path(), &COLUMNS).unwrap();
        assert!(
            groups.len() > 2 * rayon::current_num_threads(),
            "{} row groups in {path:?}",
            groups.len()
        );
        for every_slice in [true, false] {
            let runs = read_slices(dir.path(), every_slice).unwrap();
            assert_eq!(runs.keys().collect::<Vec<_>>(), ["a", "b"]);
            for (run, read) in &runs {
                let own: Vec<SchedSliceRow> = (rows.iter())
                    .filter(|r| &*r.run_id == run && (every_slice || r.workload.is_some()))
                    .cloned()
                    .collect();
                let expected = Slices::from_rows(&own);
                assert_eq!(read.len(), expected.len(), "run {run}");
                assert!(
                    (read.iter().zip(expected.iter())).all(|(r, e)| kept(r) == kept(e)),
                    "run {run}, every_slice {every_slice}"
                );
            }
        }
    }
}
