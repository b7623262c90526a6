//! Reads trace-cmd's trace.dat (file format v6 and v7) into schedlab's tables, with the same
//! semantics as the perf.data reader and without needing trace-cmd.
//!
//! # Brief overview
//!
//! * [`read_sched`] reads one file into [`TraceCmdTables`]: the tables [`schedlab_perf`] gives
//!   for a perf.data (`sched_slices`, `migrations`, `wakeups`, `threads`, `quality`, `losses`,
//!   the `traces` row and the window where every CPU has data), and `cpu_freq_idle`, the
//!   spans of each CPU's frequency and idle state from `power:cpu_frequency` and
//!   `power:cpu_idle`.
//! * [`stream_sched`] and [`stream_sched_compact`] hand the per-event rows over a block at a
//!   time as the file is read, as schedlab-perf's functions of the same names do.
//! * [`header_facts`] gives what the file says of the recording machine, for `schedlab
//!   import`.
//! * [`TraceCmdError`] says what is wrong with a file, where (byte offset) and what to do.
//!
//! A trace.dat holds the kernel's ftrace ring-buffer pages per CPU (and per instance), and the
//! `format` text of every event, by which each event's payload is laid out exactly as perf's
//! RAW sample data. So the sched tracepoints are bound and decoded by schedlab-perf's own code
//! (`schedlab_perf::feed`) and run through its `perf sched timehist` state machine: slices,
//! waits, delays, migrations and `prev_state` letters (from the file's own sched_switch print
//! format) mean what they mean for perf.data. A thread's command name follows the names its
//! sched_switch, sched_process_exec and task_rename events give it, as perf's COMM records do
//! (so `comm:` selectors find a process after it execs). Two things differ from a perf.data:
//! a trace.dat names only each event's thread (`common_pid`), not its process, so a thread's
//! `pid` is its own tid unless a fork says otherwise (`pid:` selectors find a process's main
//! thread, while `tree:` and `comm:` find all of it); and its times are on the trace clock the
//! file names (`traces.trace_clock`: `local` unless recorded with `-C mono`), which the quality
//! table flags when it is not CLOCK_MONOTONIC.
//!
//! # Key design decision
//!
//! The reader is native (no libtracecmd): the file is mapped, its metadata read with every
//! size and offset checked against the file's length (`metadata`), each CPU's data cut into
//! pages, one compressed chunk at a time for v7 (`framing`), each page into events (`decode`),
//! and the CPUs merged by time as `trace-cmd report` merges them (equal times: the lower CPU
//! first). Damage or a cut inside one CPU's data ends that CPU's events with a quality row; the
//! rest of the file is read.
//!
//! # Example
//!
//! ```no_run
//! use schedlab_perf::SchedOptions;
//!
//! let opts = SchedOptions {
//!     run_id: "r1".into(),
//!     workloads: vec!["app=comm:rt-app".parse().unwrap()],
//!     ..Default::default()
//! };
//! let tables = schedlab_tracecmd::read_sched("trace.dat".as_ref(), &opts)?;
//! let app_ns: i64 = (tables.sched.sched_slices.iter())
//!     .filter(|s| s.workload.as_deref() == Some("app"))
//!     .map(|s| s.run_ns)
//!     .sum();
//! println!("app ran {app_ns} ns; {} frequency spans", tables.cpu_freq_idle.len());
//! # Ok::<(), schedlab_tracecmd::TraceCmdError>(())
//! ```

mod bytes;
mod compress;
mod decode;
mod error;
mod formats;
mod framing;
mod metadata;
mod options;
mod reader;

use std::path::Path;

use schedlab_perf::{CompactBatch, HeaderFacts, SchedBatch, SchedOptions};
use schedlab_tables::CpuFreqIdleRow;

pub use error::TraceCmdError;

/// The first bytes of every trace.dat: `\x17\x08\x44tracing`.
pub const MAGIC: &[u8] = metadata::MAGIC;

/// Everything read from one trace.dat.
pub type TraceCmdTables = schedlab_perf::feed::FeedTables;

/// What the file says of the recording machine (its UNAME and CPU count), without reading its
/// events. With `salvage`, a file whose CPU data is cut short is accepted.
pub fn header_facts(path: &Path, salvage: bool) -> Result<HeaderFacts, TraceCmdError> {
    reader::header_facts(path, salvage)
}

/// Reads a trace.dat into tables. See the crate documentation for the semantics.
pub fn read_sched(path: &Path, opts: &SchedOptions) -> Result<TraceCmdTables, TraceCmdError> {
    schedlab_perf::feed::read_whole(|on_batch| stream_sched(path, opts, on_batch))
}

/// Reads a trace.dat, handing slices, migrations, wakeups and frequency and idle spans to
/// `on_batch` as they are produced. The returned tables hold the rest; their per-event tables
/// are empty. A file without sched_switch events is refused before anything is handed over.
pub fn stream_sched(
    path: &Path,
    opts: &SchedOptions,
    mut on_batch: impl FnMut(SchedBatch, Vec<CpuFreqIdleRow>),
) -> Result<TraceCmdTables, TraceCmdError> {
    reader::run(path, opts, |feed, spans| on_batch(feed.take_rows(), spans))
}

/// Like [`stream_sched`], with the sched rows in schedlab-perf's compact form, which becomes
/// Arrow arrays on whichever thread encodes it: the fast path to Parquet.
pub fn stream_sched_compact(
    path: &Path,
    opts: &SchedOptions,
    mut on_batch: impl FnMut(CompactBatch, Vec<CpuFreqIdleRow>),
) -> Result<TraceCmdTables, TraceCmdError> {
    reader::run(path, opts, |feed, spans| {
        on_batch(feed.take_compact(), spans)
    })
}
