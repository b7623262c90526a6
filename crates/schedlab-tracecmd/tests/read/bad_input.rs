//! Damaged, cut and foreign files: an error naming the file and the byte, with a hint, or
//! (salvaging a v6 file cut inside its CPU data) the events up to each CPU's last complete
//! page; never a panic.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use schedlab_perf::{SchedOptions, Severity};
use schedlab_tracecmd::{TraceCmdError, TraceCmdTables, read_sched};

use crate::record::{Buffer, record};
use crate::recording_or_skip;

fn read(path: &Path, salvage: bool) -> Result<TraceCmdTables, TraceCmdError> {
    let opts = SchedOptions {
        run_id: "test".into(),
        salvage,
        ..Default::default()
    };
    read_sched(path, &opts)
}

/// `bytes` written to `name` in `dir`.
fn file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The error names the file, a byte and a hint.
fn says_where(path: &Path, e: &TraceCmdError) {
    let msg = e.to_string();
    assert!(msg.starts_with(&path.display().to_string()), "{msg}");
    assert!(msg.contains(": byte "), "{msg}");
    assert!(msg.contains("hint: "), "{msg}");
}

/// Each CPU's data of the top buffer, as `trace-cmd dump --flyrecord` lists it: (cpu,
/// offset, size).
fn cpu_data(path: &Path) -> Vec<(i32, u64, u64)> {
    let out = Command::new("trace-cmd")
        .args(["dump", "--flyrecord", "-i"])
        .arg(path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .filter(|l| l.contains("[id, data offset and size]"))
        .map(|l| {
            let n: Vec<u64> = l
                .split_whitespace()
                .take(3)
                .map(|w| w.parse().unwrap())
                .collect();
            (n[0] as i32, n[1], n[2])
        })
        .collect()
}

/// A v7 file cut anywhere, and LISA's v6 file cut anywhere but inside its CPU data, is refused
/// with the byte where it ends; salvaging does not change that.
#[test]
fn files_cut_short_are_refused_with_the_byte_where_they_end() {
    recording_or_skip!();
    let rec = record(Buffer::Top, "mono", &["cpu"]);
    let bytes = std::fs::read(&rec.path).unwrap();
    let data_start = cpu_data(&rec.path).iter().map(|c| c.1).min().unwrap() as usize;
    let dir = rec.dir.path();
    // The header, its sections (formats at a few hundred bytes, kallsyms after them), the CPU
    // data. (The file ends with a section of strings the reader does not need.)
    let cuts = [
        0,
        3,
        9,
        12,
        20,
        40,
        300,
        2000,
        bytes.len() / 2,
        data_start + 100,
    ];
    for cut in cuts {
        let path = file(dir, &format!("cut-{cut}.dat"), &bytes[..cut]);
        for salvage in [false, true] {
            let Err(e) = read(&path, salvage) else {
                panic!("{}: a v7 file cut at byte {cut} is refused", path.display());
            };
            says_where(&path, &e);
            assert!(!e.salvageable(), "{e}");
        }
    }
    // Cut inside the CPU data: the table of it, at the end, is gone.
    let path = file(dir, "cut-data.dat", &bytes[..data_start + 100]);
    let e = read(&path, true).unwrap_err().to_string();
    assert!(e.contains("cannot be read, nor salvaged"), "{e}");
}

/// LISA's v6 trace cut inside its CPU data: refused, with the hint that salvaging reads it;
/// salvaged, each CPU's slices are the full file's up to its last complete page.
#[test]
fn a_v6_file_cut_inside_its_cpu_data_is_salvaged() {
    let fixtures = schedlab_testkit::shared_fixtures_or_skip!("trace-dat");
    let full_path = fixtures.join("arm-sched-load-v6.dat");
    let bytes = std::fs::read(&full_path).unwrap();
    let full = read(&full_path, false).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // CPU 3's data spans 0x32f000..0x33d000 (trace-cmd report --stat); cut in its middle.
    let cut = 0x32f000 + 0x5123;
    let path = file(dir.path(), "cut.dat", &bytes[..cut]);
    let e = read(&path, false).unwrap_err();
    says_where(&path, &e);
    assert!(e.salvageable(), "{e}");
    assert!(
        e.to_string().contains("`--salvage` reads what is there"),
        "{e}"
    );
    let salvaged = read(&path, true).unwrap();
    let per_cpu = |t: &TraceCmdTables| {
        let mut m: BTreeMap<i32, Vec<(i64, i32)>> = BTreeMap::new();
        for s in &t.sched.sched_slices {
            m.entry(s.cpu).or_default().push((s.end_ns, s.tid));
        }
        m
    };
    let (whole, cut_tables) = (per_cpu(&full), per_cpu(&salvaged));
    for (cpu, slices) in &whole {
        let got = cut_tables.get(cpu).cloned().unwrap_or_default();
        assert!(
            slices.starts_with(&got),
            "cpu {cpu}: the salvaged slices are a prefix"
        );
        // CPUs 0-2 lie before the cut, whole; 3 is cut; 4 and 5 lie after it.
        match cpu {
            0..=2 => assert_eq!(got.len(), slices.len(), "cpu {cpu} whole"),
            3 => assert!(
                !got.is_empty() && got.len() < slices.len(),
                "cpu 3 cut: {} of {}",
                got.len(),
                slices.len()
            ),
            _ => assert!(got.is_empty(), "cpu {cpu} lies past the cut"),
        }
    }
    let note = (salvaged.sched.quality.iter())
        .find(|q| q.message.contains("salvaged"))
        .expect("a quality row says it was salvaged");
    assert_eq!(note.severity, Severity::Warning);
    assert!(
        note.message.contains(&format!("ends at byte {cut}")),
        "{}",
        note.message
    );
}

/// A compressed chunk damaged in the middle of a file: that CPU's events stop there with an
/// error row naming the chunk's byte; the other CPU's are all read.
#[test]
fn a_damaged_compressed_chunk_ends_its_cpus_events_with_an_error_row() {
    recording_or_skip!();
    let rec = record(Buffer::Top, "mono", &["cpu"]);
    let mut bytes = std::fs::read(&rec.path).unwrap();
    let full = read(&rec.path, false).unwrap();
    let (cpu, offset, _) = cpu_data(&rec.path)[0];
    // The first chunk: a count, then its compressed size, its size and the zstd frame; flip
    // bytes well inside the frame.
    let frame = offset as usize + 12;
    for b in &mut bytes[frame + 8..frame + 40] {
        *b ^= 0x5a;
    }
    let path = file(rec.dir.path(), "damaged.dat", &bytes);
    let t = read(&path, false).expect("damage inside CPU data is a quality row, not an error");
    let error = (t.sched.quality.iter())
        .find(|q| q.severity == Severity::Error)
        .unwrap_or_else(|| panic!("an error row: {:?}", t.sched.quality));
    assert!(
        error.message.contains(&format!(
            "byte {}: cpu {cpu}: a compressed chunk does not decompress",
            offset + 4
        )),
        "{}",
        error.message
    );
    assert_eq!(error.cpu, Some(cpu));
    let others = |t: &TraceCmdTables| t.sched.sched_slices.iter().filter(|s| s.cpu != cpu).count();
    assert_eq!(
        others(&t),
        others(&full),
        "the other CPU's slices are all there"
    );
}

#[test]
fn unknown_versions_big_endian_and_foreign_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let head = |version: &[u8], endian: u8| {
        let mut b = b"\x17\x08\x44tracing".to_vec();
        b.extend(version);
        b.push(endian);
        b.push(8);
        b.extend(4096u32.to_le_bytes());
        b.resize(4096, 0);
        b
    };
    let path = file(dir.path(), "v9.dat", &head(b"9\0", 0));
    let e = read(&path, false).unwrap_err();
    says_where(&path, &e);
    let msg = e.to_string();
    assert!(
        msg.contains("byte 10: unsupported trace.dat: file format version \"9\""),
        "{msg}"
    );
    let path = file(dir.path(), "big.dat", &head(b"6\0", 1));
    let msg = read(&path, false).unwrap_err().to_string();
    assert!(
        msg.contains("byte 12: unsupported trace.dat: a big-endian trace"),
        "{msg}"
    );
    let perf = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../schedlab-perf/tests/fixtures/allsched.data");
    let msg = read(&perf, false).unwrap_err().to_string();
    assert!(
        msg.contains("byte 0: not a trace.dat file (it starts with \"PERFILE2"),
        "{msg}"
    );
    let path = file(dir.path(), "empty.dat", b"");
    let msg = read(&path, false).unwrap_err().to_string();
    assert!(msg.contains("the file is empty"), "{msg}");
}
