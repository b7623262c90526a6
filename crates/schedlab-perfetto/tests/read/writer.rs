//! A recording here, written into a Perfetto trace by Perfetto's own protos.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use schedlab_perf::SchedOptions;
use schedlab_tables::{SchedSliceRow, WakeupRow};
use schedlab_testkit::{perfetto_python, test_name, unavailable};

/// The recording the tests share, in `dir`: a perf.data of a bounded switching workload and
/// the .pftrace the Python writer makes of its `perf script` text (`perf-script.txt`), as
/// `trace.pftrace`, as `compact.pftrace` with compact_sched, as `deflated.pftrace` that
/// with its packets compressed, and with the sched_stat_runtime events in each of Perfetto's
/// generic encodings as `runtime-generic.pftrace` and `runtime-dense.pftrace`. One recording for all: each would be the others' noise.
pub struct Recording {
    pub dir: PathBuf,
    python: PathBuf,
}

impl Recording {
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Writes `out` in the recording's folder from its `perf script` text, with the writer's
    /// `flags`.
    pub fn write(&self, out: &str, flags: &[&str]) -> PathBuf {
        self.write_from(&self.path("perf-script.txt"), out, flags)
    }

    /// Writes `out` in the recording's folder from the `perf script` text `script`.
    pub fn write_from(&self, script: &Path, out: &str, flags: &[&str]) -> PathBuf {
        let writer = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/read/perf_script_to_pftrace.py"
        );
        let wrote = Command::new(&self.python)
            .arg(writer)
            .arg(script)
            .arg(self.path(out))
            .args(flags)
            .output()
            .unwrap();
        assert!(
            wrote.status.success(),
            "{writer}: {}",
            String::from_utf8_lossy(&wrote.stderr)
        );
        self.path(out)
    }
}

static RECORDING: OnceLock<Recording> = OnceLock::new();

/// The shared recording, made by the first test to ask; `None` when this machine cannot
/// record (the test is skipped, and says why).
pub fn recorded() -> Option<&'static Recording> {
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
    Some(RECORDING.get_or_init(|| record(&python)))
}

fn record(python: &Path) -> Recording {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("perfetto-read-recording");
    // What an earlier run of the tests left.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let recording = Recording {
        dir,
        python: python.to_path_buf(),
    };
    let perf_data = recording.path("perf.data");
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
        .args(["script", "--ns", "--show-task-events", "-i"])
        .arg(&perf_data)
        .args(["-F", "pid,tid,cpu,time,event,trace"])
        .output()
        .expect("perf runs");
    assert!(
        script.status.success(),
        "{}",
        String::from_utf8_lossy(&script.stderr)
    );
    let text = recording.path("perf-script.txt");
    std::fs::write(&text, &script.stdout).unwrap();
    for (out, flags) in [
        ("trace.pftrace", &[][..]),
        ("compact.pftrace", &["--compact"][..]),
        ("deflated.pftrace", &["--compact", "--deflate"][..]),
        ("runtime-generic.pftrace", &["--runtime", "generic"][..]),
        ("runtime-dense.pftrace", &["--runtime", "dense"][..]),
    ] {
        recording.write(out, flags);
    }
    recording
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
    let Some(recording) = recorded() else {
        return;
    };
    let (perf_data, pftrace) = (recording.path("perf.data"), recording.path("trace.pftrace"));
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

