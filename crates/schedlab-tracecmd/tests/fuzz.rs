//! Fuzzing on stable: truncated and mutated copies of real trace.dat files (LISA's v6 trace
//! from the shared fixtures, and a v7 zstd recording made here) must give an error or tables,
//! never a panic. Run alone with `cargo test -p schedlab-tracecmd --test fuzz`; raise
//! `PROPTEST_CASES` for a longer run (`just fuzz`).

// The read test's recorder; this test uses a part of it.
#[allow(dead_code)]
#[path = "read/record.rs"]
mod record;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proptest::prelude::*;
use schedlab_perf::SchedOptions;

/// LISA's v6 trace, or `None` (reported) without the shared fixtures.
fn v6() -> Option<&'static Vec<u8>> {
    static BYTES: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    BYTES
        .get_or_init(|| {
            let dir = schedlab_testkit::shared_fixtures("fuzz v6", "trace-dat")?;
            Some(std::fs::read(dir.join("arm-sched-load-v6.dat")).unwrap())
        })
        .as_ref()
}

/// A v7 zstd recording made here, once per run, or `None` (reported) where trace-cmd cannot
/// record.
fn v7() -> Option<&'static Vec<u8>> {
    static BYTES: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    BYTES
        .get_or_init(|| {
            if let Some(why) = record::cannot_record() {
                schedlab_testkit::unavailable("fuzz v7", &why);
                return None;
            }
            let rec = record::record(record::Buffer::Top, "mono", &["cpu"]);
            Some(std::fs::read(&rec.path).unwrap())
        })
        .as_ref()
}

/// Reads `bytes` as a trace.dat, salvaging it or not. An error must name the file and end
/// with a hint; tables are fine too.
fn survives(bytes: &[u8], dir: &Path, salvage: bool) {
    let path: PathBuf = dir.join("fuzz.dat");
    std::fs::write(&path, bytes).unwrap();
    let opts = SchedOptions {
        salvage,
        ..SchedOptions::default()
    };
    if let Err(e) = schedlab_tracecmd::read_sched(&path, &opts) {
        let msg = e.to_string();
        assert!(msg.starts_with(&path.display().to_string()), "{msg}");
        assert!(msg.contains("hint: "), "{msg}");
    }
}

/// Byte edits: (in the first 16 KiB or anywhere, position as a fraction, xor mask).
fn edits() -> impl Strategy<Value = Vec<(bool, f64, u8)>> {
    prop::collection::vec((any::<bool>(), 0.0..1.0f64, 1..=255u8), 1..12)
}

/// Half the edits hit the header and the sections after it (formats, options), where a flip
/// matters most; the others anywhere, mostly CPU data.
fn apply(mut b: Vec<u8>, edits: &[(bool, f64, u8)]) -> Vec<u8> {
    let len = b.len();
    for &(in_header, at, mask) in edits {
        let span = if in_header { len.min(16 << 10) } else { len };
        let i = ((at * span as f64) as usize).min(len - 1);
        b[i] ^= mask;
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn truncated_files_never_panic(keep in 0.0..1.0f64, salvage in any::<bool>(), v7_file in any::<bool>()) {
        let Some(b) = (if v7_file { v7() } else { v6() }) else { return Ok(()) };
        let dir = tempfile::tempdir().unwrap();
        let n = (keep * b.len() as f64) as usize;
        survives(&b[..n], dir.path(), salvage);
    }

    #[test]
    fn mutated_files_never_panic(e in edits(), salvage in any::<bool>(), v7_file in any::<bool>()) {
        let Some(b) = (if v7_file { v7() } else { v6() }) else { return Ok(()) };
        let dir = tempfile::tempdir().unwrap();
        survives(&apply(b.clone(), &e), dir.path(), salvage);
    }
}
