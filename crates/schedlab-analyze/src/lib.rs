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

pub mod busiest;
pub mod by_thread;
pub mod classes;
pub mod compare;
pub mod cpu_activity;
mod cpu_numbers;
pub mod cpu_share;
pub mod events;
pub mod expectations;
pub mod freq_idle_activity;
pub mod from_placement;
pub mod from_sched;
pub mod headline;
mod migration_classes;
mod narrow;
pub mod per_class;
pub mod placement_cost;
pub mod power_step;
pub mod rollup;
mod sched_delay;
pub mod slices;
pub mod stats;
pub mod stretches;
pub mod thread;
pub mod throughput;
pub mod timeline;
pub mod wakeup_placement;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::OnceLock;

use rayon::prelude::*;
use schedlab_spec::{AggregateStep, StepKind, Window};
use schedlab_tables::{
    BackgroundWriter, CpuFreqIdleRow, CpuRow, CpuSampleRow, CpuShareRow, CpuTimeRow,
    CpuTimelineRow, LossRow, MigrationClassRow, MigrationSummaryRow, PlacementCostRow,
    PlacementRow, PowerStepRow, ProcessRow, ResidencyRow, RunRow, SchedDelayCdfRow, SchedDelayRow,
    SchedDelayWorkloadRow, TableDir, TableError, ThroughputRow, TraceRow, WakeupPlacementRow,
    WorkloadMetricRow, create_parent, read_table, table_path, write_table,
};

use schedlab_topology::parse_cpu_list;

use crate::by_thread::ByThread;
use crate::classes::ClassOrder;
use crate::events::{Migration, Runtime};
use crate::headline::Headlines;
use crate::slices::{NO_SLICES, Slices};
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
    /// Each run's slices, by run id.
    pub sched_slices: BTreeMap<String, Slices>,
    /// The workload threads' migrations, by run id.
    pub migrations: BTreeMap<String, Vec<Migration>>,
    pub placement: Vec<PlacementRow>,
    pub workload_metrics: Vec<WorkloadMetricRow>,
    pub losses: Vec<LossRow>,
    pub runs: Vec<RunRow>,
    /// The workloads' threads' CPU time by the kernel's own accounting, by run id.
    pub sched_runtime: BTreeMap<String, Vec<Runtime>>,
    /// Which traces have the kernel's accounting and which of their CPUs are idle-blind.
    pub traces: Vec<TraceRow>,
}

