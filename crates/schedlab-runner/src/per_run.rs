//! Parse and aggregate, computed run by run: which runs are stale, how many are computed side by
//! side, and each run's partitions written and recorded.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use rayon::prelude::*;

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

/// How many runs `stage` computes side by side.
///
/// One run's parse already keeps every core busy (records decoded in parallel, tables encoded
/// alongside in the same pool), and parsing runs side by side would add their memory up: runs are
/// parsed one after the other, so the stage's peak memory is one run's whatever their number.
/// Aggregates and plots work on one core a run but hold a run's slices, about 0.7-0.8 times
/// its raw files' size as the manifest lists them (measured on switch-heavy traces): as many
/// runs at once as there are cores and as fit in half of the memory available now, and at
/// least one.
pub(crate) fn runs_at_once(stage: Stage, stale: &[&RunWork<'_>]) -> usize {
    if stage == Stage::Parse {
        return 1;
    }
    let largest_run = (stale.iter())
        .map(|w| w.run.manifest.raw_files.iter().map(|f| f.size).sum())
        .max()
        .unwrap_or(0);
    let available = procfs::Current::current()
        .ok()
        .and_then(|m: procfs::Meminfo| m.mem_available);
    side_by_side(rayon::current_num_threads(), available, largest_run)
}

/// Runs of `run_bytes` of raw files each that fit in half of `available` bytes, at least one
/// and at most `cores`; `cores` when either size is unknown.
pub(crate) fn side_by_side(cores: usize, available: Option<u64>, run_bytes: u64) -> usize {
    let cores = cores.max(1);
    match available {
        Some(available) if run_bytes > 0 => {
            usize::try_from(available / 2 / run_bytes).map_or(cores, |n| n.clamp(1, cores))
        }
        _ => cores,
    }
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
        let mut done: Vec<Option<Record>> = Vec::with_capacity(stale.len());
        for group in stale.chunks(runs_at_once(stage, &stale)) {
            let records = (group.par_iter())
                .map(compute)
                .collect::<Result<Vec<_>, RunnerError>>()?;
            done.extend(records);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_side_by_side_are_as_many_as_half_the_memory_holds_within_the_cores() {
        const GIB: u64 = 1 << 30;
        assert_eq!(side_by_side(8, Some(4 * GIB), GIB), 2);
        assert_eq!(
            side_by_side(8, Some(100 * GIB), GIB),
            8,
            "no more than the cores"
        );
        assert_eq!(side_by_side(8, Some(GIB), 4 * GIB), 1, "at least one");
        assert_eq!(side_by_side(8, None, GIB), 8, "memory unknown");
        assert_eq!(side_by_side(8, Some(GIB), 0), 8, "no raw files");
        assert_eq!(side_by_side(0, Some(GIB), GIB), 1);
    }
}
