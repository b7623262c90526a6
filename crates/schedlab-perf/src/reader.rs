//! The driver: map the file, read the metadata, then frame, decode, order and run the
//! timehist state machine block by block, turning its output into table rows.
//!
//! Three stages overlap: framing and decoding block N+2 (parallel over its chunks), ordering and
//! the state machine on block N+1 (sequential by nature), and building the rows of block N and
//! handing them to the caller. Each block's pages are released from the mapping once decoded,
//! so resident memory is a few blocks plus the per-thread state, whatever the file size.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use memmap2::{Mmap, UncheckedAdvice};
use rayon::prelude::*;

use crate::decode::{Decoded, decode_chunk};
use crate::error::PerfError;
use crate::framing::{Block, Damage, Framer};
use crate::header_facts::HeaderFacts;
use crate::inject::{self, Plain, Rewritten};
use crate::intern::{Names, Strings};
use crate::metadata::Metadata;
use crate::order::Orderer;
use crate::runtime::RuntimeSums;
use crate::threads::Threads;
use crate::timehist::{MAX_CPUS, Output, Timehist};
use crate::{
    LossRow, MigrationRow, QualityRow, SchedBatch, SchedOptions, SchedSliceRow, SchedTables,
    Severity, ThreadRow, TraceRow, WakeupRow,
};

/// Bytes of records per block: big enough to amortise the hand-off between threads, small
/// enough to bound memory (the parse stage's peak grows with the block; its bound is a quarter
/// of the largest trace). A block is cut at a chunk boundary (see `framing`), not a round's end,
/// so it spans at most this plus a chunk whatever perf's round size.
const BLOCK_BYTES: usize = 2 << 20;
const SOURCE: &str = "perf-sched";

/// The largest page-cache folio a released block's pages can share with the next block: a
/// PMD, 2 MiB on x86_64 and 4 KiB-page arm64.
///
/// A file perf has just written sits in the page cache in large folios (ext4, Linux 6.18), and a
/// fault maps the whole folio. So the first fault in a block mapped again the pages of the
/// previous block that share its first folio, after that block had released them, and nothing
/// released them again: on a freshly written trace a tenth of it ended up resident, growing with
/// the file, where a file read back from disk kept only a few blocks resident.
const FOLIO_BYTES_MAX: usize = 2 << 20;

/// The header's facts of the file at `path`.
pub(crate) fn header_facts(path: &Path, salvage: bool) -> Result<HeaderFacts, PerfError> {
    let plain = inject::plain(path, map_file(path)?, salvage)?;
    Ok(Metadata::read(path, &plain.map, salvage)?.facts)
}

