//! Aggregate tables: the numbers the seed articles report, one file each under `aggregates/`.
//!
//! Every row says which `source` it was computed from: `sched` (a perf trace: exact) or
//! `placement` (/proc samples: an estimate at the sampling interval). Rows from a trace also say
//! how many events perf lost while the thread was seen (`lost_events`): figures over a span with
//! losses are flagged, not silently low.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Share of a thread's CPU time on one CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResidencyRow {
    pub run_id: String,
    pub workload: String,
    pub pid: i32,
    pub tid: i32,
    pub comm: String,
    pub cpu: i32,
    pub class: String,
    /// The thread's CPU time on this CPU, by the figure `headline` names.
    pub run_ns: i64,
    /// `run_ns` over the thread's CPU time in this run, 0..=1.
    pub share: f64,
    pub source: String,
    /// Events perf lost (ring-buffer overflows, table `losses`) while the thread was seen: when
    /// not 0 this row's figures are incomplete. Null for rows not computed from a trace.
    pub lost_events: Option<i64>,
    /// From a trace: its slices' run time on this CPU (null otherwise)...
    pub slice_ns: Option<i64>,
    /// ...and the kernel's accounting (sched_stat_runtime; null where the trace has none).
    pub kernel_ns: Option<i64>,
    /// Which of them `run_ns` is (see `cpu_time.headline`).
    pub headline: String,
    /// The CPU's idle went untraced (`traces.idle_blind_cpus`): slices here are too long.
    pub idle_blind: bool,
}

table!(
    ResidencyRow,
    "residency",
    encodings {
        run_id: DictionaryWithRange,
        workload: Dictionary,
        comm: Dictionary,
        class: Dictionary,
        run_ns: Delta,
        source: Dictionary,
        slice_ns: Delta,
        kernel_ns: Delta,
        headline: Dictionary,
    },
);

/// Migrations of one thread, split at the end of the start-up window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MigrationSummaryRow {
    pub run_id: String,
    pub workload: String,
    pub pid: i32,
    pub tid: i32,
    pub comm: String,
    pub migrations: i64,
    pub startup_migrations: i64,
    pub steady_migrations: i64,
    /// Mean time between consecutive steady-state migrations.
    pub steady_interval_mean_ns: Option<f64>,
    /// Migrations per second of the thread's lifetime.
    pub per_second: Option<f64>,
    pub source: String,
    /// Events perf lost (ring-buffer overflows, table `losses`) while the thread was seen: when
    /// not 0 this row's figures are incomplete. Null for rows not computed from a trace.
    pub lost_events: Option<i64>,
}

table!(
    MigrationSummaryRow,
    "migrations",
    encodings {
        run_id: DictionaryWithRange,
        workload: Dictionary,
        comm: Dictionary,
        source: Dictionary,
    },
);

/// Scheduling delay (wakeup to run) of one thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchedDelayRow {
    pub run_id: String,
    pub workload: String,
    pub pid: i32,
    pub tid: i32,
    pub comm: String,
    /// Slices that began with a wakeup (delay measured).
    pub wakeups: i64,
    pub mean_ns: Option<f64>,
    pub max_ns: Option<i64>,
    /// Events perf lost (ring-buffer overflows, table `losses`) while the thread was seen: when
    /// not 0 this row's figures are incomplete. Null for rows not computed from a trace.
    pub lost_events: Option<i64>,
    /// Percentiles of the wakeup delay (nearest rank: the smallest delay that at least p % of
    /// the delays do not exceed); null without wakeups.
    pub p50_ns: Option<i64>,
    pub p90_ns: Option<i64>,
    pub p99_ns: Option<i64>,
    /// Slices that began after a wait in a runnable state (`preempt_wait_ns > 0`): the thread
    /// had been preempted, or it was switched out runnable, and waited for a CPU again.
    pub preemptions: i64,
    /// Mean, percentiles (nearest rank) and maximum of those waits; null without any.
    pub preempt_wait_mean_ns: Option<f64>,
    pub preempt_wait_p50_ns: Option<i64>,
    pub preempt_wait_p90_ns: Option<i64>,
    pub preempt_wait_p99_ns: Option<i64>,
    pub preempt_wait_max_ns: Option<i64>,
}

table!(
    SchedDelayRow,
    "sched_delay",
    encodings {
        run_id: DictionaryWithRange,
        workload: Dictionary,
        comm: Dictionary,
        max_ns: Delta,
        p50_ns: Delta,
        p90_ns: Delta,
        p99_ns: Delta,
        preempt_wait_p50_ns: Delta,
        preempt_wait_p90_ns: Delta,
        preempt_wait_p99_ns: Delta,
        preempt_wait_max_ns: Delta,
    },
);

