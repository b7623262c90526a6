//! The sched state machine for readers of other trace formats.
//!
//! A trace.dat (trace-cmd) holds the same tracepoints as a `perf sched record`, in ftrace's
//! ring-buffer pages instead of perf records: each event's payload is laid out exactly as perf's
//! RAW sample data, by the same `events/<system>/<name>/format` text. So such a reader parses
//! the formats with [`parse_format`], binds the sched tracepoints with [`Tracepoint::bind`],
//! decodes each payload with [`Tracepoint::decode`] and hands the events, in time order, to a
//! [`SchedFeed`]: the `perf sched timehist` state machine this crate runs on perf.data, so that
//! slices, waits, delays, migrations, wakeups and the thread table mean the same whatever
//! recorded them.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use memmap2::Mmap;
use schedlab_tables::{CpuFreqIdleRow, SchedRuntimeRow};

use crate::compact::CompactBatch;
use crate::intern::{Names, Strings};
use crate::reader::{idle_blind_notes, rows, thread_rows, window};
use crate::runtime::RuntimeSums;
use crate::threads::Threads;
use crate::timehist::Timehist;
use crate::{SchedBatch, SchedOptions, SchedTables, ThreadRow};

pub use crate::cpu_states::CpuStates;
pub use crate::decode::{Body, Event};
pub use crate::le::Comm;
pub use crate::metadata::{Tracepoint, WakeKind};
pub use crate::task_state::TaskStates;
pub use crate::tracefmt::{Field, Format, Loc, TraceError, parse_field, parse_format};

impl Tracepoint {
    /// The sched tracepoint `format` describes, bound to its fields (`None` for a tracepoint the
    /// state machine does not use: sched_stat_runtime is no event, but summed, with
    /// [`SchedFeed::runtime`]); `Err` names a field the format lacks.
    pub fn bind(format: &Format) -> Result<Option<Tracepoint>, &'static str> {
        Ok(crate::metadata::bind(format)?.filter(|tp| !matches!(tp, Tracepoint::Runtime { .. })))
    }

    /// The event a payload of this tracepoint says; `Err` says why it could not be read (a
    /// field outside the payload).
    pub fn decode(&self, payload: &[u8]) -> Result<Body, &'static str> {
        crate::decode::payload_body(self, payload)
    }
}

/// A task name as the kernel stores it (its first 16 bytes, NUL-padded), from a name given as
/// text.
pub fn comm(name: &str) -> Comm {
    crate::le::comm_from(name.as_bytes())
}

/// The command name each thread had last, to tell the state machine when it changes.
///
/// perf writes a COMM record when a task execs or renames itself, and the state machine renames
/// the thread (and a thread of no workload joins the one that selects the new name). ftrace
/// has no such records, but every sched_switch names the task it switches out, as
/// sched_process_exec does the task that execs: where that name differs from the one the
/// thread had, [`Renames::rename`] gives the rename to feed first, as perf's COMM record would.
#[derive(Debug, Default)]
pub struct Renames(std::collections::HashMap<i32, Comm>);

impl Renames {
    /// The rename to feed before `body`, if it names a thread by a new name (a rename fed
    /// as such, [`Body::Comm`], is noted and needs none).
    pub fn rename(&mut self, body: &Body) -> Option<Body> {
        let (tid, comm) = match *body {
            Body::Switch {
                prev_pid,
                prev_comm,
                ..
            } => (prev_pid, prev_comm),
            Body::ProcessExec { pid, comm } => (pid, comm),
            Body::ProcessFork {
                child_pid,
                child_comm,
                ..
            } => {
                self.0.insert(child_pid, child_comm);
                return None;
            }
            Body::Comm { tid, comm, .. } => {
                self.0.insert(tid, comm);
                return None;
            }
            _ => return None,
        };
        self.name(tid, comm)
    }

    /// The rename to feed when an event names thread `tid` `comm` (for readers whose other
    /// events name threads too, as a wakeup names the woken one).
    pub fn name(&mut self, tid: i32, comm: Comm) -> Option<Body> {
        let before = self.0.insert(tid, comm)?;
        (tid > 0 && before != comm).then_some(Body::Comm { pid: -1, tid, comm })
    }
}

/// Maps a trace file read-only, as every reader reads one; `Ok(None)` for an empty file, which
/// cannot be mapped (each reader says what its format starts with).
pub fn map_trace(path: &Path) -> std::io::Result<Option<Mmap>> {
    let file = File::open(path)?;
    if file.metadata()?.len() == 0 {
        return Ok(None);
    }
    // SAFETY: the mapping is read-only and private to this call; trace files are written once
    // and not modified while schedlab reads them (raw data is immutable after a run).
    unsafe { Mmap::map(&file) }.map(Some)
}

/// Everything a reader of another format gives for one trace: the tables a perf.data gives,
/// and the spans of each CPU's frequency and idle state (`power:cpu_frequency` and
/// `power:cpu_idle`; empty when streamed).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FeedTables {
    /// The tables a perf.data gives (see [`SchedTables`]).
    pub sched: SchedTables,
    pub cpu_freq_idle: Vec<CpuFreqIdleRow>,
}

