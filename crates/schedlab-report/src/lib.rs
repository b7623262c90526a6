//! Aggregates into reports: the per-thread summary a user reads first.
//!
//! # Brief overview
//!
//! [`summarize`] reads `aggregates/` (and, for what aggregation does not cover, the
//! `workload_metrics` and `quality` tables), renders one [`Summary`] per pipeline and writes it
//! where [`ReportPaths`] says (`report/summary.md`); the same Markdown table is what the
//! terminal shows. Every table goes through one printer ([`table`]), which escapes cell text.
//! [`plot_run`] draws a run's SVG plots (each with a PNG beside it, for articles); `index.html`
//! carries the SVGs inline, one file that reads offline. [`comparison_page`] does the same for `schedlab compare`.
//!
//! # Key design decision
//!
//! A report never recomputes a figure: it formats aggregate rows. If a number in a report looks
//! wrong, the place to look is the aggregate table it came from.

mod activity;
mod bar_plots;
mod busiest;
mod comparison;
mod comparison_plot;
mod delay_plot;
mod expectations;
mod html;
mod plots;
mod png;
mod share;
mod style;
mod table;
mod timeplots;
mod why;
mod workers;

pub use comparison::{comparison_table, runs_needed_table};
pub use expectations::expectations_table;

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use schedlab_spec::{PlotKind, ReportFormat, Summarize};
use schedlab_tables::manifest::RunStatus;
use schedlab_tables::{
    BusiestThreadRow, CpuActivityRow, CpuRow, CpuShareRow, CpuTimeRow, MigrationClassRow,
    MigrationSummaryRow, PlacementCostWorkloadRow, PlacementRow, PowerStepRow, ProcessRow,
    QualityRow, ResidencyRollupRow, ResidencyRow, RunRow, SchedDelayRow, SchedDelayWorkloadRow,
    Severity, TableDir, TableError, ThroughputRow, TotalsRow, TraceRow, WorkloadMetricRow,
    read_table,
};
use schedlab_topology::parse_cpu_list;

use table::{Align, Table, escape};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    #[error(transparent)]
    Table(#[from] TableError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("run {run_id}: {message}")]
    Plot { run_id: String, message: String },
    #[error("comparison chart: {message}")]
    Chart { message: String },
}

/// The parse stage's tables a summary reads besides `aggregates/` (the runner fingerprints
/// them): workload figures, quality notes, the processes of the per-worker table, the CPUs'
/// classes "Why here?" names, and the runs' statuses.
pub const TABLES_READ: [&str; 5] = ["workload_metrics", "quality", "processes", "cpus", "runs"];

/// What [`plot_run`] draws a run's plots from: its partitions of these tables and aggregates
/// (the runner fingerprints them per run, so only a changed run's plots are drawn again).
pub const PLOTS_READ: [&str; 15] = [
    "cpus",
    "traces",
    "sched_slices",
    "placement",
    "residency_rollup",
    "cpu_timeline",
    "turbostat",
    "cpu_samples",
    "processes",
    "power_step",
    "migrations",
    "sched_delay_cdf",
    "cpu_activity_intervals",
    "cpu_freq_idle",
    "cpu_share",
];

/// The plots of a run, in the order the page shows them: the `plots:` kinds (`cpu_timeline`,
/// `residency`), and those the HTML page always draws where the data exists.
const PLOT_ORDER: [&str; 7] = [
    "activity",
    "cpu_timeline",
    "migrations",
    "sched_delay",
    "residency",
    "class_residency",
    "cpu_share",
];

/// The rendered summary.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The per-thread table, Markdown (readable as plain text in a terminal).
    pub table: String,
    /// The other parts, in order, each under its `## heading`, for the aggregates the pipeline
    /// computed: CPU activity (turbostat), per worker, CPUs received per phase, package power.
    pub sections: Vec<String>,
    /// Quality warnings, one line each.
    pub warnings: Vec<String>,
    /// The runs that did not complete and their statuses, in one line (plain text), when any
    /// did not: what to read before any figure.
    pub not_completed: Option<String>,
    /// Every file written under `report/`.
    pub written: Vec<PathBuf>,
}

/// A part of the summary after the per-thread table.
struct Section {
    heading: &'static str,
    /// One line on what the part shows.
    intro: String,
    body: String,
}

/// Where a report's files go. The runner's layout implements it: only the layout knows where
/// files live, so the report names no file itself.
pub trait ReportPaths: Sync {
    /// The Markdown summary.
    fn summary_md(&self) -> PathBuf;
    /// The HTML page, which carries the plots inline.
    fn index_html(&self) -> PathBuf;
    /// The SVG of the plot `kind` (`activity`, `cpu_timeline`, `migrations`, `sched_delay`,
    /// `residency`) of run `run_id`: drawn per run, so that only a changed run is drawn again,
    /// and put into the page.
    fn plot_svg(&self, kind: &str, run_id: &str) -> PathBuf;
}

/// Where the summary reads from and writes to.
pub struct SummaryPaths<'a> {
    pub tables: &'a Path,
    pub aggregates: &'a Path,
    pub report: &'a dyn ReportPaths,
}

