//! The driver, in two passes over the mapped file. The first cuts it into packets (every
//! length checked, so a cut or damaged file is refused before anything is handed over), and
//! notes what the events need: the process tree, the clocks, the ring buffers' statistics, and
//! where each CPU's bundles are with their first and last times. The second merges the CPUs'
//! bundles by time into perf's state machine, decoding a bundle of each CPU at a time.
//!
//! A CPU's bundles are in time order in a trace Perfetto recorded, but a writer may append a
//! CPU's events in several passes (`schedlab export perfetto` writes the switches, then the
//! wakeups, then the migrations): so each CPU's bundles are split into runs in which every
//! bundle starts no earlier than the one before ends, and the runs, not the CPUs, are merged.
//! Memory holds one decoded bundle per run and an entry per bundle, never the events.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet};
use std::io::Read as _;
use std::path::Path;
use std::sync::atomic::Ordering;

use memmap2::Mmap;
use prost::Message;
use schedlab_perf::feed::{
    Body, Comm, CpuStates, Event, FeedSummary, Renames, SchedFeed, TaskStates, WakeKind, comm,
};
use schedlab_perf::{
    HeaderFacts, LossRow, QualityRow, SchedOptions, SchedTables, Severity, TraceRow,
};
use schedlab_perfetto_protos::trace_packet::Data;
use schedlab_perfetto_protos::{
    BuiltinClock, FtraceClock, FtraceCpuStats, FtraceEventBundle, SystemInfo, TracePacket,
    ftrace_stats,
};
use schedlab_tables::CpuFreqIdleRow;

use crate::PerfettoTables;
use crate::bundle::{self, CLONE_THREAD, Item, Timed};
use crate::error::PerfettoError;
use crate::framing::{Break, Frames};
use crate::generic::Described;

const SOURCE: &str = "perfetto";
/// Events per block handed to the caller: a few megabytes of rows.
const BLOCK_EVENTS: u64 = 1 << 18;
/// The priority of the idle task (`MAX_PRIO`), taken for the task before a CPU's first
/// compact switch, which no event names.
const IDLE_PRIO: i32 = 120;

/// Maps the file read-only; an empty file cannot be mapped and is refused here.
fn map_file(path: &Path) -> Result<Mmap, PerfettoError> {
    let mapped = schedlab_perf::feed::map_trace(path).map_err(|source| PerfettoError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    mapped.ok_or_else(|| PerfettoError::NotPerfetto {
        path: path.to_path_buf(),
        what: "the file is empty".into(),
    })
}

/// Where one bundle is, and its CPU and span (before any clock conversion).
struct BundleRef {
    /// In the file, or in [`Index::inflated`] for a bundle from compressed packets.
    inflated: bool,
    start: usize,
    end: usize,
    /// The bytes of the file it stands for, for the progress count: its own, or for a
    /// compressed packet's bundles the packet's, counted at its first bundle.
    file_bytes: u64,
    cpu: i32,
    first: u64,
    last: u64,
}

/// Where a packet's bytes are, for the bundles it holds.
#[derive(Clone)]
struct Place {
    inflated: bool,
    range: std::ops::Range<usize>,
    file_bytes: u64,
}

/// A thread the process tree names.
#[derive(Default)]
struct TreeThread {
    tgid: Option<i32>,
    name: Option<String>,
}

/// What the first pass learns.
#[derive(Default)]
struct Index {
    bundles: Vec<BundleRef>,
    /// Per run, its CPU and its bundles (indexes into `bundles`) in time order.
    runs: Vec<(i32, Vec<usize>)>,
    tree: BTreeMap<i32, TreeThread>,
    ppid: HashMap<i32, i32>,
    /// Threads a task_newtask or sched_process_fork event makes: they start there, not
    /// before the trace.
    new_tasks: HashSet<i32>,
    system: Option<SystemInfo>,
    cpu_info: Option<u32>,
    /// The ring buffers' statistics at the start and at the end of the trace, by CPU.
    stats: [BTreeMap<u64, FtraceCpuStats>; 2],
    /// CLOCK_MONOTONIC minus CLOCK_BOOTTIME, from the first snapshot of both.
    boot_to_mono: Option<i64>,
    /// The bundles' `ftrace_clock`s (0 when unset: Perfetto's boot clock).
    clocks: BTreeSet<i32>,
    counts: BTreeMap<&'static str, u64>,
    switches: u64,
    /// Where a salvaged file's packets stop.
    salvaged: Option<Break>,
    /// The packets of every `compressed_packets` packet, inflated and back to back: their
    /// bundles are decoded again in the second pass, as those of the file are.
    inflated: Vec<u8>,
    /// The layouts of the generic events in the self-describing encoding.
    described: Described,
}

fn kind_name(item: &Item) -> &'static str {
    match item {
        Item::Switch { .. } => "sched_switch",
        Item::Wake { kind, .. } => match kind {
            WakeKind::Waking => "sched_waking",
            WakeKind::Wakeup => "sched_wakeup",
            WakeKind::WakeupNew => "sched_wakeup_new",
        },
        Item::NewTask { .. } => "task_newtask",
        Item::Frequency { .. } => "cpu_frequency",
        Item::Idle { .. } => "cpu_idle",
        Item::Runtime { .. } => "sched_stat_runtime",
        Item::Body(Body::Migrate { .. }) => "sched_migrate_task",
        Item::Body(Body::Comm { .. }) => "task_rename",
        Item::Body(Body::ProcessFork { .. }) => "sched_process_fork",
        Item::Body(Body::ProcessExec { .. }) => "sched_process_exec",
        Item::Body(_) => "sched_process_exit",
    }
}

