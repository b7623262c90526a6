//! Reads Perfetto protobuf traces (`.pftrace`, recorded by `perfetto` on Linux, Android or
//! ChromeOS, or written by `schedlab export perfetto`) into schedlab's tables, with the same
//! semantics as the perf.data and trace.dat readers.
//!
//! # Brief overview
//!
//! * [`read_sched`] reads one file into [`PerfettoTables`]: the tables [`schedlab_perf`] gives
//!   for a perf.data (`sched_slices`, `migrations`, `wakeups`, `threads`, `quality`, `losses`,
//!   the `traces` row and the window where every CPU has data, and `sched_runtime` from
//!   sched_stat_runtime events, in either of Perfetto's encodings of an event its protos lack:
//!   the `GenericFtraceEvent` or, since v53, a self-described message), and `cpu_freq_idle`
//!   from the trace's cpu_frequency and cpu_idle events.
//! * [`stream_sched`] and [`stream_sched_compact`] hand the per-event rows over a block at a
//!   time as the file is read, as schedlab-perf's functions of the same names do.
//! * [`header_facts`] gives what the trace says of the recording machine, for `schedlab
//!   import`; [`looks_like_trace`] tells a Perfetto trace from its first bytes.
//! * [`PerfettoError`] says what is wrong with a file, where (byte offset) and what to do.
//!
//! A Perfetto trace is a sequence of `TracePacket`s; the kernel's scheduler events come in
//! `FtraceEventBundle`s, one CPU's events of one read of its ring buffer each, as plain
//! `FtraceEvent`s or as the `compact_sched` arrays Perfetto writes sched_switch and
//! sched_waking in. They are turned into the events perf's `perf sched timehist` state machine
//! takes (`schedlab_perf::feed`), so slices, waits, delays, migrations and wakeups mean what
//! they mean for perf.data. The threads' processes come from the `ProcessTree` packets (the
//! tasks that existed when recording started, as perf's own records of them) and from
//! task_newtask events (`CLONE_THREAD` says whether a new task is a thread of its parent's
//! process); names from the tree, sched_switch, task_rename and sched_process_exec.
//! `prev_state` is the kernel's bits, lettered as Linux 4.14 and later do. Times are ftrace's,
//! on Perfetto's boot clock unless the bundles name another; the first `ClockSnapshot` that
//! gives both CLOCK_BOOTTIME and CLOCK_MONOTONIC moves them onto CLOCK_MONOTONIC, schedlab's
//! one clock.
//!
//! # Key design decision
//!
//! Two passes over the mapped file: the first frames every packet (each length checked against
//! the file's: a cut or damaged file is refused, with its byte offset, before any row is
//! handed over) and notes where each CPU's bundles are; the second decodes one bundle per
//! time-ordered run of a CPU's bundles at a time and merges the runs by time, so memory holds
//! a bundle per run, never the trace's events.
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
//! let tables = schedlab_perfetto::read_sched("trace.pftrace".as_ref(), &opts)?;
//! let app_ns: i64 = (tables.sched.sched_slices.iter())
//!     .filter(|s| s.workload.as_deref() == Some("app"))
//!     .map(|s| s.run_ns)
//!     .sum();
//! println!("app ran {app_ns} ns");
//! # Ok::<(), schedlab_perfetto::PerfettoError>(())
//! ```

mod bundle;
mod error;
mod framing;
mod generic;
mod reader;

use std::path::Path;

use schedlab_perf::{CompactBatch, HeaderFacts, SchedBatch, SchedOptions};
use schedlab_tables::CpuFreqIdleRow;

pub use error::PerfettoError;
pub use framing::looks_like_trace;

/// Everything read from one Perfetto trace.
pub type PerfettoTables = schedlab_perf::feed::FeedTables;

/// What the trace says of the recording machine (kernel release, architecture, CPU count).
/// With `salvage`, a file cut short is accepted.
pub fn header_facts(path: &Path, salvage: bool) -> Result<HeaderFacts, PerfettoError> {
    reader::header_facts(path, salvage)
}

/// Reads a Perfetto trace into tables. See the crate documentation for the semantics.
pub fn read_sched(path: &Path, opts: &SchedOptions) -> Result<PerfettoTables, PerfettoError> {
    schedlab_perf::feed::read_whole(|on_batch| stream_sched(path, opts, on_batch))
}

/// Reads a Perfetto trace, handing slices, migrations, wakeups and frequency and idle spans
/// to `on_batch` as they are produced. The returned tables hold the rest; their per-event
/// tables are empty. A trace without sched_switch events, or one cut or damaged (unless
/// salvaging), is refused before anything is handed over.
pub fn stream_sched(
    path: &Path,
    opts: &SchedOptions,
    mut on_batch: impl FnMut(SchedBatch, Vec<CpuFreqIdleRow>),
) -> Result<PerfettoTables, PerfettoError> {
    reader::run(path, opts, |feed, spans| on_batch(feed.take_rows(), spans))
}

/// Like [`stream_sched`], with the sched rows in schedlab-perf's compact form, which becomes
/// Arrow arrays on whichever thread encodes it: the fast path to Parquet.
pub fn stream_sched_compact(
    path: &Path,
    opts: &SchedOptions,
    mut on_batch: impl FnMut(CompactBatch, Vec<CpuFreqIdleRow>),
) -> Result<PerfettoTables, PerfettoError> {
    reader::run(path, opts, |feed, spans| {
        on_batch(feed.take_compact(), spans)
    })
}
