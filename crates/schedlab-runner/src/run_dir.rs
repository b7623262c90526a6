//! Which run a command means: one named by its directory (`DATA/PIPELINE/runs/RUN_ID`), or the
//! one complete run of a pipeline. Commands that read one run's tables (`schedlab export`) take
//! either, and only the runner knows the layout that tells them apart.

use std::path::{Path, PathBuf};

use crate::layout::Layout;

/// Why no one run was found.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunDirError {
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not a run directory (DATA/PIPELINE/runs/RUN_ID)", path.display())]
    NotARunDirectory { path: PathBuf },
    #[error(
        "no runs of {} in {} (hint: `schedlab run {}`)",
        pipeline.display(), runs_dir.display(), pipeline.display()
    )]
    NoRunsDirectory {
        pipeline: PathBuf,
        runs_dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("no complete run of {} in {}", pipeline.display(), runs_dir.display())]
    NoCompleteRun {
        pipeline: PathBuf,
        runs_dir: PathBuf,
    },
    #[error(
        "{} has {} runs; say which with --run: {}",
        pipeline.display(), runs.len(), runs.join(", ")
    )]
    SeveralRuns {
        pipeline: PathBuf,
        runs: Vec<String>,
    },
}

/// The pipeline directory and run id of a run directory (`DATA/PIPELINE/runs/RUN_ID`).
pub fn of_directory(dir: &Path) -> Result<(Layout, String), RunDirError> {
    let dir = dir.canonicalize().map_err(|source| RunDirError::Read {
        path: dir.to_owned(),
        source,
    })?;
    let run_id = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    let root = dir.parent().and_then(Path::parent);
    match (run_id, root) {
        (Some(run_id), Some(root)) if Layout::at(root).run(&run_id) == dir => {
            Ok((Layout::at(root), run_id))
        }
        _ => Err(RunDirError::NotARunDirectory { path: dir }),
    }
}

/// The one complete run of `pipeline` (the file named in messages) on disk under `layout`.
pub fn only_run(layout: &Layout, pipeline: &Path) -> Result<String, RunDirError> {
    let runs_dir = layout.runs();
    let entries = std::fs::read_dir(&runs_dir).map_err(|source| RunDirError::NoRunsDirectory {
        pipeline: pipeline.to_owned(),
        runs_dir: runs_dir.clone(),
        source,
    })?;
    let mut runs: Vec<String> = (entries.flatten())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| Layout::is_complete_run_name(name))
        .collect();
    runs.sort();
    match &runs[..] {
        [run] => Ok(run.clone()),
        [] => Err(RunDirError::NoCompleteRun {
            pipeline: pipeline.to_owned(),
            runs_dir,
        }),
        _ => Err(RunDirError::SeveralRuns {
            pipeline: pipeline.to_owned(),
            runs,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_directory_gives_its_pipeline_and_id_and_nothing_else_does() {
        let data = tempfile::tempdir().unwrap();
        let layout = Layout::new(data.path(), "p");
        std::fs::create_dir_all(layout.run("abc-r1")).unwrap();
        let (found, run_id) = of_directory(&layout.run("abc-r1")).unwrap();
        assert_eq!(run_id, "abc-r1");
        assert_eq!(found.root, layout.root.canonicalize().unwrap());

        let err = of_directory(&layout.runs()).unwrap_err();
        assert!(matches!(err, RunDirError::NotARunDirectory { .. }), "{err}");
        assert!(
            err.to_string()
                .ends_with("/p/runs is not a run directory (DATA/PIPELINE/runs/RUN_ID)")
        );
        assert!(matches!(
            of_directory(&layout.run("missing")),
            Err(RunDirError::Read { .. })
        ));
    }

    #[test]
    fn only_run_takes_the_one_complete_run_and_lists_several() {
        let data = tempfile::tempdir().unwrap();
        let layout = Layout::new(data.path(), "p");
        let pipeline = Path::new("p.yaml");
        let err = only_run(&layout, pipeline).unwrap_err().to_string();
        assert!(err.starts_with("no runs of p.yaml in "), "{err}");
        assert!(err.ends_with(" (hint: `schedlab run p.yaml`)"), "{err}");

        std::fs::create_dir_all(layout.partial_run("b-r1")).unwrap();
        let err = only_run(&layout, pipeline).unwrap_err();
        assert!(matches!(err, RunDirError::NoCompleteRun { .. }), "{err}");

        std::fs::create_dir_all(layout.run("b-r1")).unwrap();
        assert_eq!(only_run(&layout, pipeline).unwrap(), "b-r1");

        std::fs::create_dir_all(layout.run("a-r1")).unwrap();
        assert_eq!(
            only_run(&layout, pipeline).unwrap_err().to_string(),
            "p.yaml has 2 runs; say which with --run: a-r1, b-r1"
        );
    }
}