/// The `sched_delay` figures of a workload: over every wakeup delay and every wait after a
/// preemption of all its threads together (a percentile of the workload is not a mean of its
/// threads' percentiles).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchedDelayWorkloadRow {
    pub run_id: String,
    pub workload: String,
    /// Threads with a `sched_delay` row.
    pub threads: i64,
    pub wakeups: i64,
    pub mean_ns: Option<f64>,
    pub p50_ns: Option<i64>,
    pub p90_ns: Option<i64>,
    pub p99_ns: Option<i64>,
    pub max_ns: Option<i64>,
    pub preemptions: i64,
    pub preempt_wait_mean_ns: Option<f64>,
    pub preempt_wait_p50_ns: Option<i64>,
    pub preempt_wait_p90_ns: Option<i64>,
    pub preempt_wait_p99_ns: Option<i64>,
    pub preempt_wait_max_ns: Option<i64>,
    pub source: String,
    /// The threads' `lost_events`, summed (an event lost while two threads were seen counts for
    /// both).
    pub lost_events: Option<i64>,
}

table!(
    SchedDelayWorkloadRow,
    "sched_delay_workloads",
    encodings {
        run_id: DictionaryWithRange,
        workload: Dictionary,
        p50_ns: Delta,
        p90_ns: Delta,
        p99_ns: Delta,
        max_ns: Delta,
        preempt_wait_p50_ns: Delta,
        preempt_wait_p90_ns: Delta,
        preempt_wait_p99_ns: Delta,
        preempt_wait_max_ns: Delta,
        source: Dictionary,
    },
);

/// One point of a workload's wakeup-delay distribution (beside `sched_delay_workloads`): the
/// delay at a fixed cumulative share of its wakeups, so the report draws the CDF without the
/// slices. The shares are 0 to 1 in steps of 0.01, then 0.999 and 1 (the largest delay).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchedDelayCdfRow {
    pub run_id: String,
    pub workload: String,
    /// Cumulative share of the workload's wakeups, 0..=1.
    pub share: f64,
    /// The nearest-rank delay at `share` (the smallest delay at least that share of the
    /// wakeups does not exceed; the smallest delay at 0).
    pub delay_ns: i64,
    /// The workload's wakeups (the same on every point).
    pub wakeups: i64,
}

table!(
    SchedDelayCdfRow,
    "sched_delay_cdf",
    encodings {
        run_id: DictionaryWithRange,
        workload: Dictionary,
        delay_ns: Delta,
    },
);

/// A workload's migrations from one core class to another (a row for every pair of the run's
/// classes, 0 where it did not move that way), by what the thread was doing when it moved (from its `sched_slices`): waking (`at_wakeup`), waiting runnable (`runnable`), or
/// running (`running`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MigrationClassRow {
    pub run_id: String,
    pub workload: String,
    /// The classes of the CPUs it left and went to (`?` for a CPU the `cpus` table lacks).
    pub from_class: String,
    pub to_class: String,
    pub migrations: i64,
    /// The thread was asleep or new, or not yet seen running: the kernel placed it as it woke.
    pub at_wakeup: i64,
    /// It had been switched out runnable (`R`, `R+`) and had not run again: it was waiting
    /// for a CPU (load balancing pulled it).
    pub runnable: i64,
    /// It was inside one of its slices: on a CPU.
    pub running: i64,
    pub source: String,
    /// The `lost_events` of the workload's threads, summed, each thread's once: the events lost
    /// while they were seen, which may hide a migration of any pair (a 0 row included).
    pub lost_events: Option<i64>,
}

table!(
    MigrationClassRow,
    "migration_classes",
    encodings {
        run_id: DictionaryWithRange,
        workload: Dictionary,
        from_class: Dictionary,
        to_class: Dictionary,
        source: Dictionary,
    },
);

/// CPU time against wall time of one thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuTimeRow {
    pub run_id: String,
    pub workload: String,
    pub pid: i32,
    pub tid: i32,
    pub comm: String,
    /// The thread's CPU time, by the figure `headline` names.
    pub cpu_time_ns: i64,
    /// First to last time the thread was seen.
    pub wall_ns: i64,
    pub source: String,
    /// Events perf lost (ring-buffer overflows, table `losses`) while the thread was seen: when
    /// not 0 this row's figures are incomplete. Null for rows not computed from a trace.
    pub lost_events: Option<i64>,
    /// A cross-check, where the placement monitor sampled the thread beside a trace: its CPU
    /// time by /proc (utime + stime, in 10 ms ticks) from its first to its last sample...
    pub proc_check_ns: Option<i64>,
    /// ...and the trace's run time over the same span. A trace figure well above /proc's means
    /// the trace counts time the thread did not have the CPU (missing events; see `quality`).
    pub trace_check_ns: Option<i64>,
    /// Whether `trace_check_ns` is well above `proc_check_ns`: by a quarter, and by more than
    /// /proc's granularity (10 ms ticks over two samples, with slack: 50 ms). Null without the
    /// cross-check.
    pub trace_exceeds_proc: Option<bool>,
    /// From a trace: the thread's CPU time by its slices (null otherwise)...
    pub slice_ns: Option<i64>,
    /// ...and by the kernel's own accounting (sched_stat_runtime; null where the trace has none
    /// for the thread).
    pub kernel_ns: Option<i64>,
    /// Which figure `cpu_time_ns` is: `slices`; `kernel`, where the thread ran on an idle-blind
    /// CPU, the slices and the kernel differ by more than 5 % or /proc contradicts the slices
    /// (`trace_exceeds_proc`); `proc` (/proc's utime + stime) there when the trace has no
    /// kernel accounting, and for a run without a trace.
    pub headline: String,
    /// The CPUs it had slices on whose idle went untraced (`traces.idle_blind_cpus`; empty
    /// when none).
    pub idle_blind_cpus: String,
}

