//! One run's tables as a Chrome JSON trace (`schedlab export perfetto --format json`): which
//! rows become which events, on which tracks.
//!
//! | rows | events | track |
//! | --- | --- | --- |
//! | `sched_slices` | `X`, named by the thread's comm | its CPU: thread `CPU n (class)` of the process `CPUs` |
//! | `sched_slices` but the idle task's (tid 0) | `X`, named `CPU n` | its thread, in its process |
//! | `wakeups` | `i`, named by its kind (`waking`, `wakeup`, `wakeup_new`) | the woken thread |
//! | `migrations` | `i`, named `migrate` | the migrated thread |
//! | `cpu_samples`, `turbostat` | `C`: busy %, frequency (MHz), idle states %, package power (W) | the process `CPUs` |
//!
//! The idle task runs on every CPU at once under one tid, so it has the CPU tracks only. Every
//! row's other columns are the event's `args`, so a slice clicked in the UI says its delay and
//! priority. Times are the tables' CLOCK_MONOTONIC less an origin, the whole second at or before
//! the run's first time (`otherData.origin_ns`): the format's fractional microseconds hold
//! nanoseconds exactly only up to 26 days (see [`Micros`]), and a machine's uptime may be
//! longer. A time read in the UI plus the origin finds the rows in a notebook.
//!
//! Perfetto nests the slices of a track, so two that partly overlap are drawn as if one were
//! inside the other. A thread cannot run on two CPUs at once, but its slices can overlap in a
//! trace: where a VM does not trace a CPU's idle-context events (the quality table's "went idle
//! … never shows it leaving idle"), that CPU's slices start when it went idle. On a track, a
//! slice that starts before the track's previous slice ended is therefore drawn from that end
//! on, and its `args` say by how much (`clipped_ns`); the table's rows arrive in time order
//! (of their end), so the previous slice is the one before it in the table.
//!
//! Counters are placed as [`crate::counters`] says.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::AtomicBool;

use schedlab_tables::{
    CpuRow, MigrationRow, Partition, ProcessRow, SchedSliceRow, ThreadRow, TraceRow, WakeupRow,
    read_table,
};
use serde::Serialize;

use crate::ExportError;
use crate::chrome::{Event, Micros, Phase, TraceWriter};
use crate::counters::{Series, run_counters};
use crate::run_tables::{for_each_row, run_partition};

/// The process that holds one thread per CPU and the counters. Linux pids stay below 2^22, so
/// no real process has this one; the CPUs' threads are `CPUS_PID + cpu`, clear of real tids
/// too (Perfetto keeps one thread per tid, whatever the process).
pub const CPUS_PID: u32 = 1 << 30;

/// The process of threads whose process the trace did not say (pid -1).
pub const UNKNOWN_PID: u32 = CPUS_PID - 1;

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ExportSummary {
    /// `X` events on CPU tracks: one per `sched_slices` row.
    pub cpu_slices: u64,
    /// `X` events on thread tracks: one per `sched_slices` row but the idle task's.
    pub thread_slices: u64,
    /// Of these `X` events, those drawn from a later start than their row's: they began before
    /// the previous slice of their track ended.
    pub clipped_slices: u64,
    pub wakeups: u64,
    pub migrations: u64,
    /// `C` events, over every counter.
    pub counters: u64,
    /// The file's size (not in the trace's own copy of this summary).
    #[serde(skip)]
    pub bytes: u64,
}

