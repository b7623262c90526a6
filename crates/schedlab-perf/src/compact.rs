//! The reader's rows in compact form, turned into Arrow arrays wherever they are encoded.
//!
//! [`stream_sched`](crate::stream_sched) hands over rows with shared strings (`Arc<str>`):
//! convenient, but every row clones and drops four reference counts, and when the rows are
//! encoded on another thread those counts bounce between the cores' caches (a third more CPU
//! for `schedlab parse perf-sched`). A [`CompactBatch`] holds the state machine's own output
//! instead (slices column by column, migrations and wakeups as rows: plain numbers, command
//! names as 16 bytes, workloads and states as small codes), so it crosses threads for free;
//! each table's part builds its batch where it is encoded: Arrow arrays for numbers, and text
//! by key ([`KeyedText`]: a command name's 16 bytes, a state's code), which the table writer
//! turns into text once per distinct key. The tables equal those of the row path: the tests
//! write both and compare.

use std::sync::Arc;

use arrow_array::{Int32Array, Int64Array};
use arrow_schema::{ArrowError, SchemaRef};
use schedlab_tables::{KeyedText, NULL_KEY, TableBatch, TableColumn};

use crate::intern::Names;
use crate::le::{Comm, comm_str};
use crate::metadata::WakeKind;
use crate::slice_columns::SliceColumns;
use crate::timehist::{Migration, Output, Wakeup};

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
pub struct CompactSlices(SliceColumns, Arc<Names>);
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

    /// The rows as a batch of the `sched_slices` table (`schema`). Most columns move into
    /// their arrays as they are.
    pub fn table_batch(self, schema: SchemaRef) -> Result<TableBatch, ArrowError> {
        let (rows, names) = (self.0, self.1);
        let n = rows.len();
        let (runs, preempt_waits) = (rows.runs(), rows.preempt_waits());
        let states = names.clone();
        let state_keys = rows.state.iter().map(|&s| s as u64 as u128).collect();
        let columns = vec![
            run_ids(&names, n),
            int32(rows.cpu),
            int32(rows.pid),
            int32(rows.tid),
            comm_keys(rows.comm),
            int64(rows.start),
            int64(rows.end),
            int64(runs),
            int64(rows.wait),
            int64(rows.delay),
            int64(preempt_waits),
            keyed_text(state_keys, move |k| {
                states.task_states.render(k as u64 as i64)
            }),
            workloads(&names, &rows.workload, |w| *w),
            int32(rows.prio),
        ];
        TableBatch::new(&schema, n, columns)
    }
}

impl CompactMigrations {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The rows as a batch of the `migrations` table (`schema`).
    pub fn table_batch(&self, schema: SchemaRef) -> Result<TableBatch, ArrowError> {
        let (rows, names) = (&self.0, &self.1);
        let columns = vec![
            run_ids(names, rows.len()),
            i64s(rows, |r| r.time),
            i32s(rows, |r| r.pid),
            i32s(rows, |r| r.tid),
            comms(rows, |r| &r.comm),
            i32s(rows, |r| r.from),
            i32s(rows, |r| r.to),
            workloads(names, rows, |r| r.workload),
        ];
        TableBatch::new(&schema, rows.len(), columns)
    }
}

impl CompactWakeups {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The rows as a batch of the `wakeups` table (`schema`).
    pub fn table_batch(&self, schema: SchemaRef) -> Result<TableBatch, ArrowError> {
        let (rows, names) = (&self.0, &self.1);
        let wakers = rows.iter().map(|r| (r.waker >= 0).then_some(r.waker));
        let columns = vec![
            run_ids(names, rows.len()),
            i64s(rows, |r| r.time),
            i32s(rows, |r| r.pid),
            i32s(rows, |r| r.tid),
            comms(rows, |r| &r.comm),
            i32s(rows, |r| r.target_cpu),
            TableColumn::Array(Arc::new(wakers.collect::<Int32Array>())),
            keyed(
                rows,
                |r| r.kind as u128,
                |k| WakeKind::ALL[k as usize].as_str().to_owned(),
            ),
            workloads(names, rows, |r| r.workload),
        ];
        TableBatch::new(&schema, rows.len(), columns)
    }
}

/// Text given by `keys` (see [`KeyedText`]), made by `text` once per distinct key.
fn keyed_text(
    keys: Vec<u128>,
    text: impl Fn(u128) -> String + Send + Sync + 'static,
) -> TableColumn {
    TableColumn::Text(KeyedText {
        keys,
        text: Arc::new(text),
    })
}

