//! The stage graph: collect → parse → aggregate → summarize, with persistent fingerprints.
//!
//! # Brief overview
//!
//! [`Runner::execute`] runs a [`schedlab_spec::Plan`]'s stages over the data layout of
//! [`layout`]; [`Runner::status`] says which runs are on disk and which runs' stages are fresh.
//! Collection is per run: a run whose directory exists was collected and is never collected again
//! (unless forced), and runs are named by what they do ([`identity`]), so that more repetitions or
//! a label continued later add runs instead of replacing them. Parse and aggregate are per run
//! too: each run has its own partition of every table and aggregate, and its own record of what
//! they were computed from ([`state`]: the stage's part of the YAML, the program build, the
//! digests of its input files). Only new or changed runs are computed; the others' files are not
//! touched. Summarize reads every run's partitions and is recomputed when any of them changed.
//!
//! # Key design decision
//!
//! A stage reads files and writes files; nothing passes between stages in memory, so any stage
//! can run alone and an analyst reruns only the analysis. Digests are cheap on gigabytes of raw
//! data ([`digest`]): raw files are hashed once, when their run ends, and trusted afterwards while
//! their size, mtime and inode are unchanged. Cost grows with what is new: adding run 21 to 20
//! parses and aggregates one run, then summarizes.

mod check;
pub mod config_diff;
pub mod digest;
pub mod gather;
pub mod identity;
pub mod import;
pub mod layout;
pub mod load;
mod lock;
mod migrate;
mod parse_stage;
mod partitions;
mod per_class;
pub mod progress;
pub mod run_dir;
pub mod state;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::ProgressBar;
use indicatif::ProgressFinish;
use rayon::prelude::*;
use schedlab_analyze::compare::CompareInputs;
use schedlab_collect::RunRequest;
use schedlab_spec::{Plan, variant_text};
use schedlab_tables::manifest::{Ending, Manifest, RawFile, RunStatus};
use schedlab_tables::{ComparisonRow, RunRow, Severity, read_table};

pub use check::CheckReport;
use digest::Digests;
pub use identity::RunIds;
pub use layout::Layout;
pub use parse_stage::CollectedRun;
pub use schedlab_analyze::compare::{GroupBy, Selection, adjustment, notes};
pub use schedlab_report::{comparison_table, expectations_table, runs_needed_table};
pub use schedlab_tables::Judgement;
pub use state::Stage;
use state::{Inputs, Record};