impl Tables {
    /// Reads the tables under `dir`; a table that was not produced reads as empty. Without
    /// `every_slice` only the workloads' slices are read: the per-thread aggregates need no
    /// other, and on a trace of the whole machine the idle task's and other tasks' slices are
    /// most of it. The "why here" aggregates need them all. The big tables (slices,
    /// migrations, the kernel's runtime) are read as the columns the figures use.
    pub fn load(dir: &(impl TableDir + ?Sized), every_slice: bool) -> Result<Tables, TableError> {
        Ok(Tables {
            cpus: read_table(dir)?,
            processes: read_table(dir)?,
            sched_slices: slices::read_slices(dir, every_slice)?,
            migrations: events::read_migrations(dir)?,
            placement: read_table(dir)?,
            workload_metrics: read_table(dir)?,
            losses: read_table(dir)?,
            runs: read_table(dir)?,
            sched_runtime: events::read_runtime(dir)?,
            traces: read_table(dir)?,
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
    /// Adds `other`'s rows. A table still empty takes `other`'s rows as they are: the runner
    /// aggregates one run at a time, and copying a run's rows into an empty table would hold
    /// them twice for a moment.
    fn extend(&mut self, other: Aggregates) {
        fn append<T>(rows: &mut Vec<T>, mut more: Vec<T>) {
            if rows.is_empty() {
                *rows = more;
            } else {
                rows.append(&mut more);
            }
        }
        append(&mut self.residency, other.residency);
        append(&mut self.migrations, other.migrations);
        append(&mut self.sched_delay, other.sched_delay);
        append(&mut self.cpu_time, other.cpu_time);
        append(&mut self.throughput, other.throughput);
        append(&mut self.placement_cost, other.placement_cost);
        append(&mut self.wakeup_placement, other.wakeup_placement);
        append(&mut self.sched_delay_workloads, other.sched_delay_workloads);
        append(&mut self.migration_classes, other.migration_classes);
        append(&mut self.sched_delay_cdf, other.sched_delay_cdf);
    }
}

/// Which of the "why here" aggregates to compute. They lay every slice of a run on a timeline,
/// and the timeline's rows are about as many as the slices (on a switch-heavy trace, over half the
/// size of the perf.data), so a pipeline that asks for none of them pays for none, and
/// the rows are written CPU by CPU, never held whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct WhyHere {
    /// `placement_cost` and `wakeup_placement`.
    placement: bool,
    /// `cpu_timeline`'s rows.
    timeline_rows: bool,
}

impl WhyHere {
    /// Whether any is asked for: then every slice of the run is read, not only the workloads'.
    fn any(self) -> bool {
        self.placement || self.timeline_rows
    }
}

/// The class of a CPU the `cpus` table lacks.
pub(crate) const UNKNOWN_CLASS: &str = "?";

/// One run's rows of every table, borrowed.
pub struct RunTables<'a> {
    pub run_id: &'a str,
    pub class_of_cpu: BTreeMap<i32, &'a str>,
    /// The run's classes fastest first.
    pub classes: ClassOrder,
    pub processes: Vec<&'a ProcessRow>,
    /// The workload threads' slices, by thread.
    pub threads: ByThread<'a>,
    /// Every slice of the trace: idle, workload threads and every other task (what the CPU
    /// timeline is made of). Only the workloads' when no "why here" aggregate was asked for
    /// (see [`Tables::load`]).
    pub all_slices: &'a Slices,
    /// The workload threads' migrations.
    pub migrations: &'a [Migration],
    pub placement: Vec<&'a PlacementRow>,
    pub losses: Vec<&'a LossRow>,
    /// The workload threads' CPU time by the kernel's own accounting, per CPU (see
    /// [`headline`]).
    pub sched_runtime: &'a [Runtime],
    /// The CPUs of the run's trace whose idle went untraced, so that slices there are too long.
    pub idle_blind_cpus: BTreeSet<i32>,
    /// Where every CPU of the run's trace has data (see [`Window::Trace`]).
    pub trace_window: Option<(i64, i64)>,
    /// Whether the run was imported: its processes' affinity and nice values are not known.
    pub imported: bool,
    /// Its workload threads' CPU time, decided once for every aggregate that scales to it
    /// (see [`RunTables::headlines`]).
    pub headlines: OnceLock<Headlines>,
}

impl RunTables<'_> {
    pub fn class(&self, cpu: i32) -> String {
        self.class_name(cpu).to_owned()
    }

    /// The class of `cpu`, `?` for a CPU the `cpus` table lacks.
    pub fn class_name(&self, cpu: i32) -> &str {
        self.class_of_cpu
            .get(&cpu)
            .copied()
            .unwrap_or(UNKNOWN_CLASS)
    }

    /// Each traced workload thread's headline CPU time (see [`headline`]), from the run's
    /// tables as they are when first asked.
    pub fn headlines(&self) -> &Headlines {
        self.headlines.get_or_init(|| Headlines::of(self))
    }
}

