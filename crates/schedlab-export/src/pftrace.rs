//! One run's tables as a Perfetto protobuf trace (`.pftrace`): the kernel events Perfetto's
//! own recorder writes, so that ui.perfetto.dev draws its CPU scheduling tracks, thread states
//! and wakeups, and trace processor fills `sched`, `thread_state` and `counter`.
//!
//! | rows | packets |
//! | --- | --- |
//! | `sched_slices` | a `sched_switch` at each slice's end, in its CPU's `FtraceEventBundle`: prev the slice's thread, next the thread of the CPU's next slice |
//! | `wakeups` | `sched_waking`, `sched_wakeup`, `sched_wakeup_new` by kind, event pid the waker, in the target CPU's bundle |
//! | `migrations` | `sched_migrate_task`, in the destination CPU's bundle |
//! | `threads` (end) | `sched_process_exit` at the thread's end, in the bundle of the CPU it last ran on |
//! | `cpu_freq_idle` | `cpu_frequency`, `cpu_idle` where a CPU's value changes |
//! | `sched_runtime` | a `sched_stat_runtime` per row at its `last_ns`, in its CPU's bundle, its `runtime` the row's sum (a `GenericFtraceEvent`, as Perfetto's recorder writes that event) |
//! | `threads`, `processes` | `ProcessTree`: each process (a workload's with its argv) and thread with its name |
//! | `traces`, `cpus` | `SystemInfo` (kernel release, machine), `CpuInfo` (each CPU's core class as its `processor`) |
//! | `cpu_samples`, `turbostat` | counter tracks (`TrackDescriptor` + `TrackEvent`), as [`crate::counters`] places them |
//! | `processes` | the workloads' lifetimes, a slice each on a child track of `workloads` |
//!
//! The tables hold slices, but Perfetto derives them from switches, so each slice gives the
//! switch that ended it: a CPU's slices follow one another, so that switch also starts the
//! next. Where a CPU's next slice starts later than the last ended (its first slice, or a gap
//! in the trace), the idle task fills the gap: a switch to it at the end, and from it at the
//! next start, so every slice's times come back as they are in the table. An empty first slice
//! (the CPU's first switch, before which the trace saw nothing) is that switch alone, so that a
//! reader of the trace gives the same slices as the table. `prev_state` goes
//! back to the kernel's bits through [`TaskStates::bits`] (the letters of Linux 4.14 and
//! later, which Perfetto decodes for such kernels).
//!
//! Times are the tables' CLOCK_MONOTONIC nanoseconds as they are. Perfetto takes ftrace times
//! and track events without a clock as its boot-time clock, the trace's own: the times shown
//! are the tables' (the two clocks differ only by the time a machine was suspended).
//!
//! `sched_runtime` holds sums, not the kernel's events, so each sum goes back as one event:
//! a reader sums the same `runtime_ns` and `last_ns` per thread and CPU, but its `events` is
//! 1 and its `first_ns` the `last_ns`. The event has no `vruntime`, which the table lacks.
//!
//! The event tables are read a Parquet batch at a time, and events go into per-CPU bundles of
//! at most [`BUNDLE_EVENTS`], written as they fill: memory holds a batch, the bundles, the
//! slice pending on each CPU and a CPU per thread, never the events.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use schedlab_perf::feed::TaskStates;
use schedlab_perfetto_protos::ftrace_event::Event;
use schedlab_perfetto_protos::generic_ftrace_event::{Field, field::Value};
use schedlab_perfetto_protos::trace_packet::{
    Data, OptionalTrustedPacketSequenceId, SequenceFlags,
};
use schedlab_perfetto_protos::track_descriptor::StaticOrDynamicName;
use schedlab_perfetto_protos::track_event::{CounterValueField, NameField, Type};
use schedlab_perfetto_protos::{
    CounterDescriptor, CpuFrequencyFtraceEvent, CpuIdleFtraceEvent, CpuInfo, FtraceEvent,
    FtraceEventBundle, GenericFtraceEvent, ProcessTree, SchedMigrateTaskFtraceEvent,
    SchedProcessExitFtraceEvent, SchedSwitchFtraceEvent, SchedWakeupFtraceEvent,
    SchedWakeupNewFtraceEvent, SchedWakingFtraceEvent, SystemInfo, TracePacket, TrackDescriptor,
    TrackEvent, Utsname, cpu_info, process_tree,
};
use schedlab_tables::{
    CpuFreqIdleRow, CpuRow, MigrationRow, ProcessRow, SchedRuntimeRow, SchedSliceRow, ThreadRow,
    TraceRow, WakeupRow, read_table,
};
use serde::Serialize;

