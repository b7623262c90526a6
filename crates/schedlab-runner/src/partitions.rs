//! Putting one run's freshly written partitions in place of its earlier ones.
//!
//! A stage writes a run's tables into a staging directory beside the dataset (same file system),
//! then [`replace_run`] swaps them in table by table with renames. Other runs' partitions are
//! never opened, so their files (and digests, and mtimes) stay as they were; a stage killed while
//! writing leaves only a `.staging-*` directory, which the next stage sweeps away.

use std::path::{Path, PathBuf};

use schedlab_tables::{TableDir, dataset};

use crate::{Layout, RunnerError};

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RunnerError + '_ {
    move |source| RunnerError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Moves run `run_id`'s partitions from `staging` into the dataset at `root`, replacing the run's
/// earlier partitions, and removes the run's partitions of tables the staging does not have.
/// Returns the files now in place.
pub fn replace_run(staging: &Path, root: &Path, run_id: &str) -> Result<Vec<PathBuf>, RunnerError> {
    let fresh = dataset::tables_of_run(staging, run_id)?;
    remove_run_tables(root, run_id, |table| !fresh.contains(&table.to_owned()))?;
    let (from, to) = (
        Layout::partition(staging, run_id),
        Layout::partition(root, run_id),
    );
    let mut files = Vec::new();
    for table in &fresh {
        let (source, dest) = (from.dir(table), to.dir(table));
        if dest.exists() {
            std::fs::remove_dir_all(&dest).map_err(io(&dest))?;
        }
        let parent = dest.parent().expect("a partition is inside its table");
        std::fs::create_dir_all(parent).map_err(io(parent))?;
        std::fs::rename(&source, &dest).map_err(io(&dest))?;
        files.extend(to.files_of(table)?);
    }
    Ok(files)
}

/// Removes every partition of run `run_id` under `root`.
pub fn remove_run(root: &Path, run_id: &str) -> Result<(), RunnerError> {
    remove_run_tables(root, run_id, |_| true)
}

fn remove_run_tables(
    root: &Path,
    run_id: &str,
    which: impl Fn(&str) -> bool,
) -> Result<(), RunnerError> {
    let partition = Layout::partition(root, run_id);
    for table in dataset::tables_of_run(root, run_id)? {
        if which(&table) {
            let dir = partition.dir(&table);
            std::fs::remove_dir_all(&dir).map_err(io(&dir))?;
        }
    }
    Ok(())
}
