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
        /// Every workload ended with exit code 0.
        Completed = "completed",
        /// Collection finished but a workload or a required monitor failed.
        Failed = "failed",
        /// Ctrl-C or SIGTERM stopped the collection; what was recorded is kept.
        Interrupted = "interrupted",
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
    pub exit_code: Option<i32>,
    /// Why the runner stopped it, when it did (`timeout`, `end of collection`, `interrupted`).
    pub stopped: Option<String>,
    /// Output files relative to the run directory.
    pub stdout: String,
    pub stderr: String,
    /// The built-in periodic workload's report, relative to the run directory.
    pub report: Option<String>,
    pub parse: Option<String>,
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
