//! state.json: per stage, what it was computed from, so that a rerun skips what is fresh and
//! `status` can say exactly why a stage is stale.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::digest::Digests;

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

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StageRecord {
    pub inputs: Inputs,
    /// Files the stage wrote, relative to the pipeline root.
    pub outputs: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct State {
    pub stages: BTreeMap<Stage, StageRecord>,
    /// Digests of every file the runner hashed, reused while size, mtime and inode match.
    pub files: Digests,
}

impl State {
    pub fn load(path: &Path) -> State {
        std::fs::read(path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Why `stage` must be recomputed given its current inputs; empty when it is fresh.
    pub fn staleness(
        &self,
        stage: Stage,
        now: &Inputs,
        root: &Path,
        pipeline_file: &str,
    ) -> Vec<String> {
        let Some(record) = self.stages.get(&stage) else {
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
        for output in &record.outputs {
            if !self.files.unchanged(output, &root.join(output)) {
                reasons.push(format!("output {output} is missing or was modified"));
            }
        }
        reasons
    }
}

const RUNS: &str = "runs/";

/// The group an input belongs to in messages: a run's files (`runs/<id>/…`) are one group.
fn group_of(file: &str) -> &str {
    match file.strip_prefix(RUNS).and_then(|rest| rest.find('/')) {
        Some(end) => &file[..RUNS.len() + end],
        None => file,
    }
}

/// Says which inputs are new, gone or changed; a run whose files are all new (or all gone) is
/// named once, not file by file.
fn describe_input_changes(
    before: &BTreeMap<String, String>,
    now: &BTreeMap<String, String>,
) -> Vec<String> {
    // Each group's files before and now, in one pass over each side.
    type Sides<'a> = (Vec<&'a String>, Vec<&'a String>);
    let mut groups: BTreeMap<&str, Sides<'_>> = BTreeMap::new();
    for file in before.keys() {
        groups.entry(group_of(file)).or_default().0.push(file);
    }
    for file in now.keys() {
        groups.entry(group_of(file)).or_default().1.push(file);
    }
    let mut reasons = Vec::new();
    for (group, (in_before, in_now)) in groups {
        let (what, run) = match group.strip_prefix(RUNS) {
            Some(run) => ("run", run),
            None => ("input", group),
        };
        if in_before.is_empty() {
            reasons.push(format!("new {what} {run}"));
        } else if in_now.is_empty() {
            reasons.push(match what {
                "run" => format!("run {run} is no longer an input"),
                _ => format!("input {group} is gone"),
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
