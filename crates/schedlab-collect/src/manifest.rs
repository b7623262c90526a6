//! manifest.json: everything known about one run, written when it ends.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::host::HostFacts;
use crate::monitor::MonitorRecord;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every workload ended with exit code 0.
    Completed,
    /// Collection finished but a workload or a required monitor failed.
    Failed,
    /// Ctrl-C or SIGTERM stopped the collection; what was recorded is kept.
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
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
    pub severity: String,
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
}