use crate::ExportError;
use crate::counters::{Series, run_counters};
use crate::packets::PacketWriter;
use crate::run_tables::{for_each_row, run_partition};

/// The most events a bundle holds before it is written: Perfetto's own recorder writes a
/// bundle per ring-buffer read, of about this many events.
pub const BUNDLE_EVENTS: usize = 4096;

/// The packet sequence of the track descriptors and track events (Perfetto requires one for
/// them; ftrace bundles need none).
pub const TRACK_SEQUENCE: u32 = 1;

/// The uuid of the `workloads` track; its children, one per workload process, follow it.
pub const WORKLOADS_TRACK: u64 = 1 << 32;

/// The uuid of the first counter track; the others follow it.
pub const COUNTER_TRACKS: u64 = 2 << 32;

/// The priority the idle task has in sched_switch (`MAX_PRIO`).
const IDLE_PRIO: i32 = 120;

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PftraceSummary {
    /// sched_switch events: one per slice, and those of the idle task that fill gaps.
    pub switches: u64,
    /// Slices whose `prev_state` letters are not the kernel's (written without a state).
    pub unknown_states: u64,
    pub wakeups: u64,
    pub migrations: u64,
    pub exits: u64,
    pub cpu_frequency: u64,
    pub cpu_idle: u64,
    /// sched_stat_runtime events: one per `sched_runtime` row (a sum, not the kernel's
    /// events).
    pub runtime_sums: u64,
    pub processes: u64,
    pub threads: u64,
    /// Values over every counter track.
    pub counters: u64,
    /// Workload processes drawn on the `workloads` track.
    pub workloads: u64,
    /// The file's size.
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
) -> Result<PftraceSummary, ExportError> {
    let partition = run_partition(tables, run_id)?;
    let threads = read_table::<ThreadRow>(&partition)?;
    let processes = read_table::<ProcessRow>(&partition)?;
    let mut trace = Trace {
        out: PacketWriter::create(out)?,
        states: TaskStates::since_4_14(),
        bundles: BTreeMap::new(),
        pending: HashMap::new(),
        last_cpu: HashMap::new(),
        track_packets: 0,
        summary: PftraceSummary::default(),
    };
    let cpus = read_table::<CpuRow>(&partition)?;
    trace.machine(&read_table::<TraceRow>(&partition)?, &cpus)?;
    trace.process_tree(&threads, &processes)?;
    let rows = (&partition, interrupt);
    for_each_row(rows, |row: SchedSliceRow| trace.slice(&row))?;
    trace.last_switches()?;
    for_each_row(rows, |row: WakeupRow| trace.wakeup(&row))?;
    for_each_row(rows, |row: MigrationRow| trace.migration(&row))?;
    trace.exits(&threads)?;
    trace.freq_idle(read_table::<CpuFreqIdleRow>(&partition)?)?;
    trace.flush_bundles()?;
    trace.runtime_sums(read_table::<SchedRuntimeRow>(&partition)?)?;
    trace.flush_bundles()?;
    trace.workloads(&processes)?;
    trace.counters(run_counters(&partition)?)?;
    let Trace {
        out, mut summary, ..
    } = trace;
    summary.bytes = out.finish()?;
    Ok(summary)
}

/// A slice whose switch-out waits for the CPU's next slice, which names the next thread.
struct Pending {
    tid: i32,
    comm: Arc<str>,
    prio: Option<i32>,
    prev_state: Arc<str>,
    end_ns: i64,
}