table!(
    CpuTimeRow,
    "cpu_time",
    encodings {
        run_id: DictionaryWithRange,
        workload: Dictionary,
        comm: Dictionary,
        cpu_time_ns: Delta,
        wall_ns: Delta,
        source: Dictionary,
        proc_check_ns: Delta,
        trace_check_ns: Delta,
        slice_ns: Delta,
        kernel_ns: Delta,
        headline: Dictionary,
        idle_blind_cpus: Dictionary,
    },
);

/// One of the threads that ran longest in a run whose trace names no workload (an import
/// without `--workload`): what the summary shows instead of an empty per-thread table. Written
/// beside `cpu_time`, for those runs only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BusiestThreadRow {
    pub run_id: String,
    /// 1 for the thread with the most CPU time.
    pub rank: i32,
    pub pid: i32,
    pub tid: i32,
    /// The command name of its last slice.
    pub comm: String,
    /// The kernel's accounting where the trace has it for the thread, its slices otherwise.
    pub cpu_time_ns: i64,
    /// Its time by its slices (too long on an idle-blind CPU: see `traces.idle_blind_cpus`).
    pub slice_ns: i64,
    /// Its time by the kernel's own accounting (sched_stat_runtime; null where the trace has
    /// none for the thread).
    pub kernel_ns: Option<i64>,
    /// `kernel` or `slices`: which figure `cpu_time_ns` is.
    pub headline: String,
    pub slices: i64,
    /// The CPUs it ran on, as a CPU list (`0-1,4`).
    pub cpus: String,
    /// `cpu_time_ns` against the trace's span (first to last slice of any thread): the share
    /// of one CPU it had.
    pub cpu_share: f64,
}

table!(
    BusiestThreadRow,
    "busiest_threads",
    encodings {
        run_id: DictionaryWithRange,
        comm: Dictionary,
        cpu_time_ns: Delta,
        slice_ns: Delta,
        kernel_ns: Delta,
        headline: Dictionary,
        cpus: Dictionary,
    }
);

/// How many threads `busiest_threads` keeps per run.
pub const BUSIEST_THREADS: usize = 10;

/// Throughput a workload reported against what it achieved in wall-clock time: `openssl speed`
/// measures CPU time unless `-elapsed`, so a descheduled process reports more than it delivered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThroughputRow {
    pub run_id: String,
    pub workload: String,
    pub instance: u32,
    /// The test, e.g. `sha256/16384`.
    pub test: String,
    pub ops: f64,
    pub block_bytes: f64,
    /// The time the tool measured, on its own clock (`cpu` or `wall`).
    pub measured_s: f64,
    pub measured_clock: String,
    /// The process's wall-clock share for this test (runner's start and end times, shared out
    /// between tests in proportion to their measured time).
    pub wall_s: f64,
    pub reported_bytes_per_s: Option<f64>,
    /// `ops * block_bytes / wall_s`.
    pub effective_bytes_per_s: f64,
}

/// A thread's CPU time per core class, or a process's or a workload's (its threads together) per
/// CPU and per core class: the `residency` rows summed, so the summary's class shares, its
/// per-worker placement and its one line for a workload of many threads are figures a notebook
/// reads too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResidencyRollupRow {
    pub run_id: String,
    pub workload: String,
    /// `thread`, `process` or `workload`: whose CPU time is split. A thread's split per CPU is
    /// the `residency` table itself, so `thread` rows are per class only.
    pub scope: String,
    /// The process (`thread` and `process` scopes; null for `workload`).
    pub pid: Option<i32>,
    /// The thread (`thread` scope only).
    pub tid: Option<i32>,
    /// The CPU, or null for a row of the whole class.
    pub cpu: Option<i32>,
    pub class: String,
    pub run_ns: i64,
    /// `run_ns` over the scope's CPU time in this run, 0..=1.
    pub share: f64,
    pub source: String,
    /// The threads' `lost_events`, summed (an event lost while two threads were seen counts for
    /// both). Null for rows not computed from a trace.
    pub lost_events: Option<i64>,
}

