//! Reads perf.data files written by `perf sched record` into schedlab's tables, with the
//! semantics of `perf sched timehist` (perf 6.1) and without needing perf.
//!
//! # Brief overview
//!
//! * [`read_sched`] reads one file into [`SchedTables`]: `sched_slices` (one row per time a
//!   thread spent on a CPU, ended by its switch-out), `migrations`, `wakeups`, `threads` (the
//!   process tree with comm, fork and exit times), `sched_runtime` (the kernel's own accounting
//!   of each thread's CPU time per CPU, from sched_stat_runtime), `quality` (lost events,
//!   damage) and the `window` in which every CPU has data.
//! * [`stream_sched`] does the same but hands the three per-event tables over in
//!   [`SchedBatch`]es as it goes, so memory stays bounded whatever the trace size;
//!   [`stream_sched_compact`] hands them over in the reader's own compact form
//!   ([`CompactBatch`]), which becomes Arrow arrays on whichever thread encodes it: the path to
//!   Parquet.
//! * [`SchedOptions`] names the run and the processes the runner started; every row of a thread
//!   forked (directly or transitively) from one of them carries that workload's name.
//! * [`PerfError`] says what is wrong with a file, where (byte offset) and what to do.
//! * [`feed`] lends the tracepoint format parser and the state machine to readers of other
//!   trace formats (schedlab-tracecmd's trace.dat reader), so that every format gives the same
//!   tables.
//! * [`SchedOptions::salvage`] reads a file perf refuses because it was cut short or perf was
//!   killed before finishing it, up to its last complete record, with quality rows saying how
//!   many bytes could not be read and which header sections were lost.
//!
//! Per thread, the number of slices, total and per-CPU run time, migrations and the mean and
//! maximum scheduling delay equal what `perf sched timehist` and `perf sched timehist -M -s`
//! print for the same file (the tests check this on real recordings), with one deliberate
//! difference: perf 6.1 files the last switch-outs of an exiting thread under the sample's
//! tid, which the kernel reports as -1 by then, and prints them as a fake `:-1[-1/pid]` task.
//! This reader attributes a switch-out to the sched_switch payload's `prev_pid`, the thread
//! that really ran, so those slices count for the exiting thread. `sched_delay_ns` keeps the
//! perf 6.1 meaning (wakeup to switch-in, zero after a preemption); the runnable wait after a
//! preemption, which newer perf adds to the delay, is `preempt_wait_ns`.
//!
//! # Key design decision
//!
//! perf's metadata (header, attributes, feature sections) is read with linux-perf-data, but the
//! record stream is framed here directly on a memory map: linux-perf-data's record iterator
//! copies every record. Framing reads only record headers and cuts the stream into perf's
//! rounds (FINISHED_ROUND), and long rounds into chunks; chunks decode in parallel with rayon
//! into small owned events while the previous block runs through the sequential timehist state
//! machine; events are then ordered exactly as perf orders them (its two-round rule, a per-CPU
//! merge in practice). Field offsets of the tracepoints come from the format text stored in the
//! file, never constants.
//!
//! # Example
//!
//! ```no_run
//! use schedlab_perf::{read_sched, SchedOptions};
//!
//! let opts = SchedOptions {
//!     run_id: "r1".into(),
//!     workloads: vec![schedlab_perf::WorkloadSelector::tree(4242, "burst")],
//!     ..Default::default()
//! };
//! let tables = read_sched("perf.data".as_ref(), &opts)?;
//! let burst_ns: i64 = tables
//!     .sched_slices
//!     .iter()
//!     .filter(|s| s.workload.as_deref() == Some("burst"))
//!     .map(|s| s.run_ns)
//!     .sum();
//! println!("burst ran {burst_ns} ns; {} quality notes", tables.quality.len());
//! # Ok::<(), schedlab_perf::PerfError>(())
//! ```

mod compact;
mod cpu_states;
mod decode;
mod error;
pub mod feed;
mod framing;
mod header_facts;
mod inject;
mod intern;
mod le;
mod metadata;
mod order;
mod reader;
mod runtime;
mod salvage;
mod slice_columns;
mod task_state;
mod threads;
mod timehist;
mod tracefmt;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

pub use compact::{CompactBatch, CompactMigrations, CompactSlices, CompactWakeups};
pub use error::PerfError;
pub use header_facts::HeaderFacts;
pub use schedlab_tables::rows::{
    LossRow, MigrationRow, QualityRow, SchedRuntimeRow, SchedSliceRow, Severity, ThreadRow,
    TraceRow, WakeupRow,
};
pub use schedlab_tables::selector::{Select, WorkloadSelector};

