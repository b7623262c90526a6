//! `manifest.json`: everything known about one run, written by the runner when the collector
//! returns, read by the parse stage and `schedlab status`.
//!
//! The manifest is a file format, so it lives in the contract crate with the tables: the parse
//! stage reads it without depending on the collector that wrote it. Paths in it are relative to
//! the run directory, so the names inside a run directory ([`MANIFEST_FILE`], [`RAW_DIR`]) are
//! part of the format too; where the run directory itself lives is the runner's `layout`.
//! Fields added later carry `#[serde(default)]`, so manifests of older runs keep reading.

use std::collections::BTreeMap;

use schedlab_topology::CpuInfo;
use serde::{Deserialize, Serialize};

use crate::Severity;
pub use crate::sched_config::{CgroupLimits, ClassCpufreq, KernelConfig, SchedConfig};
use crate::selector::WorkloadSelector;

/// The manifest's file name inside a run directory.
pub const MANIFEST_FILE: &str = "manifest.json";

/// The directory inside a run directory that holds every raw file the run recorded.
pub const RAW_DIR: &str = "raw";

/// The path, relative to the run directory, of the raw file `name`: what the manifest records.
pub fn raw_file(name: &str) -> String {
    format!("{RAW_DIR}/{name}")
}

word_enum! {
    /// How a run's collection ended.
    pub enum RunStatus {
        /// Every workload ended by itself with exit code 0, or was stopped where the pipeline
        /// expects it ([`ProcessRecord::stop_expected`]).
        Completed = "completed",
        /// Collection finished but a workload failed (it exited with a non-zero code, or a
        /// signal schedlab did not send ended it) or a required monitor failed.
        Failed = "failed",
        /// Ctrl-C or SIGTERM stopped the collection; what was recorded is kept.
        Interrupted = "interrupted",
        /// Collection finished, but schedlab stopped a workload at the collection's end before
        /// it ended by itself, and the pipeline did not say that is expected: its figures cover
        /// only part of its work.
        WorkloadStopped = "workload-stopped",
    }
}

word_enum! {
    /// Why schedlab stopped a workload before it ended by itself.
    pub enum StopReason {
        /// The collection's `duration` was over.
        EndOfCollection = "end of collection",
        /// The workload's own `timeout` was over.
        Timeout = "timeout",
        /// Ctrl-C or SIGTERM stopped the collection.
        Interrupted = "interrupted",
        /// Another workload could not be started, so the run was abandoned.
        RunFailed = "the run failed",
    }
}

word_enum! {
    /// What became of a monitor in a run.
    pub enum MonitorStatus {
        /// It started and recorded.
        Ran = "ran",
        /// An optional monitor the machine could not start (a missing tool, file or
        /// permission); the reason says what.
        Skipped = "skipped",
        /// It could not open its recording window or did not stop cleanly; the reason says how.
        Failed = "failed",
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProcessRecord {
    pub workload: String,
    pub instance: u32,
    pub pid: i32,
    pub argv: Vec<String>,
    pub nice: i32,
    pub cpus: Option<Vec<u32>>,
    pub start_ns: i64,
    pub end_ns: Option<i64>,
    /// Exit code, or `128 + signal` when a signal ended it (as shells report it).
    pub exit_code: Option<i32>,
    /// Why the runner stopped it, when it did (`timeout`, `end of collection`, `interrupted`).
    pub stopped: Option<StopReason>,
    /// The signal that ended it (`SIGKILL`), when one did: schedlab's own when `stopped` is set,
    /// another's otherwise. A name, since signal numbers differ between architectures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// The pipeline expects schedlab to stop it (`stop: expected`, or `repeat_until: monitors`
    /// at the collection's end): a stop is then no sign of a workload cut short.
    #[serde(default, skip_serializing_if = "is_false")]
    pub stop_expected: bool,
    /// Output files relative to the run directory.
    pub stdout: String,
    pub stderr: String,
    /// The built-in periodic workload's report, relative to the run directory.
    pub report: Option<String>,
    pub parse: Option<String>,
}

fn is_false(value: &bool) -> bool {
    !value
}

/// How a workload's process ended, judged from its record: what the run's status and its
/// quality notes say about it. Each text is a predicate after the workload's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// It ended by itself with exit code 0, or schedlab stopped it where the pipeline expects
    /// that.
    AsPlanned,
    /// It exited by itself with a non-zero code, a signal schedlab did not send ended it, or its
    /// end is unknown: the run is `failed`.
    Failed(String),
    /// schedlab stopped it before it ended by itself (the collection's end, an interrupt): the
    /// run is `workload-stopped` (or `interrupted`).
    Stopped(String),
    /// Its own `timeout` stopped it before it ended by itself. The pipeline asked for that
    /// stop, so the run stays `completed`, but what it measured covers only part of its work.
    TimedOut(String),
}

impl ProcessRecord {
    /// How this process ended.
    pub fn ending(&self) -> Ending {
        let after = match self.end_ns {
            Some(end) => format!(" after {:.1} s", (end - self.start_ns) as f64 / 1e9),
            None => String::new(),
        };
        match (self.stopped, &self.signal, self.exit_code) {
            (Some(_), _, _) if self.stop_expected => Ending::AsPlanned,
            (Some(StopReason::Timeout), _, _) => Ending::TimedOut(format!(
                "was stopped by its timeout{after}, before it ended by itself"
            )),
            (Some(StopReason::EndOfCollection), _, _) => Ending::Stopped(format!(
                "was stopped at the end of collection{after}, before it ended by itself"
            )),
            (Some(StopReason::Interrupted), _, _) => Ending::Stopped(format!(
                "was stopped when the collection was interrupted{after}"
            )),
            (Some(StopReason::RunFailed), _, _) => {
                Ending::Stopped(format!("was stopped because the run failed{after}"))
            }
            (None, Some(signal), _) => Ending::Failed(format!(
                "was killed by {signal}{after}, a signal schedlab did not send"
            )),
            (None, None, Some(0)) => Ending::AsPlanned,
            (None, None, Some(code)) => Ending::Failed(format!("exited with code {code}{after}")),
            (None, None, None) => {
                Ending::Failed("ended without an exit status schedlab could read".into())
            }
        }
    }
}

/// A note for the quality table, made while collecting.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Note {
    pub source: String,
    pub severity: Severity,
    pub message: String,
}

