//! The stage graph: collect → parse → aggregate → summarize, with persistent fingerprints.
//!
//! # Brief overview
//!
//! [`Runner::execute`] runs a [`schedlab_spec::Plan`]'s stages over the data layout of
//! [`layout`]; [`Runner::status`] says which runs are on disk and which stages are fresh.
//! Collection is per run: a run whose directory exists was collected and is never collected again
//! (unless forced). Later stages are fingerprinted ([`state`]): the stage's part of the YAML, the
//! program build (version and executable digest) and the digests of its input files. A stage
//! whose fingerprint is unchanged is skipped, and a stale one is explained.
//!
//! # Key design decision
//!
//! A stage reads files and writes files; nothing passes between stages in memory, so any stage
//! can run alone and an analyst reruns only the analysis. Digests are cheap on gigabytes of raw
//! data ([`digest`]): raw files are hashed once, when their run ends, and trusted afterwards while
//! their size, mtime and inode are unchanged. The collect fingerprint names the run set
//! (`<set>-<variant>-r<n>`), so an edited collect section collects new runs beside the old ones.

pub mod digest;
pub mod gather;
pub mod layout;
mod lock;
mod parse_stage;
pub mod progress;
pub mod state;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use schedlab_analyze::compare::CompareInputs;
use schedlab_collect::RunRequest;
use schedlab_spec::{Plan, variant_text};
use schedlab_tables::manifest::{Manifest, RawFile, RunStatus};
use schedlab_tables::{ComparisonRow, read_table};

pub use layout::Layout;
pub use parse_stage::CollectedRun;
pub use schedlab_analyze::compare::GroupBy;
pub use schedlab_report::comparison_table;
pub use state::Stage;
use state::{Inputs, StageRecord, State};

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
    #[error("no collected runs for this pipeline's collect section under {} (hint: `schedlab run` collects them{})", dir.display(), if *older { "; the runs on disk were collected with an earlier collect section" } else { "" })]
    NothingCollected { dir: PathBuf, older: bool },
    #[error("run {run_id}: declared topology: {message}")]
    Topology { run_id: String, message: String },
    #[error("{}: {message}", path.display())]
    BadManifest { path: PathBuf, message: String },
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

    /// `--from STAGE`: that stage and the ones after it, all recomputed.
    pub fn from(stage: Stage) -> StageSelection {
        let stages: BTreeSet<Stage> = Stage::ALL.into_iter().filter(|s| *s >= stage).collect();
        StageSelection {
            forced: stages.clone(),
            stages,
        }
    }

    /// `--only STAGE`: that stage alone, recomputed.
    pub fn only(stage: Stage) -> StageSelection {
        StageSelection {
            stages: [stage].into(),
            forced: [stage].into(),
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
}

/// What a command did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The summary, when summarize ran or its report was fresh.
    pub summary: Option<String>,
    pub interrupted: bool,
    /// Runs collected by this command that ended `failed`.
    pub failed_runs: Vec<String>,
}

/// What `schedlab compare` computed and where it wrote it.
#[derive(Debug)]
pub struct Comparison {
    pub rows: Vec<ComparisonRow>,
    pub parquet: PathBuf,
    pub markdown: PathBuf,
}

/// A run directory found on disk.
#[derive(Debug, Clone)]
pub struct RunOnDisk {
    pub run_id: String,
    pub status: String,
    pub started_at: String,
    /// Collected with the pipeline's current collect section.
    pub current: bool,
}

/// What `schedlab status` prints.
#[derive(Debug, Clone)]
pub struct StatusReport {
    pub root: PathBuf,
    pub runs: Vec<RunOnDisk>,
    /// Per stage: the reasons it is stale; empty when fresh.
    pub stages: Vec<(Stage, Vec<String>)>,
}

pub struct Runner<'a> {
    plan: &'a Plan,
    options: &'a RunnerOptions,
    layout: Layout,
    set: String,
    say: &'a dyn Fn(&str),
}