/// The thread a switch names: (tid, comm, prio).
type Task<'a> = (i32, &'a str, Option<i32>);

/// The trace being written.
struct Trace {
    out: PacketWriter,
    /// The letters of `prev_state` and the kernel bits they stand for.
    states: TaskStates,
    /// Each CPU's events not yet written.
    bundles: BTreeMap<u32, Vec<FtraceEvent>>,
    /// Each CPU's last slice, until the next one says whom it switched to.
    pending: HashMap<i32, Pending>,
    /// The CPU each thread last ran on, for its exit.
    last_cpu: HashMap<i32, i32>,
    /// Packets written on [`TRACK_SEQUENCE`].
    track_packets: u64,
    summary: PftraceSummary,
}

/// An ftrace time: CLOCK_MONOTONIC is never negative.
fn stamp(time_ns: i64) -> Option<u64> {
    Some(time_ns.max(0) as u64)
}

/// An event of task `pid`; `None` where the table does not know it (a waker perf could not
/// name), which a reader takes for unknown rather than for the idle task.
fn ftrace_event(time_ns: i64, pid: Option<i32>, event: Event) -> FtraceEvent {
    FtraceEvent {
        timestamp: stamp(time_ns),
        pid: pid.map(|pid| pid.max(0) as u32),
        common_flags: None,
        event: Some(event),
    }
}

impl Trace {
    /// The machine: kernel and architecture from the `traces` table, and each CPU's class.
    fn machine(&mut self, traces: &[TraceRow], cpus: &[CpuRow]) -> Result<(), ExportError> {
        let first = traces
            .iter()
            .find(|t| t.os_release.is_some() || t.arch.is_some());
        let utsname = Utsname {
            sysname: Some("Linux".to_owned()),
            version: None,
            release: first.and_then(|t| t.os_release.clone()),
            machine: first.and_then(|t| t.arch.clone()),
        };
        let top = cpus.iter().map(|c| c.cpu).max();
        let num_cpus = top.map(|top| top as u32 + 1);
        self.packet(
            None,
            Data::SystemInfo(SystemInfo {
                utsname: Some(utsname),
                page_size: None,
                num_cpus,
            }),
        )?;
        if cpus.is_empty() {
            return Ok(());
        }
        // CpuInfo lists CPUs by number, from 0.
        let by_number: HashMap<i32, &CpuRow> = cpus.iter().map(|c| (c.cpu, c)).collect();
        let cpus = (0..=top.unwrap_or(0))
            .map(|n| cpu_info::Cpu {
                processor: Some(by_number.get(&n).map_or("unknown", |c| &c.class).to_owned()),
                frequencies: Vec::new(),
                capacity: (by_number.get(&n).and_then(|c| c.capacity))
                    .and_then(|c| u32::try_from(c).ok()),
            })
            .collect();
        self.packet(None, Data::CpuInfo(CpuInfo { cpus }))
    }

    /// Every process and thread the `threads` table names (see [`process_tree`]).
    fn process_tree(
        &mut self,
        threads: &[ThreadRow],
        processes: &[ProcessRow],
    ) -> Result<(), ExportError> {
        let tree = process_tree(threads, processes);
        self.summary.processes = tree.processes.len() as u64;
        self.summary.threads = tree.threads.len() as u64;
        let first = threads.iter().filter_map(|t| t.start_ns).min();
        self.packet(first, Data::ProcessTree(tree))
    }

    /// One slice: the switch that ended the CPU's previous slice (and started this one).
    fn slice(&mut self, row: &SchedSliceRow) -> Result<(), ExportError> {
        let next = (row.tid, &*row.comm, row.prio);
        match self.pending.remove(&row.cpu) {
            Some(previous) if previous.end_ns >= row.start_ns => {
                self.switch_out(row.cpu, &previous, next)?;
            }
            Some(previous) => {
                self.switch_out(row.cpu, &previous, idle(row.cpu).as_task())?;
                self.switch_in(row.cpu, row.start_ns, next)?;
            }
            // An empty first slice is the CPU's first switch, whose start the trace did not
            // see: that switch alone gives it back, as it gave it to the reader.
            None if row.start_ns == row.end_ns => {}
            None => self.switch_in(row.cpu, row.start_ns, next)?,
        }
        self.pending.insert(
            row.cpu,
            Pending {
                tid: row.tid,
                comm: row.comm.clone(),
                prio: row.prio,
                prev_state: row.prev_state.clone(),
                end_ns: row.end_ns,
            },
        );
        if row.tid != 0 {
            self.last_cpu.insert(row.tid, row.cpu);
        }
        Ok(())
    }