impl Index {
    fn read(path: &Path, file: &[u8], salvage: bool) -> Result<Index, PerfettoError> {
        let mut index = Index::default();
        let mut frames = Frames::new(file);
        loop {
            let frame = match frames.next_frame() {
                Ok(Some(frame)) => frame,
                Ok(None) => break,
                Err(b) if salvage && b.offset > 0 => {
                    index.salvaged = Some(b);
                    break;
                }
                Err(b) => return Err(broken(path, file.len() as u64, b)),
            };
            let packet = match TracePacket::decode(frame.bytes) {
                Ok(packet) => packet,
                Err(err) => {
                    let b = Break {
                        offset: frame.offset,
                        what: format!("a packet that does not decode as a TracePacket ({err})"),
                        cut: false,
                    };
                    if salvage && frame.offset > 0 {
                        index.salvaged = Some(b);
                        break;
                    }
                    return Err(broken(path, file.len() as u64, b));
                }
            };
            let start = frame.bytes.as_ptr() as usize - file.as_ptr() as usize;
            let place = Place {
                inflated: false,
                range: start..start + frame.bytes.len(),
                file_bytes: frame.bytes.len() as u64,
            };
            index.packet(path, frame.offset, place, packet, frame.bytes)?;
        }
        index.split_runs();
        Ok(index)
    }

