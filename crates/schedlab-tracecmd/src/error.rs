//! The one error type of this crate.

use std::path::PathBuf;

/// Why a trace.dat file could not be read.
///
/// Every message names the file and the byte offset of the problem, and ends with a hint.
/// Damage inside one CPU's ring-buffer pages is not an error: the reader returns the events
/// before it, with a quality row saying where that CPU's data stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceCmdError {
    /// The file could not be opened or mapped.
    #[error("{}: cannot read the file: {source}; hint: check the path and its permissions", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The file does not start with trace-cmd's magic.
    #[error("{}: byte 0: not a trace.dat file (it starts with {magic}); hint: pass a file written by `trace-cmd record` or `trace-cmd extract`", path.display())]
    NotTraceDat { path: PathBuf, magic: String },

    /// The file ends before a part its header points to.
    #[error("{}: byte {offset}: the file is truncated ({what}, but the file has {len} bytes); hint: the recording was cut short or the copy is incomplete: copy it again or re-record{}", path.display(), salvage_hint(*salvageable))]
    Truncated {
        path: PathBuf,
        offset: u64,
        len: u64,
        what: String,
        /// Whether salvaging reads the file: the cut is inside the CPU data, after the
        /// metadata every event needs.
        salvageable: bool,
    },

    /// A header, section or option is inconsistent.
    #[error("{}: byte {offset}: {what}; hint: {hint}", path.display())]
    Malformed {
        path: PathBuf,
        offset: u64,
        what: String,
        hint: &'static str,
    },

    /// A valid trace.dat in a form this reader does not handle.
    #[error("{}: byte {offset}: unsupported trace.dat: {what}; hint: {hint}", path.display())]
    Unsupported {
        path: PathBuf,
        offset: u64,
        what: String,
        hint: &'static str,
    },

    /// A trace.dat without sched_switch events to build slices from.
    #[error("{}: no sched:sched_switch events in this trace.dat (it holds: {events}); hint: record with `trace-cmd record -e sched -e power` (or enable events/sched/sched_switch and `trace-cmd extract`)", path.display())]
    NoSchedEvents { path: PathBuf, events: String },
}

impl TraceCmdError {
    /// Whether reading with `salvage` gets past this error.
    pub fn salvageable(&self) -> bool {
        matches!(
            self,
            TraceCmdError::Truncated {
                salvageable: true,
                ..
            }
        )
    }
}

/// The end of the hint of an error that salvaging gets past.
fn salvage_hint(salvageable: bool) -> &'static str {
    if salvageable {
        ", or `--salvage` reads what is there"
    } else {
        ""
    }
}
