//! The [`Runner`] and [`Runner::execute`]: the selected stages in order, under the pipeline's
//! lock, over the runs this command analyses.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;

use schedlab_spec::Plan;

use crate::digest::Digests;
use crate::error::RunnerError;
use crate::files::remove_if_exists;
use crate::identity::RunIds;
use crate::layout::Layout;
use crate::options::{Outcome, RunnerOptions};
use crate::parse_stage::CollectedRun;
use crate::state::{Record, Stage};
use crate::{lock, migrate, partitions};

/// A pipeline's stages over its data directory, as one command asked for them.
pub struct Runner<'a> {
    pub(crate) plan: &'a Plan,
    pub(crate) options: &'a RunnerOptions,
    pub(crate) layout: Layout,
    pub(crate) ids: RunIds,
    pub(crate) say: &'a (dyn Fn(&str) + Sync),
}
impl<'a> Runner<'a> {
    /// `say` receives one line per decision ("parse: fresh, nothing to do").
    pub fn new(
        plan: &'a Plan,
        options: &'a RunnerOptions,
        say: &'a (dyn Fn(&str) + Sync),
    ) -> Runner<'a> {
        Runner {
            plan,
            options,
            layout: Layout::new(&options.data_dir, &plan.name),
            ids: RunIds::new(plan, options.label.as_deref()),
            say,
        }
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Runs the selected stages.
    pub fn execute(&self) -> Result<Outcome, RunnerError> {
        let selection = &self.options.selection;
        // `analyze --runs` shares the pipeline with other such jobs; anything else owns it.
        let shared = self.options.runs.is_some() && !selection.stages.contains(&Stage::Collect);
        let mode = if shared {
            lock::Mode::Shared
        } else {
            lock::Mode::Exclusive
        };
        let _lock = lock::acquire_as(&self.layout.lock(), "schedlab run", mode)?;
        if !shared {
            migrate::migrate(&self.layout, &self.ids, self.say)?;
        }
        let mut cache = Digests::load(&self.layout.digest_cache());
        let mut outcome = Outcome::default();
        if selection.stages.contains(&Stage::Collect) {
            self.collect(&mut cache, &mut outcome)?;
            cache.save(&self.layout.digest_cache())?;
            if outcome.interrupted {
                return Ok(outcome);
            }
        }
        let later: Vec<Stage> = (selection.stages.iter().copied())
            .filter(|s| *s != Stage::Collect)
            .collect();
        if later.is_empty() {
            return Ok(outcome);
        }
        let runs = self.collected_runs()?;
        let selected = self.selected(&runs)?;
        if !shared {
            for dir in [self.layout.tables(), self.layout.aggregates()] {
                Layout::sweep_leftovers(&dir);
            }
            self.forget_runs_not_in(&runs)?;
        }
        for stage in later {
            // A stage is never half done: stopping leaves every finished run recorded.
            if self.options.interrupt.load(Ordering::SeqCst) {
                (self.say)(&format!("{}: not started (interrupted)", stage.name()));
                outcome.interrupted = true;
                break;
            }
            match stage {
                Stage::Collect => unreachable!("collected above"),
                Stage::Parse | Stage::Aggregate => {
                    self.per_run_stage(stage, &selected, &mut cache, &mut outcome)?
                }
                Stage::Summarize if self.options.runs.is_some() => (self.say)(
                    "summarize: not with --runs (`schedlab analyze` without --runs summarizes \
                     every run once all are analysed)",
                ),
                Stage::Summarize => self.summarize_stage(&runs, &mut cache, &mut outcome)?,
            }
            cache.save(&self.layout.digest_cache())?;
        }
        if outcome.summary.is_none() && self.options.runs.is_none() {
            outcome.summary = std::fs::read_to_string(self.layout.summary_md()).ok();
        }
        Ok(outcome)
    }

    /// The runs this command analyses: all, or those `--runs` names (each must be collected).
    pub(crate) fn selected<'r>(
        &self,
        runs: &'r [CollectedRun],
    ) -> Result<Vec<&'r CollectedRun>, RunnerError> {
        let Some(wanted) = &self.options.runs else {
            return Ok(runs.iter().collect());
        };
        (wanted.iter())
            .map(|id| {
                (runs.iter().find(|r| r.manifest.run_id == *id)).ok_or_else(|| {
                    RunnerError::UnknownRun {
                        run_id: id.clone(),
                        dir: self.layout.runs(),
                    }
                })
            })
            .collect()
    }

    /// Removes the partitions and records of runs that are no longer analysed: deleted from
    /// `runs/`, or collected by an earlier collect section. Summaries and comparisons read
    /// every partition, so what is left must be exactly the current runs'.
    pub(crate) fn forget_runs_not_in(&self, runs: &[CollectedRun]) -> Result<(), RunnerError> {
        let current: BTreeSet<&str> = runs.iter().map(|r| r.manifest.run_id.as_str()).collect();
        let mut gone: BTreeSet<String> = BTreeSet::new();
        for root in [self.layout.tables(), self.layout.aggregates()] {
            gone.extend(schedlab_tables::dataset::partitioned_runs(&root)?);
        }
        for stage in Stage::PER_RUN {
            let records = std::fs::read_dir(self.layout.records(stage)).into_iter();
            let runs = records.flatten().flatten().map(|e| e.path());
            gone.extend(runs.filter_map(|path| Layout::record_run(&path)));
        }
        gone.retain(|run| !current.contains(run.as_str()));
        for run in &gone {
            for root in [self.layout.tables(), self.layout.aggregates()] {
                partitions::remove_run(&root, run)?;
            }
            for stage in Stage::PER_RUN {
                let record = self.layout.record(stage, Some(run));
                // The plots are files of their own; partitions went with their directories.
                for file in Record::load(&record).iter().flat_map(|r| r.outputs.keys()) {
                    remove_if_exists(&self.layout.root.join(file))?;
                }
                remove_if_exists(&record)?;
            }
            let why = if self.layout.run(run).exists() {
                "it was collected by an earlier collect section"
            } else {
                "it is no longer in runs/"
            };
            (self.say)(&format!(
                "run {run}: its tables and aggregates were removed ({why})"
            ));
        }
        Ok(())
    }
}