    fn packet(
        &mut self,
        path: &Path,
        offset: u64,
        place: Place,
        packet: TracePacket,
        bytes: &[u8],
    ) -> Result<(), PerfettoError> {
        match packet.data {
            Some(Data::FtraceEvents(b)) => {
                // A bundle's descriptors may describe its own events.
                self.described.add(&b.generic_event_descriptors);
                let decoded = bundle::decode(&b, bytes, &self.described, 0);
                for e in &decoded.events {
                    *self.counts.entry(kind_name(&e.item)).or_default() += 1;
                }
                if decoded.other > 0 {
                    *self.counts.entry("other").or_default() += decoded.other;
                }
                self.clocks.insert(b.ftrace_clock.unwrap_or(0));
                for e in &decoded.events {
                    match e.item {
                        Item::Switch { .. } => self.switches += 1,
                        Item::NewTask { child, .. }
                        | Item::Body(Body::ProcessFork {
                            child_pid: child, ..
                        }) => _ = self.new_tasks.insert(child),
                        _ => {}
                    }
                }
                if let (Some(first), Some(last)) = (decoded.events.first(), decoded.events.last()) {
                    self.bundles.push(BundleRef {
                        inflated: place.inflated,
                        start: place.range.start,
                        end: place.range.end,
                        file_bytes: place.file_bytes,
                        cpu: b.cpu.unwrap_or(0) as i32,
                        first: first.time,
                        last: last.time,
                    });
                } else if b.lost_events == Some(true) {
                    // A bundle that says only that events were lost: kept for its note, in
                    // its place after the CPU's bundle before it.
                    let cpu = b.cpu.unwrap_or(0) as i32;
                    let after = (self.bundles.iter().rev())
                        .find(|b| b.cpu == cpu)
                        .map_or(0, |b| b.last);
                    self.bundles.push(BundleRef {
                        inflated: place.inflated,
                        start: place.range.start,
                        end: place.range.end,
                        file_bytes: place.file_bytes,
                        cpu,
                        first: after,
                        last: after,
                    });
                }
            }
            Some(Data::ProcessTree(tree)) => {
                for p in tree.processes {
                    let Some(pid) = p.pid else { continue };
                    if let Some(ppid) = p.ppid {
                        self.ppid.insert(pid, ppid);
                    }
                    let t = self.tree.entry(pid).or_default();
                    t.tgid = Some(pid);
                    if t.name.is_none() {
                        t.name = p.cmdline.first().map(|c| {
                            if p.cmdline_is_comm == Some(true) {
                                c.clone()
                            } else {
                                c.rsplit('/').next().unwrap_or(c).to_owned()
                            }
                        });
                    }
                }
                for th in tree.threads {
                    let Some(tid) = th.tid else { continue };
                    let t = self.tree.entry(tid).or_default();
                    t.tgid = th.tgid.or(t.tgid);
                    if th.name.is_some() {
                        t.name = th.name;
                    }
                }
            }
            Some(Data::SystemInfo(info)) => {
                self.system.get_or_insert(info);
            }
            Some(Data::CpuInfo(info)) => {
                self.cpu_info.get_or_insert(info.cpus.len() as u32);
            }
            Some(Data::FtraceStats(stats)) => {
                let phase = match stats.phase() {
                    ftrace_stats::Phase::StartOfTrace => 0,
                    ftrace_stats::Phase::EndOfTrace => 1,
                    ftrace_stats::Phase::Unspecified => return Ok(()),
                };
                for s in stats.cpu_stats {
                    self.stats[phase].entry(s.cpu.unwrap_or(0)).or_insert(s);
                }
            }
            Some(Data::ClockSnapshot(snap)) if self.boot_to_mono.is_none() => {
                let of = |id: BuiltinClock| {
                    (snap.clocks.iter())
                        .find(|c| c.clock_id == Some(id as u32))
                        .and_then(|c| c.timestamp)
                };
                if let (Some(boot), Some(mono)) =
                    (of(BuiltinClock::Boottime), of(BuiltinClock::Monotonic))
                {
                    self.boot_to_mono = Some(mono as i64 - boot as i64);
                }
            }
            Some(Data::CompressedPackets(deflated)) if !place.inflated => {
                self.compressed(path, offset, place.file_bytes, &deflated)?;
            }
            Some(Data::CompressedPackets(_)) => {
                return Err(PerfettoError::Malformed {
                    path: path.to_path_buf(),
                    offset,
                    what: "compressed packets inside compressed packets".into(),
                });
            }
            _ => {}
        }
        Ok(())
    }

    /// A `compressed_packets` packet (the config's `compression_type`: zlib's deflate of
    /// packets framed as in the file), at `offset` and `file_bytes` long: its packets are
    /// inflated into [`Index::inflated`] and taken as the file's are.
    fn compressed(
        &mut self,
        path: &Path,
        offset: u64,
        file_bytes: u64,
        deflated: &[u8],
    ) -> Result<(), PerfettoError> {
        let malformed = |what: String| PerfettoError::Malformed {
            path: path.to_path_buf(),
            offset,
            what,
        };
        let base = self.inflated.len();
        let mut inflated = std::mem::take(&mut self.inflated);
        let read = flate2::read::ZlibDecoder::new(deflated).read_to_end(&mut inflated);
        read.map_err(|err| malformed(format!("compressed packets that do not inflate ({err})")))?;
        let mut frames = Frames::new(&inflated[base..]);
        let mut places = Vec::new();
        while let Some(frame) = frames.next_frame().map_err(|b| {
            malformed(format!(
                "compressed packets whose byte {} of the inflated holds {}",
                b.offset, b.what
            ))
        })? {
            let packet = TracePacket::decode(frame.bytes).map_err(|err| {
                malformed(format!(
                    "a compressed packet that does not decode as a TracePacket ({err})"
                ))
            })?;
            let start = frame.bytes.as_ptr() as usize - inflated.as_ptr() as usize;
            places.push((start..start + frame.bytes.len(), packet));
        }
        let mut file_bytes = Some(file_bytes);
        for (range, packet) in places {
            let bytes = &inflated[range.clone()];
            let place = Place {
                inflated: true,
                range,
                file_bytes: file_bytes.take().unwrap_or(0),
            };
            self.packet(path, offset, place, packet, bytes)?;
        }
        self.inflated = inflated;
        Ok(())
    }

    /// Each CPU's bundles into runs: a bundle joins the run of its CPU that ended last no
    /// later than it starts, or starts a run.
    fn split_runs(&mut self) {
        let mut runs: Vec<(i32, Vec<usize>)> = Vec::new();
        let mut open: HashMap<i32, Vec<usize>> = HashMap::new();
        for (i, b) in self.bundles.iter().enumerate() {
            let mine = open.entry(b.cpu).or_default();
            let last = |r: usize| self.bundles[*runs[r].1.last().unwrap()].last;
            let fits = (mine.iter().copied())
                .filter(|&r| last(r) <= b.first)
                .max_by_key(|&r| last(r));
            match fits {
                Some(r) => runs[r].1.push(i),
                None => {
                    mine.push(runs.len());
                    runs.push((b.cpu, vec![i]));
                }
            }
        }
        self.runs = runs;
    }

