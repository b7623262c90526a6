//! The parse stage of one run: its manifest and raw files into its partition of every table
//! (`tables/<table>/run_id=<run>/`). The runner parses runs in parallel (rayon) and only the
//! runs that are new or changed. A run's event rows (perf traces: millions of rows) stream into
//! their files while the trace is read; everything else a run yields is small and gathered in
//! memory.

use std::path::PathBuf;

use schedlab_parse::{
    EventTables, ParseContext, Parsed, ParserKind, Select, WorkloadSelector, parse_file_streaming,
};
use schedlab_spec::Plan;
use schedlab_tables::manifest::{Imported, Manifest, MonitorStatus};
use schedlab_tables::periodic_report::Report;
use schedlab_tables::sched_config::settings_text;
use schedlab_tables::{
    CpuFreqIdleRow, CpuRow, CpuSampleRow, MigrationRow, Partition, PlacementRow, ProcessRow,
    QualityRow, RunRow, SchedSliceRow, Severity, Table, ThreadRow, WakeupRow, table_path,
    write_table,
};
use schedlab_topology::format_cpu_list;

use crate::RunnerError;

/// A collected run on disk.
#[derive(Debug, Clone)]
pub struct CollectedRun {
    pub dir: PathBuf,
    pub manifest: Manifest,
}

/// Everything one run contributes to the tables.
#[derive(Default)]
struct RunTables {
    parsed: Parsed,
    runs: Vec<RunRow>,
    cpus: Vec<CpuRow>,
    processes: Vec<ProcessRow>,
    placement: Vec<PlacementRow>,
    cpu_samples: Vec<CpuSampleRow>,
}

/// Parses one run into `dest`, its partition of every table; returns the files written. Every
/// table is written, empty or not, so that a reader's glob over a table's partitions always
/// finds every run. The event rows stream into their files while the trace is read.
pub fn parse_run_into(
    run: &CollectedRun,
    plan: &Plan,
    dest: Partition<'_>,
) -> Result<Vec<PathBuf>, RunnerError> {
    let events = EventTables::create(&dest)?;
    let tables = parse_run(run, plan, &events)?;
    events.finish()?;
    let mut written = vec![
        table_path::<SchedSliceRow>(&dest),
        table_path::<MigrationRow>(&dest),
        table_path::<WakeupRow>(&dest),
        table_path::<CpuFreqIdleRow>(&dest),
    ];
    written.extend(tables.parsed.write_to(&dest, &ParserKind::ALL)?);
    written.push(write_table(&dest, &tables.runs)?);
    written.push(write_table(&dest, &tables.cpus)?);
    written.push(write_table(&dest, &tables.processes)?);
    written.push(write_table(&dest, &tables.placement)?);
    written.push(write_table(&dest, &tables.cpu_samples)?);
    written.sort();
    written.dedup();
    Ok(written)
}

