//! Reading and writing the runner's small files: manifests, records, removals.

use std::path::Path;

use schedlab_tables::manifest::Manifest;

use crate::error::RunnerError;

/// Removes `path`; one that is not there is fine.
pub(crate) fn remove_if_exists(path: &Path) -> Result<(), RunnerError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(RunnerError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

pub(crate) fn read_manifest(path: &Path) -> Result<Manifest, RunnerError> {
    let bytes = std::fs::read(path).map_err(|source| RunnerError::Io {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_slice(&bytes).map_err(|err| RunnerError::BadManifest {
        path: path.to_owned(),
        message: err.to_string(),
    })
}

pub(crate) fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), RunnerError> {
    let io = |source| RunnerError::Io {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let bytes = serde_json::to_vec_pretty(value)
        .map_err(std::io::Error::other)
        .map_err(io)?;
    schedlab_tables::write_file_atomic(path, &bytes).map_err(io)
}