/// What the caller knows about the run a trace belongs to.
#[derive(Debug, Clone, Default)]
pub struct SchedOptions {
    /// Copied into every row.
    pub run_id: String,
    /// The run's workloads and how their threads are found: for a collected run, the processes
    /// the runner started (`tree:`, so every descendant forked while recording inherits the
    /// name); for an imported one, what its user said (`comm:`, `pid:`, `tree:`).
    pub workloads: Vec<WorkloadSelector>,
    /// Bytes of records read so far are added here as the file is read (for a progress bar).
    pub bytes_read: Option<Arc<AtomicU64>>,
    /// Read a file cut short, or one perf did not finish (killed: its header's data size is
    /// 0), up to its last complete record instead of refusing it, with a quality row saying how
    /// many bytes could not be read and which header sections were lost. When the file's
    /// tracepoint formats were lost with its end, the running kernel's tracefs formats with the
    /// same tracepoint ids stand in (right only for a file recorded on this kernel since boot).
    pub salvage: bool,
}

/// Everything read from one perf.data file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SchedTables {
    pub sched_slices: Vec<SchedSliceRow>,
    pub migrations: Vec<MigrationRow>,
    pub wakeups: Vec<WakeupRow>,
    pub threads: Vec<ThreadRow>,
    pub quality: Vec<QualityRow>,
    /// `(start_ns, end_ns)` in which every CPU that recorded anything has data: per-CPU ring
    /// buffers start and stop at different times, so analyses should clip to this span.
    /// `None` when no such span exists.
    pub window: Option<(i64, i64)>,
    /// What recorded the file and on which clock (always set by [`read_sched`] and
    /// [`stream_sched`]).
    pub trace: Option<TraceRow>,
    /// One row per ring-buffer overflow perf reported, with the span it hides.
    pub losses: Vec<LossRow>,
    /// The kernel's own accounting of CPU time (sched_stat_runtime), per thread and CPU: few
    /// rows, so they come with the threads rather than in batches.
    pub sched_runtime: Vec<SchedRuntimeRow>,
}

/// A batch of per-event rows from [`stream_sched`], in time order within each table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SchedBatch {
    pub sched_slices: Vec<SchedSliceRow>,
    pub migrations: Vec<MigrationRow>,
    pub wakeups: Vec<WakeupRow>,
}

/// What the header of a perf.data file says about the recording (machine, perf, CPUs, hybrid
/// core PMUs), without reading its records: what `schedlab import` records of a trace made
/// elsewhere. With `salvage`, a file cut short is read as far as it goes (see
/// [`SchedOptions::salvage`]).
pub fn header_facts(path: &Path, salvage: bool) -> Result<HeaderFacts, PerfError> {
    reader::header_facts(path, salvage)
}

/// Reads a perf.data file into tables. See the crate documentation for the semantics.
pub fn read_sched(path: &Path, opts: &SchedOptions) -> Result<SchedTables, PerfError> {
    let mut all = SchedBatch::default();
    let mut tables = stream_sched(path, opts, |b| {
        all.sched_slices.extend(b.sched_slices);
        all.migrations.extend(b.migrations);
        all.wakeups.extend(b.wakeups);
    })?;
    tables.sched_slices = all.sched_slices;
    tables.migrations = all.migrations;
    tables.wakeups = all.wakeups;
    Ok(tables)
}

/// Reads a perf.data file, handing slices, migrations and wakeups to `on_batch` as they are
/// produced (a few megabytes of trace at a time). The returned tables hold the threads, the
/// quality rows and the window; their per-event tables are empty.
pub fn stream_sched(
    path: &Path,
    opts: &SchedOptions,
    mut on_batch: impl FnMut(SchedBatch) + Send,
) -> Result<SchedTables, PerfError> {
    reader::run(path, opts, |out, strings| {
        on_batch(reader::rows(out, strings))
    })
}

/// Like [`stream_sched`], but hands over each batch in the reader's compact form, which turns
/// into Arrow arrays on whichever thread encodes it (see [`CompactBatch`]): the fast path to
/// Parquet.
pub fn stream_sched_compact(
    path: &Path,
    opts: &SchedOptions,
    mut on_batch: impl FnMut(CompactBatch) + Send,
) -> Result<SchedTables, PerfError> {
    reader::run(path, opts, |out, strings| {
        on_batch(CompactBatch::new(out, &strings.names))
    })
}