impl<'a> Runner<'a> {
    /// `say` receives one line per decision ("parse: fresh, nothing to do").
    pub fn new(plan: &'a Plan, options: &'a RunnerOptions, say: &'a dyn Fn(&str)) -> Runner<'a> {
        let set = digest::of_json(&plan.collect_section())[..8].to_owned();
        Runner {
            plan,
            options,
            layout: Layout::new(&options.data_dir, &plan.name),
            set,
            say,
        }
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    fn run_id(&self, key: &str) -> String {
        match &self.options.label {
            Some(label) => format!("{}-{label}-{key}", self.set),
            None => format!("{}-{key}", self.set),
        }
    }

    /// Runs the selected stages.
    pub fn execute(&self) -> Result<Outcome, RunnerError> {
        let _lock = lock::acquire(&self.layout.lock(), "schedlab run")?;
        let mut state = State::load(&self.layout.state());
        let mut outcome = Outcome::default();
        let selection = &self.options.selection;
        if selection.stages.contains(&Stage::Collect) {
            self.collect(&mut state, &mut outcome)?;
            self.save(&state)?;
            if outcome.interrupted {
                return Ok(outcome);
            }
        }
        let later: Vec<Stage> = selection
            .stages
            .iter()
            .copied()
            .filter(|s| *s != Stage::Collect)
            .collect();
        if later.is_empty() {
            return Ok(outcome);
        }
        let runs = self.collected_runs()?;
        for stage in later {
            // Stages are atomic: stopping between two leaves every finished stage recorded.
            if self.options.interrupt.load(Ordering::SeqCst) {
                (self.say)(&format!("{}: not started (interrupted)", stage.name()));
                outcome.interrupted = true;
                return Ok(outcome);
            }
            let inputs = self.inputs(stage, &runs, &mut state)?;
            let reasons = if selection.forced.contains(&stage) {
                vec!["forced".to_owned()]
            } else {
                state.staleness(
                    stage,
                    &inputs,
                    &self.layout.root,
                    &self.options.pipeline_file,
                )
            };
            if reasons.is_empty() {
                (self.say)(&format!("{}: fresh, nothing to do", stage.name()));
            } else {
                (self.say)(&format!(
                    "{}: running ({})",
                    stage.name(),
                    reasons.join("; ")
                ));
                let outputs = self.run_stage(stage, &runs, &mut outcome)?;
                self.record(&mut state, stage, inputs, &outputs)?;
                self.save(&state)?;
            }
        }
        if outcome.summary.is_none() {
            outcome.summary = std::fs::read_to_string(self.layout.summary_md()).ok();
        }
        Ok(outcome)
    }

    /// Writes state.json atomically.
    fn save(&self, state: &State) -> Result<(), RunnerError> {
        write_json(&self.layout.state(), state)
    }

    fn collect(&self, state: &mut State, outcome: &mut Outcome) -> Result<(), RunnerError> {
        let force = self.options.selection.forced.contains(&Stage::Collect);
        let (mut done, mut collected) = (0, 0);
        for plan in &self.plan.runs {
            let run_id = self.run_id(&plan.key);
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
                (self.say)(&format!("collect: cooling down for {cooldown:?}"));
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
            let bar = self
                .options
                .progress
                .then(|| progress::collect_bar(&run_id, plan.collect.expected_length()));
            let on_tick = |elapsed: std::time::Duration| {
                if let Some(bar) = &bar {
                    bar.set_position(elapsed.as_millis() as u64);
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
            if let Some(bar) = &bar {
                bar.finish_and_clear();
            }
            let mut manifest = match result {
                Ok(manifest) => manifest,
                Err(source) => {
                    // Nothing half-written: a run that could not start leaves no directory.
                    let _ = std::fs::remove_dir_all(&partial);
                    return Err(RunnerError::Collect { run_id, source });
                }
            };
            manifest.raw_files = stamp_raw_files(&partial)?;
            for raw in &manifest.raw_files {
                state.files.0.insert(
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
                (self.say)(&format!(
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
            if manifest.status == RunStatus::Failed {
                outcome.failed_runs.push(run_id.clone());
            }
            (self.say)(&format!("collect: {run_id} {}", manifest.status.as_str()));
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

    /// The completed or failed runs of the current run set on disk, by run id.
    pub fn collected_runs(&self) -> Result<Vec<CollectedRun>, RunnerError> {
        let prefix = format!("{}-", self.set);
        let mut runs = Vec::new();
        let mut older = false;
        for entry in std::fs::read_dir(self.layout.runs())
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.contains('.') {
                continue;
            }
            if !name.starts_with(&prefix) {
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

    fn inputs(
        &self,
        stage: Stage,
        runs: &[CollectedRun],
        state: &mut State,
    ) -> Result<Inputs, RunnerError> {
        let (config, files) = match stage {
            Stage::Collect => unreachable!("collect is not fingerprinted"),
            Stage::Parse => {
                let mut files = Vec::new();
                for run in runs {
                    let id = &run.manifest.run_id;
                    files.push(
                        self.layout
                            .relative(&Layout::manifest(&self.layout.run(id))),
                    );
                    files.extend(
                        run.manifest
                            .raw_files
                            .iter()
                            .map(|raw| self.layout.relative(&self.layout.run_file(id, &raw.path))),
                    );
                }
                (self.plan.parse_section(), files)
            }
            Stage::Aggregate => (
                self.plan.aggregate_section(),
                self.outputs_of(state, Stage::Parse),
            ),
            Stage::Summarize => {
                let mut files = self.outputs_of(state, Stage::Aggregate);
                let tables = schedlab_report::TABLES_READ.iter();
                files.extend(tables.map(|table| self.layout.relative(&self.layout.table(table))));
                (self.plan.summarize_section(), files)
            }
        };
        let mut digests = std::collections::BTreeMap::new();
        for file in files {
            let path = self.layout.root.join(&file);
            let digest = state
                .files
                .digest(&file, &path)
                .map_err(|source| RunnerError::Io {
                    path: path.clone(),
                    source,
                })?;
            digests.insert(file, digest.unwrap_or_else(|| "missing".into()));
        }
        Ok(Inputs {
            config: digest::of_json(&config),
            version: self.program(state),
            files: digests,
        })
    }

    /// The program in stage fingerprints: its version and a digest of the executable. The
    /// version alone stays the same between builds, which left the tables and aggregates of older
    /// code "fresh" after an upgrade; with the digest, a rebuilt schedlab recomputes what its code
    /// computes (collection, never fingerprinted, is not repeated). The digest is cached in
    /// `state.json` like any input's, so the executable is hashed again only when it changed.
    fn program(&self, state: &mut State) -> String {
        let version = env!("CARGO_PKG_VERSION");
        match state.files.digest("program", &self.options.self_exe) {
            Ok(Some(hash)) => format!("{version}+{}", &hash[..12]),
            _ => version.to_owned(),
        }
    }

    fn outputs_of(&self, state: &State, stage: Stage) -> Vec<String> {
        state
            .stages
            .get(&stage)
            .map(|r| r.outputs.clone())
            .unwrap_or_default()
    }

    fn run_stage(
        &self,
        stage: Stage,
        runs: &[CollectedRun],
        outcome: &mut Outcome,
    ) -> Result<Vec<PathBuf>, RunnerError> {
        let out = match stage {
            Stage::Collect => unreachable!("collect runs per run"),
            Stage::Parse => self.layout.tables(),
            Stage::Aggregate => self.layout.aggregates(),
            Stage::Summarize => self.layout.report(),
        };
        Layout::sweep_leftovers(&out);
        match stage {
            Stage::Collect => unreachable!("collect runs per run"),
            Stage::Parse => {
                let bar = self
                    .options
                    .progress
                    .then(|| progress::count_bar("parse", runs.len() as u64));
                let tick = || {
                    if let Some(bar) = &bar {
                        bar.inc(1);
                    }
                };
                let written = parse_stage::parse_runs(runs, &self.plan.topology, &out, &tick);
                if let Some(bar) = &bar {
                    bar.finish_and_clear();
                }
                written
            }
            Stage::Aggregate => Ok(schedlab_analyze::aggregate(
                &self.layout.tables(),
                &self.plan.aggregate,
                &out,
            )?),
            Stage::Summarize => {
                let paths = schedlab_report::SummaryPaths {
                    tables: &self.layout.tables(),
                    aggregates: &self.layout.aggregates(),
                    report: &self.layout,
                };
                let summary =
                    schedlab_report::summarize(&self.plan.name, &paths, &self.plan.summarize)?;
                let mut text = summary.table;
                for table in &summary.sections {
                    text.push('\n');
                    text.push_str(table);
                }
                for warning in &summary.warnings {
                    text.push_str(&format!("warning: {warning}\n"));
                }
                outcome.summary = Some(text);
                Ok(summary.written)
            }
        }
    }

    /// Records a stage's result; outputs of an earlier computation that were not written again
    /// are removed, so the directory holds exactly what the fingerprint describes.
    fn record(
        &self,
        state: &mut State,
        stage: Stage,
        inputs: Inputs,
        outputs: &[PathBuf],
    ) -> Result<(), RunnerError> {
        let relative: Vec<String> = outputs.iter().map(|p| self.layout.relative(p)).collect();
        if let Some(old) = state.stages.get(&stage) {
            for stale in old.outputs.iter().filter(|o| !relative.contains(o)) {
                let _ = std::fs::remove_file(self.layout.root.join(stale));
                state.files.0.remove(stale);
            }
        }
        for (rel, path) in relative.iter().zip(outputs) {
            state
                .files
                .digest(rel, path)
                .map_err(|source| RunnerError::Io {
                    path: path.clone(),
                    source,
                })?;
        }
        state.stages.insert(
            stage,
            StageRecord {
                inputs,
                outputs: relative,
            },
        );
        Ok(())
    }

    /// What `run` would collect, run by run in execution order, without starting anything.
    pub fn dry_run(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for plan in &self.plan.runs {
            let run_id = self.run_id(&plan.key);
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
            if let Some(cooldown) = plan.collect.cooldown {
                lines.push(format!("  then cool down for {cooldown:?}"));
            }
        }
        lines
    }

    /// Compares the analysed runs, grouped by `by`, with the `baseline` group (`schedlab
    /// compare`): reads `tables/` and `aggregates/` and writes `compare/by-<by>.parquet` and
    /// `.md`. It computes no stage: run the analysis first ([`StageSelection::analysis`]).
    pub fn compare(&self, by: &GroupBy, baseline: Option<&str>) -> Result<Comparison, RunnerError> {
        let _lock = lock::acquire(&self.layout.lock(), "schedlab compare")?;
        let (tables, aggregates) = (self.layout.tables(), self.layout.aggregates());
        let inputs = CompareInputs {
            variant_order: self.plan.variants.iter().map(variant_text).collect(),
            runs: read_table(&tables)?,
            processes: read_table(&tables)?,
            workload_metrics: read_table(&tables)?,
            cpu_time: read_table(&aggregates)?,
            throughput: read_table(&aggregates)?,
            cpu_share: read_table(&aggregates)?,
            cpu_activity: read_table(&aggregates)?,
        };
        let (observations, groups) = schedlab_analyze::compare::observations(&inputs, by)?;
        let rows = schedlab_analyze::compare::compare(&observations, &groups, by, baseline)?;
        let dir = self.layout.compare();
        std::fs::create_dir_all(&dir).map_err(|source| RunnerError::Io {
            path: dir.clone(),
            source,
        })?;
        let (parquet, markdown) = self.layout.comparison(by.name());
        schedlab_tables::write_rows(&parquet, &rows)?;
        let text = format!(
            "# {}: compared by {}\n\n{}",
            self.plan.name,
            by.name(),
            schedlab_report::comparison_table(&rows)
        );
        schedlab_tables::write_file_atomic(&markdown, text.as_bytes()).map_err(|source| {
            RunnerError::Io {
                path: markdown.clone(),
                source,
            }
        })?;
        Ok(Comparison {
            rows,
            parquet,
            markdown,
        })
    }

    /// Runs on disk and each stage's freshness, computing nothing.
    pub fn status(&self) -> Result<StatusReport, RunnerError> {
        let mut state = State::load(&self.layout.state());
        let mut runs = Vec::new();
        for entry in std::fs::read_dir(self.layout.runs())
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            let manifest = read_manifest(&Layout::manifest(&entry.path())).ok();
            runs.push(RunOnDisk {
                current: name.starts_with(&format!("{}-", self.set)) && !name.contains('.'),
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
                run_id: name,
            });
        }
        runs.sort_by(|a, b| a.run_id.cmp(&b.run_id));
        let missing: Vec<String> = self
            .plan
            .runs
            .iter()
            .map(|p| self.run_id(&p.key))
            .filter(|id| !Layout::manifest(&self.layout.run(id)).exists())
            .collect();
        let mut stages = Vec::new();
        let collect_reasons = if missing.is_empty() {
            Vec::new()
        } else {
            let mut why = vec![format!(
                "{} of {} runs not collected: {}",
                missing.len(),
                self.plan.runs.len(),
                missing.join(", ")
            )];
            if runs.iter().any(|r| !r.current && !r.run_id.contains('.'))
                && missing.len() == self.plan.runs.len()
            {
                why.push(format!(
                    "the `collect` section of {} changed since the runs on disk",
                    self.options.pipeline_file
                ));
            }
            why
        };
        stages.push((Stage::Collect, collect_reasons));
        match self.collected_runs() {
            Ok(collected) => {
                for stage in [Stage::Parse, Stage::Aggregate, Stage::Summarize] {
                    let inputs = self.inputs(stage, &collected, &mut state)?;
                    stages.push((
                        stage,
                        state.staleness(
                            stage,
                            &inputs,
                            &self.layout.root,
                            &self.options.pipeline_file,
                        ),
                    ));
                }
            }
            Err(RunnerError::NothingCollected { .. }) => {
                for stage in [Stage::Parse, Stage::Aggregate, Stage::Summarize] {
                    stages.push((stage, vec!["no collected runs yet".into()]));
                }
            }
            Err(err) => return Err(err),
        }
        Ok(StatusReport {
            root: self.layout.root.clone(),
            runs,
            stages,
        })
    }
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
    let bytes = serde_json::to_vec_pretty(value)
        .map_err(std::io::Error::other)
        .map_err(io)?;
    schedlab_tables::write_file_atomic(path, &bytes).map_err(io)
}

/// Hashes every file under `run_dir/raw` once, now that the run has ended.
fn stamp_raw_files(run_dir: &Path) -> Result<Vec<RawFile>, RunnerError> {
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
        let stamp = digest::stamp(&path).map_err(|source| RunnerError::Io {
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
