//! What the commands on a pipeline share: loading it for this machine, the runner's options
//! from the command line, and running the selected stages with Ctrl-C stopping them.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, bail};
use schedlab_runner::layout::check_name_part;
use schedlab_runner::load::LoadOptions;
use schedlab_runner::{Outcome, Runner, RunnerOptions, StageSelection};
use schedlab_spec::Plan;

use super::interrupt::stop_on_interrupt;
use super::{EXIT_INTERRUPTED, EXIT_WORKLOAD_STOPPED};
use crate::cli::{Common, Form};

/// Which runs a command is about: collected under which label, how many repetitions, and for
/// `analyze --runs`, which runs alone.
#[derive(Default)]
pub struct Scope {
    pub label: Option<String>,
    pub repeat: Option<u32>,
    pub runs: Option<Vec<String>>,
    /// The pipeline's short form.
    pub short: bool,
}

impl From<Form> for Scope {
    fn from(form: Form) -> Scope {
        Scope {
            short: form.short,
            ..Scope::default()
        }
    }
}

/// Reads and compiles a pipeline (with `repeat` instead of its own, if given; with the
/// workloads of the runs imported under `data`); an invalid one's error is the rendered list of
/// diagnostics.
pub fn load_plan(
    path: &Path,
    repeat: Option<u32>,
    short: bool,
    data: Option<&Path>,
) -> anyhow::Result<Plan> {
    let options = LoadOptions {
        repeat,
        short,
        importing: None,
        data_dir: data,
    };
    load(path, &options)
}

/// Reads and compiles a pipeline with every option; warnings go to stderr.
pub fn load(path: &Path, options: &LoadOptions<'_>) -> anyhow::Result<Plan> {
    let say = |line: &str| eprintln!("{line}");
    Ok(schedlab_runner::load::load_plan(path, options, &say)?)
}

/// A label given on the command line, refused unless it can be part of a directory name.
pub fn check_label(label: Option<&str>) -> anyhow::Result<()> {
    if let Some(label) = label
        && let Err(rule) = check_name_part(label)
    {
        bail!("label `{label}` is not usable in a directory name (hint: {rule})");
    }
    Ok(())
}

pub fn runner_options(
    pipeline: &Path,
    common: &Common,
    scope: Scope,
    selection: StageSelection,
) -> anyhow::Result<RunnerOptions> {
    let Scope { label, runs, .. } = scope;
    check_label(label.as_deref())?;
    Ok(RunnerOptions {
        data_dir: common.data.clone(),
        pipeline_file: pipeline.display().to_string(),
        label,
        selection,
        self_exe: std::env::current_exe().context("cannot find the schedlab executable")?,
        interrupt: Arc::new(AtomicBool::new(false)),
        progress: std::io::stderr().is_terminal(),
        runs,
    })
}

/// Runs the selected stages, prints the summary, and exits by how the runs collected now ended.
pub fn execute(
    pipeline: &Path,
    common: &Common,
    scope: Scope,
    selection: StageSelection,
) -> anyhow::Result<ExitCode> {
    execute_then(pipeline, common, scope, selection, |runner, outcome| {
        if let Some(summary) = &outcome.summary {
            println!("{summary}");
            let layout = runner.layout();
            let report = [layout.index_html(), layout.summary_md()]
                .into_iter()
                .find(|page| page.exists());
            if let Some(report) = report {
                eprintln!("report: {}", report.display());
            }
        }
        if outcome.interrupted {
            return Ok(ExitCode::from(EXIT_INTERRUPTED));
        }
        if !outcome.failed_runs.is_empty() {
            eprintln!(
                "schedlab: {} run(s) failed: {} (see the quality table)",
                outcome.failed_runs.len(),
                outcome.failed_runs.join(", ")
            );
            return Ok(ExitCode::from(1));
        }
        if !outcome.stopped_runs.is_empty() {
            eprintln!(
                "schedlab: {} run(s) had a workload stopped at the end of collection before it \
                 ended by itself: {} (see the quality table; `stop: expected` on a workload says \
                 its stop is part of the experiment)",
                outcome.stopped_runs.len(),
                outcome.stopped_runs.join(", ")
            );
            return Ok(ExitCode::from(EXIT_WORKLOAD_STOPPED));
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// Loads the pipeline, stops on the first Ctrl-C, runs the selected stages, and hands the
/// runner and what it did to `then` (which says what an interrupted command exits with).
pub fn execute_then(
    pipeline: &Path,
    common: &Common,
    scope: Scope,
    selection: StageSelection,
    then: impl FnOnce(&Runner<'_>, Outcome) -> anyhow::Result<ExitCode>,
) -> anyhow::Result<ExitCode> {
    let plan = load_plan(pipeline, scope.repeat, scope.short, Some(&common.data))?;
    let options = runner_options(pipeline, common, scope, selection)?;
    stop_on_interrupt(
        &options.interrupt,
        "stopping workloads and monitors, or after the running stage",
    )?;
    let say = |line: &str| eprintln!("{line}");
    let runner = Runner::new(&plan, &options, &say);
    let outcome = runner.execute()?;
    then(&runner, outcome)
}
