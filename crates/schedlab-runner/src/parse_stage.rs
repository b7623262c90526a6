//! The parse stage of one run: its manifest and raw files into its partition of every table
//! (`tables/<table>/run_id=<run>/`). The runner parses runs in parallel (rayon) and only the
//! runs that are new or changed. A run's event rows (perf traces: millions of rows) stream into
//! their files while the trace is read; everything else a run yields is small and gathered in
//! memory.

use std::path::PathBuf;

use schedlab_parse::{EventTables, ParseContext, Parsed, ParserKind, parse_file_streaming};
use schedlab_tables::manifest::{Manifest, MonitorStatus};
use schedlab_tables::periodic_report::Report;
use schedlab_tables::sched_config::settings_text;
use schedlab_tables::{
    CpuRow, CpuSampleRow, MigrationRow, Partition, PlacementRow, ProcessRow, QualityRow, RunRow,
    SchedSliceRow, Severity, Table, WakeupRow, table_path, write_table,
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
    topology: &[(String, Vec<u32>)],
    dest: Partition<'_>,
) -> Result<Vec<PathBuf>, RunnerError> {
    let events = EventTables::create(&dest)?;
    let tables = parse_run(run, topology, &events)?;
    events.finish()?;
    let mut written = vec![
        table_path::<SchedSliceRow>(&dest),
        table_path::<MigrationRow>(&dest),
        table_path::<WakeupRow>(&dest),
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
    topology: &[(String, Vec<u32>)],
    events: &EventTables,
) -> Result<RunTables, RunnerError> {
    let m = &run.manifest;
    let run_id = m.run_id.clone();
    let mut out = RunTables::default();
    let mut cpus = m.host.cpus.clone();
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

    let workload_pids: Vec<(i32, String)> = m
        .processes
        .iter()
        .map(|p| (p.pid, p.workload.clone()))
        .collect();
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
                workload_pids: workload_pids.clone(),
                ..ParseContext::default()
            };
            // Tools print their results to stdout, some (openssl's "Doing …" lines, time -v) to
            // stderr: parse both, as one would read the terminal.
            let mut text = std::fs::read(run.dir.join(&p.stdout)).unwrap_or_default();
            text.extend(std::fs::read(run.dir.join(&p.stderr)).unwrap_or_default());
            let name = run.dir.join(&p.stdout).display().to_string();
            match schedlab_parse::parse(kind, &name, &text, &ctx) {
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
            workload_pids: workload_pids.clone(),
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
        duration_ns: m.end_ns - m.start_ns,
        trace_window_start_ns: out.parsed.trace_window.map(|w| w.0),
        trace_window_end_ns: out.parsed.trace_window.map(|w| w.1),
        kernel_build: m.host.sched_config.as_ref().map(|c| c.kernel_build.clone()),
        kernel_config_digest: (m.host.sched_config.as_ref())
            .and_then(|c| c.kernel_config.as_ref())
            .map(|k| k.blake3.clone()),
        sched_config: m.host.sched_settings().map(|s| settings_text(&s)),
    });

    out.parsed.quality.extend(
        m.notes
            .iter()
            .map(|n| quality(&run_id, &n.source, n.severity, n.message.clone())),
    );
    Ok(out)
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
