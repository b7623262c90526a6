//! A run's tables as traces that other tools open, for drill-down beyond the report.
//!
//! # Brief overview
//!
//! [`perfetto::export_run`] writes one run's scheduler slices (per CPU and per thread),
//! wakeups, migrations and counters (busy %, frequency, package power) as a trace in the Chrome
//! JSON trace event format, which ui.perfetto.dev, Perfetto's trace processor and
//! chrome://tracing open. [`chrome`] is the format: a [`chrome::TraceWriter`] that streams
//! events into a temporary file and renames it into place; [`perfetto`] says which table rows
//! become which events on which tracks.
//!
//! # Key design decision
//!
//! The trace is streamed: the event tables are read a Parquet batch at a time and each row is
//! written as it is read, so a run of millions of slices is exported in the memory of one
//! batch plus the names of its threads. The JSON format, not Perfetto's protobuf, because it
//! needs no schema or generated code, every trace viewer reads it, and a test can check it
//! with serde_json alone.

pub mod chrome;
mod counters;
pub mod json;
mod packets;
pub mod pftrace;
mod run_tables;

use std::path::PathBuf;

use schedlab_tables::TableError;

/// Errors from exporting a run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// No table has a partition of the run.
    #[error(
        "no tables of run `{run_id}` under {} (runs with tables: {}); hint: a run is in the \
         tables once it is analysed (`schedlab analyze PIPELINE.yaml`)",
        tables.display(),
        if runs.is_empty() { "none".to_owned() } else { runs.join(", ") }
    )]
    NoRun {
        run_id: String,
        tables: PathBuf,
        runs: Vec<String>,
    },
    /// The run has tables, but not this one, which the trace needs.
    #[error(
        "run `{run_id}` has no `{table}` table: {} is missing; hint: analyse the run again \
         (`schedlab analyze PIPELINE.yaml --force`)",
        dir.display()
    )]
    MissingTable {
        run_id: String,
        table: &'static str,
        dir: PathBuf,
    },
    /// A table could not be read.
    #[error(transparent)]
    Table(#[from] TableError),
    /// Stopped on request (Ctrl-C); the temporary file is removed.
    #[error("interrupted; no trace written")]
    Interrupted,
    /// The trace file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The error of writing the trace at `path`.
pub(crate) fn write_error(path: &std::path::Path, source: std::io::Error) -> ExportError {
    ExportError::Write {
        path: path.to_owned(),
        source,
    }
}