#[test]
fn sched_stat_runtime_in_either_generic_encoding_gives_the_kernels_accounting_of_its_perf_data() {
    let Some(recording) = recorded() else {
        return;
    };
    let perf = schedlab_perf::read_sched(&recording.path("perf.data"), &options()).unwrap();
    assert!(
        perf.sched_runtime
            .iter()
            .any(|r| r.comm.starts_with("stress-ng")),
        "perf sched record traced sched_stat_runtime: {} rows",
        perf.sched_runtime.len()
    );
    let key = |r: &schedlab_tables::SchedRuntimeRow| (r.cpu, r.tid);
    let mut want = perf.sched_runtime.clone();
    want.sort_by_key(key);
    for name in ["runtime-generic.pftrace", "runtime-dense.pftrace"] {
        let read = schedlab_perfetto::read_sched(&recording.path(name), &options()).unwrap();
        let mut got = read.sched.sched_runtime.clone();
        got.sort_by_key(key);
        assert_eq!(got.len(), want.len(), "{name}: rows");
        for (g, w) in got.iter().zip(&want) {
            // perf names a thread found at the start by /proc's comm, which for a kworker
            // adds its workqueue ("kworker/0:1-virtio"); the trace has only the events' comm.
            assert!(
                w.comm.starts_with(&g.comm),
                "{name}: {g:?} is named as {w:?}"
            );
            let named = schedlab_tables::SchedRuntimeRow {
                comm: w.comm.clone(),
                ..g.clone()
            };
            assert_eq!(&named, w, "{name}: the first row that differs");
        }
        assert_eq!(
            read.sched.sched_slices.len(),
            perf.sched_slices.len(),
            "{name}: the slices are read beside the runtimes"
        );
    }
    let plain = schedlab_perfetto::read_sched(&recording.path("trace.pftrace"), &options());
    assert!(
        plain.unwrap().sched.sched_runtime.is_empty(),
        "the trace written without sched_stat_runtime has no kernel accounting"
    );
}

/// Where the recording's own switches do not follow on (a switch whose prev is not the task
/// the CPU's previous switch switched in: the kernel or perf missed one), by (cpu, time), with
/// the task the CPU's previous switch switched in; read from the `perf script` text.
fn breaks(script: &Path) -> BTreeMap<(i32, i64), i32> {
    let mut next = HashMap::new();
    let mut breaks = BTreeMap::new();
    for line in std::fs::read_to_string(script).unwrap().lines() {
        let Some((head, payload)) = line.split_once(" sched:sched_switch: ") else {
            continue;
        };
        let head = head.trim_end().trim_end_matches(':');
        let field = |name: &str| -> i32 {
            let at = payload.rfind(name).unwrap() + name.len();
            payload[at..].split(' ').next().unwrap().parse().unwrap()
        };
        let cpu: i32 = head.split('[').nth(1).unwrap()[..3].parse().unwrap();
        let (secs, nanos) = head.rsplit(' ').next().unwrap().split_once('.').unwrap();
        let time = secs.parse::<i64>().unwrap() * 1_000_000_000 + nanos.parse::<i64>().unwrap();
        let (prev, into) = (field(" prev_pid="), field(" next_pid="));
        if let Some(&expected) = next.get(&cpu)
            && expected != prev
        {
            breaks.insert((cpu, time), expected);
        }
        next.insert(cpu, into);
    }
    breaks
}

