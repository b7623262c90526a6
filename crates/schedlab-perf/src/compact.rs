//! The reader's rows in compact form, turned into Arrow arrays wherever they are encoded.
//!
//! [`stream_sched`](crate::stream_sched) hands over rows with shared strings (`Arc<str>`):
//! convenient, but every row clones and drops four reference counts, and when the rows are
//! encoded on another thread those counts bounce between the cores' caches (a third more CPU
//! for `schedlab parse perf-sched`). A [`CompactBatch`] holds the state machine's own rows
//! instead (plain numbers, command names as 16 bytes, workloads and states as small codes), so
//! it crosses threads for free; each table's part builds its Arrow batch where it is
//! encoded, writing every string straight into the array. The batches equal those of the row
//! path: the tests write both and compare.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_buffer::{Buffer, OffsetBuffer};
use arrow_schema::{ArrowError, SchemaRef};

use crate::intern::Names;
use crate::le::{Comm, comm_str};
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
    pub fn len(&self) -> usize {
        self.0.len()
    }

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
            i64s(rows, Slice::run),
            i64s(rows, |r| r.wait),
            i64s(rows, |r| r.delay),
            i64s(rows, Slice::preempt_wait),
            strs(rows, |r| states.get(r.state)),
            workloads(names, rows, |r| r.workload),
            i32s(rows, |r| r.prio),
        ];
        RecordBatch::try_new(schema, columns)
    }
}

impl CompactMigrations {
    pub fn len(&self) -> usize {
        self.0.len()
    }

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
    pub fn len(&self) -> usize {
        self.0.len()
    }

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
            strs(rows, |r| r.kind.as_str()),
            workloads(names, rows, |r| r.workload),
        ];
        RecordBatch::try_new(schema, columns)
    }
}

