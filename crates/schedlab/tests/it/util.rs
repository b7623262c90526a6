//! Running the real schedlab binary on small pipelines written into a temporary directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

pub struct Finished {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().expect("temporary directory"),
        }
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).expect("make its directory");
        std::fs::write(&path, text).expect("write file");
        path
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_schedlab"));
        command
            .current_dir(self.dir.path())
            .args(args)
            .env("SCHEDLAB_DATA", self.path("data"))
            .env_remove("RUST_LOG");
        command
    }

    pub fn schedlab(&self, args: &[&str]) -> Finished {
        finished(self.command(args).output().expect("schedlab runs"))
    }

    /// The run directories (not partial or interrupted ones) of a pipeline.
    pub fn runs(&self, pipeline: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(&format!("data/{pipeline}/runs")))
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    pub fn data(&self, pipeline: &str, relative: &str) -> PathBuf {
        self.path(&format!("data/{pipeline}/{relative}"))
    }
}

pub fn finished(output: Output) -> Finished {
    Finished {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).expect("json file")).expect("valid json")
}

/// What a test needs from the machine beyond the repository and a shell.
pub enum Need {
    /// A program on PATH (stress-ng, openssl, perf...).
    Program(&'static str),
    /// `perf sched record -a`: perf installed, and root or `kernel.perf_event_paranoid <= -1`.
    /// As root the collector mounts tracefs itself; otherwise it must be mounted already.
    TraceAllCpus,
}

/// Why this machine cannot give `need`, if it cannot.
fn lacking(need: &Need) -> Option<String> {
    let program = |name: &str| {
        schedlab_collect::process::find_program(name)
            .is_none()
            .then(|| format!("{name} is not installed"))
    };
    match need {
        Need::Program(name) => program(name),
        Need::TraceAllCpus => program("perf").or_else(|| {
            if rustix::process::geteuid().is_root() {
                return None;
            }
            let paranoid = perf_event_paranoid();
            if paranoid > -1 {
                return Some(format!(
                    "not root and kernel.perf_event_paranoid is {paranoid} (tracing every CPU needs -1)"
                ));
            }
            let tracefs = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];
            (!tracefs.iter().any(|t| Path::new(t).join("events/sched").exists()))
                .then(|| "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)".into())
        }),
    }
}

/// The kernel's `perf_event_paranoid` (2, the most restrictive common value, if unreadable).
pub fn perf_event_paranoid() -> i32 {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(2)
}

/// Whether the machine has everything `test` needs. When it does not, the test returns at once,
/// skipped with a printed reason, never passed as if it had run; under `SCHEDLAB_REQUIRE_ALL=1`
/// (CI, which installs every tool and runs as root) it fails instead
/// ([`schedlab_testkit::unavailable`]).
pub fn can_run(test: &str, needs: &[Need]) -> bool {
    let missing: Vec<String> = needs.iter().filter_map(lacking).collect();
    if missing.is_empty() {
        return true;
    }
    schedlab_testkit::unavailable(test, &missing.join("; "));
    false
}

pub use schedlab_testkit::skip;

/// Polls `condition` every 20 ms until it holds, for at most `deadline` (generous: the machine
/// may be busy). Returns whether it held, so the caller's assertion names what was awaited.
pub fn wait_for(deadline: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if condition() {
            return true;
        }
        if start.elapsed() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