/// Parses one run; its event rows go to `events`, everything else is returned.
fn parse_run(
    run: &CollectedRun,
    plan: &Plan,
    events: &EventTables,
) -> Result<RunTables, RunnerError> {
    let topology = &plan.topology;
    let m = &run.manifest;
    let run_id = m.run_id.clone();
    let mut out = RunTables::default();
    let mut cpus = m.host.cpus.clone();
    if cpus.is_empty() && m.imported.is_some() {
        // An import with no trace header to list the CPUs (timehist text, a salvaged perf.data):
        // the pipeline's declaration is all that is known of them.
        cpus = schedlab_topology::declared_cpus(topology);
    }
    schedlab_topology::apply_declared(&mut cpus, topology).map_err(|err| {
        RunnerError::Topology {
            run_id: run_id.clone(),
            message: err.to_string(),
        }
    })?;
    let order = schedlab_topology::class_order(&cpus, topology);
    let rank = |class: &str| (order.iter().position(|c| c == class)).map(|r| r as i32);
    out.cpus = cpus
        .into_iter()
        .map(|c| CpuRow {
            run_id: run_id.clone(),
            cpu: c.cpu as i32,
            core_id: c.core_id,
            package_id: c.package_id,
            class_rank: rank(&c.class),
            class: c.class,
            class_source: c.class_source,
            capacity: c.capacity,
            max_khz: c.max_khz,
        })
        .collect();

    let workloads: Vec<WorkloadSelector> = match &m.imported {
        Some(imported) => crate::import::selectors_now(imported, &plan.import),
        None => (m.processes.iter())
            .map(|p| WorkloadSelector::tree(p.pid, &p.workload))
            .collect(),
    };
    for p in &m.processes {
        out.processes.push(ProcessRow {
            run_id: run_id.clone(),
            workload: p.workload.clone(),
            instance: p.instance,
            pid: p.pid,
            start_ns: p.start_ns,
            end_ns: p.end_ns,
            exit_code: p.exit_code,
            nice: p.nice,
            affinity: p.cpus.as_deref().map(format_cpu_list),
            argv: p.argv.clone(),
        });
        if let Some(report) = &p.report {
            match Report::read(&run.dir.join(report)) {
                Ok(report) => out.parsed.workload_metrics.extend(report.metrics(
                    &run_id,
                    &p.workload,
                    p.instance,
                )),
                Err(message) => out.parsed.quality.push(quality(
                    &run_id,
                    &p.workload,
                    Severity::Warning,
                    message,
                )),
            }
        }
        if let Some(kind) = p.parse.as_deref().and_then(ParserKind::from_name) {
            let ctx = ParseContext {
                run_id: run_id.clone(),
                workload: Some(p.workload.clone()),
                instance: p.instance,
                start_ns: Some(p.start_ns),
                end_ns: p.end_ns,
                workloads: workloads.clone(),
                ..ParseContext::default()
            };
            // Tools print their results to stdout, some (openssl's "Doing …" lines, time -v) to
            // stderr: both are read, each on its own, and named as the manifest names them. A
            // file the collector did not leave reads as empty, which the error then says.
            let stdout = std::fs::read(run.dir.join(&p.stdout)).unwrap_or_default();
            let stderr = std::fs::read(run.dir.join(&p.stderr)).unwrap_or_default();
            let outputs = [
                (p.stdout.as_str(), &stdout[..]),
                (p.stderr.as_str(), &stderr[..]),
            ];
            match schedlab_parse::parse_outputs(kind, &outputs, &ctx) {
                Ok(mut parsed) => {
                    events.take_from(&mut parsed);
                    out.parsed.extend(parsed)
                }
                Err(err) => out.parsed.quality.push(quality(
                    &run_id,
                    kind.name(),
                    Severity::Error,
                    err.to_string(),
                )),
            }
        }
    }

    for monitor in m
        .monitors
        .iter()
        .filter(|mon| mon.status == MonitorStatus::Ran)
    {
        // The built-in samplers write their tables themselves; the other monitors are parsed.
        match monitor.kind.as_str() {
            "placement" => {
                out.placement.extend(sampled_rows(run, &monitor.files)?);
                continue;
            }
            "cpu" => {
                out.cpu_samples.extend(sampled_rows(run, &monitor.files)?);
                continue;
            }
            _ => {}
        }
        let Some(kind) = monitor.parse.as_deref().and_then(ParserKind::from_name) else {
            continue;
        };
        let Some(file) = monitor.files.first() else {
            continue;
        };
        let ctx = ParseContext {
            run_id: run_id.clone(),
            start_ns: monitor.start_ns,
            end_ns: monitor.end_ns,
            workloads: workloads.clone(),
            ..ParseContext::default()
        };
        match parse_file_streaming(kind, &run.dir.join(file), &ctx, events) {
            Ok(parsed) => out.parsed.extend(parsed),
            Err(err) => out.parsed.quality.push(quality(
                &run_id,
                &monitor.name,
                Severity::Error,
                err.to_string(),
            )),
        }
    }
    if let Some(imported) = &m.imported {
        parse_imported(run, imported, &workloads, events, &mut out);
    }
    // An imported run's length is its trace's, where it has one.
    let duration_ns = match (&m.imported, out.parsed.traces.first()) {
        (Some(_), Some(trace)) => trace.last_ns.zip(trace.first_ns).map_or(0, |(l, f)| l - f),
        _ => m.end_ns - m.start_ns,
    };
    // The run's row, now that its trace (if any) said where every CPU has data.
    out.runs.push(RunRow {
        run_id: run_id.clone(),
        pipeline: m.pipeline.clone(),
        label: m.label.clone(),
        variant: schedlab_spec::variant_text(&m.variant),
        repetition: m.repetition,
        host: m.host.hostname.clone(),
        kernel: m.host.kernel.clone(),
        cpu_model: m.host.cpu_model.clone(),
        started_at: m.started_at.clone(),
        status: m.status,
        duration_ns,
        trace_window_start_ns: out.parsed.trace_window.map(|w| w.0),
        trace_window_end_ns: out.parsed.trace_window.map(|w| w.1),
        kernel_build: m.host.sched_config.as_ref().map(|c| c.kernel_build.clone()),
        kernel_config_digest: (m.host.sched_config.as_ref())
            .and_then(|c| c.kernel_config.as_ref())
            .map(|k| k.blake3.clone()),
        sched_config: m.host.sched_settings().map(|s| settings_text(&s)),
        imported: m.imported.is_some(),
    });

    out.parsed.quality.extend(
        m.notes
            .iter()
            .map(|n| quality(&run_id, &n.source, n.severity, n.message.clone())),
    );
    Ok(out)
}

