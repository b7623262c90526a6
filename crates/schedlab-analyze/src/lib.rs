//! Tables into aggregates: the figures the seed articles report, per run and thread.
//!
//! # Brief overview
//!
//! [`Tables::load`] reads the parse stage's Parquet files; [`aggregate`] runs the pipeline's
//! aggregate steps over them and writes one file per step under `aggregates/` (row types in
//! [`schedlab_tables::aggregates`]), and beside the per-thread ones their sums per class, process
//! and workload ([`rollup`]). Each run is aggregated from the best source it has: a perf
//! trace ([`from_sched`]) when one was recorded, otherwise the /proc placement samples
//! ([`from_placement`]), and every row names its source.
//!
//! # Key design decision
//!
//! Aggregation reads only `tables/` and writes only `aggregates/`: it never looks at raw files, so
//! it reruns in a notebook-sized moment after an edit to the aggregate section.

pub mod classes;
pub mod compare;
pub mod cpu_activity;
pub mod cpu_share;
pub mod from_placement;
pub mod from_sched;
mod migration_classes;
pub mod placement_cost;
pub mod power_step;
pub mod rollup;
mod sched_delay;
pub mod stats;
pub mod thread;
pub mod throughput;
pub mod timeline;
pub mod wakeup_placement;

use std::collections::BTreeMap;
use std::path::PathBuf;

use rayon::prelude::*;
use schedlab_spec::{AggregateStep, StepKind, Window};
use schedlab_tables::{
    CpuRow, CpuSampleRow, CpuShareRow, CpuTimeRow, CpuTimelineRow, LossRow, MigrationClassRow,
    MigrationRow, MigrationSummaryRow, PlacementCostRow, PlacementRow, PowerStepRow, ProcessRow,
    ResidencyRow, RunRow, SchedDelayCdfRow, SchedDelayRow, SchedDelayWorkloadRow, SchedSliceRow,
    TableDir, TableError, ThroughputRow, WakeupPlacementRow, WorkloadMetricRow, read_table,
    write_table,
};

use crate::classes::ClassOrder;
use crate::timeline::Timeline;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnalyzeError {
    #[error(transparent)]
    Table(#[from] TableError),
}

/// The parse stage's tables that aggregation reads.
#[derive(Debug, Default)]
pub struct Tables {
    pub cpus: Vec<CpuRow>,
    pub processes: Vec<ProcessRow>,
    pub sched_slices: Vec<SchedSliceRow>,
    pub migrations: Vec<MigrationRow>,
    pub placement: Vec<PlacementRow>,
    pub workload_metrics: Vec<WorkloadMetricRow>,
    pub losses: Vec<LossRow>,
    pub runs: Vec<RunRow>,
}

impl Tables {
    /// Reads the tables under `dir`; a table that was not produced reads as empty.
    pub fn load(dir: &(impl TableDir + ?Sized)) -> Result<Tables, TableError> {
        Ok(Tables {
            cpus: read_table(dir)?,
            processes: read_table(dir)?,
            sched_slices: read_table(dir)?,
            migrations: read_table(dir)?,
            placement: read_table(dir)?,
            workload_metrics: read_table(dir)?,
            losses: read_table(dir)?,
            runs: read_table(dir)?,
        })
    }
}

/// All aggregates of one run, before the steps pick which to keep.
#[derive(Debug, Default, Clone)]
pub struct Aggregates {
    pub residency: Vec<ResidencyRow>,
    pub migrations: Vec<MigrationSummaryRow>,
    pub sched_delay: Vec<SchedDelayRow>,
    pub cpu_time: Vec<CpuTimeRow>,
    pub throughput: Vec<ThroughputRow>,
    pub cpu_timeline: Vec<CpuTimelineRow>,
    pub placement_cost: Vec<PlacementCostRow>,
    pub wakeup_placement: Vec<WakeupPlacementRow>,
    /// Beside `sched_delay`: the same figures per workload.
    pub sched_delay_workloads: Vec<SchedDelayWorkloadRow>,
    /// Beside `migrations`: per workload and class transition.
    pub migration_classes: Vec<MigrationClassRow>,
    /// Beside `sched_delay`: each workload's wakeup-delay CDF, the report's plot of it.
    pub sched_delay_cdf: Vec<SchedDelayCdfRow>,
}

impl Aggregates {
    fn extend(&mut self, other: Aggregates) {
        self.residency.extend(other.residency);
        self.migrations.extend(other.migrations);
        self.sched_delay.extend(other.sched_delay);
        self.cpu_time.extend(other.cpu_time);
        self.throughput.extend(other.throughput);
        self.cpu_timeline.extend(other.cpu_timeline);
        self.placement_cost.extend(other.placement_cost);
        self.wakeup_placement.extend(other.wakeup_placement);
        self.sched_delay_workloads
            .extend(other.sched_delay_workloads);
        self.migration_classes.extend(other.migration_classes);
        self.sched_delay_cdf.extend(other.sched_delay_cdf);
    }
}

/// One run's rows of every table, borrowed.
pub struct RunTables<'a> {
    pub run_id: &'a str,
    pub class_of_cpu: BTreeMap<i32, &'a str>,
    /// The run's classes fastest first.
    pub classes: ClassOrder,
    pub processes: Vec<&'a ProcessRow>,
    /// The workload threads' slices.
    pub sched_slices: Vec<&'a SchedSliceRow>,
    /// Every slice of the trace: idle, workload threads and every other task (what the CPU
    /// timeline is made of).
    pub all_slices: Vec<&'a SchedSliceRow>,
    pub migrations: Vec<&'a MigrationRow>,
    pub placement: Vec<&'a PlacementRow>,
    pub losses: Vec<&'a LossRow>,
    /// Where every CPU of the run's trace has data (see [`Window::Trace`]).
    pub trace_window: Option<(i64, i64)>,
    /// Whether the run was imported: its processes' affinity and nice values are not known.
    pub imported: bool,
}

