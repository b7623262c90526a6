//! Aggregates into reports: the per-thread summary a user reads first.
//!
//! # Brief overview
//!
//! [`summarize`] reads `aggregates/` (and, for what aggregation does not cover, the
//! `workload_metrics` and `quality` tables), renders one [`Summary`] per pipeline and writes it to
//! `report/summary.md`; the same Markdown table is what the terminal shows.
//!
//! # Key design decision
//!
//! A report never recomputes a figure: it formats aggregate rows. If a number in a report looks
//! wrong, the place to look is the aggregate table it came from.

mod activity;
mod comparison;
mod html;
mod plots;
mod share;
mod workers;

pub use comparison::comparison_table;

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use schedlab_spec::{PlotKind, ReportFormat, Summarize};
use schedlab_tables::{
    CpuActivityRow, CpuRow, CpuShareRow, CpuTimeRow, MigrationSummaryRow, PlacementRow,
    PowerStepRow, ProcessRow, QualityRow, ResidencyRow, SchedDelayRow, SchedSliceRow, TableError,
    ThroughputRow, WorkloadMetricRow, read_table,
};

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
}

/// The parse stage's tables a summary reads besides `aggregates/` (the runner fingerprints
/// them): workload figures, quality notes, and what the per-worker table and the plots draw.
pub const TABLES_READ: [&str; 6] = [
    "workload_metrics",
    "quality",
    "processes",
    "cpus",
    "sched_slices",
    "placement",
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

/// Where the summary reads from and writes to.
pub struct SummaryPaths<'a> {
    pub tables: &'a Path,
    pub aggregates: &'a Path,
    pub report: &'a Path,
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

/// One line per run: the step in package power, or that there was none.
fn power_lines(steps: &[PowerStepRow]) -> Option<String> {
    if steps.is_empty() {
        return None;
    }
    let mut out = String::new();
    for s in steps {
        let from = match &s.reference {
            Some(workload) => format!("after {workload} started"),
            None => "after the run's first start".to_owned(),
        };
        let change = match s.step_pct {
            Some(pct) => format!("{pct:+.1} %"),
            None => format!("{:+.2} W", s.after_watt - s.before_watt),
        };
        let line = if s.significant {
            format!(
                "{}: package power went from {:.2} W to {:.2} W ({change}) {:.1} s {from} \
                 (to the sampling interval; {})",
                s.run_id, s.before_watt, s.after_watt, s.after_start_s, s.source
            )
        } else {
            format!(
                "{}: no step in package power (the largest, {change} at {:.1} s {from}, is \
                 within its levels' spread; {})",
                s.run_id, s.after_start_s, s.source
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
const MAX_THREAD_LINES: usize = 16;

/// One summary line per run and workload for the threads of `rows`: CPU time summed, CPU and
/// class shares over all their run time, migrations summed.
fn rollup_lines(
    rows: &[&CpuTimeRow],
    residency: &[ResidencyRow],
    migrations: &[MigrationSummaryRow],
) -> String {
    let mut groups: BTreeMap<(&str, &str), Vec<&CpuTimeRow>> = BTreeMap::new();
    for row in rows {
        groups
            .entry((&row.run_id, &row.workload))
            .or_default()
            .push(row);
    }
    let mut out = String::new();
    for ((run_id, workload), threads) in groups {
        let mine = |r: &str, w: &str| r == run_id && w == workload;
        let mut per_cpu: BTreeMap<i32, f64> = BTreeMap::new();
        let mut per_class: BTreeMap<&str, f64> = BTreeMap::new();
        for r in residency.iter().filter(|r| mine(&r.run_id, &r.workload)) {
            *per_cpu.entry(r.cpu).or_default() += r.run_ns as f64;
            *per_class.entry(&r.class).or_default() += r.run_ns as f64;
        }
        let total: f64 = per_cpu.values().sum();
        let mut per_cpu: Vec<(i32, f64)> = per_cpu.into_iter().collect();
        per_cpu.sort_by(|a, b| b.1.total_cmp(&a.1));
        let on_cpus = percent_list(per_cpu.iter().map(|(cpu, ns)| (cpu, ns / total)));
        let on_classes = percent_list(per_class.iter().map(|(class, ns)| (class, ns / total)));
        let moved: i64 = (migrations.iter())
            .filter(|m| mine(&m.run_id, &m.workload))
            .map(|m| m.migrations)
            .sum();
        let lost: i64 = threads.iter().filter_map(|t| t.lost_events).sum();
        let mut source = threads[0].source.clone();
        if lost > 0 {
            source.push_str(&format!(" ({lost} events lost)"));
        }
        let cpu_ns: i64 = threads.iter().map(|t| t.cpu_time_ns).sum();
        writeln!(
            out,
            "| {run_id} | {workload} | – | {} threads | {:.3} s | {} | {} | {moved} | – | – | {source} |",
            threads.len(),
            cpu_ns as f64 / 1e9,
            on_cpus,
            on_classes,
        )
        .expect("writing to a String");
    }
    out
}

/// Whether a trace's run time is well above the thread's own CPU time by /proc over the same
/// span: by a quarter, and by more than /proc's granularity (10 ms ticks, over two samples).
fn trace_exceeds_proc(trace_ns: i64, proc_ns: i64) -> bool {
    const SLACK_NS: i64 = 50_000_000;
    trace_ns > proc_ns + proc_ns / 4 && trace_ns - proc_ns > SLACK_NS
}

/// Builds the summary and writes `report/summary.md` atomically.
pub fn summarize(
    pipeline: &str,
    paths: &SummaryPaths<'_>,
    options: &Summarize,
) -> Result<Summary, ReportError> {
    let cpu_time: Vec<CpuTimeRow> = read_table(paths.aggregates)?;
    let residency: Vec<ResidencyRow> = read_table(paths.aggregates)?;
    let migration_rows: Vec<MigrationSummaryRow> = read_table(paths.aggregates)?;
    let delays: Vec<SchedDelayRow> = read_table(paths.aggregates)?;
    let metrics: Vec<WorkloadMetricRow> = read_table(paths.tables)?;
    let quality: Vec<QualityRow> = read_table(paths.tables)?;
    let cpu_activity: Vec<CpuActivityRow> = read_table(paths.aggregates)?;
    let cpu_share: Vec<CpuShareRow> = read_table(paths.aggregates)?;
    let throughput: Vec<ThroughputRow> = read_table(paths.aggregates)?;
    let processes: Vec<ProcessRow> = read_table(paths.tables)?;
    let power_steps: Vec<PowerStepRow> = read_table(paths.aggregates)?;

    type Key<'a> = (&'a str, i32);
    let mut cpus: BTreeMap<Key<'_>, Vec<(i32, f64)>> = BTreeMap::new();
    let mut classes: BTreeMap<Key<'_>, BTreeMap<&str, f64>> = BTreeMap::new();
    for r in &residency {
        cpus.entry((&r.run_id, r.tid))
            .or_default()
            .push((r.cpu, r.share));
        *classes
            .entry((&r.run_id, r.tid))
            .or_default()
            .entry(&r.class)
            .or_default() += r.share;
    }
    let migrations: BTreeMap<Key<'_>, &MigrationSummaryRow> = migration_rows
        .iter()
        .map(|m| ((m.run_id.as_str(), m.tid), m))
        .collect();
    let delays: BTreeMap<Key<'_>, &SchedDelayRow> = delays
        .iter()
        .map(|d| ((d.run_id.as_str(), d.tid), d))
        .collect();
    let mut lateness: BTreeMap<Key<'_>, (f64, f64)> = BTreeMap::new();
    for m in metrics.iter().filter(|m| m.tool == "periodic") {
        let Some(tid) = m.tid else { continue };
        let entry = lateness.entry((&m.run_id, tid)).or_default();
        match m.metric.as_str() {
            "lateness_mean" => entry.0 = m.value,
            "lateness_max" => entry.1 = m.value,
            _ => {}
        }
    }

    let mut table = String::from(
        "| run | workload | tid | comm | CPU time / seen for | CPU share | class share | migrations | sched delay mean / max | lateness mean / max | source |\n\
         |---|---|---|---|---:|---|---|---:|---|---|---|\n",
    );
    let mut threads_of: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for row in &cpu_time {
        *threads_of.entry((&row.run_id, &row.workload)).or_default() += 1;
    }
    let rolled_up = |row: &CpuTimeRow| {
        threads_of[&(row.run_id.as_str(), row.workload.as_str())] > MAX_THREAD_LINES
    };
    for row in cpu_time.iter().filter(|row| !rolled_up(row)) {
        let key = (row.run_id.as_str(), row.tid);
        let mut on_cpus = cpus.get(&key).cloned().unwrap_or_default();
        on_cpus.sort_by(|a, b| b.1.total_cmp(&a.1));
        let on_cpus = percent_list(on_cpus.iter().map(|(cpu, share)| (cpu, *share)));
        let on_classes = (classes.get(&key))
            .map(|c| percent_list(c.iter().map(|(class, share)| (class, *share))))
            .unwrap_or_default();
        let migrations = migrations
            .get(&key)
            .map_or("–".into(), |m| migration_cell(m));
        let delay = delays
            .get(&key)
            .and_then(|d| Some(format!("{} / {}", ms(d.mean_ns?), ms(d.max_ns? as f64))))
            .unwrap_or_else(|| "–".into());
        let late = lateness.get(&key).map_or("–".into(), |(mean, max)| {
            format!("{} / {}", ms(*mean), ms(*max))
        });
        // A figure over a span where perf lost events, or that /proc contradicts, is flagged
        // where it is read.
        let mut source = row.source.clone();
        if let Some(lost) = row.lost_events.filter(|&lost| lost > 0) {
            source.push_str(&format!(" ({lost} events lost)"));
        }
        if let (Some(proc_ns), Some(trace_ns)) = (row.proc_check_ns, row.trace_check_ns)
            && trace_exceeds_proc(trace_ns, proc_ns)
        {
            source.push_str(&format!(
                " (trace {:.2} s vs /proc {:.2} s of CPU)",
                trace_ns as f64 / 1e9,
                proc_ns as f64 / 1e9
            ));
        }
        writeln!(
            table,
            "| {} | {} | {} | {} | {:.3} s / {:.3} s | {} | {} | {} | {} | {} | {} |",
            row.run_id,
            row.workload,
            row.tid,
            row.comm,
            row.cpu_time_ns as f64 / 1e9,
            row.wall_ns as f64 / 1e9,
            on_cpus,
            on_classes,
            migrations,
            delay,
            late,
            source
        )
        .expect("writing to a String");
    }
    let many: Vec<&CpuTimeRow> = cpu_time.iter().filter(|row| rolled_up(row)).collect();
    table.push_str(&rollup_lines(&many, &residency, &migration_rows));
    let warnings: Vec<String> = quality
        .iter()
        .filter(|q| q.severity != "info")
        .map(|q| format!("{} [{}] {}: {}", q.run_id, q.severity, q.source, q.message))
        .collect();

    let mut sections = Vec::new();
    let mut section = |heading, intro: String, body: Option<String>| {
        if let Some(body) = body {
            sections.push(Section {
                heading,
                intro,
                body,
            });
        }
    };
    section(
        "CPU activity (turbostat)",
        format!(
            "All CPUs, each core class, and each CPU busy at least {}% of the window.",
            activity::BUSY_CPU_PCT
        ),
        activity::activity_table(&cpu_activity),
    );
    section(
        "Per worker",
        "openssl's reported throughput, and the same operations over the process's wall time."
            .into(),
        workers::worker_table(&workers::WorkerInputs {
            throughput: &throughput,
            processes: &processes,
            residency: &residency,
            migrations: &migration_rows,
        }),
    );
    section(
        "CPUs received, per phase",
        "CPU time over the phase's length: before, during and after the reference workload.".into(),
        share::share_table(&cpu_share),
    );
    section(
        "Package power",
        "The largest step in package power, and whether it is a change of regime.".into(),
        power_lines(&power_steps),
    );

    let mut markdown = format!("# {pipeline}: summary\n\nPer workload thread, per run.\n\n{table}");
    for s in &sections {
        write!(markdown, "\n## {}\n\n{}\n\n{}", s.heading, s.intro, s.body)
            .expect("writing to a String");
    }
    if !warnings.is_empty() {
        markdown.push_str("\n## Quality\n\n");
        for w in &warnings {
            writeln!(markdown, "- {w}").expect("writing to a String");
        }
    }
    let summary_md = paths.report.join("summary.md");
    write_atomic(&summary_md, markdown.as_bytes())?;
    let mut written = vec![summary_md];
    let plots = write_plots(
        pipeline,
        paths,
        &options.plots,
        &processes,
        &residency,
        &mut written,
    )?;
    if options.report.contains(&ReportFormat::Html) {
        let page = html::page(&format!("{pipeline}: summary"), &markdown, &plots);
        let index = paths.report.join("index.html");
        write_atomic(&index, page.as_bytes())?;
        written.push(index);
    }
    Ok(Summary {
        table,
        sections: (sections.into_iter())
            .map(|s| format!("## {}\n{}", s.heading, s.body))
            .collect(),
        warnings,
        written,
    })
}

/// `rows` by run id, in one pass.
fn by_run<'a, T>(
    rows: &'a [T],
    run_id: impl Fn(&'a T) -> &'a str,
) -> BTreeMap<&'a str, Vec<&'a T>> {
    let mut runs: BTreeMap<&str, Vec<&T>> = BTreeMap::new();
    for row in rows {
        runs.entry(run_id(row)).or_default().push(row);
    }
    runs
}

/// The rows of `run_id` (none when it has none).
fn rows_of<'a, 'r, T>(runs: &'r BTreeMap<&str, Vec<&'a T>>, run_id: &str) -> &'r [&'a T] {
    runs.get(run_id).map_or(&[], Vec::as_slice)
}

/// Writes the `kinds` of plot for every run as `report/<kind>-<run_id>.svg`; returns the file
/// names per run, for the HTML page.
fn write_plots(
    pipeline: &str,
    paths: &SummaryPaths<'_>,
    kinds: &[PlotKind],
    processes: &[ProcessRow],
    residency: &[ResidencyRow],
    written: &mut Vec<PathBuf>,
) -> Result<Vec<(String, Vec<String>)>, ReportError> {
    if kinds.is_empty() {
        return Ok(Vec::new());
    }
    let slices: Vec<SchedSliceRow> = read_table(paths.tables)?;
    let placement: Vec<PlacementRow> = read_table(paths.tables)?;
    let cpus: Vec<CpuRow> = read_table(paths.tables)?;
    let mut run_ids: Vec<&str> = processes.iter().map(|p| p.run_id.as_str()).collect();
    run_ids.sort();
    run_ids.dedup();
    let slices = by_run(&slices, |s| &s.run_id);
    let placement = by_run(&placement, |p| &p.run_id);
    let cpus = by_run(&cpus, |c| &c.run_id);
    let residency = by_run(residency, |r| &r.run_id);
    let mut per_run = Vec::new();
    for run_id in run_ids {
        let run_cpus = rows_of(&cpus, run_id);
        let mut files = Vec::new();
        for kind in kinds {
            let (name, svg) = match kind {
                PlotKind::CpuTimeline => {
                    let spans =
                        plots::occupancy(rows_of(&slices, run_id), rows_of(&placement, run_id));
                    let title = format!("{pipeline} {run_id}: which workload ran where");
                    (
                        "cpu_timeline",
                        plots::cpu_timeline(&title, &spans, run_cpus),
                    )
                }
                PlotKind::Residency => {
                    let title = format!("{pipeline} {run_id}: seconds per CPU");
                    (
                        "residency",
                        plots::residency(&title, rows_of(&residency, run_id), run_cpus),
                    )
                }
            };
            let svg = svg.map_err(|message| ReportError::Plot {
                run_id: run_id.to_owned(),
                message,
            })?;
            if let Some(svg) = svg {
                let file = format!("{name}-{run_id}.svg");
                let path = paths.report.join(&file);
                write_atomic(&path, svg.as_bytes())?;
                written.push(path);
                files.push(file);
            }
        }
        if !files.is_empty() {
            per_run.push((run_id.to_owned(), files));
        }
    }
    Ok(per_run)
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
    use schedlab_tables::write_table;

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
        }
    }

    #[test]
    fn figures_over_spans_with_lost_events_are_flagged_in_the_summary() {
        let dir = tempfile::tempdir().unwrap();
        let (tables, aggregates, report) = (
            dir.path().join("tables"),
            dir.path().join("aggregates"),
            dir.path().join("report"),
        );
        let checked = |tid, proc_ns, trace_ns| CpuTimeRow {
            proc_check_ns: Some(proc_ns),
            trace_check_ns: Some(trace_ns),
            ..cpu_time(tid, Some(0), "sched")
        };
        let rows = [
            cpu_time(1, Some(1234), "sched"),
            cpu_time(2, Some(0), "sched"),
            cpu_time(3, None, "placement"),
            checked(4, 770_000_000, 2_321_000_000),
            checked(5, 770_000_000, 800_000_000),
            checked(6, 10_000_000, 40_000_000),
        ];
        write_table(&aggregates, &rows).unwrap();
        let paths = SummaryPaths {
            tables: &tables,
            aggregates: &aggregates,
            report: &report,
        };
        let markdown = Summarize {
            report: vec![ReportFormat::Markdown],
            plots: Vec::new(),
        };
        let summary = summarize("p", &paths, &markdown).unwrap();
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
        assert!(
            line(5).ends_with("| sched |"),
            "within a quarter: {}",
            line(5)
        );
        assert!(
            line(6).ends_with("| sched |"),
            "within /proc's ticks: {}",
            line(6)
        );
        let written = std::fs::read_to_string(report.join("summary.md")).unwrap();
        assert!(written.contains("sched (1234 events lost)"));
        let names: Vec<_> = std::fs::read_dir(&report).unwrap().flatten().collect();
        assert_eq!(names.len(), 1, "no temporary file left");
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
}