/// The rows a summary formats.
struct Inputs {
    cpu_time: Vec<CpuTimeRow>,
    busiest: Vec<BusiestThreadRow>,
    residency: Vec<ResidencyRow>,
    residency_rollup: Vec<ResidencyRollupRow>,
    totals: Vec<TotalsRow>,
    migrations: Vec<MigrationSummaryRow>,
    delays: Vec<SchedDelayRow>,
    metrics: Vec<WorkloadMetricRow>,
    quality: Vec<QualityRow>,
    cpu_activity: Vec<CpuActivityRow>,
    cpu_share: Vec<CpuShareRow>,
    throughput: Vec<ThroughputRow>,
    processes: Vec<ProcessRow>,
    power_steps: Vec<PowerStepRow>,
    placement_cost_workloads: Vec<PlacementCostWorkloadRow>,
    migration_classes: Vec<MigrationClassRow>,
    delay_workloads: Vec<SchedDelayWorkloadRow>,
    cpus: Vec<CpuRow>,
    runs: Vec<RunRow>,
    /// Whether the pipeline computed `placement_cost` (its dataset exists, rows or not).
    asked_placement_cost: bool,
}

impl Inputs {
    /// Reads every table the summary formats; a table the pipeline did not produce reads as
    /// empty.
    fn read(paths: &SummaryPaths<'_>) -> Result<Inputs, ReportError> {
        Ok(Inputs {
            cpu_time: read_table(paths.aggregates)?,
            busiest: read_table(paths.aggregates)?,
            residency: read_table(paths.aggregates)?,
            residency_rollup: read_table(paths.aggregates)?,
            totals: read_table(paths.aggregates)?,
            migrations: read_table(paths.aggregates)?,
            delays: read_table(paths.aggregates)?,
            metrics: read_table(paths.tables)?,
            quality: read_table(paths.tables)?,
            cpu_activity: read_table(paths.aggregates)?,
            cpu_share: read_table(paths.aggregates)?,
            throughput: read_table(paths.aggregates)?,
            processes: read_table(paths.tables)?,
            power_steps: read_table(paths.aggregates)?,
            placement_cost_workloads: read_table(paths.aggregates)?,
            migration_classes: read_table(paths.aggregates)?,
            delay_workloads: read_table(paths.aggregates)?,
            cpus: read_table(paths.tables)?,
            runs: read_table(paths.tables)?,
            asked_placement_cost: !(paths.aggregates)
                .files_of(<PlacementCostWorkloadRow as schedlab_tables::Table>::NAME)?
                .is_empty(),
        })
    }
}

fn ms(ns: f64) -> String {
    format!("{:.3} ms", ns / 1e6)
}

/// `143 (start-up 25, steady 118, every 0.509 s, 2.4/s)`: seed page 4's split, when the
/// pipeline set a start-up window; the mean interval between steady-state migrations when there
/// are two; the rate over the thread's lifetime (seed page 8: 16.5/s).
fn migration_cell(m: &MigrationSummaryRow) -> String {
    let mut parts = Vec::new();
    if m.startup_migrations > 0 {
        parts.push(format!("start-up {}", m.startup_migrations));
        parts.push(format!("steady {}", m.steady_migrations));
    }
    if let Some(interval) = m.steady_interval_mean_ns {
        parts.push(format!("every {:.3} s", interval / 1e9));
    }
    if let Some(rate) = m.per_second.filter(|&r| r > 0.0) {
        parts.push(format!("{rate:.1}/s"));
    }
    if parts.is_empty() {
        m.migrations.to_string()
    } else {
        format!("{} ({})", m.migrations, parts.join(", "))
    }
}

/// One line per run: the step in package power, or that there was none (Markdown).
fn power_lines(steps: &[PowerStepRow]) -> Option<String> {
    if steps.is_empty() {
        return None;
    }
    let mut out = String::new();
    for s in steps {
        let from = match &s.reference {
            Some(workload) => format!("after {} started", escape(workload)),
            None => "after the run's first start".to_owned(),
        };
        let change = match s.step_pct {
            Some(pct) => format!("{pct:+.1} %"),
            None => format!("{:+.2} W", s.step_watt),
        };
        let (run_id, source) = (escape(&s.run_id), escape(&s.source));
        let line = if s.significant {
            format!(
                "{run_id}: package power went from {:.2} W to {:.2} W ({change}) {:.1} s {from} \
                 (to the sampling interval; {source})",
                s.before_watt, s.after_watt, s.after_start_s
            )
        } else {
            format!(
                "{run_id}: no step in package power (the largest, {change} at {:.1} s {from}, is \
                 within its levels' spread; {source})",
                s.after_start_s
            )
        };
        writeln!(out, "- {line}").expect("writing to a String");
    }
    Some(out)
}

/// `1: 71.2%, 0: 28.8%`: each part's share, in the order given.
fn percent_list<K: std::fmt::Display>(parts: impl Iterator<Item = (K, f64)>) -> String {
    let parts: Vec<String> = parts
        .map(|(key, share)| format!("{key}: {:.1}%", share * 100.0))
        .collect();
    parts.join(", ")
}

/// A workload with more threads than this in a run (a kernel build's compiler processes) gets
/// one line in the summary for all of them instead of one per thread.
const MAX_THREAD_LINES: i64 = 16;

/// `sched (1234 events lost)`: a figure over a span where perf lost events is flagged where it
/// is read.
fn source_cell(source: &str, lost_events: Option<i64>) -> String {
    match lost_events.filter(|&lost| lost > 0) {
        Some(lost) => format!("{source} ({lost} events lost)"),
        None => source.to_owned(),
    }
}