    /// The switches that end each CPU's last slice, to the idle task.
    fn last_switches(&mut self) -> Result<(), ExportError> {
        let mut pending: Vec<(i32, Pending)> = self.pending.drain().collect();
        pending.sort_by_key(|(cpu, _)| *cpu);
        for (cpu, slice) in pending {
            self.switch_out(cpu, &slice, idle(cpu).as_task())?;
        }
        self.flush_bundles()
    }

    /// The switch at `slice`'s end, from its thread to `next`.
    fn switch_out(&mut self, cpu: i32, slice: &Pending, next: Task<'_>) -> Result<(), ExportError> {
        let prev_state = self.states.bits(&slice.prev_state);
        self.summary.unknown_states += u64::from(prev_state.is_none());
        let prev = (slice.tid, &*slice.comm, slice.prio);
        self.switch(cpu, slice.end_ns, prev, prev_state, next)
    }

    /// A switch from the idle task to `next` at `time_ns`: a CPU's first slice, or the end of a
    /// gap.
    fn switch_in(&mut self, cpu: i32, time_ns: i64, next: Task<'_>) -> Result<(), ExportError> {
        self.switch(cpu, time_ns, idle(cpu).as_task(), Some(0), next)
    }

    fn switch(
        &mut self,
        cpu: i32,
        time_ns: i64,
        (prev_pid, prev_comm, prev_prio): Task<'_>,
        prev_state: Option<i64>,
        (next_pid, next_comm, next_prio): Task<'_>,
    ) -> Result<(), ExportError> {
        let event = Event::SchedSwitch(SchedSwitchFtraceEvent {
            prev_comm: Some(prev_comm.to_owned()),
            prev_pid: Some(prev_pid),
            prev_prio,
            prev_state,
            next_comm: Some(next_comm.to_owned()),
            next_pid: Some(next_pid),
            next_prio,
        });
        self.summary.switches += 1;
        self.push(cpu, ftrace_event(time_ns, Some(prev_pid), event))
    }

    /// A wakeup, as the event of its kind, from its waker (the event's pid).
    fn wakeup(&mut self, row: &WakeupRow) -> Result<(), ExportError> {
        let (comm, pid, target_cpu) = (
            Some(row.comm.to_string()),
            Some(row.tid),
            Some(row.target_cpu),
        );
        let success = Some(1);
        let event = match &*row.kind {
            "waking" => Event::SchedWaking(SchedWakingFtraceEvent {
                comm,
                pid,
                prio: None,
                success,
                target_cpu,
            }),
            "wakeup_new" => Event::SchedWakeupNew(SchedWakeupNewFtraceEvent {
                comm,
                pid,
                prio: None,
                success,
                target_cpu,
            }),
            _ => Event::SchedWakeup(SchedWakeupFtraceEvent {
                comm,
                pid,
                prio: None,
                success,
                target_cpu,
            }),
        };
        self.summary.wakeups += 1;
        self.push(
            row.target_cpu,
            ftrace_event(row.time_ns, row.waker_tid, event),
        )
    }

    fn migration(&mut self, row: &MigrationRow) -> Result<(), ExportError> {
        let event = Event::SchedMigrateTask(SchedMigrateTaskFtraceEvent {
            comm: Some(row.comm.to_string()),
            pid: Some(row.tid),
            prio: None,
            orig_cpu: Some(row.from_cpu),
            dest_cpu: Some(row.to_cpu),
            running: None,
            load: None,
        });
        self.summary.migrations += 1;
        self.push(row.to_cpu, ftrace_event(row.time_ns, Some(0), event))
    }