/// Everything that can stop a command.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunnerError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is in use: {holder} (hint: wait for that command to finish)", path.display())]
    Locked { path: PathBuf, holder: String },
    #[error("run {run_id}: {source}")]
    Collect {
        run_id: String,
        #[source]
        source: schedlab_collect::CollectError,
    },
    #[error("no collected or imported runs for this pipeline under {} (hint: `schedlab run` collects them, `schedlab import` adds recordings made by hand{})", dir.display(), if *older { "; the runs on disk were collected with an earlier collect section" } else { "" })]
    NothingCollected { dir: PathBuf, older: bool },
    #[error("no collected run {run_id} of this pipeline under {} (hint: `schedlab status` lists the runs)", dir.display())]
    UnknownRun { run_id: String, dir: PathBuf },
    #[error("run {run_id}: declared topology: {message}")]
    Topology { run_id: String, message: String },
    #[error("{}: {message}", path.display())]
    BadManifest { path: PathBuf, message: String },
    #[error("import: {message}")]
    Import { message: String },
    #[error("{}: {}, so no runs to gather (hint: give a data directory, holding <pipeline>/runs/<run>/, or a pipeline directory, holding runs/<run>/)", path.display(), if *missing { "no such directory" } else { "neither a data directory nor a pipeline directory" })]
    NoRuns { path: PathBuf, missing: bool },
    #[error(transparent)]
    Table(#[from] schedlab_tables::TableError),
    #[error(transparent)]
    Analyze(#[from] schedlab_analyze::AnalyzeError),
    #[error(transparent)]
    Report(#[from] schedlab_report::ReportError),
    #[error(transparent)]
    Compare(#[from] schedlab_analyze::compare::CompareError),
}

/// Which stages a command runs, and which it recomputes whatever their fingerprints say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageSelection {
    pub stages: BTreeSet<Stage>,
    pub forced: BTreeSet<Stage>,
}

impl StageSelection {
    /// All four stages, each skipped when fresh.
    pub fn all() -> StageSelection {
        StageSelection {
            stages: Stage::ALL.into_iter().collect(),
            forced: BTreeSet::new(),
        }
    }

    /// Parse, aggregate and summarize: never collect.
    pub fn analysis() -> StageSelection {
        StageSelection {
            stages: Stage::ALL[1..].iter().copied().collect(),
            forced: BTreeSet::new(),
        }
    }

    /// `--from STAGE`: that stage and the ones after it, all recomputed (collect: the missing
    /// runs only; a collected run is replaced by `--force` alone).
    pub fn from(stage: Stage) -> StageSelection {
        let stages: BTreeSet<Stage> = Stage::ALL.into_iter().filter(|s| *s >= stage).collect();
        StageSelection {
            forced: stages
                .iter()
                .copied()
                .filter(|s| *s != Stage::Collect)
                .collect(),
            stages,
        }
    }

    /// `--only STAGE`: that stage alone, recomputed (collect: the missing runs only, so that
    /// `--only collect` on each test machine adds runs without replacing any).
    pub fn only(stage: Stage) -> StageSelection {
        StageSelection {
            stages: [stage].into(),
            forced: [stage]
                .into_iter()
                .filter(|s| *s != Stage::Collect)
                .collect(),
        }
    }

    /// `--force`: every selected stage recomputed (collect: every run collected again).
    pub fn forcing_all(mut self) -> StageSelection {
        self.forced = self.stages.clone();
        self
    }
}

/// How a command is run.
#[derive(Debug, Clone)]
pub struct RunnerOptions {
    pub data_dir: PathBuf,
    /// The pipeline file as the user named it, for messages.
    pub pipeline_file: String,
    pub label: Option<String>,
    pub selection: StageSelection,
    /// The schedlab binary (runs the built-in periodic workload).
    pub self_exe: PathBuf,
    /// Set by the Ctrl-C / SIGTERM handler.
    pub interrupt: Arc<AtomicBool>,
    pub progress: bool,
    /// Parse and aggregate only these runs (`analyze --runs`), and do not summarize: one job of
    /// a batch system that analyses runs in parallel. `None`: every run.
    pub runs: Option<Vec<String>>,
}

/// What a command did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The summary, when summarize ran or its report was fresh.
    pub summary: Option<String>,
    pub interrupted: bool,
    /// Runs collected by this command that ended `failed`.
    pub failed_runs: Vec<String>,
    /// Runs collected by this command that ended `workload-stopped`: a workload was stopped at
    /// the collection's end before it ended by itself.
    pub stopped_runs: Vec<String>,
}

/// What a comparison was asked for: how runs are grouped, which groups, and the smallest
/// difference of interest.
pub(crate) struct Asked<'a> {
    pub(crate) by: &'a GroupBy,
    pub(crate) selection: &'a Selection,
    pub(crate) min_effect_pct: Option<f64>,
}

/// What `schedlab compare` computed and where it wrote it.
#[derive(Debug)]
pub struct Comparison {
    /// What differs between the groups' configurations ([`config_diff::differences`]), the
    /// lines the Markdown file opens with.
    pub config: Vec<String>,
    pub rows: Vec<ComparisonRow>,
    pub parquet: PathBuf,
    pub markdown: PathBuf,
    /// The same as a page with a chart per figure.
    pub html: PathBuf,
}

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
fn by_stage<S: serde::Serializer>(
    stages: &[(Stage, Vec<String>)],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_map(
        stages
            .iter()
            .map(|(stage, reasons)| (stage.name(), reasons)),
    )
}

pub struct Runner<'a> {
    plan: &'a Plan,
    options: &'a RunnerOptions,
    layout: Layout,
    ids: RunIds,
    say: &'a (dyn Fn(&str) + Sync),
}

/// A run's plot files, by run id, as the summary's page links them.
type RunPlots = (String, Vec<PathBuf>);

