//! The one error type of this crate.

use std::path::PathBuf;

/// Why a perf.data file could not be read.
///
/// Every message names the file and, where the problem is in its bytes, the byte offset, and ends
/// with a hint. Damage confined to the tail of the record stream is not an error: the reader
/// returns what it read before the damage plus a quality row saying where it stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PerfError {
    /// The file could not be opened or mapped.
    #[error("{}: cannot read the file: {source}; hint: check the path and its permissions", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The file does not start with perf's magic.
    #[error("{}: byte 0: not a perf.data file (it starts with {magic}); hint: pass a file written by `perf sched record` or `perf record -e 'sched:*'`", path.display())]
    NotPerfData { path: PathBuf, magic: String },

    /// The file ends before a part its header points to.
    #[error("{}: byte {offset}: the file is truncated ({what}, but the file has {len} bytes); hint: the recording was cut short or the copy is incomplete: copy it again or re-record{}", path.display(), salvage_hint(*salvageable))]
    Truncated {
        path: PathBuf,
        offset: u64,
        len: u64,
        what: String,
        /// Whether [`SchedOptions::salvage`](crate::SchedOptions::salvage) can read the file:
        /// the cut is in the data section or after it, not in the header or attributes.
        salvageable: bool,
    },

    /// perf was stopped before it finished the file: the header still says the data section is
    /// empty (perf writes its size and the feature sections only when it exits normally).
    #[error("{}: byte 48: the header says the data section is empty, but {records} bytes follow it from byte {data_start}: perf did not finish writing the file (it was killed, or the disk filled up); hint: `--salvage` reads it up to the last complete record", path.display())]
    Unfinished {
        path: PathBuf,
        data_start: u64,
        records: u64,
    },

    /// A header, attribute or feature section is inconsistent.
    #[error("{}: byte {offset}: {what}; hint: {hint}", path.display())]
    Malformed {
        path: PathBuf,
        offset: u64,
        what: String,
        hint: &'static str,
    },

    /// A valid perf.data file in a layout this reader does not handle.
    #[error("{}: byte {offset}: unsupported perf.data layout: {what}; hint: {hint}", path.display())]
    Unsupported {
        path: PathBuf,
        offset: u64,
        what: String,
        hint: &'static str,
    },

    /// A pipe-mode or compressed perf.data could not be written out as the file-mode copy the
    /// reader reads (see `inject`).
    #[error("{}: cannot write its file-mode, uncompressed copy to the temporary directory: {source}; hint: free space there, or point TMPDIR to a directory with room", path.display())]
    Rewrite {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A perf.data file that has no `sched:sched_switch` event to build slices from.
    #[error("{}: no sched:sched_switch events in this perf.data (it records: {events}); hint: record with `perf sched record -a -k CLOCK_MONOTONIC -- CMD`", path.display())]
    NoSchedEvents { path: PathBuf, events: String },
}

impl PerfError {
    /// Whether [`SchedOptions::salvage`](crate::SchedOptions::salvage) reads what this error
    /// refuses.
    pub fn salvageable(&self) -> bool {
        matches!(
            self,
            PerfError::Unfinished { .. }
                | PerfError::Truncated {
                    salvageable: true,
                    ..
                }
        )
    }
}

/// The end of the hint of an error that salvaging gets past.
fn salvage_hint(salvageable: bool) -> &'static str {
    if salvageable {
        ", or `--salvage` reads it up to the last complete record"
    } else {
        ""
    }
}