/// ` (kernel)`, ` (/proc)`: which figure a traced thread's CPU time is, where it is not its
/// slices; slices that ran on an idle-blind CPU say so, since they are too long there. Empty for
/// plain slices, and for a run without a trace (its `source` says /proc already).
fn headline_note(row: &CpuTimeRow) -> String {
    match row.headline.as_str() {
        _ if row.source == "placement" => String::new(),
        "kernel" => " (kernel)".to_owned(),
        "proc" => " (/proc)".to_owned(),
        _ if !row.idle_blind_cpus.is_empty() => format!(
            " (slices, too high: the idle of cpu {} is not traced)",
            row.idle_blind_cpus
        ),
        _ => String::new(),
    }
}

/// The per-thread table's shares of one thread or workload: per CPU, the largest first, and
/// per class. `per_cpu` comes in CPU order, `per_class` in class order.
fn share_cells<'a>(
    per_cpu: impl Iterator<Item = (i32, f64)>,
    per_class: impl Iterator<Item = (&'a str, f64)>,
) -> [String; 2] {
    let mut per_cpu: Vec<(i32, f64)> = per_cpu.collect();
    per_cpu.sort_by(|a, b| b.1.total_cmp(&a.1));
    [percent_list(per_cpu.into_iter()), percent_list(per_class)]
}

/// The per-thread table: a line per thread, and one per workload with more than
/// [`MAX_THREAD_LINES`] threads in a run.
fn thread_table(inputs: &Inputs) -> String {
    let mut table = Table::new(&[
        ("run", Align::Left),
        ("workload", Align::Left),
        ("tid", Align::Left),
        ("comm", Align::Left),
        ("CPU time / seen for", Align::Right),
        ("CPU share", Align::Left),
        ("class share", Align::Left),
        ("migrations", Align::Right),
        ("sched delay mean / max", Align::Left),
        ("lateness mean / max", Align::Left),
        ("source", Align::Left),
    ]);
    let rolled_up: Vec<&TotalsRow> = (inputs.totals.iter())
        .filter(|t| t.scope == "workload" && t.cpu_time_ns.is_some())
        .filter(|t| t.threads > MAX_THREAD_LINES)
        .collect();
    thread_lines(inputs, &rolled_up, &mut table);
    rollup_lines(inputs, &rolled_up, &mut table);
    table.markdown()
}

/// A line per thread of the workloads not `rolled_up`.
fn thread_lines(inputs: &Inputs, rolled_up: &[&TotalsRow], table: &mut Table) {
    type Key<'a> = (&'a str, i32);
    let mut cpus: BTreeMap<Key<'_>, Vec<(i32, f64)>> = BTreeMap::new();
    for r in &inputs.residency {
        let key = (r.run_id.as_str(), r.tid);
        cpus.entry(key).or_default().push((r.cpu, r.share));
    }
    let mut classes: BTreeMap<Key<'_>, Vec<(&str, f64)>> = BTreeMap::new();
    for r in inputs
        .residency_rollup
        .iter()
        .filter(|r| r.scope == "thread")
    {
        if let Some(tid) = r.tid {
            let key = (r.run_id.as_str(), tid);
            classes.entry(key).or_default().push((&r.class, r.share));
        }
    }
    let migrations: BTreeMap<Key<'_>, &MigrationSummaryRow> = (inputs.migrations.iter())
        .map(|m| ((m.run_id.as_str(), m.tid), m))
        .collect();
    let delays: BTreeMap<Key<'_>, &SchedDelayRow> = (inputs.delays.iter())
        .map(|d| ((d.run_id.as_str(), d.tid), d))
        .collect();
    let mut lateness: BTreeMap<Key<'_>, (f64, f64)> = BTreeMap::new();
    for m in inputs.metrics.iter().filter(|m| m.tool == "periodic") {
        let Some(tid) = m.tid else { continue };
        let entry = lateness.entry((&m.run_id, tid)).or_default();
        match m.metric.as_str() {
            "lateness_mean" => entry.0 = m.value,
            "lateness_max" => entry.1 = m.value,
            _ => {}
        }
    }
    let is_rolled_up = |row: &CpuTimeRow| {
        (rolled_up.iter()).any(|t| t.run_id == row.run_id && t.workload == row.workload)
    };
    for row in inputs.cpu_time.iter().filter(|row| !is_rolled_up(row)) {
        let key = (row.run_id.as_str(), row.tid);
        let [on_cpus, on_classes] = share_cells(
            cpus.get(&key).into_iter().flatten().copied(),
            classes.get(&key).into_iter().flatten().copied(),
        );
        let migrations = (migrations.get(&key)).map_or("–".into(), |m| migration_cell(m));
        let delay = (delays.get(&key))
            .and_then(|d| Some(format!("{} / {}", ms(d.mean_ns?), ms(d.max_ns? as f64))))
            .unwrap_or_else(|| "–".into());
        let late = lateness.get(&key).map_or("–".into(), |(mean, max)| {
            format!("{} / {}", ms(*mean), ms(*max))
        });
        // A figure that /proc contradicts is flagged where it is read.
        let mut source = source_cell(&row.source, row.lost_events);
        if let (Some(true), Some(proc_ns), Some(trace_ns)) = (
            row.trace_exceeds_proc,
            row.proc_check_ns,
            row.trace_check_ns,
        ) {
            source.push_str(&format!(
                " (trace {:.2} s vs /proc {:.2} s of CPU)",
                trace_ns as f64 / 1e9,
                proc_ns as f64 / 1e9
            ));
        }
        table.row(vec![
            row.run_id.clone(),
            row.workload.clone(),
            row.tid.to_string(),
            row.comm.clone(),
            format!(
                "{:.3} s{} / {:.3} s",
                row.cpu_time_ns as f64 / 1e9,
                headline_note(row),
                row.wall_ns as f64 / 1e9
            ),
            on_cpus,
            on_classes,
            migrations,
            delay,
            late,
            source,
        ]);
    }
}

