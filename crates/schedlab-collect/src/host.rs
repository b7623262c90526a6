//! Facts about the machine that make runs comparable: kernel, CPU model, topology, the tools'
//! versions, the power settings (governor, EPP, SMT, turbo) that move scheduler figures as much
//! as a kernel change does, and the scheduler configuration in force (`sched_config`). Two runs that differ here are not a fair comparison, and the manifest
//! says so without anyone having to remember how the machine was set up.
//!
//! Whatever the machine lacks (cpufreq in a VM, a tool not installed) is `None` or absent, never
//! an error: facts are collected on every run and must not stop one.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use schedlab_tables::manifest::HostFacts;

/// A small sysfs or procfs file's text without surrounding whitespace; `None` when unreadable.
pub(crate) fn read_trimmed(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|t| t.trim().to_owned())
}

pub fn facts() -> HostFacts {
    let uname = rustix::system::uname();
    let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name") || l.starts_with("Model"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_default();
    let cpus = schedlab_topology::detect(Path::new("/sys")).unwrap_or_else(|err| {
        tracing::warn!("CPU topology not detected: {err}");
        Vec::new()
    });
    HostFacts {
        hostname: uname.nodename().to_string_lossy().into_owned(),
        kernel: uname.release().to_string_lossy().into_owned(),
        kernel_cmdline: read_trimmed("/proc/cmdline").unwrap_or_default(),
        cpu_model,
        nproc: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        governor: read_trimmed(format!("{CPUFREQ0}/scaling_governor")),
        cpufreq_driver: read_trimmed(format!("{CPUFREQ0}/scaling_driver")),
        energy_performance_preference: read_trimmed(format!(
            "{CPUFREQ0}/energy_performance_preference"
        )),
        smt: read_trimmed("/sys/devices/system/cpu/smt/control"),
        turbo: turbo(),
        tool_versions: tool_versions(),
        sched_config: Some(crate::sched_config::read(&cpus)),
        cpus,
    }
}

const CPUFREQ0: &str = "/sys/devices/system/cpu/cpu0/cpufreq";

/// The tools whose version goes into the manifest, with the arguments that print it.
const TOOLS: [(&str, &str); 4] = [
    ("perf", "--version"),
    ("turbostat", "--version"),
    ("stress-ng", "--version"),
    ("openssl", "version"),
];

/// A tool that does not answer within this is left out rather than holding up the run. The
/// tools are asked at once, so this is the most a run waits; on a loaded machine starting perf
/// alone took over 2 s.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

fn turbo() -> Option<bool> {
    let flag = |path: &str| read_trimmed(path).and_then(|t| t.parse::<u8>().ok());
    flag("/sys/devices/system/cpu/intel_pstate/no_turbo")
        .map(|no_turbo| no_turbo == 0)
        .or_else(|| flag("/sys/devices/system/cpu/cpufreq/boost").map(|boost| boost != 0))
}

/// Versions of the tools on PATH, asked in parallel so the slowest bounds the wait, and once per
/// process: they do not change between the runs of a pipeline, and asking starts up to four
/// programs.
fn tool_versions() -> BTreeMap<String, String> {
    static VERSIONS: std::sync::OnceLock<BTreeMap<String, String>> = std::sync::OnceLock::new();
    VERSIONS.get_or_init(ask_tool_versions).clone()
}

fn ask_tool_versions() -> BTreeMap<String, String> {
    std::thread::scope(|scope| {
        let asked: Vec<_> = TOOLS
            .iter()
            .filter(|(tool, _)| crate::process::find_program(tool).is_some())
            .map(|&(tool, arg)| (tool, scope.spawn(move || first_line_of(tool, arg))))
            .collect();
        asked
            .into_iter()
            .filter_map(|(tool, handle)| Some((tool.to_owned(), handle.join().ok().flatten()?)))
            .collect()
    })
}

/// The first non-empty line `program arg` prints (stdout, else stderr: turbostat prints its
/// version there), if it exits successfully within [`VERSION_TIMEOUT`].
fn first_line_of(program: &str, arg: &str) -> Option<String> {
    let mut child = Command::new(program)
        .arg(arg)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .ok()?;
    let deadline = Instant::now() + VERSION_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(Some(status)) => break Some(status),
            _ => break None,
        }
    };
    // Its own group, killed whatever happened: nothing it forked keeps the pipes open.
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let Some(status) = status else {
        let _ = child.wait(); // reap it after the kill
        return None;
    };
    if !status.success() {
        return None;
    }
    first_line(child.stdout.take()).or_else(|| first_line(child.stderr.take()))
}

fn first_line(pipe: Option<impl Read>) -> Option<String> {
    let mut text = String::new();
    pipe?.read_to_string(&mut text).ok()?;
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(str::to_owned)
}
