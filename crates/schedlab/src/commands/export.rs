//! `schedlab export perfetto`: one run's tables as a trace ui.perfetto.dev opens, the run named
//! by its directory or by its pipeline.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::bail;
use schedlab_runner::layout::Layout;
use schedlab_runner::progress;
use schedlab_runner::run_dir;

use super::EXIT_INTERRUPTED;
use super::interrupt::stop_on_interrupt;
use super::pipeline::load_plan;
use crate::cli::{ExportArgs, ExportFormat, PerfettoArgs, TraceFormat};

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
        format,
        common,
    } = args;
    let name = out.file_name().map(|n| n.to_string_lossy().into_owned());
    let json_name = name.is_some_and(|n| n.ends_with(".json") || n.ends_with(".json.gz"));
    if format == TraceFormat::Pftrace && json_name {
        bail!(
            "--out {} names a JSON file, but the format is Perfetto's protobuf trace; hint: add \
             --format json, or name the file .pftrace",
            out.display()
        );
    }
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
    let tables = layout.tables();
    // A big run's trace takes seconds to write: say that it is being written, and clear the
    // line before anything else is printed.
    let bar = std::io::stderr()
        .is_terminal()
        .then(|| progress::spinner("export"));
    let done = || {
        if let Some(bar) = &bar {
            bar.finish_and_clear();
        }
    };
    let exported = match format {
        TraceFormat::Pftrace => schedlab_export::pftrace::export_run(
            &tables, &run_id, &out, &interrupt,
        )
        .map(|summary| {
            done();
            print_pftrace_summary(&out, &run_id, &summary)
        }),
        TraceFormat::Json => schedlab_export::json::export_run(&tables, &run_id, &out, &interrupt)
            .map(|summary| {
                done();
                print_json_summary(&out, &run_id, &summary)
            }),
    };
    done();
    match exported {
        Err(schedlab_export::ExportError::Interrupted) => Ok(ExitCode::from(EXIT_INTERRUPTED)),
        result => {
            result?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// What `export perfetto` wrote, in Perfetto's protobuf trace.
fn print_pftrace_summary(
    out: &Path,
    run_id: &str,
    summary: &schedlab_export::pftrace::PftraceSummary,
) {
    println!(
        "{}: run {run_id}: {} sched_switch, {} wakeups, {} migrations, {} exits, {} cpu_frequency, \
         {} cpu_idle, {} sched_stat_runtime (one per thread and CPU, at its last update: the \
         kernel's summed CPU time, not its events), {} processes and {} threads, {} counter \
         values, {} workloads ({:.1} MiB); open it in ui.perfetto.dev",
        out.display(),
        summary.switches,
        summary.wakeups,
        summary.migrations,
        summary.exits,
        summary.cpu_frequency,
        summary.cpu_idle,
        summary.runtime_sums,
        summary.processes,
        summary.threads,
        summary.counters,
        summary.workloads,
        summary.bytes as f64 / (1 << 20) as f64,
    );
    if summary.unknown_states > 0 {
        eprintln!(
            "export: slices whose prev_state is not a Linux 4.14+ state, written without one: {}",
            summary.unknown_states
        );
    }
}

/// What `export perfetto --format json` wrote.
fn print_json_summary(out: &Path, run_id: &str, summary: &schedlab_export::json::ExportSummary) {
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
}
