//! Recordings made here: the sched (and power) events enabled under tracefs, a workload run,
//! then `trace-cmd extract` (`trace-cmd record` cannot write /proc/sys/kernel/ftrace_enabled on
//! this VM). A recording into an instance of its own clashes with nothing; one into the top
//! buffer holds a lock file for as long as it changes the top buffer's state, and restores it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

pub const TRACEFS: &str = "/sys/kernel/tracing";
/// Held while a test changes the top buffer (every test binary takes the same file).
const TOP_LOCK: &str = "/tmp/schedlab-tests-ftrace-top.lock";
/// The ring buffer's size per CPU while recording.
const BUFFER_KB: &str = "32768";

/// The events a sched recording enables, by `system/name`; those the kernel lacks are skipped.
const EVENTS: [&str; 11] = [
    "sched/sched_switch",
    "sched/sched_stat_runtime",
    "sched/sched_wakeup",
    "sched/sched_waking",
    "sched/sched_wakeup_new",
    "sched/sched_migrate_task",
    "sched/sched_process_fork",
    "sched/sched_process_exit",
    "task/task_rename",
    "power/cpu_frequency",
    "power/cpu_idle",
];

/// Which ring buffer a recording uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Buffer {
    Top,
    /// An instance of its own (`instances/schedlab-test-<pid>-<n>`).
    Instance,
}

pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
}

/// Why trace-cmd cannot record here, if it cannot.
pub fn cannot_record() -> Option<String> {
    if !on_path("trace-cmd") {
        return Some("trace-cmd is not installed".into());
    }
    if !on_path("stress-ng") {
        return Some("stress-ng is not installed".into());
    }
    if !Path::new("/usr/bin/time").is_file() {
        return Some("/usr/bin/time is not installed".into());
    }
    let root = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("Uid:"))?.to_owned();
            Some(line.split_whitespace().nth(2)? == "0")
        })
        .unwrap_or(false);
    if !root {
        return Some("not root (enabling trace events needs it)".into());
    }
    (!Path::new(TRACEFS).join("events/sched").exists())
        .then(|| format!("tracefs is not mounted at {TRACEFS} (mount -t tracefs nodev {TRACEFS})"))
}

/// Skips the test (a failure in CI) when trace-cmd cannot record here.
#[macro_export]
macro_rules! recording_or_skip {
    () => {
        if let Some(why) = $crate::record::cannot_record() {
            schedlab_testkit::unavailable(&schedlab_testkit::test_name(), &why);
            return;
        }
    };
}

/// The size to write back for a `buffer_size_kb` that read `read`. A buffer not yet used reads
/// as "7 (expanded: 1408)": the size it gets when tracing starts is the second number, and the
/// file takes a number only (writing the 7 would shrink the buffer to 7 KB).
fn buffer_kb_to_restore(read: &str) -> String {
    match read.split_once("(expanded:") {
        Some((_, expanded)) => expanded.trim().trim_end_matches(')').trim().to_owned(),
        None => read.trim().to_owned(),
    }
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text)
        .unwrap_or_else(|e| panic!("write {text:?} to {}: {e}", path.display()));
}

/// A recording: the file and the directory it is in (removed when dropped).
pub struct Recorded {
    pub path: PathBuf,
    /// The instance recorded into (`None`: the top buffer).
    pub instance: Option<String>,
    /// The user and system CPU time of stress-ng and its workers, from `/usr/bin/time`.
    pub stress_cpu_ns: i64,
    /// The pid of `/usr/bin/time`, whose child stress-ng is.
    pub root_pid: i32,
    /// The shell that ended the recording: it renamed itself [`ENDER`], then turned tracing
    /// off while it ran, so only its rename names it so.
    pub ender_pid: i32,
    pub dir: tempfile::TempDir,
}

/// Records `buffer` on `clock` (an ftrace clock: `mono`, `local`) while stress-ng runs
/// `stressors` for a second, into `trace.dat` in a new directory. Each stressor runs 2
/// workers; words after its name are its options (`"switch --switch-freq 2000"`).
///
/// Recording into an instance holds the top buffer's lock too and sets the top buffer's clock
/// as well: `trace-cmd extract -B` writes the top buffer's clock as every buffer's, and the top
/// buffer's data when it has any.
pub fn record(buffer: Buffer, clock: &str, stressors: &[&str]) -> Recorded {
    record_with(buffer, clock, stressors, BUFFER_KB)
}

