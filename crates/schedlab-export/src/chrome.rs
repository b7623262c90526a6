//! The Chrome JSON trace event format, written one event at a time.
//!
//! The format (Google's "Trace Event Format" document, which ui.perfetto.dev, Perfetto's trace
//! processor and chrome://tracing read) is one JSON object, `{"traceEvents": [event, …], …}`.
//! Each event names its phase `ph` and its track by `pid` and `tid`; times `ts` and `dur` are
//! microseconds, fractions allowed. The four phases written here:
//!
//! - `X`, a complete event: `ts` and `dur` on the thread `pid`/`tid`;
//! - `i`, an instant event at `ts`, with its scope `s` (`t`: on its thread's track);
//! - `C`, a counter: each key of `args` is a series of the counter `name` of process `pid`,
//!   holding its value from `ts` until the counter's next event;
//! - `M`, metadata: `process_name`, `thread_name`, `process_sort_index`, `thread_sort_index`.
//!
//! The format's optional `displayTimeUnit` is left out: older trace processors read `ns` there
//! as the unit of `ts`.
//!
//! Events need not be in time order (viewers sort them), so a writer streams them as it reads
//! them: the file is written to a temporary name beside its destination and renamed when the
//! array is closed, so an interrupted export leaves no file that looks complete. A destination
//! named `*.gz` is gzip-compressed (fastest level), which Perfetto and chrome://tracing open as
//! they open plain JSON: the format repeats its keys in every event, so it compresses well.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::write::GzEncoder;
use serde::Serialize;
use tempfile::NamedTempFile;

use crate::{ExportError, write_error};

/// An event's phase, the format's `ph`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Phase {
    #[serde(rename = "X")]
    Complete,
    #[serde(rename = "i")]
    Instant,
    #[serde(rename = "C")]
    Counter,
    #[serde(rename = "M")]
    Metadata,
}

/// A time or duration in nanoseconds, written in the format's unit: fractional microseconds.
///
/// Perfetto's importer turns a fractional `ts` or `dur` into nanoseconds by multiplying by 1000
/// and truncating, so a value written as exactly `ns / 1000` would come back a nanosecond short
/// whenever the nearest double lies below it, and two slices that touch would overlap by 1 ns
/// (Perfetto would nest one in the other). Half a nanosecond is added: the value read back and
/// truncated is `ns` exactly while the two roundings' error, about `ns` × 2^-52, stays below
/// that half: for `ns` below 2^51 (26 days; times are written since the trace's origin, see
/// `perfetto`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Micros(pub i64);

impl Serialize for Micros {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64((self.0 as f64 + 0.5) / 1000.0)
    }
}

/// One event; `args` is any value that serializes as a JSON object.
#[derive(Debug, Serialize)]
pub struct Event<'a, A: Serialize> {
    pub name: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub cat: &'static str,
    pub ph: Phase,
    /// Absent on metadata events, which hold for the whole trace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ts: Option<Micros>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dur: Option<Micros>,
    pub pid: u32,
    pub tid: u32,
    /// An instant event's scope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub s: Option<&'static str>,
    pub args: A,
}

/// Where a trace's bytes go: its temporary file, plain or through gzip.
enum Sink {
    Plain(NamedTempFile),
    Gzip(GzEncoder<NamedTempFile>),
}

impl Sink {
    /// The temporary file, with everything written to it.
    fn finish(self) -> std::io::Result<NamedTempFile> {
        match self {
            Sink::Plain(file) => Ok(file),
            Sink::Gzip(encoder) => encoder.finish(),
        }
    }
}

impl Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Plain(file) => file.write(bytes),
            Sink::Gzip(encoder) => encoder.write(bytes),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Plain(file) => file.flush(),
            Sink::Gzip(encoder) => encoder.flush(),
        }
    }
}

/// A trace file being written: events go straight to a buffered temporary file.
pub struct TraceWriter {
    out: BufWriter<Sink>,
    path: PathBuf,
    events: u64,
}

impl TraceWriter {
    /// Starts the trace that [`TraceWriter::finish`] will put at `path` (a temporary file in
    /// `path`'s directory until then).
    pub fn create(path: &Path) -> Result<TraceWriter, ExportError> {
        let file = schedlab_tables::temp_file_beside(path, ".export-")
            .map_err(|source| write_error(path, source))?;
        let sink = if path.extension().is_some_and(|e| e == "gz") {
            Sink::Gzip(GzEncoder::new(file, Compression::fast()))
        } else {
            Sink::Plain(file)
        };
        let mut writer = TraceWriter {
            out: BufWriter::with_capacity(1 << 20, sink),
            path: path.to_owned(),
            events: 0,
        };
        writer.raw(b"{\"traceEvents\":[\n")?;
        Ok(writer)
    }

    /// Appends one event.
    pub fn event<A: Serialize>(&mut self, event: &Event<'_, A>) -> Result<(), ExportError> {
        if self.events > 0 {
            self.raw(b",\n")?;
        }
        self.events += 1;
        serde_json::to_writer(&mut self.out, event).map_err(|err| {
            write_error(
                &self.path,
                err.io_error_kind()
                    .map_or_else(|| std::io::Error::other(err), std::io::Error::from),
            )
        })
    }

    /// Closes the event array, adds `other_data` (the format's free-form `otherData`, shown
    /// as the trace's metadata) and puts the file in place; returns its size in bytes.
    pub fn finish(mut self, other_data: &impl Serialize) -> Result<u64, ExportError> {
        let tail = serde_json::to_string(other_data).map_err(std::io::Error::other);
        let tail = tail.map_err(|source| write_error(&self.path, source))?;
        self.raw(b"\n],\"otherData\":")?;
        self.raw(tail.as_bytes())?;
        self.raw(b"}\n")?;
        let path = self.path;
        let sink = (self.out.into_inner()).map_err(|err| write_error(&path, err.into_error()))?;
        let file = sink.finish().map_err(|source| write_error(&path, source))?;
        let size = (file.as_file().metadata()).map_err(|source| write_error(&path, source))?;
        file.persist(&path)
            .map_err(|err| write_error(&path, err.error))?;
        Ok(size.len())
    }

    fn raw(&mut self, bytes: &[u8]) -> Result<(), ExportError> {
        (self.out.write_all(bytes)).map_err(|source| write_error(&self.path, source))
    }
}