    /// Shift of a bundle's times onto CLOCK_MONOTONIC: by the snapshot's offset when it is
    /// on Perfetto's boot clock, else none.
    fn shift(&self, b: &FtraceEventBundle) -> i64 {
        match b.ftrace_clock.unwrap_or(0) {
            0 => self.boot_to_mono.unwrap_or(0),
            _ => 0,
        }
    }

    /// A bundle's bytes: in the file or in the inflated packets.
    fn bytes<'a>(&'a self, file: &'a [u8], r: &BundleRef) -> &'a [u8] {
        let within = if r.inflated { &self.inflated[..] } else { file };
        &within[r.start..r.end]
    }

    fn nr_cpus(&self) -> Option<u32> {
        (self.system.as_ref().and_then(|s| s.num_cpus))
            .or(self.cpu_info)
            .or_else(|| self.bundles.iter().map(|b| b.cpu as u32 + 1).max())
    }
}

fn broken(path: &Path, len: u64, b: Break) -> PerfettoError {
    let path = path.to_path_buf();
    if b.offset == 0 {
        return PerfettoError::NotPerfetto { path, what: b.what };
    }
    if b.cut {
        PerfettoError::Truncated {
            path,
            offset: b.offset,
            len,
            what: b.what,
        }
    } else {
        PerfettoError::Malformed {
            path,
            offset: b.offset,
            what: b.what,
        }
    }
}

/// The facts of the file at `path` that `schedlab import` records of the recording machine.
pub(crate) fn header_facts(path: &Path, salvage: bool) -> Result<HeaderFacts, PerfettoError> {
    let map = map_file(path)?;
    let index = Index::read(path, &map, salvage)?;
    let uts = index.system.as_ref().and_then(|s| s.utsname.clone());
    let cpus = index.nr_cpus();
    Ok(HeaderFacts {
        os_release: uts.as_ref().and_then(|u| u.release.clone()),
        arch: uts.as_ref().and_then(|u| u.machine.clone()),
        nr_cpus_online: cpus,
        nr_cpus_available: cpus,
        ..HeaderFacts::default()
    })
}

/// One run's place in the merge: its bundle being read.
struct Cursor {
    run: usize,
    next_bundle: usize,
    events: std::vec::IntoIter<Timed>,
}

/// What goes into the quality and loss tables, noted while merging.
#[derive(Default)]
struct Notes {
    bad: u64,
    first_bad: Option<(i32, &'static str)>,
    /// Per CPU, its last event's time (where a loss after it starts).
    last: HashMap<i32, u64>,
    /// Bundles that say the kernel lost events before them: (cpu, since, until).
    lost: Vec<(i32, Option<u64>, Option<u64>)>,
    /// Compact switches whose previous task no event named (each CPU's first).
    unnamed_prev: u64,
}

/// The state machine and what the merge keeps beside it.
struct Merge<'a> {
    feed: SchedFeed,
    states: CpuStates,
    names: Renames,
    /// Each thread's process, from the process tree and task_newtask.
    tgids: HashMap<i32, i32>,
    /// Threads a task_newtask made, whose sched_process_fork says nothing new.
    made: HashSet<i32>,
    /// Each CPU's running task (tid, comm, prio): the prev of its next compact switch, the
    /// waker of its compact wakings.
    running: HashMap<i32, (i32, Comm, i32)>,
    tree_names: TreeNames,
    notes: &'a mut Notes,
}

/// The threads whose last name is the process tree's: those it names that no event renamed
/// after their first name. perf keeps the name its records of existing tasks give until a
/// COMM record changes it, and trace processor ranks the tree's names over ftrace's: a
/// kworker procfs names `kworker/1:1H+kb` (its workqueue added) runs as `kworker/1:1H`.
#[derive(Default)]
struct TreeNames(HashMap<i32, Named>);

/// How far events have named a thread of the tree.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Named {
    NotYet,
    Once,
}

impl TreeNames {
    fn seed(&mut self, tid: i32) {
        self.0.insert(tid, Named::NotYet);
    }

    /// An event names thread `tid`: its first name, or a rename.
    fn named(&mut self, tid: i32) {
        match self.0.get(&tid) {
            Some(Named::NotYet) => {
                self.0.insert(tid, Named::Once);
            }
            Some(Named::Once) => {
                self.0.remove(&tid);
            }
            None => {}
        }
    }