/// One line per run and workload for the threads of `rolled_up`: their CPU time, CPU and class
/// shares, and migrations together.
fn rollup_lines(inputs: &Inputs, rolled_up: &[&TotalsRow], table: &mut Table) {
    for t in rolled_up {
        let parts = (inputs.residency_rollup.iter())
            .filter(|r| r.scope == "workload" && r.run_id == t.run_id && r.workload == t.workload);
        let [on_cpus, on_classes] = share_cells(
            parts.clone().filter_map(|r| Some((r.cpu?, r.share))),
            parts
                .filter(|r| r.cpu.is_none())
                .map(|r| (r.class.as_str(), r.share)),
        );
        // Its threads' figures that are not their slices, said once: `(kernel)`.
        let mut notes: Vec<String> = (inputs.cpu_time.iter())
            .filter(|c| c.run_id == t.run_id && c.workload == t.workload)
            .map(headline_note)
            .filter(|note| !note.is_empty())
            .collect();
        notes.sort();
        notes.dedup();
        table.row(vec![
            t.run_id.clone(),
            t.workload.clone(),
            "–".into(),
            format!("{} threads", t.threads),
            format!(
                "{:.3} s{}",
                t.cpu_time_ns.unwrap_or_default() as f64 / 1e9,
                notes.concat()
            ),
            on_cpus,
            on_classes,
            t.migrations.unwrap_or(0).to_string(),
            "–".into(),
            "–".into(),
            source_cell(&t.source, t.lost_events),
        ]);
    }
}

/// The quality notes worth a warning, one line per kind (severity, source and message) with the
/// runs it applies to, in the order they first appear: `r1, r2 [warning] turbostat: …`, each
/// part through `text` (escaped for Markdown, or as is).
fn warning_lines(quality: &[QualityRow], text: fn(&str) -> String) -> Vec<String> {
    let mut kinds: Vec<(&QualityRow, Vec<&str>)> = Vec::new();
    for q in quality.iter().filter(|q| q.severity != Severity::Info) {
        let same = |k: &QualityRow| {
            (k.severity, &k.source, &k.message) == (q.severity, &q.source, &q.message)
        };
        match kinds.iter_mut().find(|(k, _)| same(k)) {
            Some((_, runs)) if runs.contains(&q.run_id.as_str()) => {}
            Some((_, runs)) => runs.push(&q.run_id),
            None => kinds.push((q, vec![&q.run_id])),
        }
    }
    (kinds.into_iter())
        .map(|(q, runs)| {
            let runs: Vec<String> = runs.into_iter().map(text).collect();
            format!(
                "{} [{}] {}: {}",
                runs.join(", "),
                text(q.severity.as_str()),
                text(&q.source),
                text(&q.message)
            )
        })
        .collect()
}

/// The runs whose threads were aggregated from placement samples only, when the pipeline asked
/// for the figures that need a trace.
fn untraced_runs(inputs: &Inputs) -> Vec<&str> {
    if !inputs.asked_placement_cost {
        return Vec::new();
    }
    let mut runs: Vec<&str> = (inputs.cpu_time.iter())
        .filter(|c| c.source == "placement")
        .map(|c| c.run_id.as_str())
        .collect();
    runs.dedup();
    runs
}

/// The parts after the per-thread table, for the aggregates the pipeline computed.
fn sections(inputs: &Inputs) -> Vec<Section> {
    let parts = [
        (
            "Busiest threads",
            format!(
                "Runs whose trace names no workload (imported without `--workload`): their {} \
                 threads with the most CPU time, by the kernel's own accounting where the trace \
                 has it (`busiest_threads`). Name a workload to get its figures.",
                schedlab_tables::BUSIEST_THREADS
            ),
            busiest::busiest_table(&inputs.busiest),
        ),
        (
            "CPU activity (turbostat)",
            activity::activity_note(&inputs.cpu_activity),
            activity::activity_table(&inputs.cpu_activity),
        ),
        (
            "Per worker",
            "openssl's reported throughput, and the same operations over the process's wall time."
                .into(),
            workers::worker_table(&workers::WorkerInputs {
                throughput: &inputs.throughput,
                processes: &inputs.processes,
                residency: &inputs.residency_rollup,
                totals: &inputs.totals,
            }),
        ),
        (
            "CPUs received, per phase",
            "CPU time over the phase's length: before, during and after the reference workload."
                .into(),
            share::share_table(&inputs.cpu_share),
        ),
        (
            "Why here?",
            "Per workload: run time on a slower core class than its affinity allowed while a \
             faster CPU was idle or ran lower-priority work, waits while a CPU was idle, and \
             where wakeups put it (`placement_cost_workloads`, summed from `placement_cost` and \
             `wakeup_placement`)."
                .into(),
            why::why_lines(&why::WhyInputs {
                untraced_runs: &untraced_runs(inputs),
                workloads: &inputs.placement_cost_workloads,
                migrations: &inputs.migration_classes,
                delays: &inputs.delay_workloads,
                cpus: &inputs.cpus,
            }),
        ),
        (
            "Package power",
            "The largest step in package power, and whether it is a change of regime.".into(),
            power_lines(&inputs.power_steps),
        ),
    ];
    (parts.into_iter())
        .filter_map(|(heading, intro, body)| {
            Some(Section {
                heading,
                intro,
                body: body?,
            })
        })
        .collect()
}

