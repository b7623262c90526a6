//! Arrow arrays built straight from the rows of the per-event tables of a trace.
//!
//! A perf trace yields millions of `sched_slices`, `migrations` and `wakeups` rows, and the
//! generic serde path ([`serde_arrow`], one visitor call per field per row) was a quarter of
//! the time `schedlab parse perf-sched` spent. These functions fill each column with one tight
//! loop instead. They must produce exactly the batch the serde path would (same schema, same
//! values, same nulls): the tests compare the two on rows with and without every optional field.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{ArrowError, SchemaRef};

use crate::{MigrationRow, SchedSliceRow, WakeupRow};

fn i32s<R>(rows: &[R], value: impl Fn(&R) -> i32) -> ArrayRef {
    Arc::new(Int32Array::from_iter_values(rows.iter().map(value)))
}

fn optional_i32s<R>(rows: &[R], value: impl Fn(&R) -> Option<i32>) -> ArrayRef {
    Arc::new(rows.iter().map(value).collect::<Int32Array>())
}

fn i64s<R>(rows: &[R], value: impl Fn(&R) -> i64) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(rows.iter().map(value)))
}

fn strs<R>(rows: &[R], value: impl Fn(&R) -> &str) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(rows.iter().map(value)))
}

fn optional_strs<R>(rows: &[R], value: impl Fn(&R) -> Option<&str>) -> ArrayRef {
    Arc::new(rows.iter().map(value).collect::<StringArray>())
}

/// The columns in the order of the row type's fields, which is the schema's order.
pub(crate) fn sched_slices(
    schema: SchemaRef,
    rows: &[SchedSliceRow],
) -> Result<RecordBatch, ArrowError> {
    let columns = vec![
        strs(rows, |r| &r.run_id),
        i32s(rows, |r| r.cpu),
        i32s(rows, |r| r.pid),
        i32s(rows, |r| r.tid),
        strs(rows, |r| &r.comm),
        i64s(rows, |r| r.start_ns),
        i64s(rows, |r| r.end_ns),
        i64s(rows, |r| r.run_ns),
        i64s(rows, |r| r.wait_ns),
        i64s(rows, |r| r.sched_delay_ns),
        i64s(rows, |r| r.preempt_wait_ns),
        strs(rows, |r| &r.prev_state),
        optional_strs(rows, |r| r.workload.as_deref()),
    ];
    RecordBatch::try_new(schema, columns)
}

pub(crate) fn migrations(
    schema: SchemaRef,
    rows: &[MigrationRow],
) -> Result<RecordBatch, ArrowError> {
    let columns = vec![
        strs(rows, |r| &r.run_id),
        i64s(rows, |r| r.time_ns),
        i32s(rows, |r| r.pid),
        i32s(rows, |r| r.tid),
        strs(rows, |r| &r.comm),
        i32s(rows, |r| r.from_cpu),
        i32s(rows, |r| r.to_cpu),
        optional_strs(rows, |r| r.workload.as_deref()),
    ];
    RecordBatch::try_new(schema, columns)
}

pub(crate) fn wakeups(schema: SchemaRef, rows: &[WakeupRow]) -> Result<RecordBatch, ArrowError> {
    let columns = vec![
        strs(rows, |r| &r.run_id),
        i64s(rows, |r| r.time_ns),
        i32s(rows, |r| r.pid),
        i32s(rows, |r| r.tid),
        strs(rows, |r| &r.comm),
        i32s(rows, |r| r.target_cpu),
        optional_i32s(rows, |r| r.waker_tid),
        strs(rows, |r| &r.kind),
        optional_strs(rows, |r| r.workload.as_deref()),
    ];
    RecordBatch::try_new(schema, columns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Table, schema_of};

    /// What the serde path makes of `rows`: the reference the hand-built arrays must equal.
    fn by_serde<T: Table>(rows: &[T]) -> RecordBatch {
        let schema = schema_of::<T>();
        serde_arrow::to_record_batch(schema.fields(), &rows).unwrap()
    }

    fn by_columns<T: Table>(rows: &[T]) -> RecordBatch {
        T::record_batch(schema_of::<T>(), rows).unwrap()
    }

    #[test]
    fn sched_slices_match_the_serde_path() {
        let (run, comm, state, burst): (Arc<str>, Arc<str>, Arc<str>, Arc<str>) =
            ("r1".into(), "stress-ng".into(), "R+".into(), "burst".into());
        let rows: Vec<SchedSliceRow> = (0..5)
            .map(|i| SchedSliceRow {
                run_id: run.clone(),
                cpu: i % 2,
                pid: 100 + i,
                tid: 200 + i,
                comm: if i == 3 { "other".into() } else { comm.clone() },
                start_ns: 1_000 * i as i64,
                end_ns: 1_000 * i as i64 + 7,
                run_ns: 7 + i as i64,
                wait_ns: 3 * i as i64,
                sched_delay_ns: 11 * i as i64,
                preempt_wait_ns: 13 * i as i64,
                prev_state: state.clone(),
                workload: (i % 2 == 0).then(|| burst.clone()),
            })
            .collect();
        assert_eq!(by_columns(&rows), by_serde(&rows));
    }

    #[test]
    fn migrations_match_the_serde_path() {
        let rows: Vec<MigrationRow> = (0..4)
            .map(|i| MigrationRow {
                run_id: "r1".into(),
                time_ns: 5 + i as i64,
                pid: 10 + i,
                tid: 20 + i,
                comm: format!("t{i}").into(),
                from_cpu: i,
                to_cpu: 3 - i,
                workload: (i == 1).then(|| "bg".into()),
            })
            .collect();
        assert_eq!(by_columns(&rows), by_serde(&rows));
    }

    #[test]
    fn wakeups_match_the_serde_path() {
        let rows: Vec<WakeupRow> = (0..4)
            .map(|i| WakeupRow {
                run_id: "r1".into(),
                time_ns: 9 * i as i64,
                pid: 10 + i,
                tid: 20 + i,
                comm: "w".into(),
                target_cpu: i - 1,
                waker_tid: (i != 2).then_some(40 + i),
                kind: ["waking", "wakeup", "wakeup_new", "wakeup"][i as usize].into(),
                workload: (i >= 2).then(|| "fg".into()),
            })
            .collect();
        assert_eq!(by_columns(&rows), by_serde(&rows));
    }

    #[test]
    fn a_column_out_of_schema_order_is_an_error_not_a_wrong_file() {
        // The schema is checked by RecordBatch::try_new: swapping two columns of different types
        // in a builder would fail here rather than write a mislabelled file.
        let rows = vec![MigrationRow {
            run_id: "r1".into(),
            time_ns: 1,
            pid: 2,
            tid: 3,
            comm: "c".into(),
            from_cpu: 0,
            to_cpu: 1,
            workload: None,
        }];
        let wrong_schema = schema_of::<WakeupRow>();
        assert!(migrations(wrong_schema, &rows).is_err());
    }
}
