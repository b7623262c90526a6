//! `schedlab export perfetto`: one run's tables as a trace ui.perfetto.dev opens, the run named
//! by its directory or by its pipeline.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::bail;
use schedlab_runner::layout::Layout;
use schedlab_runner::run_dir;

use super::EXIT_INTERRUPTED;
use super::interrupt::stop_on_interrupt;
use super::pipeline::load_plan;
use crate::cli::{ExportArgs, ExportFormat, PerfettoArgs};

pub fn export(args: ExportArgs) -> anyhow::Result<ExitCode> {
    match args.format {
        ExportFormat::Perfetto(args) => perfetto(args),
    }
}

/// Finds the run's tables from its directory or its pipeline, and writes its trace.
fn perfetto(args: PerfettoArgs) -> anyhow::Result<ExitCode> {
    let PerfettoArgs {
        source,
        run_id,
        out,
        common,
    } = args;
    let (layout, run_id) = if source.is_dir() {
        if let Some(run_id) = run_id {
            bail!(
                "{} is a run directory; --run {run_id} goes with a pipeline file",
                source.display()
            );
        }
        run_dir::of_directory(&source)?
    } else {
        let plan = load_plan(&source, None, false, Some(&common.data))?;
        let layout = Layout::new(&common.data, &plan.name);
        let run_id = match run_id {
            Some(run_id) => run_id,
            None => run_dir::only_run(&layout, &source)?,
        };
        (layout, run_id)
    };
    let interrupt = Arc::new(AtomicBool::new(false));
    stop_on_interrupt(&interrupt, "removing the unfinished trace")?;
    let summary =
        match schedlab_export::perfetto::export_run(&layout.tables(), &run_id, &out, &interrupt) {
            Err(schedlab_export::ExportError::Interrupted) => {
                return Ok(ExitCode::from(EXIT_INTERRUPTED));
            }
            result => result?,
        };
    println!(
        "{}: run {run_id}: {} slices on CPU tracks, {} on thread tracks, {} wakeups, {} \
         migrations, {} counter values ({:.1} MiB); open it in ui.perfetto.dev",
        out.display(),
        summary.cpu_slices,
        summary.thread_slices,
        summary.wakeups,
        summary.migrations,
        summary.counters,
        summary.bytes as f64 / (1 << 20) as f64,
    );
    if summary.clipped_slices > 0 {
        eprintln!(
            "export: slices drawn from a later start, since the previous slice of their track \
             had not ended (a thread on two CPUs at once: see the run's quality warnings): {}; \
             their args hold `clipped_ns`",
            summary.clipped_slices
        );
    }
    Ok(ExitCode::SUCCESS)
}