table!(
    ResidencyRollupRow,
    "residency_rollup",
    encodings {
        run_id: DictionaryWithRange,
        workload: Dictionary,
        scope: Dictionary,
        class: Dictionary,
        run_ns: Delta,
        source: Dictionary,
    },
);

/// A workload's threads' "why here" figures summed, per run: `placement_cost` (thread-seconds)
/// and `wakeup_placement` over every class pair. What the summary's "Why here?" part states.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementCostWorkloadRow {
    pub run_id: String,
    pub workload: String,
    /// How many of its threads ran while traced.
    pub threads: i64,
    /// The lowest and highest priority its threads ran at (null without priorities).
    pub prio_min: Option<i32>,
    pub prio_max: Option<i32>,
    pub run_ns: i64,
    pub slower_run_ns: i64,
    pub faster_idle_ns: i64,
    /// Null when no thread's slices carried priorities.
    pub faster_lower_prio_ns: Option<i64>,
    pub wait_ns: i64,
    pub wait_idle_ns: i64,
    /// Wakeups, and of them: back on the same CPU, onto another class than the thread last ran
    /// on, and onto a busy CPU while one of an equal or faster class was idle (null when the
    /// pipeline has no `wakeup_placement` step).
    pub wakeups: Option<i64>,
    pub same_cpu: Option<i64>,
    pub other_class: Option<i64>,
    pub onto_busy_while_idle: Option<i64>,
    /// Which figure its threads' run times (`run_ns`, `slower_run_ns`) are: their
    /// `cpu_time.headline`s, `kernel`, or `kernel, slices` where they differ.
    pub headline: String,
    /// The CPUs its threads' slices ran on whose idle went untraced (their
    /// `cpu_time.idle_blind_cpus`; empty when none).
    pub idle_blind_cpus: String,
}

table!(
    PlacementCostWorkloadRow,
    "placement_cost_workloads",
    encodings {
        run_id: DictionaryWithRange,
        workload: Dictionary,
        run_ns: Delta,
        slower_run_ns: Delta,
        faster_idle_ns: Delta,
        faster_lower_prio_ns: Delta,
        wait_ns: Delta,
        wait_idle_ns: Delta,
        headline: Dictionary,
        idle_blind_cpus: Dictionary,
    },
);

/// A process's or a workload's threads together: how many, their CPU time and their migrations
/// summed (the summary's per-worker migrations, and its one line for a workload of many threads).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TotalsRow {
    pub run_id: String,
    pub workload: String,
    /// `process` or `workload`.
    pub scope: String,
    /// The process (`process` scope; null for `workload`).
    pub pid: Option<i32>,
    /// Threads with a `cpu_time` or `migrations` row.
    pub threads: i64,
    /// Their `cpu_time_ns`, summed (null when the pipeline does not aggregate `cpu_time` for
    /// this workload).
    pub cpu_time_ns: Option<i64>,
    /// Their `migrations`, summed (null when the pipeline does not aggregate `migrations` for
    /// this workload).
    pub migrations: Option<i64>,
    pub source: String,
    /// The threads' `lost_events`, summed (an event lost while two threads were seen counts for
    /// both). Null for rows not computed from a trace.
    pub lost_events: Option<i64>,
}

table!(
    TotalsRow,
    "totals",
    encodings {
        run_id: DictionaryWithRange,
        workload: Dictionary,
        scope: Dictionary,
        cpu_time_ns: Delta,
        source: Dictionary,
    },
);

table!(
    ThroughputRow,
    "throughput",
    encodings {
        run_id: DictionaryWithRange,
        workload: Dictionary,
        test: Dictionary,
        measured_clock: Dictionary,
    },
);

/// One figure of one run as `schedlab compare` grouped it: the values a comparison's means,
/// intervals and trends are made of, for plotting each run in collection order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObservationRow {
    pub run_id: String,
    /// When the run started (RFC 3339): the collection order.
    pub started_at: String,
    pub group: String,
    pub context: String,
    pub workload: String,
    pub metric: String,
    pub unit: String,
    pub value: f64,
}

table!(
    ObservationRow,
    "observations",
    encodings {
        run_id: DictionaryWithRange,
        started_at: Dictionary,
        group: Dictionary,
        context: Dictionary,
        workload: Dictionary,
        metric: Dictionary,
        unit: Dictionary,
    },
);

