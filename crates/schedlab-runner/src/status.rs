//! `schedlab status`: the runs on disk and each stage's freshness, computing nothing.

use std::collections::BTreeMap;
use std::path::PathBuf;

use schedlab_tables::manifest::{Ending, Manifest};

use crate::digest::Digests;
use crate::error::RunnerError;
use crate::files::read_manifest;
use crate::layout::Layout;
use crate::parse_stage::CollectedRun;
use crate::per_run::RunWork;
use crate::runner::Runner;
use crate::state::{Record, Stage};

/// A run directory found on disk.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunOnDisk {
    pub run_id: String,
    pub status: String,
    pub started_at: String,
    /// A run of the pipeline as it is now (what its collect section makes runs do).
    pub current: bool,
    /// How each workload process that did not end as planned ended (`workload w#0 was stopped
    /// at the end of collection after 2.0 s, before it ended by itself`), from the manifest.
    pub endings: Vec<String>,
    /// Per stage computed per run (parse, aggregate): why this run's result is stale. Empty
    /// when fresh, and for runs that are not current.
    #[serde(serialize_with = "by_stage")]
    pub stale: Vec<(Stage, Vec<String>)>,
}

/// What `schedlab status` prints (`--json`: this, with each stage list an object from stage
/// name to reasons).
#[derive(Debug, Clone, serde::Serialize)]
pub struct StatusReport {
    /// The pipeline's name (its data directory's).
    pub pipeline: String,
    pub root: PathBuf,
    pub runs: Vec<RunOnDisk>,
    /// Per stage: the reasons it is stale; empty when fresh. For parse and aggregate, how many
    /// runs are stale (each run's reasons are in [`RunOnDisk::stale`]).
    #[serde(serialize_with = "by_stage")]
    pub stages: Vec<(Stage, Vec<String>)>,
}

/// `[(stage, reasons)]` as `{"stage": reasons}`, in stage order.
pub(crate) fn by_stage<S: serde::Serializer>(
    stages: &[(Stage, Vec<String>)],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_map(
        stages
            .iter()
            .map(|(stage, reasons)| (stage.name(), reasons)),
    )
}

impl<'a> Runner<'a> {
    /// Runs on disk and each stage's freshness, computing nothing.
    pub fn status(&self) -> Result<StatusReport, RunnerError> {
        let mut cache = Digests::load(&self.layout.digest_cache());
        let collected = match self.collected_runs() {
            Ok(runs) => runs,
            Err(RunnerError::NothingCollected { .. }) => Vec::new(),
            Err(err) => return Err(err),
        };
        let selected: Vec<&CollectedRun> = collected.iter().collect();
        let mut stale_runs: BTreeMap<String, Vec<(Stage, Vec<String>)>> = BTreeMap::new();
        let mut stages = Vec::new();
        let missing: Vec<String> = (self.plan.runs.iter())
            .map(|p| self.ids.id(p))
            .filter(|id| !Layout::manifest(&self.layout.run(id)).exists())
            .collect();
        let mut collect_reasons = Vec::new();
        if !missing.is_empty() {
            collect_reasons.push(format!(
                "{} of {} runs not collected: {}",
                missing.len(),
                self.plan.runs.len(),
                missing.join(", ")
            ));
        }
        stages.push((Stage::Collect, collect_reasons));
        if collected.is_empty() {
            for stage in [Stage::Parse, Stage::Aggregate, Stage::Summarize] {
                stages.push((stage, vec!["no collected runs yet".into()]));
            }
        } else {
            for stage in [Stage::Parse, Stage::Aggregate] {
                let work = self.plan_runs(stage, &selected, &mut cache)?;
                let stale: Vec<&RunWork<'_>> =
                    work.iter().filter(|w| !w.reasons.is_empty()).collect();
                for w in &stale {
                    (stale_runs.entry(w.run.manifest.run_id.clone()).or_default())
                        .push((stage, w.reasons.clone()));
                }
                let reasons = match stale.len() {
                    0 => Vec::new(),
                    n => vec![format!("{n} of {} runs stale", work.len())],
                };
                stages.push((stage, reasons));
            }
            let (inputs, _) = self.summarize_inputs(&collected, &mut cache)?;
            let record = Record::load(&self.layout.record(Stage::Summarize, None));
            let reasons = Record::staleness(
                record.as_ref(),
                Stage::Summarize,
                &inputs,
                &self.layout.root,
                &self.options.pipeline_file,
            );
            stages.push((Stage::Summarize, reasons));
        }
        let mut runs = Vec::new();
        for entry in std::fs::read_dir(self.layout.runs())
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            let manifest = read_manifest(&Layout::manifest(&entry.path())).ok();
            runs.push(RunOnDisk {
                current: self.ids.is_current(&name),
                endings: manifest.as_ref().map_or_else(Vec::new, endings),
                status: manifest.as_ref().map_or_else(
                    || {
                        if name.ends_with(".partial") {
                            "partial".into()
                        } else {
                            "unreadable".into()
                        }
                    },
                    |m| m.status.as_str().to_owned(),
                ),
                started_at: manifest.map(|m| m.started_at).unwrap_or_default(),
                stale: stale_runs.remove(&name).unwrap_or_default(),
                run_id: name,
            });
        }
        runs.sort_by(|a, b| a.run_id.cmp(&b.run_id));
        if !missing.is_empty()
            && missing.len() == self.plan.runs.len()
            && runs
                .iter()
                .any(|r| !r.current && Layout::is_complete_run_name(&r.run_id))
        {
            stages[0].1.push(format!(
                "the runs on disk do other work than the `collect` section of {} describes now",
                self.options.pipeline_file
            ));
        }
        Ok(StatusReport {
            pipeline: self.plan.name.clone(),
            root: self.layout.root.clone(),
            runs,
            stages,
        })
    }
}

/// How each of a run's workload processes that did not end as planned ended, one line each.
pub(crate) fn endings(manifest: &Manifest) -> Vec<String> {
    (manifest.processes.iter())
        .filter_map(|p| match p.ending() {
            Ending::AsPlanned => None,
            Ending::Failed(how) | Ending::Stopped(how) | Ending::TimedOut(how) => {
                Some(format!("workload {}#{} {how}", p.workload, p.instance))
            }
        })
        .collect()
}
