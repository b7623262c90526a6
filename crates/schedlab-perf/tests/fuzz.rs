//! Fuzzing on stable: truncated and mutated copies of real recordings must give an error or
//! tables, never a panic. Run alone with `cargo test -p schedlab-perf --test fuzz`; raise
//! `PROPTEST_CASES` for a longer run.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use schedlab_perf::{SchedOptions, read_sched};

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read(path).unwrap()
}

/// Reads `bytes` as a perf.data file, salvaging it or not. An error must name the file;
/// tables are fine too.
fn survives(bytes: &[u8], dir: &Path, salvage: bool) {
    let path = dir.join("fuzz.data");
    std::fs::write(&path, bytes).unwrap();
    let opts = SchedOptions {
        salvage,
        ..SchedOptions::default()
    };
    if let Err(e) = read_sched(&path, &opts) {
        let msg = e.to_string();
        assert!(msg.starts_with(&path.display().to_string()), "{msg}");
        assert!(msg.contains("hint: "), "{msg}");
    }
}

/// Byte edits: (position as a fraction of the file or of its first 4 KiB, xor mask).
fn edits() -> impl Strategy<Value = Vec<(bool, f64, u8)>> {
    prop::collection::vec((any::<bool>(), 0.0..1.0f64, 1..=255u8), 1..12)
}

fn apply(mut b: Vec<u8>, edits: &[(bool, f64, u8)]) -> Vec<u8> {
    let len = b.len();
    for &(in_header, at, mask) in edits {
        // Half the edits hit the header, attributes and first records, where a flip matters most.
        let span = if in_header { len.min(4096) } else { len };
        let i = ((at * span as f64) as usize).min(len - 1);
        b[i] ^= mask;
    }
    b
}

proptest! {
    // 96 cases by default (each reads a whole recording); `PROPTEST_CASES` (`just fuzz`) sets
    // more.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(96),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn truncated_recordings_never_panic(keep in 0.0..1.0f64, salvage in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let b = fixture("allsched.data");
        let n = (keep * b.len() as f64) as usize;
        survives(&b[..n], dir.path(), salvage);
    }

    #[test]
    fn mutated_recordings_never_panic(e in edits(), salvage in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        survives(&apply(fixture("allsched.data"), &e), dir.path(), salvage);
    }

    #[test]
    fn mutated_bursty_recording_never_panics(e in edits(), salvage in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        survives(&apply(fixture("bursty.data"), &e), dir.path(), salvage);
    }

    /// perf's other layouts, rewritten before they are read: compressed records, and a pipe of
    /// compressed records; cut anywhere, inside a compressed record too, or with bytes flipped.
    #[test]
    fn truncated_or_mutated_compressed_and_pipe_recordings_never_panic(
        pipe in any::<bool>(),
        keep in 0.0..1.0f64,
        e in edits(),
        salvage in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let b = fixture(if pipe { "pipe-zstd.data" } else { "zstd.data" });
        let n = (keep * b.len() as f64) as usize;
        survives(&b[..n], dir.path(), salvage);
        survives(&apply(b, &e), dir.path(), salvage);
    }
}

/// A CMDLINE header section whose argument count is damaged (the fuzz test above once made
/// one claim billions of arguments, and the process aborted allocating for them): the file
/// still reads, without its command line.
#[test]
fn a_damaged_command_line_count_leaves_the_command_line_out() {
    const HEADER_CMDLINE: usize = 11;
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let mut b = fixture("allsched.data");
    // The feature sections' index follows the data section, one {offset, size} per feature
    // bit set in the header's bitmap (at byte 72), in bit order.
    let index = (u64_at(&b, 40) + u64_at(&b, 48)) as usize;
    let bitmap = u64_at(&b, 72);
    assert!(
        bitmap & (1 << HEADER_CMDLINE) != 0,
        "the fixture has a command line"
    );
    let before = (bitmap & ((1 << HEADER_CMDLINE) - 1)).count_ones() as usize;
    let section = u64_at(&b, index + 16 * before) as usize;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cmdline.data");
    std::fs::write(&path, &b).unwrap();
    let intact = read_sched(&path, &SchedOptions::default()).unwrap();
    assert!(
        intact
            .trace
            .unwrap()
            .cmdline
            .is_some_and(|c| c.contains("perf"))
    );

    b[section..section + 4].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
    std::fs::write(&path, &b).unwrap();
    let damaged = read_sched(&path, &SchedOptions::default()).unwrap();
    assert_eq!(damaged.trace.unwrap().cmdline, None);
    assert_eq!(damaged.sched_slices.len(), intact.sched_slices.len());
}