/// A reader's whole tables from its streaming function: `stream` reads the trace, handing
/// each batch of rows and spans to the function it is given, and returns the rest of the
/// tables; the batches are gathered into them.
pub fn read_whole<E>(
    stream: impl FnOnce(&mut dyn FnMut(SchedBatch, Vec<CpuFreqIdleRow>)) -> Result<FeedTables, E>,
) -> Result<FeedTables, E> {
    let mut all = SchedBatch::default();
    let mut spans = Vec::new();
    let mut tables = stream(&mut |batch, more| {
        all.append(batch);
        spans.extend(more);
    })?;
    tables.sched.sched_slices = all.sched_slices;
    tables.sched.migrations = all.migrations;
    tables.sched.wakeups = all.wakeups;
    tables.cpu_freq_idle = spans;
    Ok(tables)
}

/// `perf sched timehist`'s state machine, fed one event at a time (see the module doc).
pub struct SchedFeed {
    timehist: Timehist,
    strings: Strings,
    runtime: RuntimeSums,
}

/// What the state machine knows once the trace is read, besides the per-event rows.
#[derive(Debug, Clone, Default)]
pub struct FeedSummary {
    pub threads: Vec<ThreadRow>,
    /// The span in which every CPU that switched has data (see [`crate::SchedTables::window`]).
    pub window: Option<(i64, i64)>,
    /// Per CPU with sched_switch events: (cpu, first, last switch time).
    pub cpu_spans: Vec<(i32, u64, u64)>,
    /// Warnings about CPUs whose idle-context events are missing, with the CPU each is about.
    pub idle_blind: Vec<(i32, String)>,
    /// Events whose CPU was out of range, and were skipped.
    pub bad_cpu: u64,
    /// The sched_stat_runtime updates summed per thread and CPU, as perf.data's reader sums
    /// them (empty when the trace has none).
    pub sched_runtime: Vec<SchedRuntimeRow>,
}

impl FeedSummary {
    /// The warnings of what the state machine noticed, each with the CPU it is about: CPUs
    /// whose idle went untraced, and events skipped for an impossible CPU. `file` names the
    /// trace.
    pub fn warnings(&self, file: &str) -> Vec<(String, Option<i32>)> {
        let mut warnings: Vec<(String, Option<i32>)> = (self.idle_blind.iter())
            .map(|(cpu, message)| (message.clone(), Some(*cpu)))
            .collect();
        if self.bad_cpu > 0 {
            warnings.push((
                format!(
                    "{file}: {} events named an impossible CPU and were skipped",
                    self.bad_cpu
                ),
                None,
            ));
        }
        warnings
    }
}

impl SchedFeed {
    /// A state machine for the run `opts` names; `task_states` are the `prev_state` letters of
    /// the recording kernel (from its sched_switch print format).
    ///
    /// perf takes a wakeup's delay from sched_waking when the file recorded it, and from
    /// sched_wakeup otherwise, by the file's list of events. A trace.dat has no such list (its
    /// format section describes every event of the kernel), so here the first sched_waking
    /// decides: the wakeups before it count as perf's would in a file without sched_waking.
    /// The kernel emits sched_waking before the sched_wakeup of the same wakeup, and only a
    /// thread's first wakeup since it switched out starts its delay, so this differs only for a
    /// wakeup whose sched_waking was lost.
    pub fn new(opts: &SchedOptions, task_states: TaskStates) -> Self {
        let selectors = (opts.workloads.iter().enumerate())
            .map(|(i, w)| (w.select.clone(), i as u16))
            .collect();
        let names = Names::new(&opts.run_id, &opts.workloads, task_states);
        SchedFeed {
            timehist: Timehist::new(Threads::new(selectors), false),
            strings: Strings::new(Arc::new(names)),
            runtime: RuntimeSums::default(),
        }
    }

    /// One event; events must come in time order (equal times in the order to apply them).
    pub fn event(&mut self, e: &Event) {
        if let Body::Wake {
            kind: WakeKind::Waking,
            ..
        } = e.body
        {
            self.timehist.has_waking = true;
        }
        self.timehist.event(e);
    }

    /// One sched_stat_runtime update: thread `tid` ran `runtime` ns, said by `cpu` at `time`.
    /// `pid` is the thread's process where the event says it; `comm` is the event's name of
    /// the thread. Updates are summed, not state: their order does not matter.
    pub fn runtime(
        &mut self,
        (cpu, tid, pid): (i32, i32, Option<i32>),
        runtime: u64,
        time: u64,
        comm: Comm,
    ) {
        self.runtime.add((cpu, tid, pid), runtime, time, || comm);
    }

    /// The slices, migrations and wakeups since the last take, as rows.
    pub fn take_rows(&mut self) -> SchedBatch {
        rows(self.timehist.take_output(), &mut self.strings)
    }

    /// The slices, migrations and wakeups since the last take, in compact form.
    pub fn take_compact(&mut self) -> CompactBatch {
        CompactBatch::new(self.timehist.take_output(), &self.strings.names)
    }

    /// The thread table and what the state machine noticed; `file` names the trace in the
    /// warnings. Take the last rows first.
    pub fn finish(mut self, file: &str) -> FeedSummary {
        let sched_runtime = (self.runtime).rows(&self.strings.names, &self.timehist.threads);
        FeedSummary {
            threads: thread_rows(&self.timehist, &mut self.strings),
            window: window(&self.timehist),
            cpu_spans: self.timehist.cpu_spans(),
            idle_blind: idle_blind_notes(file, &self.timehist, !sched_runtime.is_empty()),
            bad_cpu: self.timehist.bad_cpu,
            sched_runtime,
        }
    }
}