/// Writes run `run_id`'s trace, from the tables rooted at `tables` (a pipeline's `tables/`),
/// to `out` (replaced whole, or left as it was on error). Setting `interrupt` stops it after the
/// batch of rows at hand, with [`ExportError::Interrupted`] and no file written.
pub fn export_run(
    tables: &Path,
    run_id: &str,
    out: &Path,
    interrupt: &AtomicBool,
) -> Result<ExportSummary, ExportError> {
    let partition = run_partition(tables, run_id)?;
    let counters = run_counters(&partition)?;
    let counter_starts = counters
        .iter()
        .flat_map(|(_, points)| points.iter().map(|p| p.0));
    let origin_ns = origin_ns(&partition, counter_starts)?;
    let mut trace = Trace {
        out: TraceWriter::create(out)?,
        origin_ns,
        named_cpus: HashSet::new(),
        named_threads: HashSet::new(),
        named_processes: HashSet::new(),
        track_ends: HashMap::new(),
        summary: ExportSummary::default(),
    };
    trace.name_cpus(&read_table::<CpuRow>(&partition)?)?;
    trace.name_threads(&read_table::<ThreadRow>(&partition)?)?;
    let rows = (&partition, interrupt);
    for_each_row(rows, |row: SchedSliceRow| trace.slice(&row))?;
    for_each_row(rows, |row: WakeupRow| trace.wakeup(&row))?;
    for_each_row(rows, |row: MigrationRow| trace.migration(&row))?;
    trace.counters(counters)?;
    let Trace {
        out, mut summary, ..
    } = trace;
    let other_data = OtherData {
        run_id,
        origin_ns,
        exporter: concat!("schedlab ", env!("CARGO_PKG_VERSION")),
        clock: "CLOCK_MONOTONIC",
        events: &summary,
    };
    summary.bytes = out.finish(&other_data)?;
    Ok(summary)
}

/// The trace's `otherData`: what it is of, and what it holds.
#[derive(Serialize)]
struct OtherData<'a> {
    run_id: &'a str,
    /// An event's time in the tables is this plus its `ts` times 1000, rounded down.
    origin_ns: i64,
    exporter: &'static str,
    clock: &'static str,
    events: &'a ExportSummary,
}

/// The whole second at or before the run's first time: its trace's first event, its first
/// process start, the start of its first counter interval (a sample describes the interval
/// before it, so a series' first value is placed before its first sample), 0 for a run with
/// none of them.
fn origin_ns(
    partition: &Partition<'_>,
    counter_starts: impl Iterator<Item = i64>,
) -> Result<i64, ExportError> {
    let traces = read_table::<TraceRow>(partition)?;
    let processes = read_table::<ProcessRow>(partition)?;
    let first = (traces.iter().filter_map(|t| t.first_ns))
        .chain(processes.iter().map(|p| p.start_ns))
        .chain(counter_starts)
        .min()
        .unwrap_or(0);
    Ok(first.div_euclid(1_000_000_000) * 1_000_000_000)
}

/// The thread of `cpu` in the CPUs process.
pub fn cpu_tid(cpu: i32) -> u32 {
    CPUS_PID + cpu.max(0) as u32
}

/// The process a thread's events go to.
fn process_of(pid: i32) -> u32 {
    u32::try_from(pid).unwrap_or(UNKNOWN_PID)
}

/// A slice's `args`: the row's columns besides those that make the event.
#[derive(Serialize)]
struct SliceArgs<'a> {
    cpu: i32,
    pid: i32,
    tid: i32,
    prio: Option<i32>,
    prev_state: &'a str,
    wait_ns: i64,
    sched_delay_ns: i64,
    preempt_wait_ns: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    workload: Option<&'a str>,
    /// How much of the slice's start is not drawn: the part before its track's previous slice
    /// ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    clipped_ns: Option<i64>,
}

#[derive(Serialize)]
struct WakeupArgs {
    target_cpu: i32,
    waker_tid: Option<i32>,
}

#[derive(Serialize)]
struct MigrationArgs {
    from_cpu: i32,
    to_cpu: i32,
}

/// A metadata event's `args`.
#[derive(Serialize)]
enum Meta<'a> {
    #[serde(rename = "name")]
    Name(&'a str),
    #[serde(rename = "sort_index")]
    SortIndex(i64),
}

/// The trace being written, and which tracks are named already.
struct Trace {
    out: TraceWriter,
    /// What every time is written relative to.
    origin_ns: i64,
    named_cpus: HashSet<i32>,
    named_threads: HashSet<(u32, i32)>,
    named_processes: HashSet<u32>,
    /// The end of the last slice of each track, (pid, tid).
    track_ends: HashMap<(u32, u32), i64>,
    summary: ExportSummary,
}