/// `runs not completed: r1 workload-stopped, r2 failed (…)`, when a run did not complete.
fn not_completed(runs: &[RunRow]) -> Option<String> {
    let runs: Vec<String> = (runs.iter())
        .filter(|r| r.status != RunStatus::Completed)
        .map(|r| format!("{} {}", r.run_id, r.status))
        .collect();
    (!runs.is_empty()).then(|| {
        format!(
            "runs not completed: {} (a workload failed or was stopped before it ended by \
             itself, so their figures may cover only part of its work; the quality notes say \
             how each ended)",
            runs.join(", ")
        )
    })
}

/// The whole summary as `summary.md` has it.
fn markdown(
    pipeline: &str,
    table: &str,
    sections: &[Section],
    quality: &[QualityRow],
    not_completed: Option<&str>,
) -> String {
    let mut markdown = format!("# {}: summary\n\n", escape(pipeline));
    if let Some(line) = not_completed {
        writeln!(markdown, "**{}**\n", escape(line)).expect("writing to a String");
    }
    write!(markdown, "Per workload thread, per run.\n\n{table}").expect("writing to a String");
    for s in sections {
        write!(markdown, "\n## {}\n\n{}\n\n{}", s.heading, s.intro, s.body)
            .expect("writing to a String");
    }
    let warnings = warning_lines(quality, escape);
    if !warnings.is_empty() {
        markdown.push_str("\n## Quality\n\n");
        for line in warnings {
            writeln!(markdown, "- {line}").expect("writing to a String");
        }
    }
    markdown
}

/// Builds the summary and writes `summary.md` (and the plots and `index.html` the pipeline asks
/// for) atomically. `expectations` are the pipeline's `expect:` as the summarize stage judged
/// them (the first part after the per-thread table).
pub fn summarize(
    pipeline: &str,
    paths: &SummaryPaths<'_>,
    options: &Summarize,
    plots: &[(String, Vec<PathBuf>)],
    expectations: &[schedlab_tables::ExpectationRow],
) -> Result<Summary, ReportError> {
    let inputs = Inputs::read(paths)?;
    let table = if inputs.cpu_time.is_empty() && !inputs.busiest.is_empty() {
        "No run has a workload thread in its trace: its busiest threads are below.\n".to_owned()
    } else {
        thread_table(&inputs)
    };
    let mut sections = sections(&inputs);
    if let Some(body) = expectations_table(expectations) {
        let intro = "Each `expect:` entry per label: its figure in each run, the mean over the \
                     runs, and whether it holds in every run (`report/expectations.parquet`)."
            .to_owned();
        let heading = "Expectations";
        sections.insert(
            0,
            Section {
                heading,
                intro,
                body,
            },
        );
    }
    let not_completed = not_completed(&inputs.runs);
    let markdown = markdown(
        pipeline,
        &table,
        &sections,
        &inputs.quality,
        not_completed.as_deref(),
    );
    let summary_md = paths.report.summary_md();
    write_atomic(&summary_md, markdown.as_bytes())?;
    let mut written = vec![summary_md];
    if options.report.contains(&ReportFormat::Html) {
        let index = paths.report.index_html();
        let mut drawn = Vec::new();
        for (run_id, files) in plots {
            let mut svgs = Vec::new();
            for kind in PLOT_ORDER {
                let path = paths.report.plot_svg(kind, run_id);
                if files.contains(&path) {
                    let svg = std::fs::read_to_string(&path).map_err(|source| ReportError::Io {
                        path: path.clone(),
                        source,
                    })?;
                    svgs.push(svg);
                }
            }
            if !svgs.is_empty() {
                drawn.push((run_id.clone(), svgs));
            }
        }
        let page = html::page(&format!("{pipeline}: summary"), &markdown, &drawn);
        write_atomic(&index, page.as_bytes())?;
        written.push(index);
    }
    Ok(Summary {
        table,
        sections: (sections.into_iter())
            .map(|s| format!("## {}\n{}", s.heading, s.body))
            .collect(),
        warnings: warning_lines(&inputs.quality, str::to_owned),
        not_completed,
        written,
    })
}