impl RunTables<'_> {
    pub fn class(&self, cpu: i32) -> String {
        self.class_of_cpu
            .get(&cpu)
            .map_or_else(|| "?".to_owned(), |c| (*c).to_owned())
    }
}

#[cfg(test)]
impl<'a> RunTables<'a> {
    /// Run `r` of `slices` on cpu 0 (class P, fastest) and cpu 1 (E), and nothing else; the
    /// workload threads' slices are those with a workload.
    pub(crate) fn for_tests(slices: &'a [SchedSliceRow]) -> RunTables<'a> {
        let cpu = |n, class| classes::tests::cpu(n, class, Some(n));
        let cpus = [cpu(0, "P"), cpu(1, "E")];
        RunTables {
            run_id: "r",
            class_of_cpu: [(0, "P"), (1, "E")].into(),
            classes: ClassOrder::new(&cpus.iter().collect::<Vec<_>>(), &[]),
            processes: vec![],
            sched_slices: slices.iter().filter(|s| s.workload.is_some()).collect(),
            all_slices: slices.iter().collect(),
            migrations: vec![],
            placement: vec![],
            losses: vec![],
            trace_window: None,
            imported: false,
        }
    }
}

/// A workload's lifetime from its processes: the first start, and the last end (`None` while one
/// of them has not ended). `None` without processes.
pub(crate) fn lifetime<'a>(
    processes: impl Iterator<Item = &'a ProcessRow> + Clone,
) -> Option<(i64, Option<i64>)> {
    let start = processes.clone().map(|p| p.start_ns).min()?;
    let end = processes.map(|p| p.end_ns).collect::<Option<Vec<i64>>>();
    Some((start, end.and_then(|ends| ends.into_iter().max())))
}

fn by_run<'a>(tables: &'a Tables, class_order: &[String]) -> Vec<RunTables<'a>> {
    let mut runs: BTreeMap<&str, RunTables<'_>> = BTreeMap::new();
    for p in &tables.processes {
        runs.entry(&p.run_id).or_insert_with(|| RunTables {
            run_id: &p.run_id,
            class_of_cpu: BTreeMap::new(),
            classes: ClassOrder::default(),
            processes: Vec::new(),
            sched_slices: Vec::new(),
            all_slices: Vec::new(),
            migrations: Vec::new(),
            placement: Vec::new(),
            losses: Vec::new(),
            trace_window: None,
            imported: false,
        });
    }
    for c in &tables.cpus {
        if let Some(run) = runs.get_mut(c.run_id.as_str()) {
            run.class_of_cpu.insert(c.cpu, &c.class);
        }
    }
    for run in runs.values_mut() {
        let cpus: Vec<&CpuRow> = (tables.cpus.iter())
            .filter(|c| c.run_id == run.run_id)
            .collect();
        run.classes = ClassOrder::new(&cpus, class_order);
    }
    for p in &tables.processes {
        runs.get_mut(p.run_id.as_str())
            .expect("inserted")
            .processes
            .push(p);
    }
    for s in &tables.sched_slices {
        if let Some(run) = runs.get_mut(&*s.run_id) {
            if s.workload.is_some() {
                run.sched_slices.push(s);
            }
            run.all_slices.push(s);
        }
    }
    for m in tables.migrations.iter().filter(|m| m.workload.is_some()) {
        if let Some(run) = runs.get_mut(&*m.run_id) {
            run.migrations.push(m);
        }
    }
    for p in tables.placement.iter().filter(|p| p.workload.is_some()) {
        if let Some(run) = runs.get_mut(p.run_id.as_str()) {
            run.placement.push(p);
        }
    }
    for r in &tables.runs {
        let Some(run) = runs.get_mut(r.run_id.as_str()) else {
            continue;
        };
        run.imported = r.imported;
        if let (Some(start), Some(end)) = (r.trace_window_start_ns, r.trace_window_end_ns) {
            run.trace_window = Some((start, end));
        }
    }
    for l in &tables.losses {
        if let Some(run) = runs.get_mut(l.run_id.as_str()) {
            run.losses.push(l);
        }
    }
    runs.into_values().collect()
}