/// A stage's decision for one run: what its result would be computed from, and why it must be
/// (empty: fresh).
struct RunWork<'r> {
    run: &'r CollectedRun,
    inputs: Inputs,
    reasons: Vec<String>,
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
fn runs_at_once(stage: Stage, stale: &[&RunWork<'_>]) -> usize {
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
fn side_by_side(cores: usize, available: Option<u64>, run_bytes: u64) -> usize {
    let cores = cores.max(1);
    match available {
        Some(available) if run_bytes > 0 => {
            usize::try_from(available / 2 / run_bytes).map_or(cores, |n| n.clamp(1, cores))
        }
        _ => cores,
    }
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

    fn collect(&self, cache: &mut Digests, outcome: &mut Outcome) -> Result<(), RunnerError> {
        if self.plan.runs.is_empty() {
            (self.say)(
                "collect: nothing to collect (no collect section; `schedlab import` adds runs)",
            );
            return Ok(());
        }
        let force = self.options.selection.forced.contains(&Stage::Collect);
        let (mut done, mut collected) = (0, 0);
        let missing: Vec<&schedlab_spec::RunPlan> = (self.plan.runs.iter())
            .filter(|plan| {
                force || !Layout::manifest(&self.layout.run(&self.ids.id(plan))).exists()
            })
            .collect();
        let lengths: Vec<_> = (missing.iter())
            .map(|plan| (plan.collect.expected_length(), plan.collect.cooldown))
            .collect();
        let schedule = progress::Schedule::new(&lengths);
        let bar = (self.options.progress && !missing.is_empty())
            .then(|| progress::collect_bar(schedule.as_ref()));
        // Lines said while the bar is drawn go above it.
        let say = |line: &str| match &bar {
            Some(bar) => bar.suspend(|| (self.say)(line)),
            None => (self.say)(line),
        };
        // Each collection's warnings, said once per kind when the stage ends.
        let mut warnings: Vec<(String, Vec<String>)> = Vec::new();
        for plan in &self.plan.runs {
            let run_id = self.ids.id(plan);
            let final_dir = self.layout.run(&run_id);
            if Layout::manifest(&final_dir).exists() && !force {
                done += 1;
                continue;
            }
            if self.options.interrupt.load(Ordering::SeqCst) {
                outcome.interrupted = true;
                return Ok(());
            }
            if collected > 0
                && let Some(cooldown) = plan.collect.cooldown
            {
                say(&format!("collect: cooling down for {cooldown:?}"));
                std::thread::sleep(cooldown);
            }
            let partial = self.layout.partial_run(&run_id);
            let io = |source, path: &Path| RunnerError::Io {
                path: path.to_owned(),
                source,
            };
            if partial.exists() {
                std::fs::remove_dir_all(&partial).map_err(|e| io(e, &partial))?;
            }
            std::fs::create_dir_all(&partial).map_err(|e| io(e, &partial))?;
            if let Some(bar) = &bar {
                bar.set_prefix(format!(
                    "collect run {} of {}",
                    collected + 1,
                    missing.len()
                ));
                bar.set_message(run_id.clone());
            }
            let on_tick = |elapsed: std::time::Duration| {
                if let (Some(bar), Some(schedule)) = (&bar, &schedule) {
                    let at = schedule.position(collected, elapsed);
                    bar.set_position(at.as_millis() as u64);
                }
            };
            let request = RunRequest {
                run_id: &run_id,
                pipeline: &self.plan.name,
                label: self.options.label.as_deref(),
                plan,
                run_dir: &partial,
                self_exe: &self.options.self_exe,
                interrupt: &self.options.interrupt,
                on_tick: &on_tick,
            };
            let result = schedlab_collect::collect(&request);
            let mut manifest = match result {
                Ok(manifest) => manifest,
                Err(source) => {
                    // Nothing half-written: a run that could not start leaves no directory.
                    let _ = std::fs::remove_dir_all(&partial);
                    return Err(RunnerError::Collect { run_id, source });
                }
            };
            manifest.raw_files = stamp_raw_files(&partial, None)?;
            for raw in &manifest.raw_files {
                cache.0.insert(
                    self.layout
                        .relative(&self.layout.run_file(&run_id, &raw.path)),
                    digest::Stamp {
                        size: raw.size,
                        mtime_ns: raw.mtime_ns,
                        inode: raw.inode,
                        blake3: raw.blake3.clone(),
                    },
                );
            }
            write_json(&Layout::manifest(&partial), &manifest)?;
            collected += 1;
            if manifest.status == RunStatus::Interrupted {
                let secs = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                let kept = self.layout.interrupted_run(&run_id, secs);
                std::fs::rename(&partial, &kept).map_err(|e| io(e, &kept))?;
                say(&format!(
                    "collect: interrupted; what was recorded is kept in {}",
                    kept.display()
                ));
                outcome.interrupted = true;
                return Ok(());
            }
            if final_dir.exists() {
                std::fs::remove_dir_all(&final_dir).map_err(|e| io(e, &final_dir))?;
            }
            std::fs::rename(&partial, &final_dir).map_err(|e| io(e, &final_dir))?;
            match manifest.status {
                RunStatus::Failed => outcome.failed_runs.push(run_id.clone()),
                RunStatus::WorkloadStopped => outcome.stopped_runs.push(run_id.clone()),
                _ => {}
            }
            say(&format!("collect: {run_id} {}", manifest.status.as_str()));
            let notes = manifest
                .notes
                .iter()
                .filter(|n| n.severity == Severity::Warning);
            for note in notes {
                let kind = format!("{}: {}", note.source, note.message);
                match warnings.iter_mut().find(|(k, _)| *k == kind) {
                    Some((_, runs)) => runs.push(run_id.clone()),
                    None => warnings.push((kind, vec![run_id.clone()])),
                }
            }
        }
        if let Some(bar) = &bar {
            bar.finish_and_clear();
        }
        for (kind, runs) in &warnings {
            let runs = match &runs[..] {
                [run] => format!("run {run}"),
                _ => format!("{} runs: {}", runs.len(), runs.join(", ")),
            };
            say(&format!("collect: warning: {kind} ({runs})"));
        }
        if collected == 0 {
            (self.say)(&format!(
                "collect: all {done} runs collected already, nothing to collect"
            ));
        } else if done > 0 {
            (self.say)(&format!(
                "collect: {done} runs collected already, {collected} collected now"
            ));
        }
        Ok(())
    }

    /// The completed or failed runs of the pipeline as it is now on disk (every label), by run
    /// id.
    pub fn collected_runs(&self) -> Result<Vec<CollectedRun>, RunnerError> {
        let mut runs = Vec::new();
        let mut older = false;
        for entry in std::fs::read_dir(self.layout.runs())
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !Layout::is_complete_run_name(&name) {
                continue;
            }
            if !self.ids.is_current(&name) {
                older = true;
                continue;
            }
            let path = Layout::manifest(&entry.path());
            if path.exists() {
                runs.push(CollectedRun {
                    dir: entry.path(),
                    manifest: read_manifest(&path)?,
                });
            }
        }
        if runs.is_empty() {
            return Err(RunnerError::NothingCollected {
                dir: self.layout.runs(),
                older,
            });
        }
        runs.sort_by(|a, b| a.manifest.run_id.cmp(&b.manifest.run_id));
        Ok(runs)
    }

    /// The runs this command analyses: all, or those `--runs` names (each must be collected).
    fn selected<'r>(&self, runs: &'r [CollectedRun]) -> Result<Vec<&'r CollectedRun>, RunnerError> {
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
    fn forget_runs_not_in(&self, runs: &[CollectedRun]) -> Result<(), RunnerError> {
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

    /// Each run's inputs for `stage` and why it is stale.
    fn plan_runs<'r>(
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
    fn per_run_stage(
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
    fn compute_run(&self, stage: Stage, work: &RunWork<'_>) -> Result<Record, RunnerError> {
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
    fn record_of(&self, work: &RunWork<'_>, files: Vec<PathBuf>) -> Result<Record, RunnerError> {
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

    /// What `stage` computes one run from: for parse, its manifest and raw files; for aggregate,
    /// its partitions of the tables.
    fn run_inputs(
        &self,
        stage: Stage,
        run: &CollectedRun,
        cache: &mut Digests,
    ) -> Result<Inputs, RunnerError> {
        let id = &run.manifest.run_id;
        let (config, files) = match stage {
            Stage::Parse => {
                let mut files = vec![self.layout.relative(&Layout::manifest(&run.dir))];
                for raw in &run.manifest.raw_files {
                    let key = self.layout.relative(&self.layout.run_file(id, &raw.path));
                    // The manifest's stamp, taken when the run ended, saves hashing it again.
                    cache.0.entry(key.clone()).or_insert_with(|| digest::Stamp {
                        size: raw.size,
                        mtime_ns: raw.mtime_ns,
                        inode: raw.inode,
                        blake3: raw.blake3.clone(),
                    });
                    files.push(key);
                }
                let mut config = self.plan.parse_section();
                if let Some(imported) = &run.manifest.imported {
                    // An imported run's threads are found by the pipeline's current selectors
                    // (see `import::selectors_now`): mending one re-parses the runs it applies
                    // to.
                    let now = import::selectors_now(imported, &self.plan.import);
                    config["import"] = serde_json::json!(now);
                }
                (config, files)
            }
            Stage::Aggregate => (
                self.plan.aggregate_section(),
                self.outputs_of(Stage::Parse, id),
            ),
            _ => {
                let mut files = self.outputs_of(Stage::Parse, id);
                files.extend(self.outputs_of(Stage::Aggregate, id));
                files.retain(|file| {
                    table_of(file).is_some_and(|t| schedlab_report::PLOTS_READ.contains(&t))
                });
                (self.plan.summarize_section(), files)
            }
        };
        self.inputs_of(config, files, cache)
    }

    /// The files `stage` wrote for run `run_id`, relative to the pipeline root, as recorded.
    fn outputs_of(&self, stage: Stage, run_id: &str) -> Vec<String> {
        let record = Record::load(&self.layout.record(stage, Some(run_id)));
        record
            .map(|r| r.outputs.into_keys().collect())
            .unwrap_or_default()
    }

    /// Inputs from a stage's part of the YAML and its input files (relative to the pipeline root).
    fn inputs_of(
        &self,
        config: serde_json::Value,
        files: Vec<String>,
        cache: &mut Digests,
    ) -> Result<Inputs, RunnerError> {
        let mut digests = BTreeMap::new();
        for file in files {
            let path = self.layout.root.join(&file);
            let digest = cache
                .digest(&file, &path)
                .map_err(|source| RunnerError::Io { path, source })?;
            digests.insert(file, digest.unwrap_or_else(|| "missing".into()));
        }
        Ok(Inputs {
            config: digest::of_json(&config),
            version: self.program(cache),
            files: digests,
        })
    }

    /// What the report is computed from: every run's aggregates and the tables it reads, and
    /// each run's plots (the page links them), as their records name them.
    fn summarize_inputs(
        &self,
        runs: &[CollectedRun],
        cache: &mut Digests,
    ) -> Result<(Inputs, Vec<RunPlots>), RunnerError> {
        let mut files = Vec::new();
        let mut plots = Vec::new();
        for run in runs {
            let id = &run.manifest.run_id;
            files.extend(self.outputs_of(Stage::Aggregate, id));
            let expects = !self.plan.summarize.expect.is_empty();
            let read = |file: &String| {
                table_of(file).is_some_and(|t| {
                    schedlab_report::TABLES_READ.contains(&t)
                        || (expects && schedlab_analyze::expectations::TABLES_READ.contains(&t))
                })
            };
            files.extend(self.outputs_of(Stage::Parse, id).into_iter().filter(read));
            let drawn = self.outputs_of(Stage::Summarize, id);
            plots.push((
                id.clone(),
                drawn.iter().map(|f| self.layout.root.join(f)).collect(),
            ));
            files.extend(drawn);
        }
        let inputs = self.inputs_of(self.plan.summarize_section(), files, cache)?;
        Ok((inputs, plots))
    }

    fn summarize_stage(
        &self,
        runs: &[CollectedRun],
        cache: &mut Digests,
        outcome: &mut Outcome,
    ) -> Result<(), RunnerError> {
        let stage = Stage::Summarize;
        let all: Vec<&CollectedRun> = runs.iter().collect();
        self.per_run_stage(stage, &all, cache, outcome)?;
        if outcome.interrupted {
            return Ok(());
        }
        let (inputs, plots) = self.summarize_inputs(runs, cache)?;
        let record_path = self.layout.record(stage, None);
        let before = Record::load(&record_path);
        let reasons = if self.options.selection.forced.contains(&stage) {
            vec!["forced".to_owned()]
        } else {
            Record::staleness(
                before.as_ref(),
                stage,
                &inputs,
                &self.layout.root,
                &self.options.pipeline_file,
            )
        };
        if reasons.is_empty() {
            (self.say)("summarize: fresh, nothing to do");
            return Ok(());
        }
        (self.say)(&format!("summarize: running ({})", reasons.join("; ")));
        // Cleared however the stage ends.
        let _bar = (self.options.progress)
            .then(|| progress::spinner("summarize").with_finish(ProgressFinish::AndClear));
        Layout::sweep_leftovers(&self.layout.report());
        let paths = schedlab_report::SummaryPaths {
            tables: &self.layout.tables(),
            aggregates: &self.layout.aggregates(),
            report: &self.layout,
        };

        let (expectations, judged) = self.judge_expectations()?;
        let mut summary = schedlab_report::summarize(
            &self.plan.name,
            &paths,
            &self.plan.summarize,
            &plots,
            &expectations,
        )?;
        summary.written.extend(judged);
        let mut text = match &summary.not_completed {
            Some(line) => format!("{line}\n\n{}", summary.table),
            None => summary.table,
        };
        for table in &summary.sections {
            text.push('\n');
            text.push_str(table);
        }
        for warning in &summary.warnings {
            text.push_str(&format!("warning: {warning}\n"));
        }
        outcome.summary = Some(text);
        let mut outputs = BTreeMap::new();
        for file in &summary.written {
            let stamp = digest::stamp(file, None).map_err(|source| RunnerError::Io {
                path: file.clone(),
                source,
            })?;
            outputs.insert(self.layout.relative(file), stamp);
        }
        write_json(&record_path, &Record { inputs, outputs })
    }

    /// The program in stage fingerprints: its version and a digest of the executable. The
    /// version alone stays the same between builds, which left the tables and aggregates of older
    /// code "fresh" after an upgrade; with the digest, a rebuilt schedlab recomputes what its code
    /// computes (collection, never fingerprinted, is not repeated). The digest is cached in
    /// `state/digests.json` like any input's, so the executable is hashed again only when it changed.
    fn program(&self, cache: &mut Digests) -> String {
        let version = env!("CARGO_PKG_VERSION");
        // The executable may be started through a symlink; its digest is of the file itself.
        let exe = std::fs::canonicalize(&self.options.self_exe);
        match cache.digest("program", exe.as_deref().unwrap_or(&self.options.self_exe)) {
            Ok(Some(hash)) => format!("{version}+{}", &hash[..12]),
            _ => version.to_owned(),
        }
    }

    /// What `run` would collect, run by run in execution order, without starting anything.
    pub fn dry_run(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for plan in &self.plan.runs {
            let run_id = self.ids.id(plan);
            let dir = self.layout.run(&run_id);
            if Layout::manifest(&dir).exists()
                && !self.options.selection.forced.contains(&Stage::Collect)
            {
                lines.push(format!("run {run_id}: collected already, nothing to do"));
                continue;
            }
            lines.push(format!("run {run_id}:"));
            lines.extend(
                schedlab_collect::timeline(plan, &dir, &self.options.self_exe)
                    .into_iter()
                    .map(|l| format!("  {l}")),
            );
            // A short form's `cooldown: 0s` is no pause.
            if let Some(cooldown) = plan.collect.cooldown.filter(|c| !c.is_zero()) {
                lines.push(format!("  then cool down for {cooldown:?}"));
            }
        }
        lines
    }

    /// Compares the analysed runs, grouped by `by`, the groups and baseline `selection` names
    /// (`schedlab compare`), differences under `min_effect_pct` percent being noise: reads
    /// `tables/` and `aggregates/` and writes `compare/by-<by>.parquet` and `.md`. It computes
    /// no stage: run the analysis first ([`StageSelection::analysis`]).
    pub fn compare(
        &self,
        by: &GroupBy,
        selection: &Selection,
        min_effect_pct: Option<f64>,
    ) -> Result<Comparison, RunnerError> {
        let _lock = lock::acquire(&self.layout.lock(), "schedlab compare")?;
        let inputs = self.compare_inputs()?;
        let (observations, groups) = schedlab_analyze::compare::observations(&inputs, by)?;
        let asked = Asked {
            by,
            selection,
            min_effect_pct,
        };
        let name = ComparisonName::of(by, None, false);
        self.write_comparison(&inputs.runs, observations, groups, &asked, name)
    }

    /// Like [`Runner::compare`], with the runs of `other` (another pipeline, grouped by its
    /// variants) as the baseline groups (`schedlab compare A --against B`); `map` pairs a
    /// workload here with one there (`(ours, theirs)`). Writes
    /// `compare/by-<by>-against-<other>.{parquet,md}`.
    pub fn compare_against(
        &self,
        other: &Runner<'_>,
        by: &GroupBy,
        map: &[(String, String)],
        selection: &Selection,
        min_effect_pct: Option<f64>,
    ) -> Result<Comparison, RunnerError> {
        let _lock = lock::acquire(&self.layout.lock(), "schedlab compare")?;
        let _theirs = lock::acquire(&other.layout.lock(), "schedlab compare")?;
        let mut inputs = self.compare_inputs()?;
        let theirs = other.compare_inputs()?;
        let ours = schedlab_analyze::compare::observations(&inputs, by)?;
        let variants = schedlab_analyze::compare::observations(&theirs, &GroupBy::Variant)?;
        let their_groups = variants.1.len();
        let (observations, groups) =
            schedlab_analyze::compare::against(ours, variants, &other.plan.name, map)?;
        // The other pipeline is the baseline unless asked otherwise: its group with the most
        // runs (of those --groups keeps).
        let mut selection = selection.clone();
        if selection.baseline.is_none() {
            let candidates: Vec<String> = (groups[..their_groups].iter())
                .filter(|g| selection.keeps(g))
                .cloned()
                .collect();
            selection.baseline =
                schedlab_analyze::compare::default_baseline(&observations, &candidates)
                    .map(|i| candidates[i].clone());
        }
        inputs.runs.extend(theirs.runs);
        let asked = Asked {
            by,
            selection: &selection,
            min_effect_pct,
        };
        let name = ComparisonName::of(by, Some(&other.plan.name), false);
        self.write_comparison(&inputs.runs, observations, groups, &asked, name)
    }

    /// Compares `observations` and writes the result, opened by the configuration differences
    /// of `runs`, under `name`.
    fn write_comparison(
        &self,
        runs: &[RunRow],
        observations: Vec<schedlab_analyze::compare::Observation>,
        groups: Vec<String>,
        asked: &Asked<'_>,
        name: ComparisonName,
    ) -> Result<Comparison, RunnerError> {
        let by = asked.by;
        let rows = schedlab_analyze::compare::compare(
            &observations,
            &groups,
            by,
            asked.selection,
            asked.min_effect_pct,
        )?;
        let config = config_differences(runs, &observations, &groups, &rows, by);
        let dir = self.layout.compare();
        std::fs::create_dir_all(&dir).map_err(|source| RunnerError::Io {
            path: dir.clone(),
            source,
        })?;
        let ComparisonName { key, title } = name;
        let (parquet, markdown) = self.layout.comparison(&key);
        schedlab_tables::write_rows(&parquet, &rows)?;
        schedlab_tables::write_rows(&self.layout.comparison_observations(&key), &observations)?;
        let mut text = format!(
            "# {}: compared by {}\n\nConfiguration in force:\n\n```text\n{}\n```\n\n{}",
            self.plan.name,
            title,
            config.join("\n"),
            schedlab_report::comparison_table(&rows)
        );
        if let Some(line) = schedlab_analyze::compare::adjustment(&rows) {
            text += &format!("\n{line}\n");
        }
        let notes = schedlab_analyze::compare::notes(&rows);
        if !notes.is_empty() {
            text += &format!("\n## Notes\n\n{}\n", notes.join("\n"));
        }
        let page_title = format!("{}: compared by {title}", self.plan.name);
        let page = schedlab_report::comparison_page(&page_title, &text, &rows)?;
        let html = self.layout.comparison_html(&key);
        for (path, bytes) in [(&markdown, text.as_bytes()), (&html, page.as_bytes())] {
            schedlab_tables::write_file_atomic(path, bytes).map_err(|source| RunnerError::Io {
                path: path.clone(),
                source,
            })?;
        }
        Ok(Comparison {
            config,
            rows,
            parquet,
            markdown,
            html,
        })
    }

    /// How many runs per group the analysed runs, grouped by `by`, need for a difference of
    /// `detect_pct` percent from the baseline `selection` names to be found (`schedlab plan`), and how
    /// long collecting the missing ones takes with the pipeline's cooldown. Writes nothing.
    pub fn runs_needed(
        &self,
        by: &GroupBy,
        selection: &Selection,
        detect_pct: f64,
    ) -> Result<Vec<schedlab_tables::RunsNeeded>, RunnerError> {
        let _lock = lock::acquire(&self.layout.lock(), "schedlab plan")?;
        let inputs = self.compare_inputs()?;
        let (observations, groups) = schedlab_analyze::compare::observations(&inputs, by)?;
        // Every run of a pipeline has the same collect section, so the same cooldown.
        let cooldown = (self.plan.runs.first())
            .and_then(|run| run.collect.cooldown)
            .unwrap_or_default();
        Ok(schedlab_analyze::compare::runs_needed(
            &observations,
            &groups,
            selection,
            detect_pct,
            &inputs.runs,
            cooldown.as_secs_f64(),
        )?)
    }

    /// The tables a comparison reads, from `tables/` and `aggregates/`.
    fn compare_inputs(&self) -> Result<CompareInputs, RunnerError> {
        let (tables, aggregates) = (self.layout.tables(), self.layout.aggregates());
        Ok(CompareInputs {
            variant_order: self.plan.variants.iter().map(variant_text).collect(),
            runs: read_table(&tables)?,
            processes: read_table(&tables)?,
            workload_metrics: read_table(&tables)?,
            cpu_time: read_table(&aggregates)?,
            throughput: read_table(&aggregates)?,
            cpu_share: read_table(&aggregates)?,
            cpu_activity: read_table(&aggregates)?,
            placement_cost: read_table(&aggregates)?,
            wakeup_placement: read_table(&aggregates)?,
            migration_classes: read_table(&aggregates)?,
            sched_delay_workloads: read_table(&aggregates)?,
            residency_rollup: read_table(&aggregates)?,
            totals: read_table(&aggregates)?,
            power_step: read_table(&aggregates)?,
        })
    }

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
fn endings(manifest: &Manifest) -> Vec<String> {
    (manifest.processes.iter())
        .filter_map(|p| match p.ending() {
            Ending::AsPlanned => None,
            Ending::Failed(how) | Ending::Stopped(how) | Ending::TimedOut(how) => {
                Some(format!("workload {}#{} {how}", p.workload, p.instance))
            }
        })
        .collect()
}

/// What a comparison's files are named after (`compare/by-<key>.*`) and its title says.
struct ComparisonName {
    key: String,
    title: String,
}

impl ComparisonName {
    /// `by-<by>`, `-against-<other>` when another pipeline is the baseline, and `-per-class`
    /// when instances are compared per class (`compare --per-class`).
    fn of(by: &GroupBy, against: Option<&str>, per_class: bool) -> ComparisonName {
        let (mut key, mut title) = match against {
            Some(other) => (
                format!("{}-against-{other}", by.name()),
                format!("{}, against {other}", by.name()),
            ),
            None => (by.name().to_owned(), by.name().to_owned()),
        };
        if per_class {
            key.push_str("-per-class");
            title.push_str(", per class an instance ran on");
        }
        ComparisonName { key, title }
    }
}

/// The table or aggregate a partition file (`tables/<t>/run_id=…/…`, relative to the pipeline
/// root) belongs to.
fn table_of(file: &str) -> Option<&str> {
    file.split('/').nth(1)
}

/// Removes `path`; one that is not there is fine.
fn remove_if_exists(path: &Path) -> Result<(), RunnerError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(RunnerError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

/// How the configurations of the compared groups differ: the runs that gave figures, each in
/// its group, against the baseline the comparison used.
fn config_differences(
    runs: &[RunRow],
    observations: &[schedlab_analyze::compare::Observation],
    groups: &[String],
    rows: &[ComparisonRow],
    by: &GroupBy,
) -> Vec<String> {
    let Some(baseline) = rows.first().map(|r| r.baseline.as_str()) else {
        return Vec::new();
    };
    let group_of: BTreeMap<&str, &str> = (observations.iter())
        .map(|o| (o.run_id.as_str(), o.group.as_str()))
        .collect();
    let settings: Vec<config_diff::RunSettings> = (runs.iter())
        .filter_map(|run| {
            let group = group_of.get(run.run_id.as_str())?;
            Some(config_diff::RunSettings::of(run, group))
        })
        .collect();
    config_diff::differences(&settings, groups, baseline, by.name())
}

fn read_manifest(path: &Path) -> Result<Manifest, RunnerError> {
    let bytes = std::fs::read(path).map_err(|source| RunnerError::Io {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_slice(&bytes).map_err(|err| RunnerError::BadManifest {
        path: path.to_owned(),
        message: err.to_string(),
    })
}

fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), RunnerError> {
    let io = |source| RunnerError::Io {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let bytes = serde_json::to_vec_pretty(value)
        .map_err(std::io::Error::other)
        .map_err(io)?;
    schedlab_tables::write_file_atomic(path, &bytes).map_err(io)
}

/// Hashes every file under `run_dir/raw` once, now that the run has ended; the bytes read
/// advance `bar`, if any.
fn stamp_raw_files(run_dir: &Path, bar: Option<&ProgressBar>) -> Result<Vec<RawFile>, RunnerError> {
    let raw = Layout::raw(run_dir);
    let mut files = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&raw)
        .map_err(|source| RunnerError::Io {
            path: raw.clone(),
            source,
        })?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    entries.sort();
    for path in entries {
        let stamp = digest::stamp(&path, bar).map_err(|source| RunnerError::Io {
            path: path.clone(),
            source,
        })?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        files.push(RawFile {
            path: schedlab_tables::manifest::raw_file(&name),
            size: stamp.size,
            mtime_ns: stamp.mtime_ns,
            inode: stamp.inode,
            blake3: stamp.blake3,
        });
    }
    Ok(files)
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
