//! The runner's one error type: everything that can stop a command.

use std::path::PathBuf;

/// Everything that can stop a command.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunnerError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is in use: {holder} (hint: wait for that command to finish)", path.display())]
    Locked { path: PathBuf, holder: String },
    #[error("run {run_id}: {source}")]
    Collect {
        run_id: String,
        #[source]
        source: schedlab_collect::CollectError,
    },
    #[error("no collected or imported runs for this pipeline under {} (hint: `schedlab run` collects them, `schedlab import` adds recordings made by hand{})", dir.display(), if *older { "; the runs on disk were collected with an earlier collect section" } else { "" })]
    NothingCollected { dir: PathBuf, older: bool },
    #[error("no collected run {run_id} of this pipeline under {} (hint: `schedlab status` lists the runs)", dir.display())]
    UnknownRun { run_id: String, dir: PathBuf },
    #[error("run {run_id}: declared topology: {message}")]
    Topology { run_id: String, message: String },
    #[error("{}: {message}", path.display())]
    BadManifest { path: PathBuf, message: String },
    #[error("import: {message}")]
    Import { message: String },
    #[error("{}: {}, so no runs to gather (hint: give a data directory, holding <pipeline>/runs/<run>/, or a pipeline directory, holding runs/<run>/)", path.display(), if *missing { "no such directory" } else { "neither a data directory nor a pipeline directory" })]
    NoRuns { path: PathBuf, missing: bool },
    #[error(transparent)]
    Table(#[from] schedlab_tables::TableError),
    #[error(transparent)]
    Analyze(#[from] schedlab_analyze::AnalyzeError),
    #[error(transparent)]
    Report(#[from] schedlab_report::ReportError),
    #[error(transparent)]
    Compare(#[from] schedlab_analyze::compare::CompareError),
}
