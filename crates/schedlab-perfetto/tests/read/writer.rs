//! A recording here, written into a Perfetto trace by Perfetto's own protos.

use std::path::{Path, PathBuf};
use std::process::Command;

use schedlab_perf::SchedOptions;
use schedlab_testkit::{perfetto_python, test_name, unavailable};

/// A perf.data of a bounded switching workload and the .pftrace the Python writer makes of
/// its `perf script` text, in `dir`; `None` when this machine cannot record (the test is
/// skipped, and says why).
pub fn recorded(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let test = test_name();
    let python = perfetto_python(&test)?;
    let is_root = std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
    });
    if !is_root {
        unavailable(&test, "recording every CPU with perf needs root");
        return None;
    }
    for tool in ["perf", "stress-ng"] {
        if Command::new(tool).arg("--version").output().is_err() {
            unavailable(&test, &format!("{tool} is not installed"));
            return None;
        }
    }
    let perf_data = dir.join("perf.data");
    // A bounded event rate (2000 switches a second), so no ring buffer overruns.
    let perf = Command::new("perf")
        .args(["sched", "record", "-a", "-k", "CLOCK_MONOTONIC", "-o"])
        .arg(&perf_data)
        .args(["--", "stress-ng", "--cpu", "1", "--switch", "1"])
        .args(["--switch-freq", "2000", "--timeout", "1"])
        .output()
        .expect("perf runs");
    assert!(
        perf.status.success(),
        "{}",
        String::from_utf8_lossy(&perf.stderr)
    );
    let script = Command::new("perf")
        .args(["script", "--ns", "-F", "pid,tid,cpu,time,event,trace", "-i"])
        .arg(&perf_data)
        .output()
        .expect("perf runs");
    assert!(
        script.status.success(),
        "{}",
        String::from_utf8_lossy(&script.stderr)
    );
    let text = dir.join("perf-script.txt");
    std::fs::write(&text, &script.stdout).unwrap();
    let pftrace = dir.join("trace.pftrace");
    let writer = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/read/perf_script_to_pftrace.py"
    );
    let wrote = Command::new(python)
        .arg(writer)
        .args([&text, &pftrace])
        .output()
        .unwrap();
    assert!(
        wrote.status.success(),
        "{writer}: {}",
        String::from_utf8_lossy(&wrote.stderr)
    );
    Some((perf_data, pftrace))
}

pub fn options() -> SchedOptions {
    SchedOptions {
        run_id: "r".into(),
        workloads: vec!["stress=comm:stress-ng*".parse().unwrap()],
        ..SchedOptions::default()
    }
}

#[test]
fn a_trace_written_by_perfettos_protos_gives_the_slices_and_wakeups_of_its_perf_data() {
    let dir = tempfile::tempdir().unwrap();
    let Some((perf_data, pftrace)) = recorded(dir.path()) else {
        return;
    };
    let perf = schedlab_perf::read_sched(&perf_data, &options()).unwrap();
    let read = schedlab_perfetto::read_sched(&pftrace, &options()).unwrap();
    assert!(
        perf.sched_slices.len() > 1000,
        "the recording holds the switching: {} slices",
        perf.sched_slices.len()
    );
    assert!(
        perf.sched_slices
            .iter()
            .any(|s| s.workload.as_deref() == Some("stress"))
    );
    let mut want = perf.sched_slices.clone();
    let mut got = read.sched.sched_slices.clone();
    want.sort_by_key(|s| (s.end_ns, s.cpu));
    got.sort_by_key(|s| (s.end_ns, s.cpu));
    assert_eq!(got.len(), want.len(), "slices");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w, "the first slice that differs");
    }
    let mut want = perf.wakeups.clone();
    let mut got = read.sched.wakeups.clone();
    want.sort_by_key(|w| (w.time_ns, w.tid, w.kind.clone()));
    got.sort_by_key(|w| (w.time_ns, w.tid, w.kind.clone()));
    assert_eq!(got.len(), want.len(), "wakeups");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w, "the first wakeup that differs");
    }
    assert_eq!(
        read.sched.migrations.len(),
        perf.migrations.len(),
        "migrations"
    );
    let trace = read.sched.trace.expect("a traces row");
    assert_eq!(trace.file_format.as_deref(), Some("perfetto protobuf"));
    assert_eq!(
        trace.clock, "CLOCK_BOOTTIME",
        "no clock snapshot: Perfetto's clock as it is"
    );
}