/// A raw file as it was when the run ended: the stat triple lets later checks trust it without
/// hashing gigabytes again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawFile {
    pub path: String,
    pub size: u64,
    pub mtime_ns: i64,
    pub inode: u64,
    pub blake3: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub run_id: String,
    pub pipeline: String,
    pub label: Option<String>,
    pub key: String,
    pub variant: BTreeMap<String, String>,
    pub repetition: u32,
    pub status: RunStatus,
    /// RFC 3339 wall-clock start.
    pub started_at: String,
    /// CLOCK_MONOTONIC start and end of the collection.
    pub start_ns: i64,
    /// When the monitors were all running: every `start_after` counts from here.
    pub zero_ns: i64,
    pub end_ns: i64,
    pub host: HostFacts,
    pub monitors: Vec<MonitorRecord>,
    pub processes: Vec<ProcessRecord>,
    pub notes: Vec<Note>,
    /// Filled by the runner when the run ends.
    pub raw_files: Vec<RawFile>,
    /// The expanded run plan that was executed.
    pub plan: serde_json::Value,
    pub schedlab_version: String,
    /// Set when the run's files were made without schedlab and brought in by `schedlab
    /// import`; then `processes` and `monitors` are empty and the parse stage reads these
    /// files. Left out of collected runs' manifests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<Imported>,
}

/// What `schedlab import` knew of a run it did not collect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Imported {
    pub files: Vec<ImportedFile>,
    /// How each workload's threads are found in the trace, as they were at import.
    pub workloads: Vec<WorkloadSelector>,
    /// The workloads whose selector was given on the import's command line (`--workload`):
    /// those stay as imported, while the others follow the pipeline's `import.workloads` at
    /// each parse. `None` in manifests written before this was recorded: every selector stays
    /// as imported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub given: Option<Vec<String>>,
    /// What a collected run records and this one cannot know, one sentence each (process
    /// start and end times, exit codes, the machine's sysfs topology, …): the parse stage turns
    /// each into a quality row.
    pub unknown: Vec<String>,
    /// Read damaged perf.data files as far as they go (`schedlab import --salvage`).
    #[serde(default)]
    pub salvage: bool,
}

/// One imported file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportedFile {
    /// Relative to the run directory (`raw/<name>`), as in `raw_files`.
    pub path: String,
    /// The absolute path it was imported from.
    pub from: String,
    /// The parser that reads it (`perf-sched`, `turbostat`, `stress-ng`, …).
    pub kind: String,
    /// How the kind was known: the detection rule's evidence, or `--as`.
    pub kind_from: String,
    /// The workload whose output it is, for a workload's own output (stress-ng, openssl,
    /// time); `None` for a recording of the whole machine.
    pub workload: Option<String>,
    /// The workload was named with the file on the import's command line (`NAME=FILE`): it
    /// stays. Otherwise it was found by the workloads of the time and is found again at each
    /// parse, by the workloads the run follows then (see [`Imported::given`]). Manifests
    /// written before this was recorded read as named: their outputs stay where they were put.
    #[serde(default = "named_before_it_was_recorded")]
    pub named: bool,
}

