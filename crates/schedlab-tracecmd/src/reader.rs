//! The driver: map the file, read its metadata, then merge every CPU's events in time order
//! into perf's state machine and the per-CPU frequency and idle spans, handing their rows over
//! a block at a time; finally the quality, loss and trace rows.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::path::Path;
use std::sync::atomic::Ordering;

use memmap2::Mmap;
use schedlab_perf::feed::{Body, CpuStates, Event, FeedSummary, Renames, SchedFeed};
use schedlab_perf::{
    HeaderFacts, LossRow, QualityRow, SchedOptions, SchedTables, Severity, TraceRow,
};
use schedlab_tables::CpuFreqIdleRow;

use crate::TraceCmdTables;
use crate::error::TraceCmdError;
use crate::formats::{Events, Kind};
use crate::framing::{CpuStream, Damage, Lost, PageLayout};
use crate::metadata::{Errors, Metadata};
use crate::options::CpuStat;

const SOURCE: &str = "trace-cmd";
/// Events per block handed to the caller: a few megabytes of rows.
const BLOCK_EVENTS: u64 = 1 << 18;

/// Maps the file read-only; an empty file cannot be mapped and is refused here.
fn map_file(path: &Path) -> Result<Mmap, TraceCmdError> {
    let mapped = schedlab_perf::feed::map_trace(path).map_err(|source| TraceCmdError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    mapped.ok_or_else(|| TraceCmdError::NotTraceDat {
        path: path.to_path_buf(),
        magic: "nothing: the file is empty".into(),
    })
}

/// The facts of the file at `path` that `schedlab import` records of the recording machine.
pub(crate) fn header_facts(path: &Path, salvage: bool) -> Result<HeaderFacts, TraceCmdError> {
    let map = map_file(path)?;
    let meta = Metadata::read(path, &map, salvage)?;
    let uname = Uname::of(&meta);
    Ok(HeaderFacts {
        hostname: uname.hostname,
        os_release: uname.release,
        arch: uname.arch,
        nr_cpus_online: meta.cpu_count,
        nr_cpus_available: meta.cpu_count,
        ..HeaderFacts::default()
    })
}

/// The machine as trace-cmd's UNAME option names it: `sysname nodename release machine`.
#[derive(Default)]
struct Uname {
    hostname: Option<String>,
    release: Option<String>,
    arch: Option<String>,
}

impl Uname {
    fn of(meta: &Metadata) -> Uname {
        let Some(text) = &meta.options.uname else {
            return Uname::default();
        };
        let words: Vec<&str> = text.split_whitespace().collect();
        if words.len() < 4 {
            return Uname::default();
        }
        Uname {
            hostname: Some(words[1].to_string()),
            release: Some(words[2].to_string()),
            arch: words.last().map(|w| w.to_string()),
        }
    }
}

/// Reads the file, handing each block's rows to `emit` (the state machine, to take them from
/// in the form the caller wants, and the frequency and idle spans); returns the rest.
pub(crate) fn run(
    path: &Path,
    opts: &SchedOptions,
    mut emit: impl FnMut(&mut SchedFeed, Vec<CpuFreqIdleRow>),
) -> Result<TraceCmdTables, TraceCmdError> {
    let map = map_file(path)?;
    let file: &[u8] = &map;
    let meta = Metadata::read(path, file, opts.salvage)?;
    let errs = Errors {
        path,
        len: file.len() as u64,
    };
    let events = Events::bind(&meta.formats).map_err(|what| errs.malformed(0, what))?;
    let mut streams = streams(file, &meta);
    let owners = owners(file, &meta, &events);
    let mut feed = SchedFeed::new(opts, events.task_states.clone());
    let mut states = CpuStates::new(&opts.run_id);
    let mut notes = Notes::default();
    let mut names = Renames::default();

    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = (streams.iter().enumerate())
        .filter_map(|(i, s)| Some(Reverse((s.peek_time()?, i))))
        .collect();
    let convert = |t: u64| to_ns(&meta, t);
    let (mut since_block, mut last_time) = (0u64, 0u64);
    let mut read_bytes = 0u64;
    while let Some(Reverse((raw_time, i))) = heap.pop() {
        let stream = &mut streams[i];
        let time = convert(raw_time);
        last_time = last_time.max(time);
        let payload = stream.payload();
        if let Some(id) = events.id(payload) {
            let owned = owners
                .as_ref()
                .is_none_or(|o| o.get(&id) == Some(&stream.buffer));
            *notes.counts.entry(id).or_default() += 1;
            if !owned {
                *notes.duplicates.entry((stream.buffer, id)).or_default() += 1;
            } else {
                match events.kind(id) {
                    Some(Kind::Sched(tp)) => match tp.decode(payload) {
                        Ok(body) => {
                            notes.switches += u64::from(matches!(body, Body::Switch { .. }));
                            let tid = events.common_pid.i32(payload).unwrap_or(-1);
                            let event = |body| Event {
                                time,
                                cpu: stream.cpu,
                                pid: -1,
                                tid,
                                body,
                            };
                            if let Some(renamed) = names.rename(&body) {
                                feed.event(&event(renamed));
                            }
                            feed.event(&event(body));
                        }
                        Err(why) => notes.bad(stream.cpu, time, why),
                    },
                    // The thread's process is not in the event: the threads table has it.
                    Some(Kind::Runtime { pid, runtime, comm }) => {
                        match (pid.i32(payload), runtime.int(payload)) {
                            (Some(of), Some(ran)) => {
                                let comm = comm.comm(payload).unwrap_or_default();
                                feed.runtime((stream.cpu, of, None), ran as u64, time, comm);
                            }
                            _ => notes.bad(
                                stream.cpu,
                                time,
                                "a sched_stat_runtime field lies outside its payload",
                            ),
                        }
                    }
                    Some(Kind::Frequency { state, cpu_id })
                    | Some(Kind::Idle { state, cpu_id }) => {
                        let is_idle = matches!(events.kind(id), Some(Kind::Idle { .. }));
                        match (state.int(payload), cpu_id.int(payload)) {
                            (Some(value), Some(cpu)) => {
                                let known = if is_idle {
                                    states.idle(time, cpu, value)
                                } else {
                                    states.frequency(time, cpu, value)
                                };
                                if !known {
                                    notes.bad(
                                        stream.cpu,
                                        time,
                                        "a power event names an impossible CPU",
                                    );
                                }
                            }
                            _ => notes.bad(
                                stream.cpu,
                                time,
                                "a power event's field lies outside its payload",
                            ),
                        }
                    }
                    None => {}
                }
            }
        } else {
            notes.bad(stream.cpu, time, "an event too short to say what it is");
        }
        let pages = stream.pages;
        stream.advance();
        read_bytes += (stream.pages - pages) * meta_page_size(&meta, stream.buffer);
        if let Some(next) = stream.peek_time() {
            heap.push(Reverse((next, i)));
        }
        since_block += 1;
        // Nothing is handed over before the first sched_switch: a file without one is refused
        // whole, with nothing half-written.
        if since_block >= BLOCK_EVENTS && notes.switches > 0 {
            since_block = 0;
            emit(&mut feed, states.take());
            if let Some(read) = &opts.bytes_read {
                read.fetch_add(std::mem::take(&mut read_bytes), Ordering::Relaxed);
            }
        }
    }
    if notes.switches == 0 {
        let mut seen: Vec<(u64, String)> = (notes.counts.iter())
            .map(|(&id, &n)| (n, events.name(id)))
            .collect();
        seen.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let events = if seen.is_empty() {
            "no events at all".to_string()
        } else {
            (seen.iter())
                .map(|(n, name)| format!("{n} {name}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(TraceCmdError::NoSchedEvents {
            path: path.to_path_buf(),
            events,
        });
    }
    let rest = states.finish(last_time);
    emit(&mut feed, rest);
    if let Some(read) = &opts.bytes_read {
        read.fetch_add(read_bytes, Ordering::Relaxed);
    }
    let file_name = path.display().to_string();
    let summary = feed.finish(&file_name);
    for s in &mut streams {
        notes.lost.extend(s.lost.drain(..).map(|l| Lost {
            since: l.since.map(|t| to_ns(&meta, t)),
            until: to_ns(&meta, l.until),
            ..l
        }));
    }
    notes.reconcile(&meta, &first_events(file, &meta));
    let losses = notes.losses(opts);
    let quality = notes.rows(&file_name, opts, &meta, &summary, &streams, &events);
    let trace = trace_row(&file_name, opts, &meta, &summary, &losses);
    Ok(TraceCmdTables {
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

/// A ring-buffer time in nanoseconds: as it is, or converted from TSC ticks by the file's
/// TSC2NSEC option (trace-cmd's `mult`/`shift` conversion).
fn to_ns(meta: &Metadata, t: u64) -> u64 {
    match meta.options.tsc2nsec {
        Some((mult, shift, _)) if mult != 0 && shift < 64 => {
            ((u128::from(t) * u128::from(mult)) >> shift) as u64
        }
        _ => t,
    }
}

fn meta_page_size(meta: &Metadata, buffer: usize) -> u64 {
    meta.buffers
        .get(buffer)
        .map_or(0, |b| u64::from(b.page_size))
}

/// A stream per CPU with data, of every buffer, top first and CPUs in order (the order
/// trace-cmd breaks ties of equal times in).
fn streams<'f>(file: &'f [u8], meta: &Metadata) -> Vec<CpuStream<'f>> {
    let mut out = Vec::new();
    for (b, buffer) in meta.buffers.iter().enumerate() {
        let layout = PageLayout {
            page_size: buffer.page_size as usize,
            commit_size: meta.commit_size,
            data_start: meta.page_data,
        };
        let codec = if buffer.compressed { meta.codec } else { None };
        for cpu in buffer.cpus.iter().filter(|c| c.size > 0) {
            out.push(CpuStream::new(file, *cpu, b, layout, codec));
        }
    }
    out
}

/// Per CPU of each buffer, the time of its first event (where an overrun's lost events end).
fn first_events(file: &[u8], meta: &Metadata) -> HashMap<(usize, i32), u64> {
    (streams(file, meta).iter())
        .filter_map(|s| Some(((s.buffer, s.cpu), to_ns(meta, s.peek_time()?))))
        .collect()
}

/// When several buffers hold data, which one each event is read from: the first (top first)
/// that holds it, so that an event two instances both traced counts once. `None` with one
/// buffer. This reads the instances' events twice; files with several buffers are rare.
fn owners(file: &[u8], meta: &Metadata, events: &Events) -> Option<HashMap<u64, usize>> {
    let buffers: Vec<usize> = (meta.buffers.iter().enumerate())
        .filter(|(_, b)| b.cpus.iter().any(|c| c.size > 0))
        .map(|(i, _)| i)
        .collect();
    if buffers.len() < 2 {
        return None;
    }
    let mut owners = HashMap::new();
    for mut stream in streams(file, meta) {
        while stream.peek_time().is_some() {
            if let Some(id) = events.id(stream.payload()) {
                let owner = owners.entry(id).or_insert(stream.buffer);
                *owner = (*owner).min(stream.buffer);
            }
            stream.advance();
        }
    }
    Some(owners)
}

/// The clock's `CLOCK_*` name where it has one, else the ftrace name as it is.
fn clock_name(trace_clock: &str) -> String {
    match trace_clock {
        "mono" => "CLOCK_MONOTONIC",
        "mono_raw" => "CLOCK_MONOTONIC_RAW",
        "boot" => "CLOCK_BOOTTIME",
        "tai" => "CLOCK_TAI",
        other => other,
    }
    .to_string()
}

/// The clock the events are on: the first buffer's (they all use the top buffer's trace clock
/// unless an instance set its own), `local` when the file does not say (trace-cmd's default).
fn trace_clock(meta: &Metadata) -> String {
    (meta.buffers.iter().find_map(|b| b.clock.clone()))
        .or_else(|| meta.options.trace_clock.clone())
        .unwrap_or_else(|| "local".into())
}

fn trace_row(
    file: &str,
    opts: &SchedOptions,
    meta: &Metadata,
    summary: &FeedSummary,
    losses: &[LossRow],
) -> TraceRow {
    let uname = Uname::of(meta);
    let trace_clock = trace_clock(meta);
    let cpus = meta.cpu_count.and_then(|n| i32::try_from(n).ok());
    TraceRow {
        run_id: opts.run_id.clone(),
        file: file.to_string(),
        perf_version: None,
        hostname: uname.hostname,
        os_release: uname.release,
        arch: uname.arch,
        cpu_desc: None,
        cmdline: meta
            .options
            .version
            .as_ref()
            .map(|v| format!("trace-cmd {v}")),
        clock: clock_name(&trace_clock),
        nr_cpus_online: cpus,
        nr_cpus_available: cpus,
        hybrid_pmus: None,
        first_ns: summary.cpu_spans.iter().map(|s| s.1 as i64).min(),
        last_ns: summary.cpu_spans.iter().map(|s| s.2 as i64).max(),
        window_start_ns: summary.window.map(|w| w.0),
        window_end_ns: summary.window.map(|w| w.1),
        lost_events: losses.iter().map(|l| l.events.max(0)).sum(),
        file_format: Some(meta.file_format()),
        trace_clock: Some(trace_clock),
        // A trace.dat is one file, its sections compressed or not by its own format.
        layout: "file".to_owned(),
        compressed_records: 0,
        kernel_runtime: !summary.sched_runtime.is_empty(),
        idle_blind_cpus: (summary.idle_blind.iter())
            .map(|(cpu, _)| cpu.to_string())
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// What goes into the quality and loss tables.
#[derive(Default)]
struct Notes {
    switches: u64,
    /// Events read, by id.
    counts: BTreeMap<u64, u64>,
    /// Events of a buffer that another buffer also holds (not read), by (buffer, id).
    duplicates: BTreeMap<(usize, u64), u64>,
    bad: u64,
    first_bad: Option<(i32, u64, &'static str)>,
    /// Losses the pages flagged, their counts completed from the ring buffer's statistics.
    lost: Vec<Lost>,
    /// Losses only the statistics tell of, with the statistics and the buffer's name.
    stat_lost: Vec<(Lost, CpuStat, String)>,
}

impl Notes {
    fn bad(&mut self, cpu: i32, time: u64, why: &'static str) {
        self.bad += 1;
        self.first_bad.get_or_insert((cpu, time, why));
    }

    /// Completes the pages' losses with each ring buffer's statistics (`overrun`, `commit
    /// overrun`, `dropped events`), which count the same losses: trace-cmd report prints the
    /// first page's count as `[N EVENTS DROPPED]`, and it equals the overrun. A CPU whose
    /// statistics say more than its pages do gets the rest on its one page of unknown count,
    /// or, without such a page, a loss of its own ending at the CPU's first event.
    fn reconcile(&mut self, meta: &Metadata, first: &HashMap<(usize, i32), u64>) {
        for stat in &meta.options.cpu_stats {
            let Some(buffer) = meta.buffers.iter().position(|b| b.name == stat.buffer) else {
                continue;
            };
            let total = stat.overrun + stat.commit_overrun + stat.dropped;
            let mine = |l: &&mut Lost| l.buffer == buffer && l.cpu == stat.cpu;
            let known: u64 = (self.lost.iter_mut().filter(mine))
                .filter_map(|l| l.count)
                .sum();
            if total <= known {
                continue;
            }
            let mut unknown: Vec<&mut Lost> = (self.lost.iter_mut().filter(mine))
                .filter(|l| l.count.is_none())
                .collect();
            match unknown.as_mut_slice() {
                [one] => one.count = Some(total - known),
                [] => {
                    let Some(&until) = first.get(&(buffer, stat.cpu)) else {
                        continue;
                    };
                    let lost = Lost {
                        cpu: stat.cpu,
                        buffer,
                        since: None,
                        until,
                        count: Some(total - known),
                    };
                    let name = meta.buffers[buffer].label().to_string();
                    self.stat_lost.push((lost, stat.clone(), name));
                }
                _ => {}
            }
        }
    }

    /// One row per loss.
    fn losses(&self, opts: &SchedOptions) -> Vec<LossRow> {
        (self.lost.iter())
            .chain(self.stat_lost.iter().map(|(l, _, _)| l))
            .map(|l| LossRow {
                run_id: opts.run_id.clone(),
                cpu: l.cpu,
                since_ns: l.since.map(|t| t as i64),
                until_ns: Some(l.until as i64),
                events: l.count.map_or(-1, |n| n as i64),
            })
            .collect()
    }

    fn rows(
        &self,
        file: &str,
        opts: &SchedOptions,
        meta: &Metadata,
        summary: &FeedSummary,
        streams: &[CpuStream],
        events: &Events,
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
        for l in &self.lost {
            let count = l
                .count
                .map_or("an unknown number of".to_string(), |n| n.to_string());
            rows.push(row(
                Severity::Warning,
                format!(
                    "the kernel lost {count} events on cpu {} before this time (its ring buffer was full): slices, wakeups and migrations there are incomplete",
                    l.cpu
                ),
                Some(l.until),
                Some(l.cpu),
            ));
        }
        for (lost, stat, name) in &self.stat_lost {
            let cpu = stat.cpu;
            for (n, what) in [
                (
                    stat.overrun,
                    "overwrote {n} events before trace-cmd read them (overrun): the trace of cpu {cpu} starts after the recording did",
                ),
                (
                    stat.commit_overrun,
                    "lost {n} events to commit overruns (events written while another was being written)",
                ),
                (stat.dropped, "dropped {n} events because it was full"),
            ] {
                if n > 0 {
                    let what = what
                        .replace("{n}", &n.to_string())
                        .replace("{cpu}", &cpu.to_string());
                    rows.push(row(
                        Severity::Warning,
                        format!("{file}: the {name} buffer of cpu {cpu} {what}; hint: record with a bigger buffer (`trace-cmd record -b 20000`)"),
                        Some(lost.until),
                        Some(cpu),
                    ));
                }
            }
        }
        let clock = trace_clock(meta);
        if clock != "mono" {
            let what = match clock.as_str() {
                "local" | "global" => {
                    " (the kernel's sched_clock, which stops in suspend and is not CLOCK_MONOTONIC)"
                }
                "x86-tsc" | "counter" => {
                    " (a raw counter, not nanoseconds unless the file converts it)"
                }
                _ => "",
            };
            rows.push(row(
                Severity::Warning,
                format!(
                    "{file}: its times are on the `{clock}` trace clock{what}, not CLOCK_MONOTONIC, so they line up with nothing timed outside this trace (the runner's process start and end times, the samplers); figures from the trace alone are not affected; hint: record with `trace-cmd record -C mono`"
                ),
                None,
                None,
            ));
        }
        if meta.options.time_shift {
            rows.push(row(
                Severity::Info,
                format!("{file}: the file has a DATE or OFFSET option, by which `trace-cmd report` shifts every time; the tables keep the trace clock's own times"),
                None,
                None,
            ));
        }
        if let Some((cpu, time, why)) = self.first_bad {
            rows.push(row(
                Severity::Warning,
                format!("{file}: {} events could not be decoded (the first, on cpu {cpu}: {why}); they were skipped", self.bad),
                Some(time),
                Some(cpu),
            ));
        }
        for s in streams {
            let Some(Damage { offset, what, cut }) = &s.damage else {
                continue;
            };
            // Where a salvaged file ends: the salvage note says so.
            if *cut && meta.cut_at.is_some() {
                continue;
            }
            let name = meta.buffers.get(s.buffer).map_or("?", |b| b.label());
            rows.push(row(
                Severity::Error,
                format!(
                    "{file}: byte {offset}: {what} (the {name} buffer); that CPU's events after it were not read, so its tables stop there; hint: the file is damaged or was cut short: copy it again or re-record"
                ),
                None,
                Some(s.cpu),
            ));
        }
        if let Some(cut) = meta.cut_at {
            rows.push(row(
                Severity::Warning,
                format!(
                    "{file}: salvaged: the file ends at byte {}, inside CPU data (the first CPU whose data it cuts starts at byte {cut}); each CPU's events were read up to its last complete page, so the tables stop there",
                    meta.file_len
                ),
                None,
                None,
            ));
        }
        for (buffer, id) in self.duplicates.keys() {
            let name = meta.buffers.get(*buffer).map_or("?", |b| b.label());
            let n = self.duplicates[&(*buffer, *id)];
            rows.push(row(
                Severity::Info,
                format!(
                    "{file}: the {name} buffer's {n} {} events were not read: an earlier buffer of the file holds the same event, which counts once",
                    events.name(*id)
                ),
                None,
                None,
            ));
        }
        for (message, cpu) in summary.warnings(file) {
            rows.push(row(Severity::Warning, message, None, cpu));
        }
        if let Some(cpus) = meta.cpu_count.filter(|&n| n <= 1 << 14) {
            let silent: Vec<String> = (0..cpus as i32)
                .filter(|c| !summary.cpu_spans.iter().any(|s| s.0 == *c))
                .map(|c| c.to_string())
                .collect();
            if !silent.is_empty() {
                rows.push(row(
                    Severity::Info,
                    format!(
                        "{file}: cpus {} recorded no sched_switch (not traced, or never switched); the window covers the other cpus",
                        silent.join(",")
                    ),
                    None,
                    None,
                ));
            }
        }
        rows
    }
}