/// One value on every row: the bytes repeated, the offsets counted.
fn run_ids(names: &Names, n: usize) -> ArrayRef {
    let run_id = &*names.run_id;
    let offsets = OffsetBuffer::from_lengths(std::iter::repeat_n(run_id.len(), n));
    let bytes = Buffer::from_vec(run_id.repeat(n).into_bytes());
    Arc::new(StringArray::new(offsets, bytes, None))
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

/// Command names up to their first NUL, invalid UTF-8 replaced (as the row path's are).
///
/// Each name's 16 bytes are copied whole and the column cut back to the name's length: a
/// fixed-size copy is one vector move, where a copy of the name's own length was a call.
fn comms<R>(rows: &[R], comm: impl Fn(&R) -> &Comm) -> ArrayRef {
    let mut bytes = Vec::with_capacity(rows.len() * 16);
    let mut lengths = Vec::with_capacity(rows.len());
    for r in rows {
        let c = comm(r);
        let len = name_len(c);
        let start = bytes.len();
        bytes.extend_from_slice(c);
        bytes.truncate(start + len);
        lengths.push(len);
    }
    let offsets = OffsetBuffer::from_lengths(lengths);
    match StringArray::try_new(offsets, Buffer::from_vec(bytes), None) {
        Ok(text) => Arc::new(text),
        Err(_) => Arc::new(
            (rows.iter())
                .map(|r| Some(comm_str(comm(r))))
                .collect::<StringArray>(),
        ),
    }
}

/// Bytes before the first NUL (all 16 when there is none).
fn name_len(c: &Comm) -> usize {
    let v = u128::from_le_bytes(*c);
    const ONES: u128 = u128::from_le_bytes([0x01; 16]);
    const HIGHS: u128 = u128::from_le_bytes([0x80; 16]);
    // The lowest set high bit marks the first zero byte (bits above it may be false alarms).
    let zeros = v.wrapping_sub(ONES) & !v & HIGHS;
    (zeros.trailing_zeros() / 8) as usize
}

/// Workload names, or nulls. Most rows of a trace belong to no workload (and every row does
/// when the file is parsed on its own): a column without any name is built as nulls at once.
fn workloads<R>(names: &Names, rows: &[R], workload: impl Fn(&R) -> Option<u16>) -> ArrayRef {
    let named = |r: &R| names.workload(workload(r)).map(|w| &**w);
    if !rows.iter().any(|r| named(r).is_some()) {
        return Arc::new(StringArray::new_null(rows.len()));
    }
    Arc::new(rows.iter().map(named).collect::<StringArray>())
}

/// A column of text on every row (task states, wakeup kinds): bytes and lengths gathered,
/// without the null bookkeeping of a builder.
fn strs<'a, R>(rows: &'a [R], text: impl Fn(&'a R) -> &'a str) -> ArrayRef {
    let mut bytes = Vec::with_capacity(rows.len() * 2);
    let mut lengths = Vec::with_capacity(rows.len());
    for r in rows {
        let t = text(r);
        bytes.extend_from_slice(t.as_bytes());
        lengths.push(t.len());
    }
    let offsets = OffsetBuffer::from_lengths(lengths);
    // Whole `str`s put end to end are valid UTF-8, which `new` checks once for the column.
    Arc::new(StringArray::new(offsets, Buffer::from_vec(bytes), None))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WorkloadSelector;
    use arrow_array::Array;

    #[test]
    fn command_names_end_at_nul_and_invalid_bytes_are_replaced() {
        let rows: [Comm; 3] = [
            *b"stress-ng\0\0\0\0\0\0\0",
            *b"sixteen-bytes-ab",
            *b"bad\xff\xfename\0\0\0\0\0\0\0",
        ];
        let column = comms(&rows, |c| c);
        let text = column.as_any().downcast_ref::<StringArray>().unwrap();
        let got: Vec<&str> = text.iter().map(Option::unwrap).collect();
        assert_eq!(
            got,
            ["stress-ng", "sixteen-bytes-ab", "bad\u{fffd}\u{fffd}name"]
        );
        // The replacement matches the row path's.
        assert_eq!(got[2], crate::le::comm_str(&rows[2]));
    }

    #[test]
    fn name_length_is_the_first_nul() {
        let mut c = [b'x'; 16];
        assert_eq!(name_len(&c), 16);
        for at in (0..16).rev() {
            c[at] = 0;
            assert_eq!(name_len(&c), at, "{c:?}");
        }
        // A 0x01 byte after a zero must not be taken for one (the subtraction's borrow).
        assert_eq!(name_len(b"ab\0\x01cdefghijklmn"), 2);
        assert_eq!(name_len(b"\x01\x80\xff\0\0\0\0\0\0\0\0\0\0\0\0\0"), 3);
    }

    #[test]
    fn every_row_has_the_run_id() {
        let names = Names::new("r-7", &[], crate::task_state::TaskStates::since_4_14());
        let column = run_ids(&names, 3);
        let text = column.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(text.iter().flatten().collect::<Vec<_>>(), ["r-7"; 3]);
        assert_eq!(run_ids(&names, 0).len(), 0);
    }

    #[test]
    fn missing_workloads_are_nulls() {
        let names = Names::new(
            "r-7",
            &[WorkloadSelector::tree(42, "burst")],
            crate::task_state::TaskStates::since_4_14(),
        );
        let column = workloads(&names, &[Some(0), None], |w| *w);
        let text = column.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(text.iter().collect::<Vec<_>>(), [Some("burst"), None]);
        let column = workloads(&names, &[None, None, None], |w| *w);
        assert_eq!((column.len(), column.null_count()), (3, 3));
        assert_eq!(column.data_type(), &arrow_schema::DataType::Utf8);
    }

    #[test]
    fn texts_on_every_row_keep_their_order() {
        let column = strs(&["R", "", "S+", "wakeup_new"], |r| *r);
        let text = column.as_any().downcast_ref::<StringArray>().unwrap();
        let got: Vec<&str> = text.iter().map(Option::unwrap).collect();
        assert_eq!(got, ["R", "", "S+", "wakeup_new"]);
        assert_eq!(column.null_count(), 0);
    }
}