    /// sched_process_exit of every thread the trace saw end.
    fn exits(&mut self, threads: &[ThreadRow]) -> Result<(), ExportError> {
        for thread in threads.iter().filter(|t| t.tid > 0) {
            let Some(end_ns) = thread.end_ns else {
                continue;
            };
            let event = Event::SchedProcessExit(SchedProcessExitFtraceEvent {
                comm: Some(thread.comm.to_string()),
                pid: Some(thread.tid),
                tgid: (thread.pid > 0).then_some(thread.pid),
                prio: None,
            });
            let cpu = self.last_cpu.get(&thread.tid).copied().unwrap_or(0);
            self.summary.exits += 1;
            self.push(cpu, ftrace_event(end_ns, Some(thread.tid), event))?;
        }
        Ok(())
    }

    /// cpu_frequency and cpu_idle where a CPU's frequency or idle state changes.
    fn freq_idle(&mut self, mut rows: Vec<CpuFreqIdleRow>) -> Result<(), ExportError> {
        rows.sort_by_key(|r| (r.cpu, r.start_ns));
        let mut last: HashMap<i32, (Option<i64>, Option<i32>)> = HashMap::new();
        for row in &rows {
            let (freq, idle) = last.entry(row.cpu).or_default();
            let cpu_id = Some(row.cpu.max(0) as u32);
            let new_freq = row.freq_khz.filter(|&khz| *freq != Some(khz));
            let new_idle = row.idle_state.filter(|&state| *idle != Some(state));
            *freq = row.freq_khz.or(*freq);
            *idle = row.idle_state.or(*idle);
            if let Some(khz) = new_freq {
                let state = Some(u32::try_from(khz).unwrap_or(u32::MAX));
                let event = Event::CpuFrequency(CpuFrequencyFtraceEvent { state, cpu_id });
                self.summary.cpu_frequency += 1;
                self.push(row.cpu, ftrace_event(row.start_ns, Some(0), event))?;
            }
            if let Some(state) = new_idle {
                // The kernel's exit value, -1, is (u32)-1 in the event.
                let state = Some(state as u32);
                let event = Event::CpuIdle(CpuIdleFtraceEvent { state, cpu_id });
                self.summary.cpu_idle += 1;
                self.push(row.cpu, ftrace_event(row.start_ns, Some(0), event))?;
            }
        }
        Ok(())
    }

    /// A sched_stat_runtime per sum, at its last update, each CPU's in time order.
    fn runtime_sums(&mut self, mut rows: Vec<SchedRuntimeRow>) -> Result<(), ExportError> {
        rows.sort_by_key(|r| (r.cpu, r.last_ns, r.tid));
        for row in &rows {
            let field = |name: &str, value| Field {
                name: Some(name.to_owned()),
                value: Some(value),
            };
            let event = Event::Generic(GenericFtraceEvent {
                event_name: Some("sched_stat_runtime".to_owned()),
                field: vec![
                    field("comm", Value::StrValue(row.comm.clone())),
                    field("pid", Value::IntValue(row.tid.into())),
                    field("runtime", Value::UintValue(row.runtime_ns.max(0) as u64)),
                ],
            });
            self.summary.runtime_sums += 1;
            // The kernel updates a task's runtime mostly from the task itself.
            self.push(row.cpu, ftrace_event(row.last_ns, Some(row.tid), event))?;
        }
        Ok(())
    }

    /// Adds `event` to `cpu`'s bundle, writing the bundle once it is full.
    fn push(&mut self, cpu: i32, event: FtraceEvent) -> Result<(), ExportError> {
        let cpu = cpu.max(0) as u32;
        let bundle = self.bundles.entry(cpu).or_default();
        bundle.push(event);
        if bundle.len() >= BUNDLE_EVENTS {
            let events = std::mem::take(bundle);
            self.bundle(cpu, events)?;
        }
        Ok(())
    }

    /// Writes every bundle that holds events.
    fn flush_bundles(&mut self) -> Result<(), ExportError> {
        for (cpu, events) in std::mem::take(&mut self.bundles) {
            if !events.is_empty() {
                self.bundle(cpu, events)?;
            }
        }
        Ok(())
    }