/// [`record`] with a ring buffer of `buffer_kb` per CPU.
pub fn record_with(buffer: Buffer, clock: &str, stressors: &[&str], buffer_kb: &str) -> Recorded {
    static COUNT: AtomicU32 = AtomicU32::new(0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.dat");
    let top = Path::new(TRACEFS);
    let lock = File::create(TOP_LOCK).unwrap();
    lock.lock().unwrap();
    let top_clock = std::fs::read_to_string(top.join("trace_clock")).unwrap();
    let top_clock = top_clock
        .split(['[', ']'])
        .nth(1)
        .unwrap_or("local")
        .to_string();
    let (root, name) = match buffer {
        Buffer::Top => (top.to_path_buf(), None),
        Buffer::Instance => {
            let n = COUNT.fetch_add(1, Ordering::Relaxed);
            let name = format!("schedlab-test-{}-{n}", std::process::id());
            let root = top.join("instances").join(&name);
            std::fs::create_dir(&root).unwrap();
            write(&top.join("trace_clock"), clock);
            (root, Some(name))
        }
    };
    let clock_before = std::fs::read_to_string(root.join("trace_clock")).unwrap();
    let clock_before = clock_before
        .split(['[', ']'])
        .nth(1)
        .unwrap_or("local")
        .to_string();
    let on_before = std::fs::read_to_string(root.join("tracing_on")).unwrap();
    let size_before = std::fs::read_to_string(root.join("buffer_size_kb")).unwrap();
    write(&root.join("tracing_on"), "0");
    // Room for a second of events on every CPU: the default 1.4 MB per CPU is overwritten
    // within a tenth of a second of stress-ng.
    write(&root.join("buffer_size_kb"), buffer_kb);
    write(&root.join("trace_clock"), clock);
    write(&root.join("trace"), "");
    let enabled: Vec<PathBuf> = (EVENTS.iter())
        .map(|e| root.join("events").join(e).join("enable"))
        .filter(|p| p.exists() && std::fs::read_to_string(p).is_ok_and(|v| v.trim() == "0"))
        .collect();
    for p in &enabled {
        write(p, "1");
    }
    write(&root.join("tracing_on"), "1");
    let times = dir.path().join("time.txt");
    let mut args = vec![
        "-f".to_string(),
        "%U %S".into(),
        "-o".into(),
        times.display().to_string(),
        "stress-ng".into(),
        "--timeout".into(),
        "1".into(),
        "-q".into(),
    ];
    for s in stressors {
        let mut words = s.split_whitespace();
        args.extend([format!("--{}", words.next().unwrap()), "2".into()]);
        args.extend(words.map(str::to_owned));
    }
    let mut workload = Command::new("/usr/bin/time").args(&args).spawn();
    let root_pid = workload.as_ref().map_or(0, |child| child.id() as i32);
    let workload = workload.as_mut().map(|child| child.wait());
    let ender = stop_renamed(&root);
    let mut extract = Command::new("trace-cmd");
    extract.arg("extract").arg("-o").arg(&path);
    if let Some(name) = &name {
        extract.args(["-B", name]);
    }
    let extracted = extract.output();
    // Put the buffer back as it was, whatever happened (trace-cmd extract removes an
    // instance it extracted).
    if buffer == Buffer::Top {
        for p in &enabled {
            write(p, "0");
        }
        write(&root.join("trace_clock"), &clock_before);
        write(&root.join("trace"), "");
        write(
            &root.join("buffer_size_kb"),
            &buffer_kb_to_restore(&size_before),
        );
        write(&root.join("tracing_on"), on_before.trim());
    } else {
        write(&top.join("trace_clock"), &top_clock);
        if root.exists() {
            let _ = std::fs::remove_dir(&root);
        }
    }
    drop(lock);
    assert!(workload.unwrap().unwrap().success(), "{args:?}");
    let ender_pid = ender.unwrap_or_else(|why| panic!("{why}"));
    let times = std::fs::read_to_string(&times).unwrap();
    let seconds: f64 = times
        .split_whitespace()
        .map(|t| t.parse::<f64>().unwrap())
        .sum();
    let out = extracted.unwrap();
    assert!(
        out.status.success() && path.is_file(),
        "trace-cmd extract: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Recorded {
        path,
        instance: name,
        stress_cpu_ns: (seconds * 1e9) as i64,
        root_pid,
        ender_pid,
        dir,
    }
}

/// The name the shell that ends a recording gives itself.
pub const ENDER: &str = "schedlab-ender";

/// Turns tracing under `root` off from a shell that first renames itself [`ENDER`] (both
/// builtins, so the shell itself writes its `/proc/self/comm` and then `tracing_on`), so the
/// trace ends while a thread renamed since its last switch-in runs; its pid. Tracing is off
/// when this returns, whatever the shell did, so the caller puts the buffer back either way.
fn stop_renamed(root: &Path) -> Result<i32, String> {
    let on = root.join("tracing_on");
    let script = format!(
        "printf %s {ENDER} > /proc/self/comm && echo 0 > {}",
        on.display()
    );
    let ran = Command::new("sh")
        .args(["-c", &script])
        .spawn()
        .and_then(|shell| {
            let pid = shell.id() as i32;
            Ok((pid, shell.wait_with_output()?))
        });
    write(&on, "0");
    match ran {
        Ok((pid, out)) if out.status.success() => Ok(pid),
        Ok((_, out)) => Err(format!(
            "sh -c {script:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        )),
        Err(e) => Err(format!("sh -c {script:?}: {e}")),
    }
}

/// `trace-cmd convert` of `from` into `name` beside it, at file `version` with `compression`.
pub fn convert(from: &Path, name: &str, version: u32, compression: &str) -> PathBuf {
    let to = from.with_file_name(name);
    let out = Command::new("trace-cmd")
        .args(["convert", "-i"])
        .arg(from)
        .arg("-o")
        .arg(&to)
        .args([
            "--file-version",
            &version.to_string(),
            "--compression",
            compression,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success() && to.is_file(),
        "trace-cmd convert: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    to
}