    /// Whether thread `tid` keeps the tree's name.
    fn kept(&self, tid: i32) -> bool {
        self.0.contains_key(&tid)
    }
}

impl Merge<'_> {
    /// Thread `tid` of process `pid`, made by `ptid`, and its first name, as events of thread
    /// `by` (`made` is `(pid, tid, ptid)`).
    fn forked(&mut self, time: u64, cpu: i32, by: i32, made: (i32, i32, i32), comm: Comm) {
        let (pid, tid, ptid) = made;
        self.body(time, cpu, by, Body::Fork { pid, tid, ptid });
        self.body(time, cpu, by, Body::Comm { pid, tid, comm });
    }

    fn body(&mut self, time: u64, cpu: i32, tid: i32, body: Body) {
        let event = |body| Event {
            time,
            cpu,
            pid: self.tgids.get(&tid).copied().unwrap_or(-1),
            tid,
            body,
        };
        // A wakeup and a migration name their thread too: the first name of a thread the
        // process tree made is the one its first event gives.
        let renamed = match body {
            Body::Wake { pid, comm, .. } | Body::Migrate { pid, comm, .. } => {
                self.names.name(pid, comm)
            }
            _ => self.names.rename(&body),
        };
        match (&renamed, &body) {
            (Some(Body::Comm { tid, .. }), _) => self.tree_names.named(*tid),
            (None, Body::Comm { tid, comm, .. }) if *comm != [0; 16] => self.tree_names.named(*tid),
            _ => {}
        }
        if let Some(renamed) = renamed {
            self.feed.event(&event(renamed));
        }
        self.feed.event(&event(body));
    }

    fn event(&mut self, cpu: i32, e: Timed) {
        let running = self.running.get(&cpu).copied();
        match e.item {
            Item::Switch {
                prev,
                prev_state,
                next,
            } => {
                let prev = prev.or(running).unwrap_or_else(|| {
                    self.notes.unnamed_prev += 1;
                    (0, comm(&format!("swapper/{cpu}")), IDLE_PRIO)
                });
                self.running.insert(cpu, next);
                let body = Body::Switch {
                    prev_state,
                    prev_comm: prev.1,
                    prev_pid: prev.0,
                    prev_prio: prev.2,
                    next_pid: next.0,
                    next_prio: next.2,
                };
                self.body(e.time, cpu, e.tid.unwrap_or(prev.0), body);
            }
            Item::Wake {
                kind,
                pid,
                target_cpu,
                comm,
            } => {
                let waker = e.tid.or(running.map(|r| r.0)).unwrap_or(-1);
                let body = Body::Wake {
                    kind,
                    pid,
                    target_cpu,
                    comm,
                };
                self.body(e.time, cpu, waker, body);
            }
            Item::NewTask {
                child,
                comm,
                clone_flags,
            } => {
                let parent = e.tid.unwrap_or(-1);
                let tgid = if clone_flags & CLONE_THREAD != 0 {
                    self.tgids.get(&parent).copied().unwrap_or(parent)
                } else {
                    child
                };
                self.tgids.insert(child, tgid);
                self.made.insert(child);
                self.forked(e.time, cpu, parent, (tgid, child, parent), comm);
            }
            // Summed as perf.data's reader sums them, with the thread's process where the
            // process tree or a task_newtask gave it (the event itself does not say).
            Item::Runtime { pid, runtime, comm } => {
                let process = self.tgids.get(&pid).copied();
                self.feed
                    .runtime((cpu, pid, process), runtime, e.time, comm);
            }
            Item::Frequency { cpu: of, khz } => {
                if !self.states.frequency(e.time, of, khz) {
                    self.bad(cpu, "a cpu_frequency event names an impossible CPU");
                }
            }
            Item::Idle { cpu: of, state } => {
                if !self.states.idle(e.time, of, state) {
                    self.bad(cpu, "a cpu_idle event names an impossible CPU");
                }
            }
            // Without task_newtask, a fork makes the thread, in its process where the
            // process tree names it.
            Item::Body(Body::ProcessFork {
                parent_pid,
                child_pid,
                child_comm,
            }) if !self.made.contains(&child_pid) && self.tgids.contains_key(&child_pid) => {
                let tgid = self.tgids[&child_pid];
                let parent = e.tid.unwrap_or(parent_pid);
                let made = (tgid, child_pid, parent_pid);
                self.forked(e.time, cpu, parent, made, child_comm);
            }
            Item::Body(body) => self.body(e.time, cpu, e.tid.unwrap_or(-1), body),
        }
    }

    fn bad(&mut self, cpu: i32, why: &'static str) {
        self.notes.bad += 1;
        self.notes.first_bad.get_or_insert((cpu, why));
    }

    /// The threads the process tree names (those not made by a task_newtask in the trace),
    /// as perf's records of the tasks that exist when it starts: processes first, then their
    /// threads, each with its process, parent and name.
    fn seed(&mut self, index: &Index) {
        for (&tid, t) in &index.tree {
            if let Some(tgid) = t.tgid {
                self.tgids.insert(tid, tgid);
            }
        }
        let mut order: Vec<(&i32, &TreeThread)> = (index.tree.iter())
            .filter(|(tid, _)| **tid > 0 && !index.new_tasks.contains(tid))
            .collect();
        order.sort_by_key(|(tid, t)| (t.tgid != Some(**tid), **tid));
        for (&tid, t) in order {
            let tgid = t.tgid.unwrap_or(tid);
            // perf's records of existing tasks: a process's parent is its ppid, a thread's
            // its process's main thread.
            let ptid = if tgid == tid {
                index.ppid.get(&tid).copied().unwrap_or(0)
            } else {
                tgid
            };
            self.body(
                0,
                0,
                tid,
                Body::Fork {
                    pid: tgid,
                    tid,
                    ptid,
                },
            );
            // Named by its first event, as a rename: the tree may hold a later name (the
            // export writes each thread's last), and a workload's `comm:` applies from the
            // event that names it so, as for perf. The tree's name is the last of threads no
            // event renames (see `TreeNames`).
            let unnamed = Body::Comm {
                pid: tgid,
                tid,
                comm: [0; 16],
            };
            self.body(0, 0, tid, unnamed);
            self.tree_names.seed(tid);
        }
    }
}