impl Trace {
    fn meta(&mut self, name: &str, pid: u32, tid: u32, args: Meta<'_>) -> Result<(), ExportError> {
        self.out.event(&Event {
            name,
            cat: "",
            ph: Phase::Metadata,
            ts: None,
            dur: None,
            pid,
            tid,
            s: None,
            args: SingleKey(args),
        })
    }

    /// The CPUs process first in the UI, and a track per CPU named with its core class.
    fn name_cpus(&mut self, cpus: &[CpuRow]) -> Result<(), ExportError> {
        self.meta("process_name", CPUS_PID, CPUS_PID, Meta::Name("CPUs"))?;
        self.meta(
            "process_sort_index",
            CPUS_PID,
            CPUS_PID,
            Meta::SortIndex(-1),
        )?;
        for cpu in cpus {
            self.name_cpu(cpu.cpu, Some(&cpu.class))?;
        }
        Ok(())
    }

    fn name_cpu(&mut self, cpu: i32, class: Option<&str>) -> Result<(), ExportError> {
        if !self.named_cpus.insert(cpu) {
            return Ok(());
        }
        let name = match class {
            Some(class) => format!("CPU {cpu} ({class})"),
            None => format!("CPU {cpu}"),
        };
        let tid = cpu_tid(cpu);
        self.meta("thread_name", CPUS_PID, tid, Meta::Name(&name))?;
        self.meta(
            "thread_sort_index",
            CPUS_PID,
            tid,
            Meta::SortIndex(cpu.into()),
        )
    }

    /// Names every thread of the `threads` table, and each process after its main thread
    /// (`comm [workload]` for a workload's).
    fn name_threads(&mut self, threads: &[ThreadRow]) -> Result<(), ExportError> {
        // The table's last row of a tid holds its last name.
        let last: BTreeMap<i32, &ThreadRow> = (threads.iter())
            .filter(|t| t.tid != 0)
            .map(|t| (t.tid, t))
            .collect();
        for thread in last.values().filter(|t| t.tid == t.pid) {
            self.name_process(thread.pid, &thread.comm, thread.workload.as_deref())?;
        }
        for thread in last.values() {
            self.name_thread(
                thread.pid,
                thread.tid,
                &thread.comm,
                thread.workload.as_deref(),
            )?;
        }
        Ok(())
    }

    fn name_process(
        &mut self,
        pid: i32,
        comm: &str,
        workload: Option<&str>,
    ) -> Result<(), ExportError> {
        let process = process_of(pid);
        if !self.named_processes.insert(process) {
            return Ok(());
        }
        let name = match (process == UNKNOWN_PID, workload) {
            (true, _) => "process unknown".to_owned(),
            (false, Some(workload)) => format!("{comm} [{workload}]"),
            (false, None) => comm.to_owned(),
        };
        self.meta("process_name", process, process, Meta::Name(&name))
    }

    /// Names a thread's track the first time it is seen (and its process, where no main
    /// thread named it).
    fn name_thread(
        &mut self,
        pid: i32,
        tid: i32,
        comm: &str,
        workload: Option<&str>,
    ) -> Result<(), ExportError> {
        let process = process_of(pid);
        if !self.named_threads.insert((process, tid)) {
            return Ok(());
        }
        self.name_process(pid, comm, workload)?;
        self.meta("thread_name", process, tid as u32, Meta::Name(comm))
    }

    fn slice(&mut self, row: &SchedSliceRow) -> Result<(), ExportError> {
        self.name_cpu(row.cpu, None)?;
        let cpu_track = (CPUS_PID, cpu_tid(row.cpu));
        self.complete(cpu_track, &row.comm, row)?;
        self.summary.cpu_slices += 1;
        if row.tid == 0 {
            return Ok(());
        }
        self.name_thread(row.pid, row.tid, &row.comm, row.workload.as_deref())?;
        let thread_track = (process_of(row.pid), row.tid as u32);
        self.complete(thread_track, &format!("CPU {}", row.cpu), row)?;
        self.summary.thread_slices += 1;
        Ok(())
    }

