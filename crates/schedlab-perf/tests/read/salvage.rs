//! Salvaging damaged recordings that perf refuses: recordings made here by `perf sched record`,
//! cut short with `head -c` inside the records, exactly at a record's end, a few bytes into a
//! record header, and among the feature sections after the records; and one whose perf was
//! killed with SIGKILL, so that its header's data size is still 0. perf's own answer for each
//! is checked to be a refusal, and the salvaged tables are checked against the complete file
//! and against perf's dump of the records (`perf script -D`: each record's file offset, size
//! and time).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use schedlab_perf::{PerfError, SchedOptions, SchedSliceRow, SchedTables, Severity, read_sched};

use crate::util::{cannot_trace, unavailable};

fn read(path: &Path, salvage: bool) -> Result<SchedTables, PerfError> {
    let opts = SchedOptions {
        run_id: "test".into(),
        salvage,
        ..Default::default()
    };
    read_sched(path, &opts)
}

/// One record as `perf script -D` dumps it.
#[derive(Debug, Clone, Copy)]
struct Record {
    cpu: i32,
    offset: u64,
    size: u64,
    /// The record's time in ns; 0 for the records perf synthesizes before recording starts.
    time: u64,
}

impl Record {
    fn end(&self) -> u64 {
        self.offset + self.size
    }
}

/// Every record of a complete file, in file order, from perf's dump
/// (`CPU TIME 0xOFFSET [0xSIZE]: PERF_RECORD_…`).
fn perf_records(file: &Path) -> Vec<Record> {
    let out = Command::new("perf")
        .args(["script", "-D", "-i"])
        .arg(file)
        .stderr(Stdio::null())
        .output()
        .expect("perf script runs");
    assert!(out.status.success(), "perf script -D on {}", file.display());
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    let mut records: Vec<Record> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(": PERF_RECORD_"))
        .filter_map(|l| {
            let tok: Vec<&str> = l.split_whitespace().collect();
            let offset = tok.get(2)?.strip_prefix("0x")?;
            let size = tok.get(3)?.strip_prefix("[")?.strip_suffix("]:")?;
            Some(Record {
                cpu: tok.first()?.parse().ok()?,
                offset: hex(offset),
                size: hex(size),
                time: tok.get(1)?.parse().ok()?,
            })
        })
        .collect();
    records.sort_by_key(|r| r.offset);
    records
}

/// What perf itself says of a damaged file: it must refuse it.
fn assert_perf_refuses(file: &Path) {
    for args in [
        &["sched", "timehist", "-i"][..],
        &["report", "--stdio", "-i"],
    ] {
        let out = Command::new("perf")
            .args(args)
            .arg(file)
            .output()
            .expect("perf runs");
        let said = String::from_utf8_lossy(&out.stderr).to_string()
            + &String::from_utf8_lossy(&out.stdout);
        assert!(
            said.contains("incompatible file format"),
            "perf {} accepted {}: {said}",
            args.join(" "),
            file.display()
        );
    }
}

/// `head -c LEN FROM > TO`.
fn head(from: &Path, len: u64, to: &Path) {
    let out = Command::new("head")
        .args(["-c", &len.to_string()])
        .arg(from)
        .output()
        .expect("head runs");
    assert!(out.status.success());
    std::fs::write(to, out.stdout).unwrap();
}

/// The salvage note of a salvaged read: a warning from perf-sched starting "FILE: salvaged:".
fn salvage_note(t: &SchedTables, file: &Path) -> String {
    let prefix = format!("{}: salvaged: ", file.display());
    let notes: Vec<_> = (t.quality.iter())
        .filter(|q| q.message.starts_with(&prefix))
        .collect();
    assert_eq!(notes.len(), 1, "{:#?}", t.quality);
    assert_eq!(notes[0].severity, Severity::Warning);
    assert_eq!(notes[0].source, "perf-sched");
    notes[0].message.clone()
}

/// Checks that a plain read refuses the file with the salvage hint.
fn assert_refused_with_hint(file: &Path) {
    let e = read(file, false).expect_err("a damaged file is refused without salvage");
    assert!(e.salvageable(), "{e}");
    assert!(
        e.to_string()
            .contains("`--salvage` reads it up to the last complete record"),
        "{e}"
    );
}