#[cfg(test)]
impl<'a> RunTables<'a> {
    /// Run `r` of `slices` on cpu 0 (class P, fastest) and cpu 1 (E), and nothing else; the
    /// workload threads' slices are those with a workload. The slices' columns live as long
    /// as the test.
    pub(crate) fn for_tests(slices: &[schedlab_tables::SchedSliceRow]) -> RunTables<'a> {
        let cpu = |n, class| classes::tests::cpu(n, class, Some(n));
        let cpus = [cpu(0, "P"), cpu(1, "E")];
        let slices: &'a Slices = Box::leak(Box::new(Slices::from_rows(slices)));
        RunTables {
            run_id: "r",
            class_of_cpu: [(0, "P"), (1, "E")].into(),
            classes: ClassOrder::new(&cpus.iter().collect::<Vec<_>>(), &[]),
            processes: vec![],
            threads: ByThread::workloads(slices),
            all_slices: slices,
            migrations: &[],
            placement: vec![],
            losses: vec![],
            sched_runtime: &[],
            idle_blind_cpus: BTreeSet::new(),
            trace_window: None,
            imported: false,
            headlines: OnceLock::new(),
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
            threads: ByThread::empty(&NO_SLICES),
            all_slices: &NO_SLICES,
            migrations: &[],
            placement: Vec::new(),
            losses: Vec::new(),
            sched_runtime: &[],
            idle_blind_cpus: BTreeSet::new(),
            trace_window: None,
            imported: false,
            headlines: OnceLock::new(),
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
    for (run_id, slices) in &tables.sched_slices {
        if let Some(run) = runs.get_mut(run_id.as_str()) {
            run.threads = ByThread::workloads(slices);
            run.all_slices = slices;
        }
    }
    for (run_id, migrations) in &tables.migrations {
        if let Some(run) = runs.get_mut(run_id.as_str()) {
            run.migrations = migrations;
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
    for (run_id, runtime) in &tables.sched_runtime {
        if let Some(run) = runs.get_mut(run_id.as_str()) {
            run.sched_runtime = runtime;
        }
    }
    for t in &tables.traces {
        if let Some(run) = runs.get_mut(t.run_id.as_str()) {
            // A damaged list names no CPU rather than a wrong one.
            let cpus = parse_cpu_list(&t.idle_blind_cpus).unwrap_or_default();
            run.idle_blind_cpus
                .extend(cpus.into_iter().map(|c| c as i32));
        }
    }
    runs.into_values().collect()
}

/// Computes the per-thread aggregates for every run, each run from its best source, over the
/// whole run and, with `also_in_trace_window`, over the run's trace window too. Only a run with
/// a trace and a window is computed twice; for the others both are the same rows. The "why
/// here" aggregates are [`why_here`]'s.
pub fn compute(
    runs: &[RunTables<'_>],
    startup_ns: i64,
    also_in_trace_window: bool,
) -> (Aggregates, Option<Aggregates>) {
    let per_run: Vec<(Aggregates, Option<Aggregates>)> = (runs.par_iter())
        .map(|run| {
            if run.threads.is_empty() {
                let whole = from_placement::aggregate(run, startup_ns);
                let same = also_in_trace_window.then(|| whole.clone());
                return (whole, same);
            }
            let whole = from_sched::aggregate(run, startup_ns, None);
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

/// The "why here" aggregates that `why` asks for, over the whole of each run with a trace: what
/// every CPU did when (written to `timeline`, a CPU at a time), and what that meant for each
/// workload thread (its placement_cost and wakeup_placement rows). The wakeups are counted
/// while the costs are computed and the timeline written: both only read the run's timeline.
fn why_here(
    runs: &[RunTables<'_>],
    why: WhyHere,
    timeline: Option<&BackgroundWriter<CpuTimelineRow>>,
) -> Result<Aggregates, TableError> {
    let mut out = Aggregates::default();
    let with_trace = runs.iter().filter(|run| !run.threads.is_empty());
    for (index, run) in (0u32..).zip(with_trace) {
        let cpus = Timeline::new(run.all_slices);
        let threads = placement_cost::workload_threads(run);
        let (costs, wakeups) = rayon::join(
            || {
                let (costs, idle_while_waiting) =
                    placement_cost::placement_cost(run, &cpus, &threads);
                if let Some(writer) = timeline {
                    // Encoded in the pool while the next CPU's rows are made.
                    cpus.write_rows(run, index, &idle_while_waiting, |stretches| {
                        writer.send_with(move |schema| stretches.table_batch(schema));
                        Ok::<(), TableError>(())
                    })?;
                }
                Ok::<_, TableError>(costs)
            },
            || (why.placement).then(|| wakeup_placement::wakeup_placement(run, &cpus, &threads)),
        );
        let costs = costs?;
        if let Some(wakeups) = wakeups {
            out.placement_cost.extend(costs);
            out.wakeup_placement.extend(wakeups);
        }
    }
    Ok(out)
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
    let asked = |kind| selection(steps, kind).is_some();
    let why = WhyHere {
        placement: asked(StepKind::PlacementCost) || asked(StepKind::WakeupPlacement),
        timeline_rows: asked(StepKind::CpuTimeline),
    };
    let tables = Tables::load(tables_dir, why.any())?;
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
    // The timeline is the whole machine's: a step's `workload` does not narrow it.
    let timeline = match why.timeline_rows {
        true => {
            let path = table_path::<CpuTimelineRow>(out_dir);
            create_parent(&path)?;
            Some(BackgroundWriter::<CpuTimelineRow>::create(&path)?)
        }
        false => None,
    };
    // None reads another's rows, so the per-thread figures are computed while the timeline is
    // walked and the CPUs per phase are counted.
    let references = step_workloads(steps, StepKind::CpuShare);
    let (((mut all, in_trace_window), why_rows), cpu_shares) = rayon::join(
        || {
            rayon::join(
                || compute(&runs, startup_ns, any_in_window),
                || match why.any() {
                    true => why_here(&runs, why, timeline.as_ref()),
                    false => Ok(Aggregates::default()),
                },
            )
        },
        || {
            (references.iter())
                .flat_map(|reference| {
                    (runs.par_iter())
                        .flat_map_iter(|run| cpu_share::cpu_share(run, reference.as_deref()))
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<CpuShareRow>>()
        },
    );
    all.extend(why_rows?);
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
    // Each thread's headline, for the "why here" roll-up, before the steps narrow `cpu_time`.
    let cpu_time = all.cpu_time.clone();
    let headlines: BTreeMap<(&str, i32), &CpuTimeRow> = (cpu_time.iter())
        .map(|c| ((c.run_id.as_str(), c.tid), c))
        .collect();
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
    if let Some(timeline) = timeline {
        written.push(timeline.finish()?);
    }
    write_step!(sched_delay_workloads, StepKind::SchedDelay);
    write_step!(migration_classes, StepKind::Migrations);
    write_step!(sched_delay_cdf, StepKind::SchedDelay);
    // The roll-ups of the per-thread tables, over the rows those steps kept.
    if asked(StepKind::Residency) {
        let mut classes: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
        for c in &tables.cpus {
            classes
                .entry(c.run_id.clone())
                .or_default()
                .insert(c.class.clone());
        }
        let rows = rollup::residency_rollup(&all.residency, &classes);
        written.push(write_table(out_dir, &rows)?);
    }
    if asked(StepKind::PlacementCost) {
        let wakeups = asked(StepKind::WakeupPlacement).then_some(all.wakeup_placement.as_slice());
        let rows = rollup::placement_cost_workloads(&all.placement_cost, wakeups, &headlines);
        written.push(write_table(out_dir, &rows)?);
    }
    if asked(StepKind::CpuTime) || asked(StepKind::Migrations) {
        let rows = rollup::totals(
            asked(StepKind::CpuTime).then_some(all.cpu_time.as_slice()),
            asked(StepKind::Migrations).then_some(all.migrations.as_slice()),
        );
        written.push(write_table(out_dir, &rows)?);
    }
    if asked(StepKind::CpuTime) {
        let with_workload: BTreeSet<&str> = (runs.iter())
            .filter(|run| !run.threads.is_empty())
            .map(|run| run.run_id)
            .collect();
        let without: BTreeSet<String> = (tables.traces.iter())
            .map(|t| t.run_id.as_str())
            .filter(|run| !with_workload.contains(run))
            .map(str::to_owned)
            .collect();
        let rows = busiest::busiest_threads(tables_dir, &without)?;
        if !rows.is_empty() {
            written.push(write_table(out_dir, &rows)?);
        }
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
        let mut rows =
            cpu_activity::activity(&turbostat, &tables.cpus, &tables.processes, &windows);
        // Runs without turbostat: a trace.dat's frequency and idle spans, where it has them.
        let covered: Vec<&str> = turbostat.iter().map(|s| s.run_id.as_str()).collect();
        let spans: Vec<CpuFreqIdleRow> = read_table(tables_dir)?;
        rows.extend(freq_idle_activity::activity(
            &spans,
            &tables.cpus,
            &tables.processes,
            &windows,
            &covered,
        ));
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

    if !references.is_empty() {
        written.push(write_table(out_dir, &cpu_shares)?);
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