/// Reads the file, handing each block's rows to `emit` (the state machine, to take them from
/// in the form the caller wants, and the frequency and idle spans); returns the rest.
pub(crate) fn run(
    path: &Path,
    opts: &SchedOptions,
    mut emit: impl FnMut(&mut SchedFeed, Vec<CpuFreqIdleRow>),
) -> Result<PerfettoTables, PerfettoError> {
    let map = map_file(path)?;
    let file: &[u8] = &map;
    let index = Index::read(path, file, opts.salvage)?;
    if index.switches == 0 {
        let mut seen: Vec<(u64, &str)> = index.counts.iter().map(|(k, n)| (*n, *k)).collect();
        seen.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
        let holds = if seen.is_empty() {
            format!("{} ftrace bundles with no events", index.bundles.len())
        } else {
            (seen.iter())
                .map(|(n, name)| format!("{n} {name}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(PerfettoError::NoSchedEvents {
            path: path.to_path_buf(),
            holds,
        });
    }
    let mut notes = Notes::default();
    // Perfetto gives `prev_state` as the kernel's bits; their letters are those of the
    // kernels Perfetto decodes (4.14 and later).
    let mut merge = Merge {
        feed: SchedFeed::new(opts, TaskStates::since_4_14()),
        states: CpuStates::new(&opts.run_id),
        names: Renames::default(),
        tgids: HashMap::new(),
        made: HashSet::new(),
        running: HashMap::new(),
        tree_names: TreeNames::default(),
        notes: &mut notes,
    };
    merge.seed(&index);

    let load = |c: &mut Cursor, notes: &mut Notes| -> bool {
        let (cpu, bundles) = &index.runs[c.run];
        while c.events.len() == 0 {
            let Some(&b) = bundles.get(c.next_bundle) else {
                return false;
            };
            c.next_bundle += 1;
            let r = &index.bundles[b];
            // Decoded in the first pass, so it decodes again.
            let Ok(TracePacket {
                data: Some(Data::FtraceEvents(bundle)),
                ..
            }) = TracePacket::decode(index.bytes(file, r))
            else {
                continue;
            };
            let decoded = bundle::decode(
                &bundle,
                index.bytes(file, r),
                &index.described,
                index.shift(&bundle),
            );
            if let Some(why) = decoded.first_bad {
                notes.bad += decoded.bad;
                notes.first_bad.get_or_insert((*cpu, why));
            }
            if bundle.lost_events == Some(true) {
                let since = notes.last.get(cpu).copied();
                notes
                    .lost
                    .push((*cpu, since, decoded.events.first().map(|e| e.time)));
            }
            c.events = decoded.events.into_iter();
        }
        true
    };
    let mut cursors: Vec<Cursor> = (0..index.runs.len())
        .map(|run| Cursor {
            run,
            next_bundle: 0,
            events: Vec::new().into_iter(),
        })
        .collect();
    let mut heap = BinaryHeap::new();
    for (i, c) in cursors.iter_mut().enumerate() {
        if load(c, merge.notes) {
            let time = c.events.as_slice()[0].time;
            heap.push(Reverse((time, index.runs[i].0, i)));
        }
    }
    let (mut since_block, mut last_time) = (0u64, 0u64);
    let mut read_bytes = 0u64;
    while let Some(Reverse((_, cpu, i))) = heap.pop() {
        let c = &mut cursors[i];
        let before = c.next_bundle;
        let event = c.events.next().expect("a cursor in the heap has an event");
        last_time = last_time.max(event.time);
        merge.notes.last.insert(cpu, event.time);
        merge.event(cpu, event);
        if load(c, merge.notes) {
            heap.push(Reverse((c.events.as_slice()[0].time, cpu, i)));
        }
        let bundles = &index.runs[i].1;
        for &b in &bundles[before..c.next_bundle] {
            read_bytes += index.bundles[b].file_bytes;
        }
        since_block += 1;
        if since_block >= BLOCK_EVENTS {
            since_block = 0;
            emit(&mut merge.feed, merge.states.take());
            if let Some(read) = &opts.bytes_read {
                read.fetch_add(std::mem::take(&mut read_bytes), Ordering::Relaxed);
            }
        }
    }
    let rest = merge.states.finish(last_time);
    emit(&mut merge.feed, rest);
    if let Some(read) = &opts.bytes_read {
        read.fetch_add(read_bytes, Ordering::Relaxed);
    }
    let file_name = path.display().to_string();
    let mut summary = merge.feed.finish(&file_name);
    let names = &merge.tree_names;
    for t in (summary.threads.iter_mut()).filter(|t| t.comm.is_empty() || names.kept(t.tid)) {
        if let Some(name) = index.tree.get(&t.tid).and_then(|t| t.name.as_deref()) {
            t.comm = name.into();
        }
    }
    let losses = (notes.lost.iter())
        .map(|&(cpu, since, until)| LossRow {
            run_id: opts.run_id.clone(),
            cpu,
            since_ns: since.map(|t| t as i64),
            until_ns: until.map(|t| t as i64),
            events: -1,
        })
        .collect::<Vec<_>>();
    let quality = quality_rows(
        &file_name,
        opts,
        &index,
        &notes,
        &summary,
        file.len() as u64,
    );
    let trace = trace_row(&file_name, opts, &index, &summary, &losses);
    Ok(PerfettoTables {
        sched: SchedTables {
            threads: summary.threads,
            quality,
            window: summary.window,
            trace: Some(trace),
            losses,
            sched_runtime: summary.sched_runtime,
            ..SchedTables::default()
        },
        cpu_freq_idle: Vec::new(),
    })
}

/// The clock the tables' times are on, as a `CLOCK_*` name, and the ftrace clock the file
/// recorded with.
fn clocks(index: &Index) -> (String, String) {
    let recorded = index.clocks.iter().copied().find(|&c| c != 0).unwrap_or(0);
    let ftrace = match FtraceClock::try_from(recorded) {
        Ok(FtraceClock::Global) => "global",
        Ok(FtraceClock::Local) => "local",
        Ok(FtraceClock::MonoRaw) => "mono_raw",
        Ok(FtraceClock::Unknown) => "unknown",
        _ => "boot",
    };
    let clock = match ftrace {
        "boot" if index.boot_to_mono.is_some() => "CLOCK_MONOTONIC",
        "boot" => "CLOCK_BOOTTIME",
        "mono_raw" => "CLOCK_MONOTONIC_RAW",
        other => other,
    };
    (clock.to_owned(), ftrace.to_owned())
}

fn trace_row(
    file: &str,
    opts: &SchedOptions,
    index: &Index,
    summary: &FeedSummary,
    losses: &[LossRow],
) -> TraceRow {
    let uts = index.system.as_ref().and_then(|s| s.utsname.as_ref());
    let cpus = index.nr_cpus().and_then(|n| i32::try_from(n).ok());
    let (clock, trace_clock) = clocks(index);
    TraceRow {
        run_id: opts.run_id.clone(),
        file: file.to_string(),
        perf_version: None,
        // Perfetto's utsname has no node name.
        hostname: None,
        os_release: uts.and_then(|u| u.release.clone()),
        arch: uts.and_then(|u| u.machine.clone()),
        cpu_desc: None,
        cmdline: None,
        clock,
        nr_cpus_online: cpus,
        nr_cpus_available: cpus,
        hybrid_pmus: None,
        first_ns: summary.cpu_spans.iter().map(|s| s.1 as i64).min(),
        last_ns: summary.cpu_spans.iter().map(|s| s.2 as i64).max(),
        window_start_ns: summary.window.map(|w| w.0),
        window_end_ns: summary.window.map(|w| w.1),
        lost_events: losses.iter().map(|l| l.events.max(0)).sum(),
        file_format: Some("perfetto protobuf".to_owned()),
        trace_clock: Some(trace_clock),
        layout: "file".to_owned(),
        compressed_records: 0,
        kernel_runtime: !summary.sched_runtime.is_empty(),
        idle_blind_cpus: (summary.idle_blind.iter())
            .map(|(cpu, _)| cpu.to_string())
            .collect::<Vec<_>>()
            .join(","),
    }
}

fn quality_rows(
    file: &str,
    opts: &SchedOptions,
    index: &Index,
    notes: &Notes,
    summary: &FeedSummary,
    len: u64,
) -> Vec<QualityRow> {
    let row = |severity, message: String, time: Option<u64>, cpu: Option<i32>| QualityRow {
        run_id: opts.run_id.clone(),
        source: SOURCE.to_string(),
        severity,
        message,
        time_ns: time.map(|t| t as i64),
        cpu,
    };
    let mut rows = Vec::new();
    for &(cpu, _, until) in &notes.lost {
        rows.push(row(
            Severity::Warning,
            format!("{file}: the kernel lost events on cpu {cpu} before this time (its ring buffer was full; the bundle says so): slices, wakeups and migrations there are incomplete; hint: record with a bigger `buffer_size_kb`"),
            until,
            Some(cpu),
        ));
    }
    let [start, end] = &index.stats;
    for (cpu, e) in end {
        let before = start.get(cpu);
        let grew = |f: fn(&FtraceCpuStats) -> Option<u64>| {
            f(e).unwrap_or(0)
                .saturating_sub(before.and_then(f).unwrap_or(0))
        };
        let lost = grew(|s| s.overrun) + grew(|s| s.commit_overrun) + grew(|s| s.dropped_events);
        if lost > 0 {
            rows.push(row(
                Severity::Warning,
                format!("{file}: the ring buffer of cpu {cpu} lost {lost} events while recording (ftrace_stats: overrun, commit overrun and dropped events at the end less at the start); hint: record with a bigger `buffer_size_kb`"),
                None,
                Some(*cpu as i32),
            ));
        }
    }
    let (clock, ftrace) = clocks(index);
    match (ftrace.as_str(), index.boot_to_mono) {
        ("boot", Some(offset)) => rows.push(row(
            Severity::Info,
            format!("{file}: its ftrace times are on CLOCK_BOOTTIME (Perfetto's trace clock), moved onto CLOCK_MONOTONIC by {offset} ns, the difference in the trace's first clock snapshot"),
            None,
            None,
        )),
        ("boot", None) => rows.push(row(
            Severity::Info,
            format!("{file}: its ftrace times are on CLOCK_BOOTTIME (Perfetto's trace clock) and no clock snapshot relates it to CLOCK_MONOTONIC: the tables keep them as they are, which equal CLOCK_MONOTONIC's unless the machine was suspended before or while recording"),
            None,
            None,
        )),
        _ => rows.push(row(
            Severity::Warning,
            format!("{file}: its times are on the `{ftrace}` ftrace clock ({clock}), not CLOCK_MONOTONIC, so they line up with nothing timed outside this trace; figures from the trace alone are not affected; hint: let Perfetto use its default boot clock"),
            None,
            None,
        )),
    }
    if let Some((cpu, why)) = notes.first_bad {
        rows.push(row(
            Severity::Warning,
            format!("{file}: {} events could not be read (the first, on cpu {cpu}: {why}); they were skipped", notes.bad),
            None,
            Some(cpu),
        ));
    }
    if notes.unnamed_prev > 0 {
        rows.push(row(
            Severity::Info,
            format!("{file}: {} compact sched_switch events (the first of a CPU) name no task switched out; the idle task stands for it, so no slice ends there", notes.unnamed_prev),
            None,
            None,
        ));
    }
    if let Some(b) = &index.salvaged {
        rows.push(row(
            Severity::Warning,
            format!("{file}: salvaged: byte {}: {} (the file has {len} bytes); the packets before it were read, so the tables stop there", b.offset, b.what),
            None,
            None,
        ));
    }
    for (message, cpu) in summary.warnings(file) {
        rows.push(row(Severity::Warning, message, None, cpu));
    }
    rows
}