    /// The slice `row` as an `X` event on `track`, from the end of the track's previous slice
    /// where it started before that.
    fn complete(
        &mut self,
        (pid, tid): (u32, u32),
        name: &str,
        row: &SchedSliceRow,
    ) -> Result<(), ExportError> {
        let previous_end = self.track_ends.entry((pid, tid)).or_insert(i64::MIN);
        let start = row.start_ns.max(*previous_end).min(row.end_ns);
        *previous_end = (*previous_end).max(row.end_ns);
        let clipped_ns = (start > row.start_ns).then(|| start - row.start_ns);
        self.summary.clipped_slices += u64::from(clipped_ns.is_some());
        let args = SliceArgs {
            cpu: row.cpu,
            pid: row.pid,
            tid: row.tid,
            prio: row.prio,
            prev_state: &row.prev_state,
            wait_ns: row.wait_ns,
            sched_delay_ns: row.sched_delay_ns,
            preempt_wait_ns: row.preempt_wait_ns,
            workload: row.workload.as_deref(),
            clipped_ns,
        };
        self.out.event(&Event {
            name,
            cat: "sched",
            ph: Phase::Complete,
            ts: Some(Micros(start - self.origin_ns)),
            dur: Some(Micros(row.end_ns - start)),
            pid,
            tid,
            s: None,
            args,
        })
    }

    /// An instant event on a thread's track.
    fn instant(
        &mut self,
        (pid, tid, comm): (i32, i32, &str),
        name: &str,
        cat: &'static str,
        time_ns: i64,
        args: impl Serialize,
    ) -> Result<(), ExportError> {
        self.name_thread(pid, tid, comm, None)?;
        self.out.event(&Event {
            name,
            cat,
            ph: Phase::Instant,
            ts: Some(Micros(time_ns - self.origin_ns)),
            dur: None,
            pid: process_of(pid),
            tid: tid as u32,
            s: Some("t"),
            args,
        })
    }

    fn wakeup(&mut self, row: &WakeupRow) -> Result<(), ExportError> {
        let args = WakeupArgs {
            target_cpu: row.target_cpu,
            waker_tid: row.waker_tid,
        };
        let thread = (row.pid, row.tid, &*row.comm);
        self.instant(thread, &row.kind, "wakeup", row.time_ns, args)?;
        self.summary.wakeups += 1;
        Ok(())
    }

    fn migration(&mut self, row: &MigrationRow) -> Result<(), ExportError> {
        let args = MigrationArgs {
            from_cpu: row.from_cpu,
            to_cpu: row.to_cpu,
        };
        let thread = (row.pid, row.tid, &*row.comm);
        self.instant(thread, "migrate", "migration", row.time_ns, args)?;
        self.summary.migrations += 1;
        Ok(())
    }

    /// Every counter's events, each value at the start of the interval it describes.
    fn counters(&mut self, counters: Vec<Series>) -> Result<(), ExportError> {
        for (key, points) in counters {
            if let Some(cpu) = key.cpu {
                self.name_cpu(cpu, None)?;
            }
            let tid = key.cpu.map_or(CPUS_PID, cpu_tid);
            for (start, value) in points {
                self.out.event(&Event {
                    name: &key.name,
                    cat: "counter",
                    ph: Phase::Counter,
                    ts: Some(Micros(start - self.origin_ns)),
                    dur: None,
                    pid: CPUS_PID,
                    tid,
                    s: None,
                    args: SingleKey((key.unit, value)),
                })?;
                self.summary.counters += 1;
            }
        }
        Ok(())
    }
}

/// A JSON object of one key: a metadata event's `{"name": …}`, a counter's `{"MHz": …}`.
struct SingleKey<T>(T);

impl Serialize for SingleKey<Meta<'_>> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(1))?;
        match self.0 {
            Meta::Name(name) => map.serialize_entry("name", name)?,
            Meta::SortIndex(index) => map.serialize_entry("sort_index", &index)?,
        }
        map.end()
    }
}

impl Serialize for SingleKey<(&'static str, f64)> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(self.0.0, &self.0.1)?;
        map.end()
    }
}