/// Computes every aggregate for every run, each run from its best source, over the whole run
/// and, with `also_in_trace_window`, over the run's trace window too. Only a run with a trace
/// and a window is computed twice; for the others both are the same rows.
pub fn compute(
    runs: &[RunTables<'_>],
    startup_ns: i64,
    also_in_trace_window: bool,
) -> (Aggregates, Option<Aggregates>) {
    let per_run: Vec<(Aggregates, Option<Aggregates>)> = (runs.par_iter())
        .map(|run| {
            if run.sched_slices.is_empty() {
                let whole = from_placement::aggregate(run, startup_ns);
                let same = also_in_trace_window.then(|| whole.clone());
                return (whole, same);
            }
            let mut whole = from_sched::aggregate(run, startup_ns, None);
            why_here(run, &mut whole);
            let windowed = also_in_trace_window.then(|| match run.trace_window {
                Some(_) => from_sched::aggregate(run, startup_ns, Some(Window::Trace)),
                None => whole.clone(),
            });
            (whole, windowed)
        })
        .collect();
    let mut all = Aggregates::default();
    let mut in_window = also_in_trace_window.then(Aggregates::default);
    for (whole, windowed) in per_run {
        all.extend(whole);
        if let (Some(in_window), Some(windowed)) = (in_window.as_mut(), windowed) {
            in_window.extend(windowed);
        }
    }
    (all, in_window)
}

/// The "why here" aggregates of a run with a trace, over the whole run: what every CPU did
/// when, and what that meant for each workload thread.
fn why_here(run: &RunTables<'_>, out: &mut Aggregates) {
    let timeline = Timeline::new(&run.all_slices);
    let threads = placement_cost::workload_threads(run);
    let (costs, idle_while_waiting) = placement_cost::placement_cost(run, &timeline, &threads);
    out.cpu_timeline = timeline.rows(run, &idle_while_waiting);
    out.placement_cost = costs;
    out.wakeup_placement = wakeup_placement::wakeup_placement(run, &timeline, &threads);
}

/// Runs the aggregate steps of a pipeline: reads `tables_dir`, writes one table per step into
/// `out_dir`. Without steps, every aggregate is written. The runner calls it once per run, with
/// that run's partitions as both places, so that adding a run aggregates that run only.
///
/// `class_order` is the pipeline's `class_order:` (classes fastest first), empty for the order
/// the parse stage ranked.
pub fn aggregate(
    tables_dir: &(impl TableDir + ?Sized),
    steps: &[AggregateStep],
    class_order: &[String],
    out_dir: &(impl TableDir + ?Sized),
) -> Result<Vec<PathBuf>, AnalyzeError> {
    let tables = Tables::load(tables_dir)?;
    let startup_ns = steps
        .iter()
        .filter_map(|s| s.startup)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .next()
        .unwrap_or(0);
    let asks_trace =
        |kind: StepKind| (steps.iter()).any(|s| s.kind == kind && s.window == Some(Window::Trace));
    let any_in_window =
        (steps.iter()).any(|s| s.window == Some(Window::Trace) && s.kind.takes_window());
    let runs = by_run(&tables, class_order);
    let (mut all, in_trace_window) = compute(&runs, startup_ns, any_in_window);
    // A step that asks for the trace window takes its table from there (validation allows the
    // window only on these four).
    if let Some(window) = in_trace_window {
        macro_rules! from_window {
            ($($field:ident: $kind:expr),*) => {$(
                if asks_trace($kind) {
                    all.$field = window.$field;
                }
            )*};
        }
        from_window!(
            residency: StepKind::Residency,
            migrations: StepKind::Migrations,
            sched_delay: StepKind::SchedDelay,
            cpu_time: StepKind::CpuTime,
            sched_delay_workloads: StepKind::SchedDelay,
            migration_classes: StepKind::Migrations,
            sched_delay_cdf: StepKind::SchedDelay
        );
    }
    all.throughput = throughput::effective(&tables.workload_metrics, &tables.processes);
    let mut written = Vec::new();
    macro_rules! write_step {
        ($field:ident, $kind:expr) => {
            if let Some(workloads) = selection(steps, $kind) {
                if !workloads.is_empty() {
                    all.$field.retain(|row| workloads.contains(&row.workload));
                }
                written.push(write_table(out_dir, &all.$field)?);
            }
        };
    }
    write_step!(residency, StepKind::Residency);
    write_step!(migrations, StepKind::Migrations);
    write_step!(sched_delay, StepKind::SchedDelay);
    write_step!(cpu_time, StepKind::CpuTime);
    write_step!(throughput, StepKind::Throughput);
    write_step!(placement_cost, StepKind::PlacementCost);
    write_step!(wakeup_placement, StepKind::WakeupPlacement);
    // The timeline is the whole machine's: a step's `workload` does not narrow it.
    if selection(steps, StepKind::CpuTimeline).is_some() {
        written.push(write_table(out_dir, &all.cpu_timeline)?);
    }
    write_step!(sched_delay_workloads, StepKind::SchedDelay);
    write_step!(migration_classes, StepKind::Migrations);
    write_step!(sched_delay_cdf, StepKind::SchedDelay);
    // The roll-ups of the per-thread tables, over the rows those steps kept.
    let kept = |kind| selection(steps, kind).is_some();
    if kept(StepKind::Residency) {
        let rows = rollup::residency_rollup(&all.residency);
        written.push(write_table(out_dir, &rows)?);
    }
    if kept(StepKind::PlacementCost) {
        let wakeups = kept(StepKind::WakeupPlacement).then_some(all.wakeup_placement.as_slice());
        let rows = rollup::placement_cost_workloads(&all.placement_cost, wakeups);
        written.push(write_table(out_dir, &rows)?);
    }
    if kept(StepKind::CpuTime) || kept(StepKind::Migrations) {
        let rows = rollup::totals(
            kept(StepKind::CpuTime).then_some(all.cpu_time.as_slice()),
            kept(StepKind::Migrations).then_some(all.migrations.as_slice()),
        );
        written.push(write_table(out_dir, &rows)?);
    }

    let windows: Vec<String> = (step_workloads(steps, StepKind::CpuActivity).into_iter())
        .map(|w| w.unwrap_or_else(|| cpu_activity::RUN_WINDOW.to_owned()))
        .collect();
    let power_references = step_workloads(steps, StepKind::PowerStep);
    let turbostat = if windows.is_empty() && power_references.is_empty() {
        Vec::new()
    } else {
        schedlab_tables::turbostat::read_turbostat(tables_dir)?
    };
    if !windows.is_empty() {
        let rows = cpu_activity::activity(&turbostat, &tables.cpus, &tables.processes, &windows);
        written.push(write_table(out_dir, &rows)?);
        let rows = cpu_activity::class_intervals(&turbostat, &tables.cpus);
        written.push(write_table(out_dir, &rows)?);
    }
    if !power_references.is_empty() {
        let cpu_samples: Vec<CpuSampleRow> = read_table(tables_dir)?;
        let series = power_step::power_series(&turbostat, &cpu_samples);
        let rows: Vec<PowerStepRow> = (power_references.iter())
            .flat_map(|r| power_step::power_steps(&series, &tables.processes, r.as_deref()))
            .collect();
        written.push(write_table(out_dir, &rows)?);
    }

    let references = step_workloads(steps, StepKind::CpuShare);
    if !references.is_empty() {
        let rows: Vec<CpuShareRow> = (references.iter())
            .flat_map(|reference| {
                (runs.par_iter())
                    .flat_map_iter(|run| cpu_share::cpu_share(run, reference.as_deref()))
                    .collect::<Vec<_>>()
            })
            .collect();
        written.push(write_table(out_dir, &rows)?);
    }
    Ok(written)
}

/// The `workload` of every step of `kind`, in order and without repeats (`None` for a step
/// without one). A pipeline without aggregate steps gets one `None`: the whole run.
fn step_workloads(steps: &[AggregateStep], kind: StepKind) -> Vec<Option<String>> {
    if steps.is_empty() {
        return vec![None];
    }
    let mut workloads: Vec<Option<String>> = Vec::new();
    for step in steps.iter().filter(|s| s.kind == kind) {
        let workload = step.workload.clone();
        if !workloads.contains(&workload) {
            workloads.push(workload);
        }
    }
    workloads
}

/// Which workloads the steps of `kind` keep: `None` when the pipeline has no such step, an empty
/// list for every workload. A pipeline without aggregate steps gets every step for every workload.
fn selection(steps: &[AggregateStep], kind: StepKind) -> Option<Vec<String>> {
    let workloads = step_workloads(steps, kind);
    if workloads.is_empty() {
        return None;
    }
    // A step without `workload` keeps every workload.
    let named: Option<Vec<String>> = workloads.into_iter().collect();
    Some(named.unwrap_or_default())
}
