//! Parse and aggregate, computed run by run: which runs are stale, how many are computed side by
//! side, and each run's partitions written and recorded.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use crate::digest::{self, Digests};
use crate::error::RunnerError;
use crate::files::{remove_if_exists, write_json};
use crate::layout::Layout;
use crate::options::Outcome;
use crate::parse_stage::CollectedRun;
use crate::runner::Runner;
use crate::state::{Inputs, Record, Stage};
use crate::{lock, parse_stage, partitions, progress};

/// A stage's decision for one run: what its result would be computed from, and why it must be
/// (empty: fresh).
pub(crate) struct RunWork<'r> {
    pub(crate) run: &'r CollectedRun,
    pub(crate) inputs: Inputs,
    pub(crate) reasons: Vec<String>,
}

impl<'a> Runner<'a> {
    /// Each run's inputs for `stage` and why it is stale.
    pub(crate) fn plan_runs<'r>(
        &self,
        stage: Stage,
        runs: &[&'r CollectedRun],
        cache: &mut Digests,
    ) -> Result<Vec<RunWork<'r>>, RunnerError> {
        let forced = self.options.selection.forced.contains(&stage);
        let mut work = Vec::new();
        for run in runs {
            let id = &run.manifest.run_id;
            let inputs = self.run_inputs(stage, run, cache)?;
            let reasons = if forced {
                vec!["forced".to_owned()]
            } else {
                let record = Record::load(&self.layout.record(stage, Some(id)));
                Record::staleness(
                    record.as_ref(),
                    stage,
                    &inputs,
                    &self.layout.root,
                    &self.options.pipeline_file,
                )
            };
            work.push(RunWork {
                run,
                inputs,
                reasons,
            });
        }
        Ok(work)
    }

    /// Parse or aggregate: computes the runs whose results are stale, in parallel, each into its
    /// own partitions; fresh runs are not touched.
    pub(crate) fn per_run_stage(
        &self,
        stage: Stage,
        runs: &[&CollectedRun],
        cache: &mut Digests,
        outcome: &mut Outcome,
    ) -> Result<(), RunnerError> {
        let work = self.plan_runs(stage, runs, cache)?;
        let stale: Vec<&RunWork<'_>> = work.iter().filter(|w| !w.reasons.is_empty()).collect();
        // Summarize's per-run part is the plots; the whole-pipeline part follows.
        let what = match stage {
            Stage::Summarize => "summarize: plots",
            _ => stage.name(),
        };
        if stale.is_empty() {
            if stage != Stage::Summarize {
                (self.say)(&format!(
                    "{what}: all {} runs fresh, nothing to do",
                    work.len()
                ));
            }
            return Ok(());
        }
        let listed: Vec<String> = (stale.iter().take(8))
            .map(|w| format!("{} ({})", w.run.manifest.run_id, w.reasons.join("; ")))
            .collect();
        let more = match stale.len().saturating_sub(listed.len()) {
            0 => String::new(),
            n => format!(", and {n} more"),
        };
        // Without plots the per-run part only keeps its records: nothing to say.
        let quiet = stage == Stage::Summarize && self.plan.summarize.plots.is_empty();
        if !quiet {
            (self.say)(&format!(
                "{what}: {} of {} runs to compute: {}{more}",
                stale.len(),
                work.len(),
                listed.join(", ")
            ));
        }
        let bar =
            (self.options.progress).then(|| progress::count_bar(stage.name(), stale.len() as u64));
        let interrupt = &self.options.interrupt;
        let compute = |w: &&RunWork<'_>| {
            if interrupt.load(Ordering::SeqCst) {
                return Ok(None);
            }
            let record = self.compute_run(stage, w)?;
            if let Some(bar) = &bar {
                bar.inc(1);
            }
            Ok(Some(record))
        };
        // One run after another: each run's stage keeps every core busy by itself (the parse
        // decodes and encodes in parallel, the aggregates read row groups and compute threads'
        // figures on rayon's threads, the report rasterizes its plots in parallel), and runs
        // side by side would add their memory up. The stage's peak memory is one run's,
        // whatever their number.
        let done = (stale.iter())
            .map(compute)
            .collect::<Result<Vec<Option<Record>>, RunnerError>>()?;
        if let Some(bar) = &bar {
            bar.finish_and_clear();
        }
        for record in done.iter().flatten() {
            cache.0.extend(record.outputs.clone());
        }
        let skipped = done.iter().filter(|r| r.is_none()).count();
        if skipped > 0 {
            (self.say)(&format!(
                "{}: interrupted; {skipped} runs not computed",
                stage.name()
            ));
            outcome.interrupted = true;
        }
        Ok(())
    }

    /// Computes one run's partitions of `stage` in a staging directory, moves them into place
    /// and records them. The record goes first, so a run stopped half way is stale next time.
    pub(crate) fn compute_run(
        &self,
        stage: Stage,
        work: &RunWork<'_>,
    ) -> Result<Record, RunnerError> {
        let id = &work.run.manifest.run_id;
        let _lock = lock::acquire(&self.layout.run_lock(id), "schedlab analyze")?;
        let record_path = self.layout.record(stage, Some(id));
        let before = Record::load(&record_path);
        remove_if_exists(&record_path)?;
        let (tables, aggregates) = (self.layout.tables(), self.layout.aggregates());
        let files = match stage {
            Stage::Summarize => schedlab_report::plot_run(
                &self.plan.name,
                id,
                &Layout::partition(&tables, id),
                &Layout::partition(&aggregates, id),
                &self.plan.summarize,
                &self.layout,
            )?,
            _ => {
                let root = if stage == Stage::Parse {
                    &tables
                } else {
                    &aggregates
                };
                let staging = Layout::staging(root, id).map_err(|source| RunnerError::Io {
                    path: root.clone(),
                    source,
                })?;
                let into = Layout::partition(staging.path(), id);
                if stage == Stage::Parse {
                    parse_stage::parse_run_into(work.run, self.plan, into)?;
                } else {
                    let from = Layout::partition(&tables, id);
                    schedlab_analyze::aggregate(
                        &from,
                        &self.plan.aggregate,
                        &self.plan.class_order,
                        &into,
                    )?;
                }
                partitions::replace_run(staging.path(), root, id)?
            }
        };
        let record = self.record_of(work, files)?;
        // What the run had before and no longer gets (a plot whose kind left the pipeline) is
        // removed; `replace_run` already removed the partitions of tables no longer written.
        for old in before.iter().flat_map(|r| r.outputs.keys()) {
            if !record.outputs.contains_key(old) {
                remove_if_exists(&self.layout.root.join(old))?;
            }
        }
        write_json(&record_path, &record)?;
        Ok(record)
    }

    /// The record of a run's result: its inputs and the stamps of the files it wrote.
    pub(crate) fn record_of(
        &self,
        work: &RunWork<'_>,
        files: Vec<PathBuf>,
    ) -> Result<Record, RunnerError> {
        let mut outputs = BTreeMap::new();
        for file in files {
            let stamp = digest::stamp(&file, None).map_err(|source| RunnerError::Io {
                path: file.clone(),
                source,
            })?;
            outputs.insert(self.layout.relative(&file), stamp);
        }
        Ok(Record {
            inputs: work.inputs.clone(),
            outputs,
        })
    }
}