/// Text keyed by `key` of each row (see [`KeyedText`]), made by `text` once per distinct key.
fn keyed<R>(
    rows: &[R],
    key: impl Fn(&R) -> u128,
    text: impl Fn(u128) -> String + Send + Sync + 'static,
) -> TableColumn {
    keyed_text(rows.iter().map(key).collect(), text)
}

/// One value on every row.
fn run_ids(names: &Names, n: usize) -> TableColumn {
    let run_id = names.run_id.clone();
    TableColumn::Text(KeyedText {
        keys: vec![0; n],
        text: Arc::new(move |_| run_id.to_string()),
    })
}

/// A column's values as they are, without a copy.
fn int32(values: Vec<i32>) -> TableColumn {
    TableColumn::Array(Arc::new(Int32Array::from(values)))
}

/// A column's values as they are, without a copy.
fn int64(values: Vec<i64>) -> TableColumn {
    TableColumn::Array(Arc::new(Int64Array::from(values)))
}

fn i32s<R>(rows: &[R], value: impl Fn(&R) -> i32) -> TableColumn {
    TableColumn::Array(Arc::new(Int32Array::from_iter_values(
        rows.iter().map(value),
    )))
}

/// Times and durations: u64 nanoseconds in the trace, i64 in the tables.
fn i64s<R>(rows: &[R], value: impl Fn(&R) -> u64) -> TableColumn {
    TableColumn::Array(Arc::new(Int64Array::from_iter_values(
        rows.iter().map(|r| value(r) as i64),
    )))
}

/// Command names keyed by their 16 bytes: the text is up to the first NUL, invalid UTF-8
/// replaced (as the row path's is). No name is 16 bytes of 0xff ([`NULL_KEY`]): that is not
/// UTF-8, and the kernel ends its names with a NUL.
fn comms<R>(rows: &[R], comm: impl Fn(&R) -> &Comm) -> TableColumn {
    comm_keys(rows.iter().map(|r| u128::from_le_bytes(*comm(r))).collect())
}

/// Command names given as their 16 bytes read little-endian (see [`comms`]).
fn comm_keys(keys: Vec<u128>) -> TableColumn {
    keyed_text(keys, |k| comm_str(&k.to_le_bytes()))
}

/// Workload names, or nulls.
fn workloads<R>(
    names: &Arc<Names>,
    rows: &[R],
    workload: impl Fn(&R) -> Option<u16>,
) -> TableColumn {
    let names = names.clone();
    let key = move |r: &R| workload(r).map_or(NULL_KEY, u128::from);
    keyed(rows, key, move |k| {
        (names.workload(Some(k as u16))).map_or_else(String::new, |w| w.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WorkloadSelector;

    /// The text of each row of a keyed column.
    fn texts(column: TableColumn) -> Vec<Option<String>> {
        let TableColumn::Text(keyed) = column else {
            panic!("not keyed text");
        };
        (keyed.keys.iter())
            .map(|&k| (k != NULL_KEY).then(|| (keyed.text)(k)))
            .collect()
    }

    #[test]
    fn command_names_end_at_nul_and_invalid_bytes_are_replaced() {
        let rows: [Comm; 3] = [
            *b"stress-ng\0\0\0\0\0\0\0",
            *b"sixteen-bytes-ab",
            *b"bad\xff\xfename\0\0\0\0\0\0\0",
        ];
        let got = texts(comms(&rows, |c| c));
        let got: Vec<&str> = got.iter().map(|t| t.as_deref().unwrap()).collect();
        assert_eq!(
            got,
            ["stress-ng", "sixteen-bytes-ab", "bad\u{fffd}\u{fffd}name"]
        );
        // The replacement matches the row path's.
        assert_eq!(got[2], crate::le::comm_str(&rows[2]));
    }

    #[test]
    fn every_row_has_the_run_id() {
        let names = Names::new("r-7", &[], crate::task_state::TaskStates::since_4_14());
        assert_eq!(texts(run_ids(&names, 3)), vec![Some("r-7".to_string()); 3]);
        assert!(texts(run_ids(&names, 0)).is_empty());
    }

    #[test]
    fn missing_workloads_are_nulls() {
        let names = Arc::new(Names::new(
            "r-7",
            &[WorkloadSelector::tree(42, "burst")],
            crate::task_state::TaskStates::since_4_14(),
        ));
        let got = texts(workloads(&names, &[Some(0), None], |w| *w));
        assert_eq!(got, [Some("burst".to_string()), None]);
    }
}
