//! Damaged and foreign files: a clear error naming the file and byte offset, or a partial
//! result with a quality row when only the record stream is damaged; never a panic.

use std::path::{Path, PathBuf};

use schedlab_perf::{PerfError, SchedOptions, SchedTables, Severity, read_sched};

use crate::util::fixture;

fn read_path(path: &Path) -> Result<SchedTables, PerfError> {
    read_sched(path, &SchedOptions::default())
}

/// Writes `bytes` to a temporary file and reads it; the file lives as long as the result.
fn read_bytes(bytes: &[u8]) -> (Result<SchedTables, PerfError>, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.data");
    std::fs::write(&path, bytes).unwrap();
    (read_path(&path), path, dir)
}

fn bursty() -> Vec<u8> {
    std::fs::read(fixture("bursty.data")).unwrap()
}

/// The header field at byte `at` (a little-endian u64; perf.data's header is a run of them).
fn header_u64(b: &[u8], at: usize) -> usize {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize
}

/// Where the header says the data section starts (its `data.offset` field, byte 40).
fn data_start(b: &[u8]) -> usize {
    header_u64(b, 40)
}

/// The data section's start and the offsets of its records, walked from the header.
fn records(b: &[u8]) -> Vec<usize> {
    let (start, size) = (data_start(b), header_u64(b, 48));
    let mut offsets = Vec::new();
    let mut pos = start;
    while pos < start + size {
        offsets.push(pos);
        pos += u16::from_le_bytes([b[pos + 6], b[pos + 7]]) as usize;
    }
    offsets
}

#[test]
fn truncated_file_names_the_offset() {
    let b = bursty();
    // Half the file keeps the header but cuts the data section, which then runs past the end:
    // the error points at the section's start.
    let start = data_start(&b);
    assert!(start < b.len() / 2);
    let (r, path, _dir) = read_bytes(&b[..b.len() / 2]);
    let e = r.unwrap_err();
    assert!(
        matches!(e, PerfError::Truncated { offset, .. } if offset == start as u64),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!(
            "{}: byte {start}: the file is truncated",
            path.display()
        )),
        "{msg}"
    );
    assert!(msg.contains("hint: "), "{msg}");
}

#[test]
fn header_only_and_empty_files_are_truncated() {
    for len in [0, 7, 50, 103] {
        let (r, _, _dir) = read_bytes(&bursty()[..len]);
        assert!(
            matches!(r, Err(PerfError::Truncated { .. })),
            "{len}: {r:?}"
        );
    }
}

#[test]
fn a_file_that_is_not_perf_data() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let e = read_path(&path).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: byte 0: not a perf.data file (it starts with \"[package\"); hint: pass a file written by `perf sched record` or `perf record -e 'sched:*'`",
            path.display()
        )
    );
}

#[test]
fn missing_file_is_an_io_error() {
    let e = read_path(Path::new("/nonexistent/perf.data")).unwrap_err();
    assert!(matches!(e, PerfError::Io { .. }));
    assert!(
        e.to_string()
            .starts_with("/nonexistent/perf.data: cannot read the file")
    );
}

#[test]
fn flipped_magic_byte() {
    let mut b = bursty();
    b[0] ^= 0x01;
    let (r, _, _dir) = read_bytes(&b);
    assert!(matches!(r, Err(PerfError::NotPerfData { .. })), "{r:?}");
}

#[test]
fn flipped_byte_in_a_section_pointer() {
    let mut b = bursty();
    b[48 + 5] ^= 0x40; // data section size, far past the end of the file
    let (r, _, _dir) = read_bytes(&b);
    let e = r.unwrap_err();
    let start = data_start(&b);
    assert!(e.to_string().contains(&format!("byte {start}:")), "{e}");
}

#[test]
fn damaged_record_gives_partial_tables_and_an_error_row() {
    let full = crate::util::read("bursty.data");
    let mut b = bursty();
    let at = records(&b)[3000];
    b[at + 6] = 3; // record size 3: impossible
    b[at + 7] = 0;
    let (r, path, _dir) = read_bytes(&b);
    let t = r.unwrap();
    assert!(!t.sched_slices.is_empty() && t.sched_slices.len() < full.sched_slices.len());
    let errors: Vec<_> = t
        .quality
        .iter()
        .filter(|q| q.severity == Severity::Error)
        .collect();
    assert_eq!(errors.len(), 1, "{:?}", t.quality);
    let msg = &errors[0].message;
    assert!(
        msg.starts_with(&format!(
            "{}: byte {at}: implausible record header",
            path.display()
        )),
        "{msg}"
    );
    assert!(msg.contains("hint: "), "{msg}");
}

#[test]
fn flipped_byte_inside_a_sample_is_survived() {
    let mut b = bursty();
    for &at in records(&b).iter().step_by(97) {
        b[at + 40] ^= 0xff;
    }
    let (r, _, _dir) = read_bytes(&b);
    // Either an error with an offset or tables; the point is no panic and no hang.
    if let Err(e) = r {
        assert!(e.to_string().contains("byte "), "{e}");
    }
}

#[test]
fn traces_without_sched_events_say_so() {
    // Real recordings published by others (the shared fixtures' `perf-data`, see SOURCES.md).
    let dir = schedlab_testkit::shared_fixtures_or_skip!("perf-data");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut seen = 0;
    for entry in entries {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "data") {
            continue;
        }
        seen += 1;
        let e = read_path(&path).unwrap_err();
        assert!(
            matches!(e, PerfError::NoSchedEvents { .. }),
            "{}: {e}",
            path.display()
        );
        assert!(
            e.to_string()
                .contains("hint: record with `perf sched record"),
            "{e}"
        );
    }
    assert!(seen > 0);
}
