//! Where the files of a table are: a flat directory of `<table>.parquet` files, or a
//! Hive-partitioned dataset with one partition per run.
//!
//! ```text
//! <dir>/<table>.parquet                              flat: `schedlab parse --out DIR`
//! <root>/<table>/run_id=<run>/part-0.parquet         partitioned: a pipeline's tables/ and aggregates/
//! ```
//!
//! The partitioned form is what DuckDB (`read_parquet('tables/sched_slices/*/*.parquet',
//! hive_partitioning = true)`), polars, pyarrow.dataset, DataFusion and Spark read as one dataset
//! without conversion, and what lets a stage rewrite one run's rows without touching another's.
//! Its names are part of the table contract, like the column names: this module is the only
//! code that spells them. Every file still carries its `run_id` column, so a partition copied
//! out of its dataset says which run it is, and the directory and the column always agree.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::parquet_io::open;
use crate::{SharedStrings, Table, TableError, write_rows};

/// The one file of a partition. A reader globs `*.parquet`, so a later writer may split a
/// partition into more files without breaking one.
pub const PARTITION_FILE: &str = "part-0.parquet";

/// The key of the Hive partitions: the directory `run_id=<run>`.
const RUN_KEY: &str = "run_id=";

/// A place tables are written to and read from.
pub trait TableDir {
    /// The file table `name` is written to.
    fn file_for(&self, name: &str) -> PathBuf;

    /// The files table `name` is read from, in order; none when it was never written.
    fn files_of(&self, name: &str) -> Result<Vec<PathBuf>, TableError>;
}

/// A directory as a place for tables: written flat (`DIR/<table>.parquet`); read from the flat
/// file, or, when `DIR/<table>/` is a partitioned dataset, from every partition in run order.
impl TableDir for Path {
    fn file_for(&self, name: &str) -> PathBuf {
        self.join(format!("{name}.parquet"))
    }

    fn files_of(&self, name: &str) -> Result<Vec<PathBuf>, TableError> {
        let dataset = self.join(name);
        if dataset.is_dir() {
            let mut files = Vec::new();
            for run in partition_runs_of(&dataset)? {
                files.extend(parquet_files(&dataset.join(format!("{RUN_KEY}{run}")))?);
            }
            return Ok(files);
        }
        let flat = self.file_for(name);
        Ok(if flat.exists() {
            vec![flat]
        } else {
            Vec::new()
        })
    }
}

impl TableDir for PathBuf {
    fn file_for(&self, name: &str) -> PathBuf {
        self.as_path().file_for(name)
    }

    fn files_of(&self, name: &str) -> Result<Vec<PathBuf>, TableError> {
        self.as_path().files_of(name)
    }
}

/// One run's partition of every table of a dataset rooted at `root`.
#[derive(Debug, Clone, Copy)]
pub struct Partition<'a> {
    pub root: &'a Path,
    pub run_id: &'a str,
}

impl Partition<'_> {
    /// `<root>/<table>/run_id=<run>`.
    pub fn dir(&self, name: &str) -> PathBuf {
        self.root
            .join(name)
            .join(format!("{RUN_KEY}{}", self.run_id))
    }
}

impl TableDir for Partition<'_> {
    fn file_for(&self, name: &str) -> PathBuf {
        self.dir(name).join(PARTITION_FILE)
    }

    fn files_of(&self, name: &str) -> Result<Vec<PathBuf>, TableError> {
        parquet_files(&self.dir(name))
    }
}

/// The entries of `dir`; none when it does not exist (a table or run never written).
fn entries(dir: &Path) -> Result<Vec<std::fs::DirEntry>, TableError> {
    match std::fs::read_dir(dir) {
        Ok(entries) => Ok(entries.flatten().collect()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(source) => Err(TableError::io(dir, source)),
    }
}

/// The `*.parquet` files of a partition directory, in name order (none when it does not exist).
fn parquet_files(dir: &Path) -> Result<Vec<PathBuf>, TableError> {
    let mut files: Vec<PathBuf> = (entries(dir)?.into_iter())
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            // Temporary files of a writer start with a dot.
            !name.starts_with('.') && name.ends_with(".parquet")
        })
        .collect();
    files.sort();
    Ok(files)
}

