//! perf.data straight into Parquet, for `schedlab parse perf-sched FILE… --out DIR`.
//!
//! [`schedlab_perf::stream_sched`] hands over slices, migrations and wakeups a few megabytes of
//! trace at a time, and each batch goes into its table's [`TableWriter`] at once (one row group
//! per batch). Peak memory is therefore the reader's working set plus one batch, whatever the
//! trace size; only the threads and quality rows (one per thread, a few per file) are kept until
//! the end. Every table appears at once when all files are read, or not at all on an error.

use std::path::{Path, PathBuf};

use schedlab_perf::{SchedBatch, SchedOptions};
use schedlab_tables::{
    BackgroundWriter, MigrationRow, QualityRow, SchedSliceRow, Table, TableError, ThreadRow,
    WakeupRow, write_rows,
};

use crate::{ParseContext, ParseError};

/// Reads the perf.data files `paths` in turn and writes their `sched_slices`, `migrations`,
/// `wakeups`, `threads` and `quality` tables into `dir`; returns the files written.
pub(crate) fn write_tables(
    paths: &[PathBuf],
    ctx: &ParseContext,
    dir: &Path,
) -> Result<Vec<PathBuf>, ParseError> {
    let options = SchedOptions {
        run_id: ctx.run_id.clone(),
        workload_pids: ctx.workload_pids.clone(),
    };
    let events = EventWriters::create(dir)?;
    let mut threads: Vec<ThreadRow> = Vec::new();
    let mut quality: Vec<QualityRow> = Vec::new();
    for path in paths {
        let tables = schedlab_perf::stream_sched(path, &options, |batch| events.write(batch))?;
        threads.extend(tables.threads);
        quality.extend(tables.quality);
    }
    let mut written = events.finish()?;
    written.push(put(dir, &threads)?);
    written.push(put(dir, &quality)?);
    Ok(written)
}

fn table_path<T: Table>(dir: &Path) -> PathBuf {
    dir.join(format!("{}.parquet", T::NAME))
}

fn put<T: Table>(dir: &Path, rows: &[T]) -> Result<PathBuf, TableError> {
    let path = table_path::<T>(dir);
    write_rows(&path, rows)?;
    Ok(path)
}

/// The open per-event tables, each encoded on its own thread.
struct EventWriters {
    slices: BackgroundWriter<SchedSliceRow>,
    migrations: BackgroundWriter<MigrationRow>,
    wakeups: BackgroundWriter<WakeupRow>,
}

impl EventWriters {
    fn create(dir: &Path) -> Result<Self, TableError> {
        Ok(EventWriters {
            slices: BackgroundWriter::create(&table_path::<SchedSliceRow>(dir))?,
            migrations: BackgroundWriter::create(&table_path::<MigrationRow>(dir))?,
            wakeups: BackgroundWriter::create(&table_path::<WakeupRow>(dir))?,
        })
    }

    fn write(&self, batch: SchedBatch) {
        self.slices.send(batch.sched_slices);
        self.migrations.send(batch.migrations);
        self.wakeups.send(batch.wakeups);
    }

    fn finish(self) -> Result<Vec<PathBuf>, TableError> {
        Ok(vec![
            self.slices.finish()?,
            self.migrations.finish()?,
            self.wakeups.finish()?,
        ])
    }
}
