//! Reading one run's tables for an export: which tables a trace needs, and their rows a
//! Parquet batch at a time, so that an export's memory does not grow with the run.

use std::sync::atomic::{AtomicBool, Ordering};

use schedlab_tables::dataset::partitioned_runs;
use schedlab_tables::{
    MigrationRow, Partition, SchedSliceRow, Table, TableDir, ThreadRow, WakeupRow, row_batches,
};

use crate::ExportError;

/// The tables a trace needs; the others (counters) may be absent from runs without their
/// monitor, or from runs parsed before they existed.
pub(crate) const REQUIRED: [&str; 4] = [
    SchedSliceRow::NAME,
    WakeupRow::NAME,
    MigrationRow::NAME,
    ThreadRow::NAME,
];

/// Run `run_id`'s partition of the tables rooted at `tables`, or an error naming what is missing
/// when the run, or a table the trace needs, has no partition.
pub(crate) fn run_partition<'a>(
    tables: &'a std::path::Path,
    run_id: &'a str,
) -> Result<Partition<'a>, ExportError> {
    let partition = Partition {
        root: tables,
        run_id,
    };
    check_tables(&partition)?;
    Ok(partition)
}

fn check_tables(partition: &Partition<'_>) -> Result<(), ExportError> {
    let runs = partitioned_runs(partition.root)?;
    if !runs.contains(partition.run_id) {
        return Err(ExportError::NoRun {
            run_id: partition.run_id.to_owned(),
            tables: partition.root.to_owned(),
            runs: runs.into_iter().collect(),
        });
    }
    match REQUIRED.iter().find(|t| !partition.dir(t).is_dir()) {
        Some(table) => Err(ExportError::MissingTable {
            run_id: partition.run_id.to_owned(),
            table,
            dir: partition.dir(table),
        }),
        None => Ok(()),
    }
}

/// Calls `each` on every row of table `T` of the partition, a batch at a time, until
/// `interrupt` is set.
pub(crate) fn for_each_row<T: Table>(
    (partition, interrupt): (&Partition<'_>, &AtomicBool),
    mut each: impl FnMut(T) -> Result<(), ExportError>,
) -> Result<(), ExportError> {
    for file in partition.files_of(T::NAME)? {
        for rows in row_batches::<T>(&file)? {
            if interrupt.load(Ordering::Relaxed) {
                return Err(ExportError::Interrupted);
            }
            rows?.into_iter().try_for_each(&mut each)?;
        }
    }
    Ok(())
}