/// One figure of one group of runs against the baseline group (`schedlab compare`): the mean over
/// the group's repetitions with its 95 % confidence interval, and the difference from the
/// baseline's mean with Welch's 95 % interval and the exact Mann-Whitney U test, so a 2 % change
/// can be told from noise, every figure's p adjusted together for the many figures tested; and
/// whether the group's runs drift with the order they were collected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonRow {
    /// The runs of the group, joined by `,` (a comparison spans runs, so it has no single run_id).
    pub run_ids: String,
    /// What the runs were grouped by: `label`, `variant` or a matrix variable.
    pub by: String,
    /// What else tells these runs apart (the other matrix values, or the label); groups are
    /// compared only within the same context.
    pub context: String,
    pub group: String,
    pub baseline: String,
    pub workload: String,
    /// `<tool>/<metric>` as in `workload_metrics`, or `runner/wall_s`, `sched/cpu_time_s` (or
    /// `placement/…`), `throughput/<test>/effective_bytes_per_s`, `cpu_share/<phase>`,
    /// `turbostat/<field>`.
    pub metric: String,
    pub unit: String,
    /// Completed runs that had this figure.
    pub runs: i64,
    pub mean: f64,
    /// Sample standard deviation (null for a single run).
    pub stddev: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// `(mean - baseline mean) / baseline mean`, in percent (null on the baseline's own rows).
    pub diff_pct: Option<f64>,
    pub diff_ci_low_pct: Option<f64>,
    pub diff_ci_high_pct: Option<f64>,
    pub verdict: Verdict,
    /// Two-sided p of Welch's t-test against the baseline (null where `diff_pct`'s interval is).
    pub welch_p: Option<f64>,
    /// The group's Mann-Whitney U against the baseline: pairs (group run, baseline run) in which
    /// the group's value is higher, a tie counting half.
    pub mann_whitney_u: Option<f64>,
    /// Two-sided p of the exact Mann-Whitney test (null beyond 120 runs in the two groups).
    pub mann_whitney_p: Option<f64>,
    /// Why the verdict is `inconclusive`, or why the rank test had no say (too few runs for it
    /// to reach p < 0.05); null otherwise.
    pub verdict_note: Option<String>,
    /// The group's first run in collection order against the mean of its other runs, in percent.
    pub first_vs_rest_pct: Option<f64>,
    /// Least-squares change per run over the group's runs in collection order, in `unit`.
    pub slope_per_run: Option<f64>,
    /// The slope's 95 % interval (from three runs).
    pub slope_ci_low: Option<f64>,
    pub slope_ci_high: Option<f64>,
    /// The slope's interval excludes 0: the runs drift with the order they were collected in.
    pub order_effect: bool,
    /// The p the verdict rests on: `welch_p`, or the exact rank test's p where that is larger and
    /// a group's runs are all equal (Welch's test then has one group's spread or none).
    pub verdict_p: Option<f64>,
    /// `verdict_p` adjusted (Benjamini–Hochberg) over every row of the comparison that has one:
    /// `higher` and `lower` need q < 0.05.
    pub q: Option<f64>,
    /// The Hodges–Lehmann shift against the baseline, in `unit`: the median of the differences
    /// (group run - baseline run) over every pair.
    pub hodges_lehmann: Option<f64>,
    /// The shift's 95 % interval, the shifts the exact rank test does not reject (null with too
    /// few runs for one: three against three or four).
    pub hodges_lehmann_ci_low: Option<f64>,
    pub hodges_lehmann_ci_high: Option<f64>,
    /// How `ci_low`/`ci_high` were computed: `t` (Student's t), or `bootstrap` (percentile, where
    /// Student's interval would leave the range the figure can take: a count below 0, a share
    /// above 1).
    pub ci_method: String,
    /// How the `diff_ci_*_pct` interval was computed: `welch`, or `bootstrap` (of the ratio of the
    /// means, where Welch's would fall below -100 % for a figure that cannot be negative); null
    /// with no interval.
    pub diff_ci_method: Option<String>,
    /// The other figures (`metric`s, joined by `,`) equal to this one in every run of the
    /// comparison: compared once, under this name, and adjusted for once.
    pub stands_for: Option<String>,
}

word_enum! {
    /// What a comparison row says of its group against the baseline.
    pub enum Verdict {
        /// The row is the baseline group's own.
        Baseline = "baseline",
        /// The interval of the difference lies above 0.
        Higher = "higher",
        /// The interval of the difference lies below 0.
        Lower = "lower",
        /// The interval of the difference includes 0.
        WithinNoise = "within noise",
        /// Fewer than two runs in this group or the baseline: no interval.
        TooFewRuns = "too few runs",
        /// The baseline group has no such figure in this context.
        NoBaselineRuns = "no baseline runs",
        /// Welch's interval and the exact Mann-Whitney test disagree (`verdict_note` says how).
        Inconclusive = "inconclusive",
    }
}