    fn bundle(&mut self, cpu: u32, event: Vec<FtraceEvent>) -> Result<(), ExportError> {
        let bundle = FtraceEventBundle {
            cpu: Some(cpu),
            event,
            ..FtraceEventBundle::default()
        };
        self.packet(None, Data::FtraceEvents(bundle))
    }

    /// Each workload process's lifetime as a slice on its own child track of `workloads`
    /// (workloads overlap, and slices on one track must nest).
    fn workloads(&mut self, processes: &[ProcessRow]) -> Result<(), ExportError> {
        if processes.is_empty() {
            return Ok(());
        }
        self.track(TrackDescriptor {
            uuid: Some(WORKLOADS_TRACK),
            static_or_dynamic_name: Some(StaticOrDynamicName::Name("workloads".to_owned())),
            ..TrackDescriptor::default()
        })?;
        for (i, process) in processes.iter().enumerate() {
            let uuid = WORKLOADS_TRACK + 1 + i as u64;
            let name = format!("{} #{}", process.workload, process.instance);
            self.track(TrackDescriptor {
                uuid: Some(uuid),
                parent_uuid: Some(WORKLOADS_TRACK),
                static_or_dynamic_name: Some(StaticOrDynamicName::Name(name.clone())),
                sibling_order_rank: Some(i as i32),
                ..TrackDescriptor::default()
            })?;
            let begin = TrackEvent {
                r#type: Some(Type::SliceBegin.into()),
                track_uuid: Some(uuid),
                name_field: Some(NameField::Name(format!("{name} (pid {})", process.pid))),
                counter_value_field: None,
            };
            self.track_event(process.start_ns, begin)?;
            if let Some(end_ns) = process.end_ns {
                let end = TrackEvent {
                    r#type: Some(Type::SliceEnd.into()),
                    track_uuid: Some(uuid),
                    name_field: None,
                    counter_value_field: None,
                };
                self.track_event(end_ns, end)?;
            }
            self.summary.workloads += 1;
        }
        Ok(())
    }

    /// A counter track per series, with its values.
    fn counters(&mut self, counters: Vec<Series>) -> Result<(), ExportError> {
        for (i, (key, points)) in counters.into_iter().enumerate() {
            let uuid = COUNTER_TRACKS + i as u64;
            self.track(TrackDescriptor {
                uuid: Some(uuid),
                static_or_dynamic_name: Some(StaticOrDynamicName::Name(key.name)),
                counter: Some(CounterDescriptor {
                    unit: None,
                    unit_name: Some(key.unit.to_owned()),
                }),
                ..TrackDescriptor::default()
            })?;
            for (start, value) in points {
                let event = TrackEvent {
                    r#type: Some(Type::Counter.into()),
                    track_uuid: Some(uuid),
                    name_field: None,
                    counter_value_field: Some(CounterValueField::DoubleCounterValue(value)),
                };
                self.track_event(start, event)?;
                self.summary.counters += 1;
            }
        }
        Ok(())
    }

    fn track(&mut self, descriptor: TrackDescriptor) -> Result<(), ExportError> {
        self.sequence_packet(None, Data::TrackDescriptor(descriptor))
    }

    fn track_event(&mut self, time_ns: i64, event: TrackEvent) -> Result<(), ExportError> {
        self.sequence_packet(Some(time_ns), Data::TrackEvent(event))
    }

    /// A packet of [`TRACK_SEQUENCE`]; its first says the sequence starts with no state.
    fn sequence_packet(&mut self, time_ns: Option<i64>, data: Data) -> Result<(), ExportError> {
        let first = self.track_packets == 0;
        self.track_packets += 1;
        self.out.packet(&TracePacket {
            timestamp: time_ns.and_then(stamp),
            data: Some(data),
            optional_trusted_packet_sequence_id: Some(
                OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(TRACK_SEQUENCE),
            ),
            sequence_flags: first.then_some(SequenceFlags::SeqIncrementalStateCleared as u32),
            ..TracePacket::default()
        })
    }