/// Maps the file read-only; an empty file is an error here, since it cannot be mapped.
fn map_file(path: &Path) -> Result<Mmap, PerfError> {
    let mapped = crate::feed::map_trace(path).map_err(|source| PerfError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    mapped.ok_or_else(|| PerfError::Truncated {
        path: path.to_path_buf(),
        offset: 0,
        len: 0,
        what: "a perf.data file starts with a 104-byte header".into(),
        salvageable: false,
    })
}

/// Reads the file, handing each block's compact rows to `emit` with the file's strings (the
/// caller turns them into rows or Arrow arrays); returns threads, quality, window and facts.
pub(crate) fn run(
    path: &Path,
    opts: &SchedOptions,
    mut emit: impl FnMut(Output, &mut Strings) + Send,
) -> Result<SchedTables, PerfError> {
    let Plain { map, rewritten } = inject::plain(path, map_file(path)?, opts.salvage)?;
    let meta = Metadata::read(path, &map, opts.salvage)?;
    let data = &map[meta.data_start as usize..meta.data_end as usize];
    // The progress counts the file's own bytes, also where they were decompressed.
    let progress = |bytes: usize| match &rewritten {
        Some(r) if r.rewritten_records_bytes > 0 => {
            (bytes as u128 * r.records_bytes as u128 / r.rewritten_records_bytes as u128) as u64
        }
        _ => bytes as u64,
    };

    let selectors = (opts.workloads.iter().enumerate())
        .map(|(i, w)| (w.select.clone(), i as u16))
        .collect();
    let names = Names::new(&opts.run_id, &opts.workloads, meta.task_states.clone());
    let mut strings = Strings::new(Arc::new(names));
    let mut th = Timehist::new(Threads::new(selectors), meta.has_waking);
    let mut order = Orderer::default();
    let mut framer = Framer::new(data, meta.data_start);
    let mut notes = Notes::default();
    let mut runtime = RuntimeSums::default();

    let decode = |block: Block| -> (Vec<Decoded>, Option<Damage>) {
        let decoded = (block.chunks.par_iter())
            .map(|&c| decode_chunk(&meta, data, meta.data_start, c))
            .collect();
        if let (Some(first), Some(last)) = (block.chunks.first(), block.chunks.last()) {
            // The release reaches back over the previous block's end (see `FOLIO_BYTES_MAX`).
            let start = meta.data_start as usize + first.start;
            let from = start.saturating_sub(FOLIO_BYTES_MAX);
            let to = meta.data_start as usize + last.end;
            // SAFETY: DONTNEED on a read-only file mapping only drops resident pages; a later
            // access reads them from the file again, and nothing still borrows these bytes
            // beyond the events, which own copies (blocks are decoded one after the other).
            let _ =
                unsafe { map.unchecked_advise_range(UncheckedAdvice::DontNeed, from, to - from) };
            if let Some(read) = &opts.bytes_read {
                read.fetch_add(progress(last.end - first.start), Ordering::Relaxed);
            }
        }
        (decoded, block.damage)
    };

    // Three stages run at once: framing and decoding block N+2, ordering and the state machine
    // on block N+1, and building (and handing over) the rows of block N.
    //
    // The loop runs on one of rayon's threads: each `join` from outside the pool hands its work
    // over and sleeps until it is done, two more context switches a block (9,600 instead of
    // 4,800 on the bench trace, about 2 % of the wall time).
    rayon::scope(|_| {
        let mut current = framer.next_block(BLOCK_BYTES).map(decode);
        let mut finished: Option<Output> = None;
        while let Some((chunks, damage)) = current.take() {
            let framer = &mut framer;
            let more = damage.is_none();
            let rows_of = finished.take();
            let (decoded_next, (output, ())) = rayon::join(
                || {
                    more.then(|| framer.next_block(BLOCK_BYTES).map(decode))
                        .flatten()
                },
                || {
                    rayon::join(
                        || {
                            for mut chunk in chunks {
                                notes.bad_records(&chunk);
                                runtime.merge(std::mem::take(&mut chunk.runtime));
                                let ends_round = chunk.ends_round;
                                order.chunk(chunk.events, ends_round, &mut |e| th.event(e));
                            }
                            th.take_output()
                        },
                        || rows_of.map(|o| emit(o, &mut strings)).unwrap_or_default(),
                    )
                },
            );
            notes.damage = notes.damage.take().or(damage);
            finished = Some(output);
            current = decoded_next;
        }
        if let Some(o) = finished {
            emit(o, &mut strings);
        }
        order.finish(&mut |e| th.event(e));
        emit(th.take_output(), &mut strings);
    });

    let quality = notes.rows(path, opts, &meta, &th, &framer, rewritten.as_ref());
    let window = window(&th);
    let trace = trace_row(path, opts, &meta, &th, window, rewritten.as_ref());
    let sched_runtime = runtime.rows(&strings.names, &th.threads);
    let known = |t: u64| (t != 0).then_some(t as i64);
    let losses = (th.lost.iter().filter(|l| l.id.is_none()))
        .map(|l| LossRow {
            run_id: opts.run_id.clone(),
            cpu: l.cpu,
            since_ns: known(l.since),
            until_ns: known(l.time),
            events: l.count as i64,
        })
        .collect();
    let threads = thread_rows(&th, &mut strings);
    Ok(SchedTables {
        threads,
        quality,
        window,
        trace: Some(trace),
        losses,
        sched_runtime,
        ..SchedTables::default()
    })
}

/// The `threads` rows of the threads the state machine saw (the idle tasks, tid 0, left out).
pub(crate) fn thread_rows(th: &Timehist, strings: &mut Strings) -> Vec<ThreadRow> {
    (th.threads.all.iter())
        .filter(|t| t.tid > 0)
        .map(|t| ThreadRow {
            run_id: strings.names.run_id.clone(),
            tid: t.tid,
            pid: t.pid,
            parent_tid: t.parent,
            comm: strings.comm(&t.comm),
            start_ns: t.start.map(|v| v as i64),
            end_ns: t.end.map(|v| v as i64),
            workload: strings.workload(t.workload),
            first_run_ns: (t.first_run != 0).then_some(t.first_run as i64),
            last_run_ns: (t.last_run != 0).then_some(t.last_run as i64),
        })
        .collect()
}

/// Events perf lost: the LOST records (when and where a ring buffer overflowed) or, in a file
/// without them, the LOST_SAMPLES records perf writes at the end, which break the same losses
/// down per event and so must not be added to them.
fn lost_events(th: &Timehist) -> u64 {
    let gaps = th.lost.iter().filter(|l| l.id.is_none());
    if gaps.clone().next().is_some() {
        gaps.map(|l| l.count).sum()
    } else {
        th.lost.iter().map(|l| l.count).sum()
    }
}

/// The file's row of the `traces` table.
fn trace_row(
    path: &Path,
    opts: &SchedOptions,
    meta: &Metadata,
    th: &Timehist,
    window: Option<(i64, i64)>,
    rewritten: Option<&Rewritten>,
) -> TraceRow {
    let spans = th.cpu_spans();
    let facts = meta.facts.clone();
    let count = |n: Option<u32>| n.and_then(|n| i32::try_from(n).ok());
    TraceRow {
        run_id: opts.run_id.clone(),
        file: path.display().to_string(),
        perf_version: facts.perf_version,
        hostname: facts.hostname,
        os_release: facts.os_release,
        arch: facts.arch,
        cpu_desc: facts.cpu_desc,
        cmdline: facts.cmdline,
        clock: meta.clock.clone(),
        file_format: Some("perf.data".into()),
        trace_clock: None,
        nr_cpus_online: count(facts.nr_cpus_online),
        nr_cpus_available: count(facts.nr_cpus_available),
        hybrid_pmus: facts.hybrid_pmus,
        first_ns: spans.iter().map(|s| s.1 as i64).min(),
        last_ns: spans.iter().map(|s| s.2 as i64).max(),
        window_start_ns: window.map(|w| w.0),
        window_end_ns: window.map(|w| w.1),
        lost_events: lost_events(th) as i64,
        layout: rewritten.map_or("file", |r| r.layout).to_owned(),
        compressed_records: rewritten.map_or(0, |r| r.compressed_records as i64),
        kernel_runtime: meta.has_runtime,
        idle_blind_cpus: (th.idle_blind_cpus().iter())
            .map(|(cpu, _)| cpu.to_string())
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// The span in which every CPU that has data has data.
pub(crate) fn window(th: &Timehist) -> Option<(i64, i64)> {
    let spans = th.cpu_spans();
    let start = spans.iter().map(|s| s.1).max()?;
    let end = spans.iter().map(|s| s.2).min()?;
    (start <= end).then_some((start as i64, end as i64))
}

/// Turns the state machine's compact output into rows, sharing every repeated string.
pub(crate) fn rows(out: Output, s: &mut Strings) -> SchedBatch {
    let sched_slices = (0..out.slices.len())
        .map(|i| out.slices.get(i))
        .map(|x| SchedSliceRow {
            run_id: s.names.run_id.clone(),
            cpu: x.cpu,
            pid: x.pid,
            tid: x.tid,
            comm: s.comm(&x.comm),
            start_ns: x.start as i64,
            end_ns: x.end as i64,
            run_ns: x.run() as i64,
            wait_ns: x.wait as i64,
            sched_delay_ns: x.delay as i64,
            preempt_wait_ns: x.preempt_wait() as i64,
            prev_state: s.state(x.state),
            workload: s.workload(x.workload),
            prio: Some(x.prio),
        })
        .collect();
    let migrations = (out.migrations.into_iter())
        .map(|m| MigrationRow {
            run_id: s.names.run_id.clone(),
            time_ns: m.time as i64,
            pid: m.pid,
            tid: m.tid,
            comm: s.comm(&m.comm),
            from_cpu: m.from,
            to_cpu: m.to,
            workload: s.workload(m.workload),
        })
        .collect();
    let wakeups = (out.wakeups.into_iter())
        .map(|w| WakeupRow {
            run_id: s.names.run_id.clone(),
            time_ns: w.time as i64,
            pid: w.pid,
            tid: w.tid,
            comm: s.comm(&w.comm),
            target_cpu: w.target_cpu,
            waker_tid: (w.waker >= 0).then_some(w.waker),
            kind: s.kind(w.kind),
            workload: s.workload(w.workload),
        })
        .collect();
    SchedBatch {
        sched_slices,
        migrations,
        wakeups,
    }
}

/// What goes into the quality table besides lost events.
#[derive(Default)]
struct Notes {
    bad: u64,
    first_bad: Option<(u64, &'static str)>,
    damage: Option<Damage>,
}

impl Notes {
    fn bad_records(&mut self, d: &Decoded) {
        self.bad += d.bad;
        if self.first_bad.is_none() {
            self.first_bad = d.first_bad;
        }
    }

    fn rows(
        &self,
        path: &Path,
        opts: &SchedOptions,
        meta: &Metadata,
        th: &Timehist,
        framer: &Framer,
        rewritten: Option<&Rewritten>,
    ) -> Vec<QualityRow> {
        let row =
            |severity: Severity, message: String, time: Option<u64>, cpu: Option<i32>| QualityRow {
                run_id: opts.run_id.clone(),
                source: SOURCE.to_string(),
                severity,
                message,
                time_ns: time.map(|t| t as i64),
                cpu,
            };
        let file = path.display();
        let mut rows = Vec::new();
        // LOST records say when and where a ring buffer overflowed; the LOST_SAMPLES records
        // perf writes at the end break the same losses down per event, so they are not added.
        let gaps: Vec<_> = th.lost.iter().filter(|l| l.id.is_none()).collect();
        let lost_total = lost_events(th);
        for l in &gaps {
            rows.push(row(
                Severity::Warning,
                format!(
                    "perf lost {} events on cpu {} (its ring buffer overflowed before this time): slices, wakeups and migrations there are incomplete",
                    l.count, l.cpu
                ),
                Some(l.time).filter(|&t| t != 0),
                Some(l.cpu),
            ));
        }
        for l in th.lost.iter().filter(|l| l.id.is_some()) {
            let id = l.id.unwrap_or_default();
            let cpu = (framer.id_cpu.iter()).find(|e| e.0 == id).map(|e| e.1);
            let event = (meta.attr_of_id(id)).map_or("an event", |i| meta.attrs[i].name.as_str());
            let cpu_text = cpu.map_or("?".to_string(), |c| c.to_string());
            rows.push(row(
                Severity::Warning,
                format!(
                    "perf lost {} samples of {event} on cpu {cpu_text} (part of the losses above)",
                    l.count
                ),
                None,
                cpu,
            ));
        }
        if lost_total > 0 {
            rows.push(row(
                Severity::Warning,
                format!(
                    "{file}: {lost_total} events lost in {} ring buffer overflows; figures over windows with losses are not trustworthy; hint: record with bigger buffers (`perf sched record -m 16M`)",
                    gaps.len()
                ),
                None,
                None,
            ));
        }
        if meta.clock != "CLOCK_MONOTONIC" {
            rows.push(row(
                Severity::Warning,
                format!(
                    "{file}: its times are on the `{}` clock, not CLOCK_MONOTONIC, so they line up with nothing timed outside this trace (the runner's process start and end times, the samplers); figures from the trace alone are not affected; hint: record with `perf sched record -k CLOCK_MONOTONIC`",
                    meta.clock
                ),
                None,
                None,
            ));
        }
        if let Some((offset, why)) = self.first_bad {
            rows.push(row(
                Severity::Warning,
                format!("{file}: byte {offset}: {} records could not be decoded (the first: {why}); they were skipped", self.bad),
                None,
                None,
            ));
        }
        for (cpu, message) in idle_blind_notes(&file.to_string(), th, meta.has_runtime) {
            rows.push(row(Severity::Warning, message, None, Some(cpu)));
        }
        if th.bad_cpu > 0 {
            rows.push(row(
                Severity::Warning,
                format!(
                    "{file}: {} events named an impossible CPU and were skipped",
                    th.bad_cpu
                ),
                None,
                None,
            ));
        }
        if let Some(bytes) = rewritten.map(|r| r.unended_record_bytes).filter(|&b| b > 0) {
            rows.push(row(
                Severity::Warning,
                format!(
                    "{file}: its compressed records end with {bytes} bytes of a record that never ends; they were dropped, as perf drops them"
                ),
                None,
                None,
            ));
        }
        if let Some((offset, what)) = rewritten.and_then(|r| r.cut.as_ref()) {
            rows.push(row(
                Severity::Warning,
                format!(
                    "{file}: byte {offset}: {what}; the {} records before it were read (salvaged), the rest could not be",
                    rewritten.map_or("file", |r| r.layout)
                ),
                None,
                None,
            ));
        }
        if let Some(salvaged) = &meta.salvaged {
            for note in salvaged.notes(&file.to_string(), self.damage.as_ref()) {
                rows.push(row(Severity::Warning, note, None, None));
            }
        } else if let Some(d) = &self.damage {
            rows.push(row(
                Severity::Error,
                format!(
                    "{file}: byte {}: {}; the records after it were not read, so the tables stop there; hint: the file is damaged or was cut short: copy it again or re-record",
                    d.offset, d.what
                ),
                None,
                None,
            ));
        }
        let spans = th.cpu_spans();
        // A damaged NRCPUS section can claim billions of CPUs: only believe a plausible count.
        if let Some(online) = meta.nr_cpus_online.filter(|&n| n <= MAX_CPUS as u32) {
            let silent: Vec<String> = (0..online as i32)
                .filter(|c| !spans.iter().any(|s| s.0 == *c))
                .map(|c| c.to_string())
                .collect();
            if !silent.is_empty() {
                rows.push(row(
                    Severity::Info,
                    format!(
                        "{file}: cpus {} recorded no sched events (not traced, or never switched); the window covers the other cpus",
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

/// A warning per CPU whose idle-context events are missing (see [`Timehist::idle_blind_cpus`]),
/// with the CPU it is about.
pub(crate) fn idle_blind_notes(file: &str, th: &Timehist, has_runtime: bool) -> Vec<(i32, String)> {
    // What the aggregates head a thread's CPU time with instead (see `sched_runtime`).
    let instead = if has_runtime {
        "CPU time figures use the kernel's own accounting (sched_stat_runtime) instead"
    } else {
        "the trace has no sched_stat_runtime, so CPU time figures use the placement monitor's /proc time where it sampled a thread, else these slices; hint: record with `perf sched record`, which records the kernel's accounting, or on bare metal"
    };
    (th.idle_blind_cpus().into_iter())
        .map(|(cpu, to_idle)| {
            let message = format!(
                "{file}: cpu {cpu} went idle {to_idle} times but the trace never shows it leaving idle: the events recorded in idle context are missing there (a kernel or VM that does not trace them), so slice run times on cpu {cpu} include its idle time and are too high, and its idle time is not known; {instead}"
            );
            (cpu, message)
        })
        .collect()
}
