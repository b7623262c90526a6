//! perf.data in perf's other layouts, recorded here: compressed records (`perf sched record
//! -z`), pipe mode (`-o -`) and both, read as file-mode perf.data is. A compressed file is checked
//! against `perf sched timehist` on the same file (perf reads it); perf 6.1's timehist reads no
//! pipe-mode file, so a pipe is checked against `perf script`'s own decoding of its sched_switch
//! events. Cut short, each is refused with the byte offset and `--salvage`, and salvaged up to its
//! last complete record.

use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use schedlab_perf::{PerfError, SchedOptions, SchedTables, read_sched};

use crate::agreement::agrees_with_perf;
use crate::util::{cannot_trace, listing_of, summary_of, unavailable};

/// What the recordings trace: forks and exits, sleeps and a little CPU work.
const WORKLOAD: &[&str] = &[
    "sh",
    "-c",
    "for i in $(seq 60); do /bin/true; done; sleep 0.2; for i in $(seq 60); do /bin/true; done",
];

fn read(path: &Path, salvage: bool) -> Result<SchedTables, PerfError> {
    let opts = SchedOptions {
        run_id: "test".into(),
        salvage,
        ..Default::default()
    };
    read_sched(path, &opts)
}

/// Records the workload with `perf sched record -a -k CLOCK_MONOTONIC` and `extra` flags into
/// `dir/name`; `-o -` writes the pipe to the file through perf's stdout.
fn record(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let file = dir.join(name);
    let mut perf = Command::new("perf");
    perf.args(["sched", "record", "-a", "-k", "CLOCK_MONOTONIC"])
        .args(extra)
        .stderr(Stdio::null());
    if extra.contains(&"-") {
        perf.stdout(File::create(&file).unwrap());
    } else {
        perf.arg("-o").arg(&file).stdout(Stdio::null());
    }
    let status = perf.arg("--").args(WORKLOAD).status().expect("perf runs");
    assert!(status.success(), "perf sched record {extra:?}: {status}");
    file
}

fn perf_text(args: &[&str], file: &Path) -> String {
    let out = Command::new("perf")
        .args(args)
        .arg("-i")
        .arg(file)
        .stderr(Stdio::null())
        .output()
        .expect("perf runs");
    assert!(out.status.success(), "perf {args:?} -i {}", file.display());
    String::from_utf8(out.stdout).unwrap()
}

/// A slice as perf's switch events give it: (cpu, end ns, tid switched out, run ns).
type Slice = (i32, i64, i32, i64);

/// The slices `perf script` decodes from the file's sched_switch events, with perf sched
/// timehist's rule: on each CPU a switch-out ends the slice that began at that CPU's previous
/// switch (run time 0 for a CPU's first).
fn perf_script_slices(file: &Path) -> BTreeSet<Slice> {
    let text = perf_text(&["script", "--ns", "-F", "cpu,time,event,trace"], file);
    let mut previous = std::collections::BTreeMap::new();
    let mut slices = BTreeSet::new();
    for line in text.lines().filter(|l| l.contains("sched:sched_switch:")) {
        let mut words = line.split_whitespace();
        let cpu: i32 = words
            .next()
            .unwrap()
            .trim_matches(['[', ']'])
            .parse()
            .unwrap();
        let time = words.next().unwrap().trim_end_matches(':').replace('.', "");
        let time: i64 = time.parse().unwrap();
        let prev_pid: i32 = (line.split_whitespace())
            .find_map(|w| w.strip_prefix("prev_pid="))
            .unwrap()
            .parse()
            .unwrap();
        let run = previous.insert(cpu, time).map_or(0, |start| time - start);
        slices.insert((cpu, time, prev_pid, run));
    }
    slices
}

fn slices(tables: &SchedTables) -> BTreeSet<Slice> {
    (tables.sched_slices.iter())
        .map(|s| (s.cpu, s.end_ns, s.tid, s.run_ns))
        .collect()
}

/// Checks a pipe-mode recording's tables against perf's own decoding of the same file.
fn check_pipe(file: &Path) -> SchedTables {
    let tables = read(file, false).unwrap_or_else(|e| panic!("{e}"));
    let perf = perf_script_slices(file);
    assert!(perf.len() > 100, "{} switches", perf.len());
    assert_eq!(slices(&tables), perf, "{}", file.display());
    let trace = tables.trace.as_ref().unwrap();
    assert_eq!(trace.layout, "pipe");
    assert_eq!(trace.clock, "CLOCK_MONOTONIC");
    assert!(tables.threads.iter().any(|t| t.comm.as_ref() == "true"));
    tables
}

/// Each record of the file, by where it starts, its type and its size, walking its records (a
/// pipe's from byte 16, with HEADER_TRACING_DATA's payload after its record; a file's data
/// section).
fn records(file: &Path) -> Vec<(u64, u32, u64)> {
    let b = std::fs::read(file).unwrap();
    let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let (mut at, end) = match u64_at(8) {
        16 => (16, b.len()),
        _ => (u64_at(40) as usize, (u64_at(40) + u64_at(48)) as usize),
    };
    let mut records = Vec::new();
    while at + 8 <= end {
        let kind = u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        let size = u16::from_le_bytes(b[at + 6..at + 8].try_into().unwrap()) as usize;
        records.push((at as u64, kind, size as u64));
        at += size;
        if kind == 66 {
            at += u32::from_le_bytes(b[at - size + 8..at - size + 12].try_into().unwrap()) as usize;
        }
    }
    records
}