table!(
    ComparisonRow,
    "comparison",
    encodings {
        run_ids: Dictionary,
        by: Dictionary,
        context: Dictionary,
        group: Dictionary,
        baseline: Dictionary,
        workload: Dictionary,
        metric: Dictionary,
        unit: Dictionary,
        verdict: Dictionary,
        verdict_note: Dictionary,
        ci_method: Dictionary,
        diff_ci_method: Dictionary,
        stands_for: Dictionary,
    },
);

/// How many runs a comparison needs to resolve a difference of a given size: `schedlab plan`'s
/// answer, printed as a table or as JSON (not written as a file).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunsNeeded {
    pub context: String,
    pub workload: String,
    pub metric: String,
    /// The other figures equal to this one in every run (as `comparison.stands_for`).
    pub stands_for: Option<String>,
    pub group: String,
    pub baseline: String,
    /// Completed runs with this figure: the group's and the baseline's.
    pub runs: (usize, usize),
    /// The baseline's mean, which the difference to find is a percentage of.
    pub baseline_mean: f64,
    /// The two groups' standard deviations (the group's, the baseline's), as planned from.
    pub stddevs: (Option<f64>, Option<f64>),
    /// The larger of the two groups' standard deviations, in percent of the baseline's mean
    /// (`None` when a group has a single run).
    pub spread_pct: Option<f64>,
    /// Runs per group for 80 % power (`schedlab_analyze::stats::runs_to_detect`, rounded up).
    pub needed: Needed,
    /// Runs still to collect in the two groups together (0 beyond the cap).
    pub missing: usize,
    /// How long collecting them takes: per group, its missing runs times its runs' mean
    /// duration plus the pipeline's cooldown.
    pub collect_s: f64,
}

/// The runs per group a difference needs, or why there is no count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Needed {
    /// Runs per group, rounded up.
    Runs(usize),
    /// More than this many per group: the search stops at its cap.
    MoreThan(usize),
    /// A group has a single run: no spread to plan from.
    NoSpread,
    /// The baseline's mean is 0, so a percentage of it is no difference.
    ZeroMean,
}

/// What turbostat saw over a window (the whole run, or one workload's lifetime), per CPU, per
/// core class and for all CPUs: the per-CPU figures the seed articles read off turbostat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuActivityRow {
    pub run_id: String,
    /// `run`, or the workload whose lifetime (first start to last end) the window is.
    pub window: String,
    pub window_start_ns: Option<i64>,
    pub window_end_ns: Option<i64>,
    /// `cpu`, `class` or `all`.
    pub scope: String,
    pub cpu: Option<i32>,
    pub class: Option<String>,
    /// turbostat intervals whose middle falls in the window.
    pub samples: i64,
    /// Mean over the scope's CPUs and intervals.
    pub busy_pct: Option<f64>,
    pub avg_mhz: Option<f64>,
    /// Mean frequency while busy: each CPU's and interval's Bzy_MHz weighted by its Busy%, as
    /// turbostat's own summary row weighs it.
    pub bzy_mhz: Option<f64>,
    /// Idle-state residency (`CPU%c1`, `CPU%c6`), mean over the rows that have it (core-scoped
    /// fields are printed on a core's first thread only).
    pub c1_pct: Option<f64>,
    pub c6_pct: Option<f64>,
    pub core_tmp_c_max: Option<f64>,
    /// Mean package power over the window's intervals, from turbostat's summary rows (`all`
    /// scope only).
    pub pkg_watt: Option<f64>,
    pub source: String,
    /// `cpu` scope: Busy% at least [`BUSY_CPU_PCT`] (the summary lists only these CPUs). Null
    /// for the `class` and `all` scopes.
    pub busy: Option<bool>,
}

/// A CPU below this Busy% over a window is idle for the summary (it stays in `cpu_activity`):
/// seed page 2 reads "no other CPU exceeded 10 % utilisation".
pub const BUSY_CPU_PCT: f64 = 10.0;

table!(
    CpuActivityRow,
    "cpu_activity",
    encodings {
        run_id: DictionaryWithRange,
        window: Dictionary,
        window_start_ns: Delta,
        window_end_ns: Delta,
        scope: Dictionary,
        class: Dictionary,
        source: Dictionary,
    },
);

/// turbostat's figures per core class and interval (beside `cpu_activity`, over every interval
/// of the run): what the report's activity plot draws as a class's line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuActivityIntervalRow {
    pub run_id: String,
    /// turbostat's interval index, from 0.
    pub sample: i64,
    /// End of the interval on the run clock, when known.
    pub time_ns: Option<i64>,
    pub class: String,
    /// The class's CPU rows in the interval.
    pub cpus: i64,
    /// Means over the class's CPUs, as `cpu_activity` computes them for a window: `bzy_mhz`
    /// weighted by Busy%, C1/C6 over the rows that have them (a core's first thread).
    pub busy_pct: Option<f64>,
    pub avg_mhz: Option<f64>,
    pub bzy_mhz: Option<f64>,
    pub c1_pct: Option<f64>,
    pub c6_pct: Option<f64>,
    pub core_tmp_c_max: Option<f64>,
    pub source: String,
}

