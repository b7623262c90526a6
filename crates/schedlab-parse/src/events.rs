//! The per-event tables (`sched_slices`, `migrations`, `wakeups`, and a trace.dat's
//! `cpu_freq_idle`) of many inputs at once.
//!
//! These are the only tables that grow with trace size (millions of rows per perf.data file),
//! so they never sit in memory whole: each input (a file of `schedlab parse`, a run of the
//! parse stage) streams its rows into its own [`EventTables`], a part encoded in rayon's pool
//! while the input is still being read. [`EventParts::parse_each`] parses the inputs
//! in parallel, then puts the parts together in input order by copying their encoded row
//! groups, so the tables come out the same whatever order the inputs finished in.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use schedlab_perf::CompactBatch;
use schedlab_tables::{
    BackgroundWriter, CpuFreqIdleRow, MigrationRow, SchedSliceRow, Table, TableDir, TableError,
    WakeupRow, concat_parts, create_parent, table_path, write_rows,
};
use tempfile::TempDir;

use crate::Parsed;

/// The event tables of one input, each encoded in rayon's pool while the input is read.
pub struct EventTables {
    slices: BackgroundWriter<SchedSliceRow>,
    migrations: BackgroundWriter<MigrationRow>,
    wakeups: BackgroundWriter<WakeupRow>,
    cpu_freq_idle: BackgroundWriter<CpuFreqIdleRow>,
}

impl EventTables {
    /// Starts the event tables in `dir` (a flat directory, or a run's partition).
    pub fn create(dir: &(impl TableDir + ?Sized)) -> Result<Self, TableError> {
        fn start<T: Table + Send + 'static>(
            dir: &(impl TableDir + ?Sized),
        ) -> Result<BackgroundWriter<T>, TableError> {
            let path = table_path::<T>(dir);
            create_parent(&path)?;
            BackgroundWriter::create(&path)
        }
        Ok(EventTables {
            slices: start(dir)?,
            migrations: start(dir)?,
            wakeups: start(dir)?,
            cpu_freq_idle: start(dir)?,
        })
    }

    /// Queues a batch from the perf.data reader; each table builds its Arrow arrays from the
    /// compact rows when it encodes them.
    pub fn add(&self, batch: CompactBatch) {
        let CompactBatch {
            sched_slices,
            migrations,
            wakeups,
        } = batch;
        if !sched_slices.is_empty() {
            (self.slices).send_with(move |schema| sched_slices.table_batch(schema));
        }
        if !migrations.is_empty() {
            (self.migrations).send_with(move |schema| migrations.table_batch(schema));
        }
        if !wakeups.is_empty() {
            (self.wakeups).send_with(move |schema| wakeups.table_batch(schema));
        }
    }

    /// Queues a trace.dat's frequency and idle spans.
    pub fn add_cpu_freq_idle(&self, rows: Vec<CpuFreqIdleRow>) {
        if !rows.is_empty() {
            self.cpu_freq_idle.send(rows);
        }
    }

    /// Moves the event rows a parser put in `parsed` (timehist text) into the tables.
    pub fn take_from(&self, parsed: &mut Parsed) {
        self.slices.send(std::mem::take(&mut parsed.sched_slices));
        self.migrations.send(std::mem::take(&mut parsed.migrations));
        self.wakeups.send(std::mem::take(&mut parsed.wakeups));
        self.add_cpu_freq_idle(std::mem::take(&mut parsed.cpu_freq_idle));
    }

    /// Waits for the queued rows to be encoded and completes the tables.
    pub fn finish(self) -> Result<(), TableError> {
        self.slices.finish()?;
        self.migrations.finish()?;
        self.wakeups.finish()?;
        self.cpu_freq_idle.finish()?;
        Ok(())
    }
}

/// The parts of the event tables, one per input, in a temporary directory inside the output
/// directory (so that joining them is a rename or a copy on one file system). Dropped without
/// being joined (an error part way), the parts are deleted.
pub struct EventParts {
    dir: TempDir,
}

impl EventParts {
    /// Parses `inputs` in parallel, each streaming its event rows into its own part, then joins
    /// the parts in input order into `out`. Returns what `parse` returned for each input (in
    /// input order) and the event tables written (`cpu_freq_idle` only when the parser gives
    /// it: a trace.dat's). On an error nothing is written.
    pub fn parse_each<I: Sync, R: Send, E: From<TableError> + Send>(
        out: &Path,
        inputs: &[I],
        cpu_freq_idle: bool,
        parse: impl Fn(&I, &EventTables) -> Result<R, E> + Sync,
    ) -> Result<(Vec<R>, Vec<PathBuf>), E> {
        let parts = EventParts::new(out)?;
        let results = (inputs.par_iter().enumerate())
            .map(|(i, input)| {
                let events = parts.part(i)?;
                let result = parse(input, &events)?;
                events.finish()?;
                Ok(result)
            })
            .collect::<Result<Vec<R>, E>>()?;
        let written = parts.join(inputs.len(), out, cpu_freq_idle)?;
        Ok((results, written))
    }

    /// Starts the parts of the event tables of `out`.
    fn new(out: &Path) -> Result<Self, TableError> {
        let io = |source| TableError::Io {
            path: out.to_owned(),
            source,
        };
        std::fs::create_dir_all(out).map_err(io)?;
        let dir = tempfile::Builder::new()
            .prefix(".parts-")
            .tempdir_in(out)
            .map_err(io)?;
        Ok(EventParts { dir })
    }

    /// The tables of input number `index` (0-based; the order of the joined tables).
    fn part(&self, index: usize) -> Result<EventTables, TableError> {
        EventTables::create(self.dir.path().join(index.to_string()).as_path())
    }

    /// Joins the parts of inputs `0..count` (each [`finish`](EventTables::finish)ed) into
    /// `out/sched_slices.parquet`, `out/migrations.parquet`, `out/wakeups.parquet` and, with
    /// `cpu_freq_idle`, `out/cpu_freq_idle.parquet`; returns those paths. Without inputs the
    /// tables are written empty.
    fn join(
        self,
        count: usize,
        out: &Path,
        cpu_freq_idle: bool,
    ) -> Result<Vec<PathBuf>, TableError> {
        let mut written = vec![
            self.join_table::<SchedSliceRow>(count, out)?,
            self.join_table::<MigrationRow>(count, out)?,
            self.join_table::<WakeupRow>(count, out)?,
        ];
        if cpu_freq_idle {
            written.push(self.join_table::<CpuFreqIdleRow>(count, out)?);
        }
        Ok(written)
    }

    fn join_table<T: Table>(&self, count: usize, out: &Path) -> Result<PathBuf, TableError> {
        let dest = table_path::<T>(out);
        let parts: Vec<PathBuf> = (0..count)
            .map(|i| table_path::<T>(&self.dir.path().join(i.to_string())))
            .collect();
        match parts.as_slice() {
            [] => write_rows::<T>(&dest, &[])?,
            [one] => std::fs::rename(one, &dest).map_err(|source| TableError::Io {
                path: dest.clone(),
                source,
            })?,
            _ => concat_parts(&parts, &dest)?,
        }
        Ok(dest)
    }
}