/// Records `perf sched record -a` around a shell loop that sleeps 200 times, so that the
/// file has a few hundred switches on every CPU and several rounds.
fn record(dir: &Path) -> PathBuf {
    let file = dir.join("full.data");
    let out = Command::new("perf")
        .args(["sched", "record", "-a", "-k", "CLOCK_MONOTONIC", "-o"])
        .arg(&file)
        .args([
            "--",
            "sh",
            "-c",
            "for i in $(seq 200); do sleep 0.002; done",
        ])
        .output()
        .expect("perf runs");
    assert!(
        out.status.success(),
        "perf sched record: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    file
}

/// The bytes of whole records after the FINISHED_INIT record (perf's end of what it
/// synthesized before recording) in a file perf is still writing; 0 before it.
fn recorded_after_init(file: &Path) -> u64 {
    const PERF_RECORD_FINISHED_INIT: u32 = 82;
    let Ok(b) = std::fs::read(file) else {
        return 0;
    };
    let Some(start) = b.get(40..48) else {
        return 0;
    };
    let mut at = u64::from_le_bytes(start.try_into().unwrap()) as usize;
    let mut init_end = None;
    while let Some(h) = b.get(at..at + 8) {
        let size = u16::from_le_bytes([h[6], h[7]]) as usize;
        if size < 8 || at + size > b.len() {
            break;
        }
        at += size;
        if u32::from_le_bytes(h[..4].try_into().unwrap()) == PERF_RECORD_FINISHED_INIT {
            init_end = Some(at);
        }
    }
    init_end.map_or(0, |end| (at - end) as u64)
}

fn by_end(mut s: Vec<SchedSliceRow>) -> Vec<SchedSliceRow> {
    s.sort_by_key(|s| (s.end_ns, s.cpu, s.tid));
    s
}

/// A recording cut inside its records, at a record's end and a few bytes into a record
/// header, is read up to its last complete record. The unreadable bytes are those after that
/// record's end (perf's dump says where each record ends). The salvaged slices are those of
/// the complete file whose records lie before the cut: perf writes each CPU's records in time
/// order, but drains a quiet CPU's buffer late, so the records lost with the cut begin at a
/// different time on each CPU. Per CPU, the salvaged slices are exactly the complete file's that
/// end before that CPU's first lost record (same thread, start, end, run time, state and
/// priority); the wait and delay, which follow from other CPUs' records too, are equal for
/// every slice that ends before the first lost record of any CPU.
#[test]
fn a_recording_cut_inside_its_records_is_read_up_to_the_last_complete_record() {
    const TEST: &str = "a_recording_cut_inside_its_records_is_read_up_to_the_last_complete_record";
    if let Some(reason) = cannot_trace() {
        return unavailable(TEST, &reason);
    }
    let dir = tempfile::tempdir().unwrap();
    let full = record(dir.path());
    let complete = read(&full, false).unwrap_or_else(|e| panic!("{e}"));
    let records = perf_records(&full);
    let data_end = records.last().unwrap().end();
    let samples: Vec<&Record> = records.iter().filter(|r| r.time > 0).collect();
    assert!(samples.len() > 500, "{} timed records", samples.len());
    let inside = |fraction: f64| samples[(samples.len() as f64 * fraction) as usize];
    let cuts = [
        inside(0.3).offset + 13,             // inside a record's body
        inside(0.5).end(),                   // exactly at a record's end
        inside(0.7).offset + 3,              // inside a record's 8-byte header
        samples.last().unwrap().offset + 16, // inside the last timed record
    ];
    for cut in cuts {
        let file = dir.path().join(format!("cut-{cut}.data"));
        head(&full, cut, &file);
        assert_perf_refuses(&file);
        assert_refused_with_hint(&file);
        let salvaged = read(&file, true).unwrap_or_else(|e| panic!("{e}"));

        let last_whole = records
            .iter()
            .take_while(|r| r.end() <= cut)
            .last()
            .unwrap();
        let unread = cut - last_whole.end();
        let note = salvage_note(&salvaged, &file);
        assert!(
            note.contains("the file is cut short inside its records"),
            "{note}"
        );
        if unread == 0 {
            assert!(note.contains("0 bytes could not be read"), "{note}");
        } else {
            let said = format!("{unread} bytes from byte {} to the end", last_whole.end());
            assert!(note.contains(&said), "{note}");
        }
        assert!(note.contains("lost: TRACING_DATA"), "{note}");
        assert!(
            (salvaged.quality.iter())
                .any(|q| q.message.contains("the running kernel's formats from")),
            "the tracepoint formats came from tracefs: {:#?}",
            salvaged.quality
        );

        let lost = |cpu: Option<i32>| {
            (records.iter())
                .filter(|r| r.end() > last_whole.end() && r.time > 0)
                .filter(|r| cpu.is_none_or(|c| c == r.cpu))
                .map(|r| r.time as i64)
                .min()
                .unwrap_or(i64::MAX)
        };
        let cpus: std::collections::BTreeSet<i32> =
            complete.sched_slices.iter().map(|s| s.cpu).collect();
        let mut matched = 0;
        for &cpu in &cpus {
            let lost_from = lost(Some(cpu));
            let on_cpu = |s: &[SchedSliceRow], all: bool| {
                let mut keys: Vec<_> = (s.iter())
                    .filter(|s| s.cpu == cpu && (all || s.end_ns < lost_from))
                    .map(|s| {
                        (
                            s.end_ns,
                            s.tid,
                            s.start_ns,
                            s.run_ns,
                            s.prev_state.clone(),
                            s.prio,
                        )
                    })
                    .collect();
                keys.sort();
                keys
            };
            let (got, want) = (
                on_cpu(&salvaged.sched_slices, true),
                on_cpu(&complete.sched_slices, false),
            );
            matched += want.len();
            assert!(
                got == want,
                "cut at {cut}: cpu {cpu}: {} salvaged slices, {} in the complete file before {lost_from}",
                got.len(),
                want.len()
            );
        }
        assert!(
            matched > 20,
            "cut at {cut}: {matched} slices before the cut"
        );
        let lost_from = lost(None);
        let before = |s: &Vec<SchedSliceRow>| {
            by_end(s.iter().filter(|s| s.end_ns < lost_from).cloned().collect())
        };
        let (got, want) = (
            before(&salvaged.sched_slices),
            before(&complete.sched_slices),
        );
        assert!(
            got == want,
            "cut at {cut}: the slices before {lost_from} differ"
        );
        let last_time = (records.iter())
            .filter(|r| r.end() <= cut)
            .map(|r| r.time as i64)
            .max()
            .unwrap();
        assert!(
            (salvaged.sched_slices.iter()).all(|s| s.end_ns <= last_time),
            "no slice ends after the last record read"
        );
        eprintln!(
            "cut at {cut} of {data_end}: {unread} bytes unread, {} of {} slices ({} before any CPU's first lost record)",
            salvaged.sched_slices.len(),
            complete.sched_slices.len(),
            got.len()
        );
    }
}

/// Cut among the feature sections after the records (inside TRACING_DATA, the first of them):
/// every record is read and the tables equal the complete file's.
#[test]
fn a_recording_cut_after_its_records_loses_only_the_header_sections() {
    const TEST: &str = "a_recording_cut_after_its_records_loses_only_the_header_sections";
    if let Some(reason) = cannot_trace() {
        return unavailable(TEST, &reason);
    }
    let dir = tempfile::tempdir().unwrap();
    let full = record(dir.path());
    let complete = read(&full, false).unwrap_or_else(|e| panic!("{e}"));
    let data_end = perf_records(&full).last().unwrap().end();
    // The feature section table follows the records; its first entry is TRACING_DATA's
    // (offset, size), the lowest feature bit perf sets: cut 500 bytes into that section.
    let bytes = std::fs::read(&full).unwrap();
    let at = data_end as usize;
    let tracing_off = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    let tracing_size = u64::from_le_bytes(bytes[at + 8..at + 16].try_into().unwrap());
    assert!(tracing_size > 1000, "TRACING_DATA is {tracing_size} bytes");
    let cut = tracing_off + 500;
    let file = dir.path().join("cut.data");
    head(&full, cut, &file);
    assert_perf_refuses(&file);
    assert_refused_with_hint(&file);
    let salvaged = read(&file, true).unwrap_or_else(|e| panic!("{e}"));
    let note = salvage_note(&salvaged, &file);
    assert!(note.contains("every record was read"), "{note}");
    assert!(note.contains("TRACING_DATA"), "{note}");
    assert!(salvaged.sched_slices == complete.sched_slices);
    assert!(salvaged.wakeups == complete.wakeups);
    assert!(salvaged.migrations == complete.migrations);
    assert_eq!(salvaged.threads, complete.threads);
}

/// `perf sched record` killed with SIGKILL once it has written 32 KiB of recorded events (of a loop
/// of `sleep`s) leaves a header
/// whose data size is 0 and no feature sections; perf refuses the file, the plain read refuses
/// it naming `--salvage`, and the salvaged read has the slices of perf itself and of the
/// recorded `sleep`, the clock from the attributes, and as many unreadable bytes as follow the
/// last whole record.
#[test]
fn a_recording_whose_perf_was_killed_is_salvaged() {
    const TEST: &str = "a_recording_whose_perf_was_killed_is_salvaged";
    if let Some(reason) = cannot_trace() {
        return unavailable(TEST, &reason);
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("killed.data");
    let mut perf = Command::new("perf")
        .args(["sched", "record", "-a", "-k", "CLOCK_MONOTONIC", "-o"])
        .arg(&file)
        // perf writes what the ring buffers recorded only once they fill to its wake-up mark
        // (or when the workload ends): a loop of short sleeps fills them on an idle machine too,
        // with forks, execs and switches, and ends by itself if the kill below is never reached.
        .args([
            "--",
            "sh",
            "-c",
            "i=0; while [ $i -lt 12000 ]; do sleep 0.01; i=$((i+1)); done",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own process group, so that the kill reaches the workload as well as perf.
        .process_group(0)
        .spawn()
        .expect("perf runs");
    let deadline = Instant::now() + Duration::from_secs(110);
    let size = || std::fs::metadata(&file).map_or(0, |m| m.len());
    // perf first writes the machine's processes and mappings (more on a busy machine), then
    // FINISHED_INIT, then what the ring buffers recorded: wait for 32 KiB of the latter.
    while recorded_after_init(&file) < 32 << 10 {
        assert!(
            Instant::now() < deadline,
            "{} stayed at {} bytes",
            file.display(),
            size()
        );
        assert!(perf.try_wait().unwrap().is_none(), "perf ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    let group = format!("-{}", perf.id());
    let killed = Command::new("kill").args(["-KILL", "--", &group]).status();
    assert!(killed.is_ok_and(|s| s.success()), "kill -KILL -- {group}");
    perf.wait().unwrap();
    let len = size();
    let header = std::fs::read(&file).unwrap();
    let data_size = u64::from_le_bytes(header[48..56].try_into().unwrap());
    assert_eq!(data_size, 0, "perf writes the data size only when it exits");

    assert_perf_refuses(&file);
    let e = read(&file, false).expect_err("refused without salvage");
    assert!(matches!(e, PerfError::Unfinished { .. }), "{e}");
    assert_refused_with_hint(&file);

    let salvaged = read(&file, true).unwrap_or_else(|e| panic!("{e}"));
    let note = salvage_note(&salvaged, &file);
    assert!(note.contains("perf did not finish the file"), "{note}");
    // The record framing, walked here from the data section's start (header byte 40).
    let mut end = u64::from_le_bytes(header[40..48].try_into().unwrap());
    loop {
        let at = end as usize;
        let Some(h) = header.get(at..at + 8) else {
            break;
        };
        let size = u16::from_le_bytes([h[6], h[7]]) as u64;
        if size < 8 || end + size > len {
            break;
        }
        end += size;
    }
    if end == len {
        assert!(note.contains("0 bytes could not be read"), "{note}");
    } else {
        let said = format!("{} bytes from byte {end} to the end", len - end);
        assert!(note.contains(&said), "{note}");
    }
    let comms: std::collections::BTreeSet<&str> =
        salvaged.sched_slices.iter().map(|s| &*s.comm).collect();
    assert!(
        comms.contains("perf") && comms.contains("sleep"),
        "{} slices of {comms:?}",
        salvaged.sched_slices.len()
    );
    let trace = salvaged.trace.as_ref().unwrap();
    assert_eq!(
        trace.clock, "CLOCK_MONOTONIC",
        "the clock comes from the attributes"
    );
    assert_eq!(trace.perf_version, None, "lost with the feature sections");
    eprintln!(
        "killed at {len} bytes: {} bytes unread, {} slices",
        len - end,
        salvaged.sched_slices.len()
    );
}