/// Where the file's last compressed record starts, and its size.
fn last_compressed_record(file: &Path) -> (u64, u64) {
    (records(file).into_iter().rev())
        .find(|&(_, kind, _)| matches!(kind, 81 | 83))
        .map(|(at, _, size)| (at, size))
        .expect("a compressed record")
}

/// The middle of the record that holds byte `at`: a pipe cut between two records is a shorter
/// stream, whole, that no reader can tell from a complete one.
fn within_record(file: &Path, at: u64) -> u64 {
    let (start, _, size) = (records(file).into_iter())
        .take_while(|&(start, _, _)| start <= at)
        .last()
        .expect("a record before the cut");
    start + size / 2
}

fn cut(from: &Path, len: u64, to: &Path) {
    let bytes = std::fs::read(from).unwrap();
    std::fs::write(to, &bytes[..len as usize]).unwrap();
}

/// A cut file is refused naming a byte offset and `--salvage`, and salvaged: its slices are the
/// complete file's whose switch events lie before the cut (on each CPU the state machine needs
/// only that CPU's earlier switches, which perf wrote before), with a warning saying where the
/// records stop.
fn check_cut(full: &Path, complete: &SchedTables, at: u64) {
    let file = full.with_extension(format!("cut-{at}"));
    cut(full, at, &file);
    let refused = read(&file, false).unwrap_err().to_string();
    assert!(
        refused.contains("byte ") && refused.contains("--salvage"),
        "{refused}"
    );
    let salvaged = read(&file, true).unwrap_or_else(|e| panic!("{e}"));
    let (got, all) = (slices(&salvaged), slices(complete));
    assert!(
        got.len() > 20,
        "{}: {} slices salvaged",
        file.display(),
        got.len()
    );
    assert!(
        got.len() < all.len(),
        "{}: the cut lost nothing",
        file.display()
    );
    let extra: Vec<_> = got.difference(&all).collect();
    assert!(
        extra.is_empty(),
        "{}: slices not in the file: {extra:?}",
        file.display()
    );
    assert!(
        (salvaged.quality.iter()).any(|q| q.message.contains("byte ")
            && (q.message.contains("salvaged") || q.message.contains("could not be read"))),
        "{:#?}",
        salvaged.quality
    );
}

#[test]
fn a_compressed_recording_gives_what_perf_gives_on_it() {
    const TEST: &str = "a_compressed_recording_gives_what_perf_gives_on_it";
    if let Some(reason) = cannot_trace() {
        return unavailable(TEST, &reason);
    }
    let dir = tempfile::tempdir().unwrap();
    let file = record(dir.path(), "z.data", &["-z"]);
    let tables = read(&file, false).unwrap_or_else(|e| panic!("{e}"));
    let trace = tables.trace.as_ref().unwrap();
    assert_eq!(trace.layout, "file");
    assert!(trace.compressed_records > 0, "{trace:#?}");
    let (lines, _) = listing_of(&perf_text(&["sched", "timehist"], &file));
    let summary = summary_of(&perf_text(&["sched", "timehist", "-M", "-s"], &file));
    agrees_with_perf("z.data", &tables, &lines, &summary);
    // Inside the last compressed record: the records before it and those its first bytes hold.
    let (at, size) = last_compressed_record(&file);
    check_cut(&file, &tables, at + size / 2);
}

#[test]
fn a_pipe_mode_recording_gives_what_perf_decodes_from_it() {
    const TEST: &str = "a_pipe_mode_recording_gives_what_perf_decodes_from_it";
    if let Some(reason) = cannot_trace() {
        return unavailable(TEST, &reason);
    }
    let dir = tempfile::tempdir().unwrap();
    let file = record(dir.path(), "pipe.data", &["-o", "-"]);
    let tables = check_pipe(&file);
    assert_eq!(tables.trace.as_ref().unwrap().compressed_records, 0);
    let len = std::fs::metadata(&file).unwrap().len();
    check_cut(&file, &tables, within_record(&file, len * 7 / 10));
}

#[test]
fn a_compressed_pipe_mode_recording_gives_what_perf_decodes_from_it() {
    const TEST: &str = "a_compressed_pipe_mode_recording_gives_what_perf_decodes_from_it";
    if let Some(reason) = cannot_trace() {
        return unavailable(TEST, &reason);
    }
    let dir = tempfile::tempdir().unwrap();
    let file = record(dir.path(), "zpipe.data", &["-z", "-o", "-"]);
    let tables = check_pipe(&file);
    assert!(tables.trace.as_ref().unwrap().compressed_records > 0);
    let (at, size) = last_compressed_record(&file);
    check_cut(&file, &tables, at + size / 2);
}
