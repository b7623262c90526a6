//! `state/`: per stage and run, what a result was computed from, so that a rerun computes only
//! what is new or changed and `status` can say exactly why a run's stage is stale.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::digest::Stamp;

/// The stages after collection, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Collect,
    Parse,
    Aggregate,
    Summarize,
}

impl Stage {
    pub const ALL: [Stage; 4] = [
        Stage::Collect,
        Stage::Parse,
        Stage::Aggregate,
        Stage::Summarize,
    ];

    /// The stages that keep a result per run: parse and aggregate (partitions), and summarize
    /// (each run's plots, beside the summary of all runs).
    pub const PER_RUN: [Stage; 3] = [Stage::Parse, Stage::Aggregate, Stage::Summarize];

    pub fn name(self) -> &'static str {
        match self {
            Stage::Collect => "collect",
            Stage::Parse => "parse",
            Stage::Aggregate => "aggregate",
            Stage::Summarize => "summarize",
        }
    }

    pub fn from_name(name: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// What one stage's result was computed from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inputs {
    /// Digest of the stage's part of the pipeline YAML (after expansion).
    pub config: String,
    pub version: String,
    /// Input files (relative to the pipeline root) and their digests.
    pub files: BTreeMap<String, String>,
}

/// What a stage computed for one run (parse, aggregate) or for all runs (summarize), kept in
/// `state/`: its inputs, and the files it wrote with their stamps, so that a modified or deleted
/// output is noticed by stat alone.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub inputs: Inputs,
    /// Files the stage wrote, relative to the pipeline root.
    pub outputs: BTreeMap<String, Stamp>,
}

impl Record {
    /// The record in `path`; `None` when there is none (or it cannot be read: then the stage is
    /// recomputed, which is always safe).
    pub fn load(path: &Path) -> Option<Record> {
        let bytes = std::fs::read(path).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Why a result recorded as `record` must be recomputed given its current inputs; empty
    /// when it is fresh. `stage` and `pipeline_file` are for the words.
    pub fn staleness(
        record: Option<&Record>,
        stage: Stage,
        now: &Inputs,
        root: &Path,
        pipeline_file: &str,
    ) -> Vec<String> {
        let Some(record) = record else {
            return vec!["never computed".into()];
        };
        let mut reasons = Vec::new();
        let before = &record.inputs;
        if before.config != now.config {
            reasons.push(format!(
                "the `{}` section of {pipeline_file} changed",
                stage.name()
            ));
        }
        if before.version != now.version {
            reasons.push(format!(
                "schedlab was rebuilt or upgraded ({} → {})",
                before.version, now.version
            ));
        }
        reasons.extend(describe_input_changes(&before.files, &now.files));
        for (output, stamp) in &record.outputs {
            if !stamp.describes(&root.join(output)) {
                reasons.push(format!("output {output} is missing or was modified"));
            }
        }
        reasons
    }
}

/// The run an input belongs to in messages: a run's raw files (`runs/<id>/…`) and its
/// partitions (`…/run_id=<id>/…`) are one group.
fn run_of(file: &str) -> Option<&str> {
    let rest = match file.strip_prefix("runs/") {
        Some(rest) => rest,
        None => &file[file.find("/run_id=")? + "/run_id=".len()..],
    };
    Some(rest.split('/').next().unwrap_or(rest))
}

/// Says which inputs are new, gone or changed; a run whose files are all new (or all gone) is
/// named once, not file by file.
fn describe_input_changes(
    before: &BTreeMap<String, String>,
    now: &BTreeMap<String, String>,
) -> Vec<String> {
    // Each group's files before and now, in one pass over each side.
    type Sides<'a> = (Vec<&'a String>, Vec<&'a String>);
    let mut groups: BTreeMap<(Option<&str>, &str), Sides<'_>> = BTreeMap::new();
    fn group(file: &str) -> (Option<&str>, &str) {
        match run_of(file) {
            Some(run) => (Some(run), ""),
            None => (None, file),
        }
    }
    for file in before.keys() {
        groups.entry(group(file)).or_default().0.push(file);
    }
    for file in now.keys() {
        groups.entry(group(file)).or_default().1.push(file);
    }
    let mut reasons = Vec::new();
    for ((run, file), (in_before, in_now)) in groups {
        if in_before.is_empty() {
            reasons.push(match run {
                Some(run) => format!("new run {run}"),
                None => format!("new input {file}"),
            });
        } else if in_now.is_empty() {
            reasons.push(match run {
                Some(run) => format!("run {run} is no longer an input"),
                None => format!("input {file} is gone"),
            });
        } else {
            for file in &in_now {
                match before.get(*file) {
                    None => reasons.push(format!("new input {file}")),
                    Some(old) if *old != now[*file] => {
                        reasons.push(format!("input {file} changed"))
                    }
                    Some(_) => {}
                }
            }
            reasons.extend(
                in_before
                    .iter()
                    .filter(|f| !now.contains_key(**f))
                    .map(|f| format!("input {f} is gone")),
            );
        }
    }
    reasons
}