table!(
    CpuActivityIntervalRow,
    "cpu_activity_intervals",
    encodings {
        run_id: DictionaryWithRange,
        time_ns: Delta,
        class: Dictionary,
        source: Dictionary,
    },
);

/// How many CPUs a workload received in one phase of a run: before, during and after a
/// reference workload (seed page 8: the background had 15.96 CPUs before the foreground started
/// and 15.07 while it ran), or over the whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuShareRow {
    pub run_id: String,
    /// The workload whose lifetime splits the run into phases (null: one phase, `run`).
    pub reference: Option<String>,
    /// `before`, `during`, `after` (the reference's lifetime), or `run`.
    pub phase: String,
    pub phase_start_ns: i64,
    pub phase_end_ns: i64,
    pub workload: String,
    /// A core class, or `all`.
    pub class: String,
    /// CPU time the workload's threads had in the phase (on CPUs of `class`).
    pub cpu_ns: i64,
    /// `cpu_ns` over the phase's length: how many CPUs' worth it received.
    pub cpus: f64,
    pub source: String,
    /// `cpus` minus the same workload's and class's `cpus` in the phase before (0 where it had
    /// none there); null in the first phase.
    pub change_cpus: Option<f64>,
    /// `change_cpus` over this phase's length: the CPU-seconds the change gave or took.
    pub change_cpu_s: Option<f64>,
}

table!(
    CpuShareRow,
    "cpu_share",
    encodings {
        run_id: DictionaryWithRange,
        reference: Dictionary,
        phase: Dictionary,
        phase_start_ns: Delta,
        phase_end_ns: Delta,
        workload: Dictionary,
        class: Dictionary,
        cpu_ns: Delta,
        source: Dictionary,
    },
);

/// The largest step in package power over a window (seed page 8: "the transition occurred
/// approximately 35 seconds after OpenSSL started", the processor leaving its short-term turbo
/// power budget), found to the sampling interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerStepRow {
    pub run_id: String,
    /// The workload whose lifetime is searched and whose start times are counted from (null:
    /// the whole run, from its first process start).
    pub reference: Option<String>,
    /// End of the last interval before the step, on the run clock.
    pub time_ns: i64,
    /// `time_ns` after the reference's start (or the run's first process start). Only intervals
    /// that end within the reference's lifetime (or the run's processes') are searched.
    pub after_start_s: f64,
    pub before_watt: f64,
    pub after_watt: f64,
    /// `after_watt - before_watt`.
    pub step_watt: f64,
    /// `(after - before) / before`, in percent (null when the earlier level is 0 W).
    pub step_pct: Option<f64>,
    pub samples_before: i64,
    pub samples_after: i64,
    /// The step is at least 10 % of the earlier level and three times the spread within the two
    /// levels: a change of regime, not noise.
    pub significant: bool,
    /// `turbostat` (PkgWatt of its summary rows) or `cpu_samples` (RAPL energy per interval).
    pub source: String,
}

table!(
    PowerStepRow,
    "power_step",
    encodings {
        run_id: DictionaryWithRange,
        reference: Dictionary,
        time_ns: Delta,
        source: Dictionary,
    },
);

/// A stretch of one CPU's time in one state, from `sched_slices`: consecutive slices of the same
/// state and priority (and, for a workload, the same thread) merged. Time a CPU's trace does not
/// cover (before its first switch, after its last) has no row: it is unknown, not idle. Its
/// strings are shared (`Arc<str>`), as the event tables' are: a switch-heavy run has about as
/// many stretches as slices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuTimelineRow {
    pub run_id: Arc<str>,
    pub cpu: i32,
    pub class: Arc<str>,
    pub start_ns: i64,
    pub end_ns: i64,
    /// `idle`, `workload` (a thread of a pipeline workload ran) or `other` (any other task).
    pub state: Arc<str>,
    pub workload: Option<Arc<str>>,
    /// The thread that ran; null when idle, or when several other tasks ran one after another.
    pub tid: Option<i32>,
    pub comm: Option<Arc<str>>,
    /// The kernel priority of what ran (`sched_slices.prio`: 120 + nice for normal tasks, lower
    /// runs first); null when idle or unknown.
    pub prio: Option<i32>,
    /// Slices merged into this stretch.
    pub slices: i64,
    /// On idle stretches: a workload one of whose threads, allowed on this CPU, waited
    /// runnable on a CPU of this class or a slower one all through the stretch (idle stretches
    /// are cut where such waits begin and end); null otherwise.
    pub waiting: Option<Arc<str>>,
}

