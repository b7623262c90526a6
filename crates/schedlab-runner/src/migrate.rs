//! Data directories of the first schedlab versions, brought to the current layout once.
//!
//! Those versions named every run `<digest of all runs>-…`, a digest that `repeat` changed, with
//! the matrix values as `k=v,…`, and kept each table as one file over all runs with one
//! `state.json`. Runs they collected for the pipeline as it is now are renamed to their
//! [`RunIds`] names (the manifest's `run_id` with them: the one time anything writes into a
//! collected run), and the old tables are removed, to be computed again per run. Runs of other
//! collect sections are left as they are.

use std::path::Path;

use crate::files::{read_manifest, write_json};
use crate::{Layout, RunIds, RunnerError};

/// Renames runs named the old way and removes the old layout's tables and state.
pub fn migrate(layout: &Layout, ids: &RunIds, say: &dyn Fn(&str)) -> Result<(), RunnerError> {
    let mut renamed = Vec::new();
    for entry in std::fs::read_dir(layout.runs())
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        let manifest_path = Layout::manifest(&entry.path());
        if !ids.is_legacy(&name) || ids.is_current(&name) || !manifest_path.exists() {
            continue;
        }
        let mut manifest = read_manifest(&manifest_path)?;
        let Some(new_id) = ids.id_for(
            &manifest.variant,
            manifest.label.as_deref(),
            manifest.repetition,
        ) else {
            continue;
        };
        let new_dir = layout.run(&new_id);
        if new_dir.exists() {
            say(&format!(
                "run {name}: not renamed to {new_id}, which exists already; it stays as it is"
            ));
            continue;
        }
        manifest.run_id = new_id.clone();
        write_json(&manifest_path, &manifest)?;
        std::fs::rename(entry.path(), &new_dir).map_err(|source| RunnerError::Io {
            path: new_dir.clone(),
            source,
        })?;
        renamed.push(format!("{name} → {new_id}"));
    }
    if !renamed.is_empty() {
        say(&format!(
            "migrated {} runs to run ids that do not change with `repeat`: {}",
            renamed.len(),
            renamed.join(", ")
        ));
    }
    let legacy_state = layout.legacy_state();
    if legacy_state.exists() {
        for dir in [layout.tables(), layout.aggregates()] {
            remove_flat_tables(&dir)?;
        }
        std::fs::remove_file(&legacy_state).map_err(|source| RunnerError::Io {
            path: legacy_state.clone(),
            source,
        })?;
        say(
            "migrated: the tables of the earlier layout (one file over all runs) were removed; \
             they are computed again, one partition per run",
        );
    }
    Ok(())
}

/// Removes the `*.parquet` files directly in `dir`: tables of the old layout.
fn remove_flat_tables(dir: &Path) -> Result<(), RunnerError> {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_file() && path.extension().is_some_and(|e| e == "parquet") {
            std::fs::remove_file(&path).map_err(|source| RunnerError::Io {
                path: path.clone(),
                source,
            })?;
        }
    }
    Ok(())
}
