//! The reader's rows in compact form, turned into Arrow arrays wherever they are encoded.
//!
//! [`stream_sched`](crate::stream_sched) hands over rows with shared strings (`Arc<str>`):
//! convenient, but every row clones and drops four reference counts, and when the rows are
//! encoded on another thread those counts bounce between the cores' caches (a third more CPU
//! for `schedlab parse perf-sched`). A [`CompactBatch`] holds the state machine's own rows
//! instead (plain numbers, command names as 16 bytes, workloads and states as small codes), so
//! it crosses threads for free; each table's part builds its Arrow batch on the encoder's
//! thread, writing every string straight into the array. The batches equal those of the row
//! path: the tests write both and compare.

use std::borrow::Cow;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{ArrowError, SchemaRef};

use crate::intern::Names;
use crate::le::Comm;
use crate::timehist::{Migration, Output, Slice, Wakeup};

/// One block's `sched_slices`, `migrations` and `wakeups` in the reader's compact form.
pub struct CompactBatch {
    pub sched_slices: CompactSlices,
    pub migrations: CompactMigrations,
    pub wakeups: CompactWakeups,
}

impl CompactBatch {
    pub(crate) fn new(out: Output, names: &Arc<Names>) -> Self {
        CompactBatch {
            sched_slices: CompactSlices(out.slices, names.clone()),
            migrations: CompactMigrations(out.migrations, names.clone()),
            wakeups: CompactWakeups(out.wakeups, names.clone()),
        }
    }
}

/// Rows of `sched_slices`; see [`CompactBatch`].
pub struct CompactSlices(Vec<Slice>, Arc<Names>);
/// Rows of `migrations`; see [`CompactBatch`].
pub struct CompactMigrations(Vec<Migration>, Arc<Names>);
/// Rows of `wakeups`; see [`CompactBatch`].
pub struct CompactWakeups(Vec<Wakeup>, Arc<Names>);

impl CompactSlices {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The rows as a batch of `schema` (the `sched_slices` table's).
    pub fn record_batch(&self, schema: SchemaRef) -> Result<RecordBatch, ArrowError> {
        let (rows, names) = (&self.0, &self.1);
        let states = StateNames::of(names, rows);
        let columns: Vec<ArrayRef> = vec![
            run_ids(names, rows.len()),
            i32s(rows, |r| r.cpu),
            i32s(rows, |r| r.pid),
            i32s(rows, |r| r.tid),
            comms(rows, |r| &r.comm),
            i64s(rows, |r| r.start),
            i64s(rows, |r| r.end),
            i64s(rows, |r| r.run),
            i64s(rows, |r| r.wait),
            i64s(rows, |r| r.delay),
            i64s(rows, |r| r.preempt_wait),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| states.get(r.state)),
            )),
            workloads(names, rows, |r| r.workload),
        ];
        RecordBatch::try_new(schema, columns)
    }
}

impl CompactMigrations {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The rows as a batch of `schema` (the `migrations` table's).
    pub fn record_batch(&self, schema: SchemaRef) -> Result<RecordBatch, ArrowError> {
        let (rows, names) = (&self.0, &self.1);
        let columns: Vec<ArrayRef> = vec![
            run_ids(names, rows.len()),
            i64s(rows, |r| r.time),
            i32s(rows, |r| r.pid),
            i32s(rows, |r| r.tid),
            comms(rows, |r| &r.comm),
            i32s(rows, |r| r.from),
            i32s(rows, |r| r.to),
            workloads(names, rows, |r| r.workload),
        ];
        RecordBatch::try_new(schema, columns)
    }
}

impl CompactWakeups {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The rows as a batch of `schema` (the `wakeups` table's).
    pub fn record_batch(&self, schema: SchemaRef) -> Result<RecordBatch, ArrowError> {
        let (rows, names) = (&self.0, &self.1);
        let wakers = rows.iter().map(|r| (r.waker >= 0).then_some(r.waker));
        let columns: Vec<ArrayRef> = vec![
            run_ids(names, rows.len()),
            i64s(rows, |r| r.time),
            i32s(rows, |r| r.pid),
            i32s(rows, |r| r.tid),
            comms(rows, |r| &r.comm),
            i32s(rows, |r| r.target_cpu),
            Arc::new(wakers.collect::<Int32Array>()),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| r.kind.as_str()),
            )),
            workloads(names, rows, |r| r.workload),
        ];
        RecordBatch::try_new(schema, columns)
    }
}

fn run_ids(names: &Names, n: usize) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
        &*names.run_id,
        n,
    )))
}

fn i32s<R>(rows: &[R], value: impl Fn(&R) -> i32) -> ArrayRef {
    Arc::new(Int32Array::from_iter_values(rows.iter().map(value)))
}

/// Times and durations: u64 nanoseconds in the trace, i64 in the tables.
fn i64s<R>(rows: &[R], value: impl Fn(&R) -> u64) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(
        rows.iter().map(|r| value(r) as i64),
    ))
}

/// Command names up to their first NUL, invalid UTF-8 replaced (as the row path's do).
fn comms<R>(rows: &[R], comm: impl Fn(&R) -> &Comm) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(
        rows.iter().map(|r| comm_text(comm(r))),
    ))
}

fn comm_text(c: &Comm) -> Cow<'_, str> {
    let end = c.iter().position(|&b| b == 0).unwrap_or(c.len());
    // Names are nearly always valid UTF-8: check that first, the lossy path is much slower.
    match std::str::from_utf8(&c[..end]) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(&c[..end]),
    }
}

fn workloads<R>(names: &Names, rows: &[R], workload: impl Fn(&R) -> Option<u16>) -> ArrayRef {
    Arc::new(
        (rows.iter())
            .map(|r| names.workload(workload(r)).map(|w| &**w))
            .collect::<StringArray>(),
    )
}

/// Task states as text, rendered once per distinct value (a batch has a handful).
struct StateNames(Vec<(i64, String)>);

impl StateNames {
    fn of(names: &Names, rows: &[Slice]) -> Self {
        let mut seen: Vec<(i64, String)> = Vec::new();
        for r in rows {
            if !seen.iter().any(|(s, _)| *s == r.state) {
                seen.push((r.state, names.task_states.render(r.state)));
            }
        }
        StateNames(seen)
    }

    fn get(&self, state: i64) -> &str {
        (self.0.iter())
            .find(|(s, _)| *s == state)
            .map_or("", |(_, text)| text.as_str())
    }
}