/// Draws run `run_id`'s plots from its partitions of the tables and aggregates
/// ([`PLOTS_READ`]): the kinds `options.plots` asks for and, with an HTML report, the activity
/// over time, the migrations and the wakeup-delay CDF where the run has their data. Returns the
/// files written. One run at a time, so that drawing never holds more than one run's slices,
/// and the runner draws only the runs that changed.
pub fn plot_run(
    pipeline: &str,
    run_id: &str,
    tables: &(impl TableDir + ?Sized),
    aggregates: &(impl TableDir + ?Sized),
    options: &Summarize,
    report: &dyn ReportPaths,
) -> Result<Vec<PathBuf>, ReportError> {
    let html = options.report.contains(&ReportFormat::Html);
    let mut written = Vec::new();
    if options.plots.is_empty() && !html {
        return Ok(written);
    }
    let cpus: Vec<CpuRow> = read_table(tables)?;
    let cpus: Vec<&CpuRow> = cpus.iter().collect();
    let processes: Vec<ProcessRow> = read_table(tables)?;
    let lifetimes = timeplots::lifetimes(&processes.iter().collect::<Vec<_>>());
    let traces: Vec<TraceRow> = read_table(tables)?;
    // A list that does not parse marks nothing: the parse stage wrote it with the same syntax.
    let idle_blind = (traces.iter())
        .flat_map(|t| parse_cpu_list(&t.idle_blind_cpus).unwrap_or_default())
        .filter_map(|cpu| i32::try_from(cpu).ok());
    let run = plots::RunContext::new(&lifetimes).with_idle_blind(idle_blind);
    let mut drawn: Vec<Drawn> = Vec::new();
    for kind in &options.plots {
        drawn.push(match kind {
            PlotKind::CpuTimeline => {
                // Only what is drawn is read: the workloads' slices, and the stretches of
                // other tasks and of idle time beside a waiting workload.
                let (traced, names) = plots::traced_spans(tables, run.pixel_ns())?;
                let placement: Vec<PlacementRow> = read_table(tables)?;
                let placement: Vec<&PlacementRow> = placement.iter().collect();
                let spans = plots::occupancy(&traced, &names, &placement);
                let background = plots::background_spans(aggregates, run.pixel_ns())?;
                let title =
                    format!("{pipeline} {run_id}: which workload ran on each CPU, over time");
                let svg = plots::cpu_timeline(&title, &spans, &background, &cpus, &run);
                ("cpu_timeline", svg)
            }
            PlotKind::Residency => {
                let rows: Vec<ResidencyRollupRow> = read_table(aggregates)?;
                let rows: Vec<&ResidencyRollupRow> = rows.iter().collect();
                let title = format!("{pipeline} {run_id}: seconds each workload ran on each CPU");
                ("residency", plots::residency(&title, &rows, &cpus, &run))
            }
        });
    }
    if html {
        drawn.extend(page_plots(
            pipeline, run_id, tables, aggregates, &cpus, &lifetimes, &run,
        )?);
    }
    // Rasterized on rayon's threads: each plot is drawn alone, and the PNGs are most of the
    // time of a report.
    let files: Vec<Result<Vec<PathBuf>, ReportError>> = (drawn.into_par_iter())
        .map(|(name, svg)| {
            let failed = |message| ReportError::Plot {
                run_id: run_id.to_owned(),
                message,
            };
            let Some(svg) = svg.map_err(failed)? else {
                return Ok(Vec::new());
            };
            let path = report.plot_svg(name, run_id);
            let png = png::png_of(&svg).map_err(|message| failed(format!("{name}: {message}")))?;
            write_atomic(&path, svg.as_bytes())?;
            let png_path = path.with_extension("png");
            write_atomic(&png_path, &png)?;
            Ok(vec![path, png_path])
        })
        .collect();
    for plot in files {
        written.extend(plot?);
    }
    Ok(written)
}

