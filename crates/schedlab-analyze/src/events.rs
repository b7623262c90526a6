//! The workload threads' migrations and the kernel's CPU time sums, as numbers per run.
//!
//! Both tables hold a row per event or per thread and CPU, with the thread's comm and workload
//! as text; the figures need the thread, the CPUs and the times, and only the workloads' rows.
//! So they are read as those columns alone (see [`schedlab_tables::read_columns`]), and a row
//! of another task is dropped by its key before anything of it is kept.

use std::collections::BTreeMap;

use schedlab_tables::{
    ColumnBatch, MigrationRow, SchedRuntimeRow, Table, TableDir, TableError, read_columns,
};

use crate::slices::run_ranges;

/// A workload thread's sched_migrate_task event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    pub time_ns: i64,
    pub tid: i32,
    pub from_cpu: i32,
    pub to_cpu: i32,
}

/// A workload thread's CPU time on one CPU by the kernel's own accounting (see
/// [`SchedRuntimeRow`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runtime {
    pub tid: i32,
    pub cpu: i32,
    pub runtime_ns: i64,
    /// sched_stat_runtime events summed.
    pub events: i64,
}

/// The workload threads' migrations in `dir`, by run.
pub fn read_migrations(
    dir: &(impl TableDir + ?Sized),
) -> Result<BTreeMap<String, Vec<Migration>>, TableError> {
    const COLUMNS: [&str; 6] = ["run_id", "time_ns", "tid", "from_cpu", "to_cpu", "workload"];
    read_workload_rows::<MigrationRow, _>(dir, &COLUMNS, migrations_of)
}

fn migrations_of<'b>(batch: &'b ColumnBatch<'_>) -> Result<RowOf<'b, Migration>, TableError> {
    let (time_ns, tid) = (batch.i64s("time_ns")?, batch.i32s("tid")?);
    let (from_cpu, to_cpu) = (batch.i32s("from_cpu")?, batch.i32s("to_cpu")?);
    Ok(Box::new(move |row| Migration {
        time_ns: time_ns.value(row),
        tid: tid.value(row),
        from_cpu: from_cpu.value(row),
        to_cpu: to_cpu.value(row),
    }))
}

/// The workload threads' CPU time by the kernel in `dir`, by run.
pub fn read_runtime(
    dir: &(impl TableDir + ?Sized),
) -> Result<BTreeMap<String, Vec<Runtime>>, TableError> {
    const COLUMNS: [&str; 6] = ["run_id", "tid", "cpu", "runtime_ns", "events", "workload"];
    read_workload_rows::<SchedRuntimeRow, _>(dir, &COLUMNS, runtime_of)
}

fn runtime_of<'b>(batch: &'b ColumnBatch<'_>) -> Result<RowOf<'b, Runtime>, TableError> {
    let (tid, cpu) = (batch.i32s("tid")?, batch.i32s("cpu")?);
    let (runtime_ns, events) = (batch.i64s("runtime_ns")?, batch.i64s("events")?);
    Ok(Box::new(move |row| Runtime {
        tid: tid.value(row),
        cpu: cpu.value(row),
        runtime_ns: runtime_ns.value(row),
        events: events.value(row),
    }))
}

/// What a batch's row `row` becomes.
type RowOf<'b, R> = Box<dyn Fn(usize) -> R + 'b>;

/// The rows of table `T` in `dir` that have a workload, each made by the function `columns`
/// makes of its batch, by run.
fn read_workload_rows<T: Table, R>(
    dir: &(impl TableDir + ?Sized),
    names: &[&str],
    columns: for<'b> fn(&'b ColumnBatch<'_>) -> Result<RowOf<'b, R>, TableError>,
) -> Result<BTreeMap<String, Vec<R>>, TableError> {
    let mut runs: BTreeMap<String, Vec<R>> = BTreeMap::new();
    read_columns::<T>(dir, names, |batch| {
        let workload = batch.texts("workload")?;
        let row_of = columns(batch)?;
        for (run, rows) in run_ranges(batch)? {
            let kept = runs.entry(run.to_owned()).or_default();
            kept.extend(rows.filter(|&row| workload.key(row).is_some()).map(&row_of));
        }
        Ok(())
    })?;
    Ok(runs)
}
