//! The turbostat table, read back by column name.
//!
//! turbostat's columns differ by machine, version and `--show` set, so the parse stage writes
//! the table as an Arrow batch built from turbostat's header rather than from a row type. What
//! aggregation needs of it is a fixed handful of fields, each present or not:
//! [`read_turbostat`] picks them out by name and leaves an absent column null on every row.

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{ArrowPrimitiveType, Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, RecordBatch};

use crate::{ColumnEncoding, Encodings, TableDir, TableError, read_batches};

/// The file stem of the turbostat table under `tables/`.
pub const TURBOSTAT: &str = "turbostat";

/// How the turbostat table's columns are encoded (those turbostat's header adds are plain).
pub const TURBOSTAT_ENCODINGS: &Encodings = &[
    ("run_id", ColumnEncoding::DictionaryWithRange),
    ("time_ns", ColumnEncoding::Delta),
];

/// One turbostat row (one CPU, or the summary, in one interval) with the fields the seed
/// articles read.
#[derive(Debug, Clone, PartialEq)]
pub struct TurbostatSample {
    pub run_id: String,
    /// Interval index from 0.
    pub sample: i64,
    /// End of the interval on the run clock, when known.
    pub time_ns: Option<i64>,
    /// turbostat's `-` row: the whole machine.
    pub summary: bool,
    pub cpu: Option<i32>,
    pub busy_pct: Option<f64>,
    pub avg_mhz: Option<f64>,
    pub bzy_mhz: Option<f64>,
    pub c1_pct: Option<f64>,
    pub c6_pct: Option<f64>,
    pub core_tmp_c: Option<f64>,
    pub pkg_watt: Option<f64>,
}

/// Reads the turbostat table of `dir` (every partition: their columns may differ, so each file is
/// read by name); a table that was never written reads as empty.
pub fn read_turbostat(dir: &(impl TableDir + ?Sized)) -> Result<Vec<TurbostatSample>, TableError> {
    let mut rows = Vec::new();
    for path in dir.files_of(TURBOSTAT)? {
        read_file(&path, &mut rows)?;
    }
    Ok(rows)
}

fn read_file(path: &Path, rows: &mut Vec<TurbostatSample>) -> Result<(), TableError> {
    for batch in read_batches(path)? {
        let wrong = |column: &str| TableError::Schema {
            path: path.to_owned(),
            message: format!("column `{column}` is missing or of another type"),
        };
        let run_ids = (batch.column_by_name("run_id"))
            .and_then(|c| c.as_string_opt::<i32>())
            .ok_or_else(|| wrong("run_id"))?;
        let samples = (batch.column_by_name("sample"))
            .and_then(|c| c.as_primitive_opt::<Int64Type>())
            .ok_or_else(|| wrong("sample"))?;
        let summaries = (batch.column_by_name("summary"))
            .and_then(|c| c.as_boolean_opt())
            .ok_or_else(|| wrong("summary"))?;
        let times = optional::<Int64Type>(&batch, "time_ns");
        let cpus = optional::<Int32Type>(&batch, "cpu");
        let field = |name: &str| optional::<Float64Type>(&batch, name);
        let (busy, avg, bzy, c1, c6, tmp, watt) = (
            field("busy_pct"),
            field("avg_mhz"),
            field("bzy_mhz"),
            field("c1_pct"),
            field("c6_pct"),
            field("core_tmp_c"),
            field("pkg_watt"),
        );
        for i in 0..batch.num_rows() {
            rows.push(TurbostatSample {
                run_id: run_ids.value(i).to_owned(),
                sample: samples.value(i),
                time_ns: times(i),
                summary: summaries.value(i),
                cpu: cpus(i),
                busy_pct: busy(i),
                avg_mhz: avg(i),
                bzy_mhz: bzy(i),
                c1_pct: c1(i),
                c6_pct: c6(i),
                core_tmp_c: tmp(i),
                pkg_watt: watt(i),
            });
        }
    }
    Ok(())
}

/// Column `name` as a nullable lookup by row (null everywhere when absent).
fn optional<'a, T: ArrowPrimitiveType>(
    batch: &'a RecordBatch,
    name: &str,
) -> impl Fn(usize) -> Option<T::Native> + use<'a, T> {
    let column = (batch.column_by_name(name)).and_then(|c| c.as_primitive_opt::<T>());
    move |i| column.and_then(|c| c.is_valid(i).then(|| c.value(i)))
}