fn named_before_it_was_recorded() -> bool {
    true
}

/// Facts about the machine that make runs comparable (collected by schedlab-collect's
/// `host_facts`): two runs that differ here are not a fair comparison.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostFacts {
    pub hostname: String,
    pub kernel: String,
    pub kernel_cmdline: String,
    pub cpu_model: String,
    pub nproc: usize,
    /// cpufreq governor of CPU 0, where cpufreq exists.
    pub governor: Option<String>,
    /// cpufreq driver of CPU 0 (`intel_pstate`, `amd-pstate-epp`, `acpi-cpufreq`, …).
    #[serde(default)]
    pub cpufreq_driver: Option<String>,
    /// energy_performance_preference of CPU 0 (`performance`, `balance_power`, …).
    #[serde(default)]
    pub energy_performance_preference: Option<String>,
    /// /sys/devices/system/cpu/smt/control: `on`, `off`, `forceoff`, `notsupported`, ….
    #[serde(default)]
    pub smt: Option<String>,
    /// Whether turbo/boost may be used: intel_pstate's `no_turbo` inverted, or cpufreq `boost`.
    #[serde(default)]
    pub turbo: Option<bool>,
    /// First line of `--version` (`openssl version`) of each tool found on PATH, by name.
    #[serde(default)]
    pub tool_versions: BTreeMap<String, String>,
    /// CPUs and their detected classes (the parse stage applies declared classes on top).
    pub cpus: Vec<CpuInfo>,
    /// The scheduler configuration in force: kernel build and config, sched features and
    /// sysctls, isolated CPUs, microcode, cpufreq per class, cgroup limits. `None` in manifests
    /// written before schedlab recorded it, and then left out of the file, so those keep their
    /// bytes when written again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched_config: Option<SchedConfig>,
}

/// What the manifest keeps of a monitor.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MonitorRecord {
    pub name: String,
    pub kind: String,
    /// The exact command line, for external tools.
    pub argv: Vec<String>,
    pub status: MonitorStatus,
    pub reason: Option<String>,
    /// Raw files it wrote, relative to the run directory.
    pub files: Vec<String>,
    pub parse: Option<String>,
    pub start_ns: Option<i64>,
    pub end_ns: Option<i64>,
    /// CPU time a built-in sampler's own thread used, so its cost can be stated.
    #[serde(default)]
    pub self_cpu_ns: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process that ran 2.5 s and ended as `exit_code`, `stopped` and `signal` say.
    fn record(
        exit_code: Option<i32>,
        stopped: Option<StopReason>,
        signal: Option<&str>,
    ) -> ProcessRecord {
        ProcessRecord {
            workload: "w".into(),
            instance: 0,
            pid: 1,
            argv: vec!["sleep".into(), "30".into()],
            nice: 0,
            cpus: None,
            start_ns: 1_000_000_000,
            end_ns: Some(3_500_000_000),
            exit_code,
            stopped,
            signal: signal.map(str::to_owned),
            stop_expected: false,
            stdout: "raw/w.0.stdout.txt".into(),
            stderr: "raw/w.0.stderr.txt".into(),
            report: None,
            parse: None,
        }
    }

    #[test]
    fn a_stop_by_schedlab_is_told_from_a_signal_of_another_and_from_an_exit_code() {
        let stopped = record(
            Some(143),
            Some(StopReason::EndOfCollection),
            Some("SIGTERM"),
        );
        assert_eq!(
            stopped.ending(),
            Ending::Stopped(
                "was stopped at the end of collection after 2.5 s, before it ended by itself"
                    .into()
            )
        );
        assert_eq!(
            record(Some(137), None, Some("SIGKILL")).ending(),
            Ending::Failed(
                "was killed by SIGKILL after 2.5 s, a signal schedlab did not send".into()
            )
        );
        // `exit 137` from a shell is a code, not a signal.
        assert_eq!(
            record(Some(137), None, None).ending(),
            Ending::Failed("exited with code 137 after 2.5 s".into())
        );
        assert_eq!(record(Some(0), None, None).ending(), Ending::AsPlanned);
        assert!(matches!(
            record(Some(0), Some(StopReason::Timeout), Some("SIGTERM")).ending(),
            Ending::TimedOut(text) if text.starts_with("was stopped by its timeout after 2.5 s")
        ));
        let expected = ProcessRecord {
            stop_expected: true,
            ..stopped
        };
        assert_eq!(expected.ending(), Ending::AsPlanned);
    }
}