/// A plot's kind and its SVG (`None`: no data for it), or why it could not be drawn.
type Drawn = (&'static str, Result<Option<String>, String>);

/// The plots an HTML page always has where the run has their data: activity over time (from
/// turbostat, else the `cpu` monitor, else a trace.dat's frequency and idle spans), the
/// workloads' migrations, their wakeup-delay CDF.
fn page_plots(
    pipeline: &str,
    run_id: &str,
    tables: &(impl TableDir + ?Sized),
    aggregates: &(impl TableDir + ?Sized),
    cpus: &[&CpuRow],
    lifetimes: &[timeplots::Lifetime],
    run: &plots::RunContext,
) -> Result<Vec<Drawn>, ReportError> {
    let workloads: Vec<String> = lifetimes.iter().map(|l| l.workload.clone()).collect();

    let turbostat = schedlab_tables::turbostat::read_turbostat(tables)?;
    let intervals: Vec<schedlab_tables::CpuActivityIntervalRow> = read_table(aggregates)?;
    let intervals: Vec<_> = intervals.iter().collect();
    let mut panels = timeplots::turbostat_panels(&turbostat, &intervals, cpus);
    if panels.is_empty() {
        let samples: Vec<schedlab_tables::CpuSampleRow> = read_table(tables)?;
        let samples: Vec<_> = samples.iter().collect();
        panels = timeplots::cpu_sample_panels(&samples, cpus);
    }
    if panels.is_empty() {
        let spans: Vec<schedlab_tables::CpuFreqIdleRow> = read_table(tables)?;
        let spans: Vec<_> = spans.iter().collect();
        panels = timeplots::freq_idle_panels(&spans, cpus);
    }
    let steps: Vec<PowerStepRow> = read_table(aggregates)?;
    timeplots::mark_power_step(&mut panels, &steps.iter().collect::<Vec<_>>());
    let title = format!("{pipeline} {run_id}: CPU activity over time");
    let activity = timeplots::activity(&title, &panels, lifetimes);

    let migrations: Vec<schedlab_tables::MigrationRow> = read_table(tables)?;
    let migrations: Vec<_> = migrations.iter().collect();
    let title = format!("{pipeline} {run_id}: workload migrations by class transition");
    let migrations = timeplots::migrations(&title, &migrations, cpus, lifetimes);

    let cdf: Vec<schedlab_tables::SchedDelayCdfRow> = read_table(aggregates)?;
    let cdf: Vec<_> = cdf.iter().collect();
    let title = format!("{pipeline} {run_id}: wakeup delay per workload (CDF)");
    let delays = delay_plot::delay_cdf(&title, &cdf, &workloads);

    let rollup: Vec<ResidencyRollupRow> = read_table(aggregates)?;
    let rollup: Vec<_> = rollup.iter().collect();
    let title = format!("{pipeline} {run_id}: each workload's CPU time by core class");
    let classes = bar_plots::class_residency(&title, &rollup, cpus);

    let share: Vec<schedlab_tables::CpuShareRow> = read_table(aggregates)?;
    let share: Vec<_> = share.iter().collect();
    let title = format!("{pipeline} {run_id}: CPUs each workload received, per phase");
    let share = bar_plots::cpu_share(&title, &share, run);
    Ok(vec![
        ("activity", activity),
        ("migrations", migrations),
        ("sched_delay", delays),
        ("class_residency", classes),
        ("cpu_share", share),
    ])
}

/// `schedlab compare`'s page: its Markdown (the configuration in force and the table) and a
/// chart per figure, each group's mean with its 95 % interval against the baseline's, inline as
/// index.html has its plots.
pub fn comparison_page(
    title: &str,
    markdown: &str,
    rows: &[schedlab_tables::ComparisonRow],
) -> Result<String, ReportError> {
    let charts = comparison_plot::comparison_charts(rows)
        .map_err(|message| ReportError::Chart { message })?;
    let plots = if charts.is_empty() {
        Vec::new()
    } else {
        vec![("Charts".to_owned(), charts)]
    };
    Ok(html::page(title, markdown, &plots))
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    let io = |source| ReportError::Io {
        path: path.to_owned(),
        source,
    };
    schedlab_tables::write_file_atomic(path, bytes).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warning_of_several_runs_is_one_line_naming_them() {
        let note = |run: &str, severity, message: &str| QualityRow {
            run_id: run.into(),
            source: "turbostat".into(),
            severity,
            message: message.into(),
            time_ns: None,
            cpu: Some(1),
        };
        let quality = [
            note("r1", Severity::Warning, "no MSR access"),
            note("r1", Severity::Info, "ran"),
            note("r2", Severity::Warning, "no MSR access"),
            note("r2", Severity::Warning, "no MSR access"),
            note("r2", Severity::Error, "exited 1"),
            note("r3", Severity::Warning, "no MSR access"),
        ];
        assert_eq!(
            warning_lines(&quality, str::to_owned),
            [
                "r1, r2, r3 [warning] turbostat: no MSR access",
                "r2 [error] turbostat: exited 1"
            ]
        );
    }
    use schedlab_tables::write_table;

    /// The report's files in one directory, named as the runner's layout names them.
    struct Dir(PathBuf);

    impl ReportPaths for Dir {
        fn summary_md(&self) -> PathBuf {
            self.0.join("summary.md")
        }
        fn index_html(&self) -> PathBuf {
            self.0.join("index.html")
        }
        fn plot_svg(&self, kind: &str, run_id: &str) -> PathBuf {
            self.0.join(format!("{kind}-{run_id}.svg"))
        }
    }

    fn cpu_time(tid: i32, lost_events: Option<i64>, source: &str) -> CpuTimeRow {
        CpuTimeRow {
            run_id: "r1".into(),
            workload: "w".into(),
            pid: 10,
            tid,
            comm: "worker".into(),
            cpu_time_ns: 2_000_000_000,
            wall_ns: 3_000_000_000,
            source: source.into(),
            lost_events,
            proc_check_ns: None,
            trace_check_ns: None,
            trace_exceeds_proc: None,
            slice_ns: Some(2_000_000_000),
            kernel_ns: None,
            headline: "slices".into(),
            idle_blind_cpus: String::new(),
        }
    }

    /// Summarizes the aggregate `rows` written by `write` in a temporary directory.
    fn summarize_rows(
        options: &Summarize,
        write: impl FnOnce(&Path),
    ) -> (Summary, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let (tables, aggregates, report) = (
            dir.path().join("tables"),
            dir.path().join("aggregates"),
            dir.path().join("report"),
        );
        write(&aggregates);
        let paths = SummaryPaths {
            tables: &tables,
            aggregates: &aggregates,
            report: &Dir(report),
        };
        (summarize("p", &paths, options, &[], &[]).unwrap(), dir)
    }

    #[test]
    fn figures_over_spans_with_lost_events_are_flagged_in_the_summary() {
        let checked = |tid, proc_ns, trace_ns, exceeds| CpuTimeRow {
            proc_check_ns: Some(proc_ns),
            trace_check_ns: Some(trace_ns),
            trace_exceeds_proc: Some(exceeds),
            ..cpu_time(tid, Some(0), "sched")
        };
        let rows = [
            cpu_time(1, Some(1234), "sched"),
            cpu_time(2, Some(0), "sched"),
            cpu_time(3, None, "placement"),
            checked(4, 770_000_000, 2_321_000_000, true),
            checked(5, 770_000_000, 800_000_000, false),
        ];
        let markdown = Summarize {
            report: vec![ReportFormat::Markdown],
            plots: Vec::new(),
            expect: Vec::new(),
        };
        let (summary, dir) = summarize_rows(&markdown, |aggregates| {
            write_table(aggregates, &rows).unwrap();
        });
        let report = dir.path().join("report");
        let line = |tid: i32| {
            let cell = format!("| {tid} | worker |");
            summary
                .table
                .lines()
                .find(|l| l.contains(&cell))
                .unwrap()
                .to_owned()
        };
        assert!(
            line(1).ends_with("| sched (1234 events lost) |"),
            "{}",
            line(1)
        );
        assert!(line(2).ends_with("| sched |"), "{}", line(2));
        assert!(line(3).ends_with("| placement |"), "{}", line(3));
        let contradicted = "| sched (trace 2.32 s vs /proc 0.77 s of CPU) |";
        assert!(line(4).ends_with(contradicted), "{}", line(4));
        assert!(line(5).ends_with("| sched |"), "{}", line(5));
        let written = std::fs::read_to_string(report.join("summary.md")).unwrap();
        assert!(written.contains("sched (1234 events lost)"));
        let names: Vec<_> = std::fs::read_dir(&report).unwrap().flatten().collect();
        assert_eq!(names.len(), 1, "no temporary file left");
    }

    #[test]
    fn a_cpu_time_that_is_not_the_slices_says_which_it_is() {
        let headed = |tid, cpu_time_ns, headline: &str, idle_blind_cpus: &str| CpuTimeRow {
            cpu_time_ns,
            headline: headline.into(),
            idle_blind_cpus: idle_blind_cpus.into(),
            ..cpu_time(tid, Some(0), "sched")
        };
        let rows = [
            headed(1, 1_205_000_000, "kernel", "1"),
            headed(2, 1_210_000_000, "proc", "1"),
            headed(3, 3_387_000_000, "slices", "1"),
            headed(4, 2_000_000_000, "slices", ""),
            CpuTimeRow {
                source: "placement".into(),
                ..headed(5, 2_000_000_000, "proc", "")
            },
        ];
        let markdown = Summarize {
            report: vec![ReportFormat::Markdown],
            plots: Vec::new(),
            expect: Vec::new(),
        };
        let (summary, _dir) = summarize_rows(&markdown, |aggregates| {
            write_table(aggregates, &rows).unwrap();
        });
        let cells: Vec<&str> = (summary.table.lines().skip(2))
            .map(|l| l.split(" | ").nth(4).unwrap())
            .collect();
        assert_eq!(
            cells,
            [
                "1.205 s (kernel) / 3.000 s",
                "1.210 s (/proc) / 3.000 s",
                "3.387 s (slices, too high: the idle of cpu 1 is not traced) / 3.000 s",
                "2.000 s / 3.000 s",
                "2.000 s / 3.000 s",
            ]
        );
    }

    #[test]
    fn the_migration_cell_splits_start_up_from_steady_state_when_asked() {
        let mut m = MigrationSummaryRow {
            run_id: "r".into(),
            workload: "burst".into(),
            pid: 1,
            tid: 1,
            comm: "stress-ng-cpu".into(),
            migrations: 143,
            startup_migrations: 25,
            steady_migrations: 118,
            steady_interval_mean_ns: Some(509_000_000.0),
            per_second: None,
            source: "sched".into(),
            lost_events: Some(0),
        };
        assert_eq!(
            migration_cell(&m),
            "143 (start-up 25, steady 118, every 0.509 s)"
        );
        (
            m.startup_migrations,
            m.steady_migrations,
            m.steady_interval_mean_ns,
        ) = (0, 143, None);
        assert_eq!(migration_cell(&m), "143");
    }

    #[test]
    fn a_power_step_is_told_apart_from_wobble() {
        let step = |significant| PowerStepRow {
            run_id: "r1".into(),
            reference: Some("foreground".into()),
            time_ns: 35_000_000_000,
            after_start_s: 35.0,
            before_watt: 30.24,
            after_watt: 19.8,
            step_watt: 19.8 - 30.24,
            step_pct: Some(-34.5),
            samples_before: 35,
            samples_after: 15,
            significant,
            source: "turbostat".into(),
        };
        assert_eq!(
            power_lines(&[step(true), step(false)]).unwrap(),
            "- r1: package power went from 30.24 W to 19.80 W (-34.5 %) 35.0 s after foreground \
             started (to the sampling interval; turbostat)\n\
             - r1: no step in package power (the largest, -34.5 % at 35.0 s after foreground \
             started, is within its levels' spread; turbostat)\n"
        );
        assert_eq!(power_lines(&[]), None);
    }

    #[test]
    fn names_with_markup_reach_summary_md_escaped_and_index_html_as_text() {
        let row = CpuTimeRow {
            workload: "w|<script>".into(),
            comm: "a|<script>x".into(),
            ..cpu_time(1, Some(0), "sched")
        };
        let options = Summarize {
            report: vec![ReportFormat::Markdown, ReportFormat::Html],
            plots: Vec::new(),
            expect: Vec::new(),
        };
        let (summary, dir) = summarize_rows(&options, |aggregates| {
            write_table(aggregates, &[row]).unwrap();
        });
        let report = dir.path().join("report");
        let markdown = std::fs::read_to_string(report.join("summary.md")).unwrap();
        let line = (markdown.lines())
            .find(|l| l.starts_with("| r1 "))
            .expect(&markdown);
        assert!(
            line.starts_with(
                "| r1 | w\\|\\<script\\> | 1 | a\\|\\<script\\>x | 2.000 s / 3.000 s |"
            ),
            "{line}"
        );
        assert_eq!(summary.table.lines().last(), Some(line));
        let html = std::fs::read_to_string(report.join("index.html")).unwrap();
        assert!(!html.contains("<script"), "{html}");
        assert!(
            html.contains("<td>w|&lt;script&gt;</td>")
                && html.contains("<td>a|&lt;script&gt;x</td>"),
            "the names are cells of their own, as text: {html}"
        );
    }
}