/// Parses the files of an imported run, then gives each workload a process row whose lifetime
/// is its threads' span in the trace (fork to exit where recorded, else first to last time on a
/// CPU), and says in `quality` what the import could not know.
fn parse_imported(
    run: &CollectedRun,
    imported: &Imported,
    workloads: &[WorkloadSelector],
    events: &EventTables,
    out: &mut RunTables,
) {
    let run_id = &run.manifest.run_id;
    for file in &imported.files {
        let Some(kind) = ParserKind::from_name(&file.kind) else {
            continue;
        };
        let (workload, unclear) = crate::import::owner_now(kind, file, workloads);
        if let Some(unclear) = unclear {
            let message = format!("imported: {unclear}");
            (out.parsed.quality).push(quality(run_id, "import", Severity::Warning, message));
        }
        let ctx = ParseContext {
            run_id: run_id.clone(),
            workload,
            workloads: workloads.to_vec(),
            salvage: imported.salvage,
            ..ParseContext::default()
        };
        match parse_file_streaming(kind, &run.dir.join(&file.path), &ctx, events) {
            Ok(parsed) => out.parsed.extend(parsed),
            Err(err) => out.parsed.quality.push(quality(
                run_id,
                kind.name(),
                Severity::Error,
                err.to_string(),
            )),
        }
    }
    let traced = !out.parsed.traces.is_empty() || !out.parsed.threads.is_empty();
    let mut named: Vec<&str> = Vec::new();
    for selector in workloads {
        let name = selector.workload.as_str();
        if named.contains(&name) {
            continue;
        }
        named.push(name);
        let threads: Vec<&ThreadRow> = (out.parsed.threads.iter())
            .filter(|t| t.workload.as_deref() == Some(name))
            .collect();
        match lifetime(&threads) {
            Some(span) => {
                let pid = match selector.select {
                    Select::Pid(pid) | Select::Tree(pid) => pid,
                    Select::Comm(_) => span.first_pid,
                };
                out.processes.push(ProcessRow {
                    run_id: run_id.clone(),
                    workload: name.to_owned(),
                    instance: 0,
                    pid,
                    start_ns: span.start_ns,
                    end_ns: Some(span.end_ns),
                    exit_code: None,
                    nice: 0,
                    affinity: None,
                    argv: Vec::new(),
                });
                out.parsed.quality.push(quality(
                    run_id,
                    name,
                    Severity::Info,
                    format!(
                        "imported: the lifetime of workload `{name}` ({}, {} thread(s)) is \
                         its threads' span in the trace: {} (no process start and end times \
                         were recorded)",
                        selector.select,
                        threads.len(),
                        span.how
                    ),
                ));
            }
            None if traced => out.parsed.quality.push(quality(
                run_id,
                name,
                Severity::Warning,
                format!(
                    "imported: no thread of the trace is selected by `{}` for workload \
                     `{name}`, so its per-workload figures are empty (hint: `perf sched \
                     timehist` lists the command names and pids the trace holds)",
                    selector.select
                ),
            )),
            None => {}
        }
    }
    for unknown in &imported.unknown {
        out.parsed.quality.push(quality(
            run_id,
            "import",
            Severity::Info,
            format!("imported: {unknown}"),
        ));
    }
}

/// A workload's span in a trace, from its threads.
struct Lifetime {
    start_ns: i64,
    end_ns: i64,
    /// The process id of the thread seen first.
    first_pid: i32,
    /// How the span was found, in words.
    how: &'static str,
}

/// The span from the first thread's fork (or first time on a CPU) to the last one's exit or last
/// time on a CPU, whichever is later (a thread still runs after its exit event, until it
/// switches out for the last time); `None` when no thread ran.
fn lifetime(threads: &[&ThreadRow]) -> Option<Lifetime> {
    let starts = (threads.iter())
        .filter_map(|t| Some((t.start_ns.into_iter().chain(t.first_run_ns).min()?, t.pid)));
    let (start_ns, first_pid) = starts.min()?;
    let ends = threads
        .iter()
        .flat_map(|t| t.end_ns.into_iter().chain(t.last_run_ns));
    let end_ns = ends.max()?;
    let forks = threads.iter().any(|t| t.start_ns.is_some());
    let exits = threads.iter().any(|t| t.end_ns.is_some());
    let how = match (forks, exits) {
        (true, true) => "from the first fork to the last exit recorded",
        (true, false) => "from the first fork recorded to the last time on a CPU",
        (false, true) => "from the first time on a CPU to the last exit recorded",
        (false, false) => "from the first to the last time on a CPU",
    };
    Some(Lifetime {
        start_ns,
        end_ns,
        first_pid,
        how,
    })
}

/// The rows a built-in sampler wrote into the run's raw files.
fn sampled_rows<T: Table>(run: &CollectedRun, files: &[String]) -> Result<Vec<T>, RunnerError> {
    let mut rows = Vec::new();
    for file in files {
        rows.extend(schedlab_tables::read_rows::<T>(&run.dir.join(file))?);
    }
    Ok(rows)
}

fn quality(run_id: &str, source: &str, severity: Severity, message: String) -> QualityRow {
    QualityRow {
        run_id: run_id.to_owned(),
        source: source.to_owned(),
        severity,
        message,
        time_ns: None,
        cpu: None,
    }
}
