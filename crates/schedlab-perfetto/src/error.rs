//! The one error type of this crate.

use std::path::PathBuf;

/// Why a Perfetto trace could not be read.
///
/// Every message names the file and the byte offset of the problem, and ends with a hint.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PerfettoError {
    /// The file could not be opened or mapped.
    #[error("{}: cannot read the file: {source}; hint: check the path and its permissions", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The file does not start with a TracePacket record.
    #[error("{}: byte 0: not a Perfetto trace ({what}); hint: pass a file written by `perfetto` (or `schedlab export perfetto`)", path.display())]
    NotPerfetto { path: PathBuf, what: String },

    /// The file ends inside a packet.
    #[error("{}: byte {offset}: the file is truncated ({what}, but the file has {len} bytes); hint: the recording was cut short or the copy is incomplete: copy it again or re-record, or `--salvage` reads the packets before the cut", path.display())]
    Truncated {
        path: PathBuf,
        offset: u64,
        len: u64,
        what: String,
    },

    /// Bytes that are not a TracePacket record, or a packet that does not decode.
    #[error("{}: byte {offset}: {what}; hint: the file is damaged: copy it again or re-record, or `--salvage` reads the packets before it", path.display())]
    Malformed {
        path: PathBuf,
        offset: u64,
        what: String,
    },

    /// A valid Perfetto trace in a form this reader does not handle.
    #[error("{}: byte {offset}: unsupported Perfetto trace: {what}; hint: {hint}", path.display())]
    Unsupported {
        path: PathBuf,
        offset: u64,
        what: String,
        hint: &'static str,
    },

    /// A trace without ftrace sched_switch events to build slices from.
    #[error("{}: no ftrace sched_switch events in this Perfetto trace (it holds: {holds}); hint: record with a config whose ftrace data source has `ftrace_events: \"sched/sched_switch\"` (and sched_waking, task/task_newtask, power/cpu_frequency, power/cpu_idle)", path.display())]
    NoSchedEvents { path: PathBuf, holds: String },
}

impl PerfettoError {
    /// Whether reading with `salvage` gets past this error (it reads the packets before it).
    pub fn salvageable(&self) -> bool {
        matches!(
            self,
            PerfettoError::Truncated { .. } | PerfettoError::Malformed { .. }
        )
    }
}