table!(
    CpuTimelineRow,
    "cpu_timeline",
    encodings {
        run_id: DictionaryWithRange,
        class: Dictionary,
        start_ns: Delta,
        end_ns: Delta,
        state: Dictionary,
        workload: Dictionary,
        comm: Dictionary,
        waiting: Dictionary,
    },
    shares [run_id, class, state, workload, comm, waiting],
);

/// What a workload thread's placement cost it (seed page 8: openssl on E-cores while nice-19
/// workers held the P-cores): time on a slower class than it could have had, and time waiting
/// while a CPU it may use sat idle. "Faster" follows the run's class order (`cpus.class_rank`,
/// or the pipeline's `class_order:`); "allowed" the thread's affinity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementCostRow {
    pub run_id: String,
    pub workload: String,
    pub pid: i32,
    pub tid: i32,
    pub comm: String,
    /// The thread's kernel priority (its most frequent `sched_slices.prio`; null if unknown).
    pub prio: Option<i32>,
    /// CPUs the thread was allowed on, as a CPU list.
    pub allowed_cpus: String,
    /// `affinity` (its process was bound), `unbound` (its process was started without a
    /// binding: every CPU) or `unknown` (no process row says: every CPU assumed).
    pub allowed_source: String,
    pub run_ns: i64,
    /// Run time on a class slower than the fastest class among its allowed CPUs.
    pub slower_run_ns: i64,
    /// Run time on a slower class while at least one allowed CPU of a faster class was idle.
    pub faster_idle_ns: i64,
    /// `faster_idle_ns` over `run_ns`.
    pub faster_idle_share: f64,
    /// The faster CPUs that were idle then.
    pub faster_idle_cpus: String,
    /// Run time on a slower class while an allowed faster CPU ran a task of lower priority
    /// (a higher `prio`: a higher nice); null when the thread's priority is unknown.
    pub faster_lower_prio_ns: Option<i64>,
    pub faster_lower_prio_share: Option<f64>,
    pub faster_lower_prio_cpus: String,
    /// Time runnable but not running: the delay after each wakeup and the wait after each
    /// preemption.
    pub wait_ns: i64,
    /// Of `wait_ns`, time during which at least one allowed CPU (of any class) other than the
    /// one it then ran on was idle.
    pub wait_idle_ns: i64,
    /// `wait_idle_ns` over `wait_ns` (0 without waits).
    pub wait_idle_share: f64,
    pub wait_idle_cpus: String,
    /// Events perf lost over the thread's span (see `residency.lost_events`).
    pub lost_events: Option<i64>,
}

table!(
    PlacementCostRow,
    "placement_cost",
    encodings {
        run_id: DictionaryWithRange,
        workload: Dictionary,
        comm: Dictionary,
        allowed_cpus: Dictionary,
        allowed_source: Dictionary,
        run_ns: Delta,
        slower_run_ns: Delta,
        faster_idle_ns: Delta,
        faster_idle_cpus: Dictionary,
        faster_lower_prio_ns: Delta,
        faster_lower_prio_cpus: Dictionary,
        wait_ns: Delta,
        wait_idle_ns: Delta,
        wait_idle_cpus: Dictionary,
    },
);

/// Where a workload thread's wakeups placed it, per pair of classes: the class of the CPU it
/// last ran on and that of the CPU it ran on next (the CPU the wakeup chose, unless a load
/// balance moved it before it ran).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WakeupPlacementRow {
    pub run_id: String,
    pub workload: String,
    pub pid: i32,
    pub tid: i32,
    pub comm: String,
    /// Class of the CPU the thread last ran on; [`NO_EARLIER_RUN`] for its first run.
    pub from_class: String,
    pub to_class: String,
    pub wakeups: i64,
    /// `wakeups` over the thread's wakeups.
    pub share: f64,
    /// Woken onto the CPU it last ran on.
    pub same_cpu: i64,
    /// Woken onto another CPU (of `to_class`).
    pub other_cpu: i64,
    /// Placed on a CPU that was running another task at the wakeup.
    pub onto_busy: i64,
    /// Of `onto_busy`: while an allowed CPU of an equal or faster class than `to_class` was idle.
    pub onto_busy_while_idle: i64,
    /// `same_cpu` and `other_cpu` over the thread's wakeups (all pairs): how often a wakeup put
    /// it back where it ran, or moved it (within the class, or across when the classes differ).
    pub same_cpu_share: f64,
    pub other_cpu_share: f64,
}

/// `wakeup_placement.from_class` of a thread's first wakeup in the trace: it had not run before.
pub const NO_EARLIER_RUN: &str = "none";

table!(
    WakeupPlacementRow,
    "wakeup_placement",
    encodings {
        run_id: DictionaryWithRange,
        workload: Dictionary,
        comm: Dictionary,
        from_class: Dictionary,
        to_class: Dictionary,
    },
);