/// The runs with a partition in the table directory `dataset` (`<root>/<table>`), in order.
fn partition_runs_of(dataset: &Path) -> Result<BTreeSet<String>, TableError> {
    Ok((entries(dataset)?.into_iter())
        .filter(|e| e.path().is_dir())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix(RUN_KEY).map(str::to_owned)
        })
        .collect())
}

/// Every run with a partition in any table of the dataset rooted at `root`.
pub fn partitioned_runs(root: &Path) -> Result<BTreeSet<String>, TableError> {
    let mut runs = BTreeSet::new();
    for entry in entries(root)? {
        let name = entry.file_name();
        if entry.path().is_dir() && !name.to_string_lossy().starts_with('.') {
            runs.extend(partition_runs_of(&entry.path())?);
        }
    }
    Ok(runs)
}

/// The tables with a partition of `run_id` under `root`.
pub fn tables_of_run(root: &Path, run_id: &str) -> Result<Vec<String>, TableError> {
    let mut tables = Vec::new();
    for entry in entries(root)? {
        let name = entry.file_name().to_string_lossy().into_owned();
        let partition = Partition { root, run_id };
        if !name.starts_with('.') && partition.dir(&name).is_dir() {
            tables.push(name);
        }
    }
    tables.sort();
    Ok(tables)
}

/// `<dir>/<table>.parquet` or the partition's file: where table `T` is written.
pub fn table_path<T: Table>(dir: &(impl TableDir + ?Sized)) -> PathBuf {
    dir.file_for(T::NAME)
}

/// Where the table named `name` is written, for code that knows a table by its name only.
pub fn table_path_named(dir: &(impl TableDir + ?Sized), name: &str) -> PathBuf {
    dir.file_for(name)
}

/// Writes `rows` as table `T` in `dir` (creating a partition's directory); returns the path.
pub fn write_table<T: Table>(
    dir: &(impl TableDir + ?Sized),
    rows: &[T],
) -> Result<PathBuf, TableError> {
    let path = table_path::<T>(dir);
    create_parent(&path)?;
    write_rows(&path, rows)?;
    Ok(path)
}

/// Creates the directory a table file goes into.
pub fn create_parent(path: &Path) -> Result<(), TableError> {
    match path.parent() {
        Some(parent) => {
            std::fs::create_dir_all(parent).map_err(|source| TableError::io(parent, source))
        }
        None => Ok(()),
    }
}

/// Reads every row of table `T` in `dir`; a table that was never written reads as empty.
/// Rows are allocated once at their final number, and their repeated strings are shared
/// across files (a run's slices, read for aggregation, take half the memory they would with a
/// string per row and a vector grown by doubling).
pub fn read_table<T: Table>(dir: &(impl TableDir + ?Sized)) -> Result<Vec<T>, TableError> {
    let paths = dir.files_of(T::NAME)?;
    let files = (paths.iter().map(|path| open(path))).collect::<Result<Vec<_>, _>>()?;
    let mut rows = Vec::with_capacity(files.iter().map(|f| f.rows).sum());
    let mut strings = SharedStrings::default();
    for file in files {
        file.append_rows(&mut rows, &mut strings, |_| true)?;
    }
    Ok(rows)
}

/// Reads the rows of table `T` in `dir` for which `keep` holds, a batch at a time: the rest
/// are never held together (a plot of where workloads ran needs their slices, not the idle
/// task's and every other task's of a whole trace).
pub fn read_table_where<T: Table>(
    dir: &(impl TableDir + ?Sized),
    mut keep: impl FnMut(&T) -> bool,
) -> Result<Vec<T>, TableError> {
    let mut rows = Vec::new();
    let mut strings = SharedStrings::default();
    for path in dir.files_of(T::NAME)? {
        open(&path)?.append_rows(&mut rows, &mut strings, &mut keep)?;
    }
    Ok(rows)
}