/// The same events in compact_sched form: each compact switch's prev and each compact
/// waking's waker come from the CPU's running task, so every slice and wakeup is the plain
/// trace's, but for what a compact switch cannot say: the task switched out by a CPU's first
/// switch (its empty first slice: the idle task stands in) or where the recording missed a
/// switch (the task the CPU switched in before), the name a thread took while running (an exec:
/// a compact switch names the task by the name it was switched in with), the waits, delays and
/// preempted waits those slices change, and the waker of a waking before its CPU's first switch or after a missed one.
#[test]
fn compact_sched_gives_the_plain_events_tables() {
    let Some(recording) = recorded() else {
        return;
    };
    let breaks = breaks(&recording.path("perf-script.txt"));
    let plain =
        schedlab_perfetto::read_sched(&recording.path("trace.pftrace"), &options()).unwrap();
    let compact =
        schedlab_perfetto::read_sched(&recording.path("compact.pftrace"), &options()).unwrap();
    let first_slices = |slices: &mut Vec<SchedSliceRow>| {
        slices.sort_by_key(|s| (s.cpu, s.end_ns));
        let mut seen = BTreeSet::new();
        let mut firsts = Vec::new();
        slices.retain(|s| {
            let first = seen.insert(s.cpu);
            if first {
                firsts.push(s.clone());
            }
            !first
        });
        firsts
    };
    let (mut want, mut got) = (plain.sched.sched_slices, compact.sched.sched_slices);
    first_slices(&mut want);
    for s in first_slices(&mut got) {
        assert_eq!((s.tid, s.run_ns), (0, 0), "the idle task stands in: {s:?}");
    }
    let cpus = got.iter().map(|s| s.cpu).collect::<BTreeSet<_>>().len();
    assert_eq!(got.len(), want.len(), "slices");
    // The slices in which a thread may have been renamed: its first, or one whose name differs
    // from its previous slice's.
    let mut renamed = BTreeSet::new();
    let mut by_time: Vec<&SchedSliceRow> = want.iter().collect();
    by_time.sort_by_key(|s| s.end_ns);
    let mut names = HashMap::new();
    for s in by_time {
        if names
            .insert(s.tid, s.comm.clone())
            .is_none_or(|before| before != s.comm)
        {
            renamed.insert((s.cpu, s.end_ns));
        }
    }
    let mut timing = 0;
    for (g, w) in got.iter().zip(&want) {
        let at = (w.cpu, w.end_ns);
        if let Some(&expected) = breaks.get(&at) {
            assert_eq!(
                g.tid, expected,
                "a missed switch: the task switched in before, {g:?}"
            );
            continue;
        }
        let mut same = SchedSliceRow {
            wait_ns: w.wait_ns,
            sched_delay_ns: w.sched_delay_ns,
            preempt_wait_ns: w.preempt_wait_ns,
            ..g.clone()
        };
        timing += usize::from(same != *g);
        if renamed.contains(&at) {
            (same.comm, same.workload) = (w.comm.clone(), w.workload.clone());
        }
        assert_eq!(
            &same, w,
            "a slice that differs but for its waits, delay or a rename"
        );
    }
    // The first switch of a CPU and a missed switch change the last switch-out of two tasks.
    assert!(
        timing <= 2 * (cpus + breaks.len()),
        "{timing} slices' waits or delays differ ({cpus} CPUs, {} missed switches)",
        breaks.len()
    );
    let unnamed = (compact.sched.quality.iter())
        .find(|q| {
            q.message
                .contains("compact sched_switch events (the first of a CPU)")
        })
        .expect("a row counts the switches with no task before them");
    assert!(
        unnamed.message.contains(&format!(": {cpus} compact")),
        "{}",
        unnamed.message
    );

    let key = |w: &WakeupRow| (w.time_ns, w.tid, w.kind.clone());
    let (mut want, mut got) = (plain.sched.wakeups, compact.sched.wakeups);
    want.sort_by_key(key);
    got.sort_by_key(key);
    assert_eq!(got.len(), want.len(), "wakeups");
    for (g, w) in got.iter().zip(&want) {
        // Before a CPU's first switch no task is known to run; after a missed switch, the
        // one it would have switched out still seems to. And a plain waking by an exiting
        // thread names no waker (perf names the task -1), where the compact one names the
        // CPU's task.
        let stale =
            g.waker_tid.is_none_or(|t| breaks.values().any(|&b| b == t)) || w.waker_tid.is_none();
        let same = WakeupRow {
            waker_tid: if stale && w.kind.as_ref() == "waking" {
                w.waker_tid
            } else {
                g.waker_tid
            },
            ..g.clone()
        };
        assert_eq!(&same, w, "a wakeup that differs");
    }
}

/// Perfetto's recorder with `compression_type: COMPRESSION_TYPE_DEFLATE` (the default of
/// Android's traces) writes its packets zlib-compressed in `compressed_packets`: they read as
/// the same packets uncompressed, every table row for row.
#[test]
fn compressed_packets_read_as_the_same_packets_uncompressed() {
    let Some(recording) = recorded() else {
        return;
    };
    let read = |name: &str| schedlab_perfetto::read_sched(&recording.path(name), &options());
    let (compact, deflated) = (
        read("compact.pftrace").unwrap(),
        read("deflated.pftrace").unwrap(),
    );
    let (c, d) = (&compact.sched, &deflated.sched);
    assert!(
        c.sched_slices.len() > 1000,
        "{} slices",
        c.sched_slices.len()
    );
    assert_eq!(d.sched_slices, c.sched_slices, "slices");
    assert_eq!(d.wakeups, c.wakeups, "wakeups");
    assert_eq!(d.migrations, c.migrations, "migrations");
    assert_eq!(d.threads, c.threads, "threads");
    let file_size = std::fs::metadata(recording.path("deflated.pftrace"))
        .unwrap()
        .len();
    let plain_size = std::fs::metadata(recording.path("compact.pftrace"))
        .unwrap()
        .len();
    assert!(
        file_size < plain_size,
        "the packets are compressed: {file_size} bytes against {plain_size}"
    );
}