    fn packet(&mut self, time_ns: Option<i64>, data: Data) -> Result<(), ExportError> {
        self.out.packet(&TracePacket {
            timestamp: time_ns.and_then(stamp),
            data: Some(data),
            ..TracePacket::default()
        })
    }
}

/// The idle task of `cpu`, as the kernel names it in sched_switch.
struct Idle(String);

fn idle(cpu: i32) -> Idle {
    Idle(format!("swapper/{cpu}"))
}

impl Idle {
    fn as_task(&self) -> Task<'_> {
        (0, &self.0, Some(IDLE_PRIO))
    }
}

/// Every process and thread the `threads` table names, with its last name; a workload's
/// process with its command line. A process is the row of its main thread: a thread whose
/// main thread the table lacks (perf saw it forked by a task it never named) keeps its tgid,
/// and no process is made up for it, which a reader would take for a thread the trace held.
fn process_tree(threads: &[ThreadRow], processes: &[ProcessRow]) -> ProcessTree {
    // The table's last row of a tid holds its last name.
    let last: BTreeMap<i32, &ThreadRow> = (threads.iter())
        .filter(|t| t.tid > 0)
        .map(|t| (t.tid, t))
        .collect();
    let argv: HashMap<i32, &[String]> = (processes.iter())
        .filter(|p| !p.argv.is_empty())
        .map(|p| (p.pid, &p.argv[..]))
        .collect();
    let mut tree = ProcessTree::default();
    let is_main = |t: &ThreadRow| t.pid == t.tid;
    for main in last.values().filter(|t| is_main(t)) {
        let pid = main.pid;
        let parent = main.parent_tid.and_then(|p| last.get(&p)).map(|p| p.pid);
        let (cmdline, is_comm) = match argv.get(&pid) {
            Some(argv) => (argv.to_vec(), false),
            None => (vec![main.comm.to_string()], true),
        };
        tree.processes.push(process_tree::Process {
            pid: Some(pid),
            ppid: parent.filter(|&p| p > 0),
            cmdline,
            cmdline_is_comm: Some(is_comm),
        });
    }
    // A workload process the trace never saw run still has its command line.
    for (&pid, argv) in (argv.iter()).filter(|(pid, _)| !last.get(pid).is_some_and(|t| is_main(t)))
    {
        tree.processes.push(process_tree::Process {
            pid: Some(pid),
            ppid: None,
            cmdline: argv.to_vec(),
            cmdline_is_comm: Some(false),
        });
    }
    for thread in last.values() {
        tree.threads.push(process_tree::Thread {
            tid: Some(thread.tid),
            tgid: (thread.pid > 0).then_some(thread.pid),
            name: Some(thread.comm.to_string()),
        });
    }
    tree
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(tid: i32, pid: i32, comm: &str) -> ThreadRow {
        ThreadRow {
            run_id: "r".into(),
            tid,
            pid,
            parent_tid: None,
            comm: comm.into(),
            start_ns: None,
            end_ns: None,
            workload: None,
            first_run_ns: None,
            last_run_ns: None,
        }
    }

    #[test]
    fn a_thread_whose_main_thread_the_table_lacks_gets_no_made_up_process() {
        // Process 20 with its main thread and another; thread 11 of process 10, which perf saw
        // forked by a task it never named.
        let threads = [
            thread(20, 20, "server"),
            thread(21, 20, "worker"),
            thread(11, 10, ""),
        ];
        let tree = process_tree(&threads, &[]);
        let processes: Vec<(Option<i32>, &[String])> = (tree.processes.iter())
            .map(|p| (p.pid, &p.cmdline[..]))
            .collect();
        assert_eq!(processes, [(Some(20), &["server".to_owned()][..])]);
        let threads: Vec<(Option<i32>, Option<i32>)> =
            (tree.threads.iter()).map(|t| (t.tid, t.tgid)).collect();
        assert_eq!(
            threads,
            [
                (Some(11), Some(10)),
                (Some(20), Some(20)),
                (Some(21), Some(20))
            ]
        );
    }
}
