//! One struct per table. Field names are the column contract of DESIGN.md.
//!
//! Conventions: times are `*_ns` on CLOCK_MONOTONIC (i64), CPUs `cpu` (i32), thread and process
//! ids `tid` / `pid` (i32, since perf uses -1 for "unknown"). Every row carries `run_id`.
//! `Option` fields are nullable columns: null means "the source did not say", never zero.
//!
//! The per-event tables of a trace (`sched_slices`, `migrations`, `wakeups`) and `threads` hold
//! their repeated strings as `Arc<str>`: a reader shares one allocation per run id, command name,
//! state and workload instead of allocating per row. Serde writes them as plain strings, so the
//! Parquet columns are the same `Utf8` as a `String` field's.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::manifest::RunStatus;

/// One run of a pipeline: one expansion of the matrix, one repetition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub run_id: String,
    pub pipeline: String,
    pub label: Option<String>,
    /// The matrix values of this run as `key=value` pairs joined by `,` (empty without a matrix).
    pub variant: String,
    pub repetition: u32,
    pub host: String,
    pub kernel: String,
    pub cpu_model: String,
    /// RFC 3339 wall-clock time the run started.
    pub started_at: String,
    pub status: RunStatus,
    /// Wall-clock length of the collection in nanoseconds.
    pub duration_ns: i64,
    /// Span of the run's perf trace in which every CPU has data (null without a trace): numbers
    /// outside it may miss events of some CPU.
    pub trace_window_start_ns: Option<i64>,
    pub trace_window_end_ns: Option<i64>,
    /// `uname -v`: the kernel's build string, which tells two builds of one release apart (null
    /// for runs collected before schedlab recorded the configuration).
    pub kernel_build: Option<String>,
    /// BLAKE3 of the running kernel's config text (null where neither /proc/config.gz nor
    /// /boot/config-<release> could be read, or in older runs).
    pub kernel_config_digest: Option<String>,
    /// The scheduler configuration in force, one sorted `key=value` per line
    /// (`sched_config::settings_text`): scheduler CONFIG_ options, sched features and debugfs
    /// tunables, `kernel.sched_*` sysctls, isolated and nohz_full CPUs, microcode, governor and
    /// EPP per class, cpufreq driver, SMT, turbo, cgroup limits. Equal texts, equal
    /// configurations: a notebook groups on it. Null in older runs.
    pub sched_config: Option<String>,
    /// Whether the run's files were made without schedlab and imported (`schedlab import`):
    /// then process lifetimes come from the trace and what the import lacked is in `quality`.
    pub imported: bool,
}
table!(
    RunRow,
    "runs",
    encodings {
        run_id: DictionaryWithRange,
        pipeline: Dictionary,
        label: Dictionary,
        variant: Dictionary,
        host: Dictionary,
        kernel: Dictionary,
        cpu_model: Dictionary,
        started_at: Dictionary,
        status: Dictionary,
        duration_ns: Delta,
        trace_window_start_ns: Delta,
        trace_window_end_ns: Delta,
        kernel_build: Dictionary,
        kernel_config_digest: Dictionary,
        sched_config: Dictionary,
    },
);

/// One CPU of the run's machine and its core class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuRow {
    pub run_id: String,
    pub cpu: i32,
    pub core_id: Option<i32>,
    pub package_id: Option<i32>,
    /// Core class: `P`, `E`, `LPE`, or another name a pipeline declared.
    pub class: String,
    /// Where the class came from: `declared`, or the sysfs signal that decided it.
    pub class_source: String,
    /// Relative capacity (ARM `cpu_capacity`, or scaled from max frequency), where known.
    pub capacity: Option<i64>,
    pub max_khz: Option<i64>,
    /// The class's place by speed, 0 for the fastest: a declared `topology:`'s order, else
    /// capacity, then max frequency (null for `offline` and `unknown`). A pipeline's
    /// `class_order:` overrides it at aggregation.
    pub class_rank: Option<i32>,
}
table!(
    CpuRow,
    "cpus",
    encodings {
        run_id: DictionaryWithRange,
        class: Dictionary,
        class_source: Dictionary,
    },
);

impl CpuRow {
    /// A CPU known only by the class a pipeline declared for it (`topology:`), with none of
    /// the machine's own facts, as the parse stage's rows are for an import without a
    /// perf.data header (which it builds from `schedlab_topology::declared_cpus`). Tests of
    /// class logic build their hybrid machines from these, since the machines they run on are
    /// not hybrid.
    pub fn declared(run_id: &str, cpu: i32, class: &str, class_rank: Option<i32>) -> CpuRow {
        CpuRow {
            run_id: run_id.into(),
            cpu,
            core_id: None,
            package_id: None,
            class: class.into(),
            class_source: "declared".into(),
            capacity: None,
            max_khz: None,
            class_rank,
        }
    }
}

/// One process the runner started for a workload (or one built-in workload).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessRow {
    pub run_id: String,
    pub workload: String,
    /// Index among the workload's identical instances (0 for the first).
    pub instance: u32,
    pub pid: i32,
    pub start_ns: i64,
    pub end_ns: Option<i64>,
    pub exit_code: Option<i32>,
    pub nice: i32,
    /// CPU list the process was bound to (`0,2-3`), null when unbound.
    pub affinity: Option<String>,
    pub argv: Vec<String>,
}
table!(
    ProcessRow,
    "processes",
    encodings {
        run_id: DictionaryWithRange,
        workload: Dictionary,
        start_ns: Delta,
        end_ns: Delta,
        affinity: Dictionary,
    },
);

/// A time a thread spent on a CPU, ended by its switch-out (perf sched timehist semantics).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchedSliceRow {
    pub run_id: Arc<str>,
    pub cpu: i32,
    pub pid: i32,
    pub tid: i32,
    pub comm: Arc<str>,
    pub start_ns: i64,
    pub end_ns: i64,
    pub run_ns: i64,
    /// Time since the thread's previous switch-out.
    pub wait_ns: i64,
    /// Wakeup to switch-in (perf 6.1 meaning: zero after a preemption).
    pub sched_delay_ns: i64,
    /// Time spent runnable after a preemption (what newer perf adds to the delay).
    pub preempt_wait_ns: i64,
    /// Task state at switch-out as perf prints it (`S`, `D`, `R`, `R+`, …).
    pub prev_state: Arc<str>,
    pub workload: Option<Arc<str>>,
    /// The task's kernel priority while it ran (0-99 real-time, 100-139 for nice -20..19):
    /// sched_switch's `next_prio` at the switch-in that began the slice, or `prev_prio` of the
    /// switch-out that ended it where the trace did not see the switch-in. Null where the
    /// source has no priorities (`perf sched timehist` text).
    pub prio: Option<i32>,
}
table!(
    SchedSliceRow,
    "sched_slices",
    encodings {
        run_id: DictionaryWithRange,
        comm: Dictionary,
        start_ns: Delta,
        end_ns: Delta,
        run_ns: Delta,
        wait_ns: Delta,
        sched_delay_ns: Delta,
        preempt_wait_ns: Delta,
        prev_state: Dictionary,
        workload: Dictionary,
    },
    shares [run_id, comm, prev_state, workload],
);

/// A sched_migrate_task event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MigrationRow {
    pub run_id: Arc<str>,
    pub time_ns: i64,
    pub pid: i32,
    pub tid: i32,
    pub comm: Arc<str>,
    pub from_cpu: i32,
    pub to_cpu: i32,
    pub workload: Option<Arc<str>>,
}
table!(
    MigrationRow,
    "migrations",
    encodings {
        run_id: DictionaryWithRange,
        time_ns: Delta,
        comm: Dictionary,
        workload: Dictionary,
    },
    shares [run_id, comm, workload],
);

/// A wakeup (sched_waking, sched_wakeup or sched_wakeup_new).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WakeupRow {
    pub run_id: Arc<str>,
    pub time_ns: i64,
    pub pid: i32,
    pub tid: i32,
    pub comm: Arc<str>,
    pub target_cpu: i32,
    pub waker_tid: Option<i32>,
    /// `waking`, `wakeup` or `wakeup_new`.
    pub kind: Arc<str>,
    pub workload: Option<Arc<str>>,
}
table!(
    WakeupRow,
    "wakeups",
    encodings {
        run_id: DictionaryWithRange,
        time_ns: Delta,
        comm: Dictionary,
        kind: Dictionary,
        workload: Dictionary,
    },
    shares [run_id, comm, kind, workload],
);

/// A thread seen in a trace or in /proc, with its process and parent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadRow {
    pub run_id: Arc<str>,
    pub tid: i32,
    pub pid: i32,
    pub parent_tid: Option<i32>,
    /// The thread's last command name.
    pub comm: Arc<str>,
    pub start_ns: Option<i64>,
    pub end_ns: Option<i64>,
    pub workload: Option<Arc<str>>,
    /// The start of the thread's first slice on a CPU and the end of its last, in the trace
    /// (null when it never ran while recording): a lifetime where fork and exit were not
    /// recorded.
    pub first_run_ns: Option<i64>,
    pub last_run_ns: Option<i64>,
}
table!(
    ThreadRow,
    "threads",
    encodings {
        run_id: DictionaryWithRange,
        comm: Dictionary,
        start_ns: Delta,
        end_ns: Delta,
        workload: Dictionary,
        first_run_ns: Delta,
        last_run_ns: Delta,
    },
    shares [run_id, comm, workload],
);

/// One perf.data file that was read: what recorded it, where, on which clock, over which span.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceRow {
    pub run_id: String,
    /// The file as it was named to schedlab.
    pub file: String,
    pub perf_version: Option<String>,
    pub hostname: Option<String>,
    /// `uname -r` of the recording machine.
    pub os_release: Option<String>,
    pub arch: Option<String>,
    pub cpu_desc: Option<String>,
    /// perf's command line, its arguments joined by spaces.
    pub cmdline: Option<String>,
    /// The clock of the sample times: `CLOCK_MONOTONIC` (what schedlab records with, and what
    /// its other tables use) or another `CLOCK_*`, or `perf`: perf's default clock, which no
    /// other tool reads, so such times do not line up with process or sampler times.
    pub clock: String,
    pub nr_cpus_online: Option<i32>,
    pub nr_cpus_available: Option<i32>,
    /// On a hybrid machine, the CPUs of each core PMU as perf saw them
    /// (`cpu_core: 0-15; cpu_atom: 16-23`); null elsewhere.
    pub hybrid_pmus: Option<String>,
    /// First and last sched event in the file.
    pub first_ns: Option<i64>,
    pub last_ns: Option<i64>,
    /// The span in which every CPU has data (see `runs.trace_window_start_ns`).
    pub window_start_ns: Option<i64>,
    pub window_end_ns: Option<i64>,
    /// Events perf lost to ring-buffer overflows (details in `quality`).
    pub lost_events: i64,
    /// How the file was written: `file` (`perf record -o FILE`) or `pipe` (`perf record -o -`).
    pub layout: String,
    /// PERF_RECORD_COMPRESSED(2) records it held (`perf record -z`), decompressed to read it.
    pub compressed_records: i64,
    /// What the file is: `perf.data`, or `trace.dat v7 (zstd)`, `trace.dat v6` (null in tables
    /// written before trace.dat was read).
    pub file_format: Option<String>,
    /// For a trace.dat, the ftrace clock its buffer names (`local`, `mono`, `boot`, `x86-tsc`…),
    /// of which `clock` is the `CLOCK_*` equivalent where there is one; null for perf.data.
    pub trace_clock: Option<String>,
    /// Whether the file recorded sched_stat_runtime (`perf sched record` does): the kernel's own
    /// accounting of each thread's CPU time, table `sched_runtime`.
    pub kernel_runtime: bool,
    /// The CPUs that went idle but were never seen leaving idle (`1`, `0,3`; empty when none):
    /// the events recorded in idle context are missing there (some VMs' kernels record none),
    /// so each slice there also spans the idle time before it, and run times from slices are
    /// too high on them (details in `quality`).
    pub idle_blind_cpus: String,
}
table!(
    TraceRow,
    "traces",
    encodings {
        run_id: DictionaryWithRange,
        file: Dictionary,
        perf_version: Dictionary,
        hostname: Dictionary,
        os_release: Dictionary,
        arch: Dictionary,
        cpu_desc: Dictionary,
        cmdline: Dictionary,
        clock: Dictionary,
        hybrid_pmus: Dictionary,
        first_ns: Delta,
        last_ns: Delta,
        window_start_ns: Delta,
        window_end_ns: Delta,
        layout: Dictionary,
        file_format: Dictionary,
        trace_clock: Dictionary,
        idle_blind_cpus: Dictionary,
    },
);

/// One CPU's frequency and idle state over a span in which neither changed, from a trace.dat's
/// `power:cpu_frequency` and `power:cpu_idle` events: what Arm (and Android) traces carry
/// instead of turbostat. A span ends where the next event changes either, or at the trace's
/// last event. The `cpu_activity` aggregate and the report's activity plot read it for runs
/// without turbostat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuFreqIdleRow {
    pub run_id: String,
    /// The CPU the events name (their `cpu_id`, not the CPU that traced them).
    pub cpu: i32,
    pub start_ns: i64,
    pub end_ns: i64,
    /// The frequency the CPU's last cpu_frequency event set, in kHz (null before its first).
    pub freq_khz: Option<i64>,
    /// The cpuidle state the CPU is in (0 is the shallowest, WFI on Arm), or -1 while it runs
    /// (the event's exit value); null before its first cpu_idle event.
    pub idle_state: Option<i32>,
}
table!(
    CpuFreqIdleRow,
    "cpu_freq_idle",
    encodings {
        run_id: DictionaryWithRange,
        start_ns: Delta,
        end_ns: Delta,
    },
);

/// The kernel's own accounting of one thread's CPU time on one CPU: the `runtime` of its
/// sched_stat_runtime events summed. The kernel counts what the thread really ran (on its task
/// clock, without the time of interrupts it did not run in), whatever the trace missed, so
/// this stays right where slices are too long (see `traces.idle_blind_cpus`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchedRuntimeRow {
    pub run_id: String,
    /// The CPU that recorded the updates: the one the thread ran on, except for the few updates
    /// another CPU makes for it (a wakeup or a load balance from there), which it records.
    pub cpu: i32,
    pub pid: i32,
    pub tid: i32,
    /// The thread's last command name.
    pub comm: String,
    pub runtime_ns: i64,
    /// sched_stat_runtime events summed.
    pub events: i64,
    /// The first and last of those events.
    pub first_ns: i64,
    pub last_ns: i64,
    pub workload: Option<String>,
}
table!(
    SchedRuntimeRow,
    "sched_runtime",
    encodings {
        run_id: DictionaryWithRange,
        comm: Dictionary,
        runtime_ns: Delta,
        first_ns: Delta,
        last_ns: Delta,
        workload: Dictionary,
    },
);

/// A ring-buffer overflow perf reported (PERF_RECORD_LOST): events of one CPU missing from the
/// trace over a span. Numbers computed over a span that overlaps one are not exact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LossRow {
    pub run_id: String,
    /// The CPU whose ring buffer overflowed.
    pub cpu: i32,
    /// The CPU's last recorded sched_switch before the loss (null when it had none yet).
    pub since_ns: Option<i64>,
    /// When perf reported the loss: the events are missing between `since_ns` and this (null
    /// when the file's records carry no time). For a trace.dat, the first page after the loss,
    /// or for an overrun the CPU's first event (the overwritten ones came before it).
    pub until_ns: Option<i64>,
    /// How many events; -1 when the kernel did not say (a trace.dat page without room for the
    /// count).
    pub events: i64,
}
table!(
    LossRow,
    "losses",
    encodings {
        run_id: DictionaryWithRange,
        since_ns: Delta,
        until_ns: Delta,
    },
);

/// A sample of the CPU a thread was on, read from /proc/PID/task/TID/stat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementRow {
    pub run_id: String,
    pub time_ns: i64,
    pub pid: i32,
    pub tid: i32,
    pub comm: String,
    pub cpu: i32,
    /// Cumulative user + system CPU time of the thread at the sample.
    pub cpu_time_ns: i64,
    pub workload: Option<String>,
}
table!(
    PlacementRow,
    "placement",
    encodings {
        run_id: DictionaryWithRange,
        time_ns: Delta,
        comm: Dictionary,
        cpu_time_ns: Delta,
        workload: Dictionary,
    },
);

/// A built-in sampler row per CPU and interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuSampleRow {
    pub run_id: String,
    pub time_ns: i64,
    pub cpu: i32,
    pub busy_pct: Option<f64>,
    pub freq_khz: Option<i64>,
    /// Share of the interval in idle states deeper than polling, from cpuidle.
    pub idle_state_pct: Option<f64>,
    /// Package energy counter delta over the interval (RAPL), on the first CPU of a package only.
    pub package_energy_uj: Option<i64>,
}
table!(
    CpuSampleRow,
    "cpu_samples",
    encodings {
        run_id: DictionaryWithRange,
        time_ns: Delta,
    },
);

/// A figure a workload reported (or that the runner measured for it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadMetricRow {
    pub run_id: String,
    pub workload: String,
    pub instance: u32,
    /// Thread the figure is about, when it is per thread (the periodic workload's threads).
    pub tid: Option<i32>,
    /// The tool that reported it: `stress-ng`, `openssl`, `time`, `periodic`, …
    pub tool: String,
    pub metric: String,
    pub value: f64,
    pub unit: String,
}
table!(
    WorkloadMetricRow,
    "workload_metrics",
    encodings {
        run_id: DictionaryWithRange,
        workload: Dictionary,
        tool: Dictionary,
        metric: Dictionary,
        unit: Dictionary,
    },
);

word_enum! {
    /// How much a quality note weighs on a run's numbers.
    pub enum Severity {
        /// Worth knowing; the numbers stand (a monitor's own cost, a tool's version).
        Info = "info",
        /// Some numbers may be off (lost events, a skipped monitor).
        Warning = "warning",
        /// Numbers are missing or wrong (a monitor or a workload failed, a parse error).
        Error = "error",
    }
}

/// Something that makes a run's numbers less trustworthy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QualityRow {
    pub run_id: String,
    /// What reported it: a monitor or workload name, or a parser.
    pub source: String,
    pub severity: Severity,
    pub message: String,
    pub time_ns: Option<i64>,
    pub cpu: Option<i32>,
}
table!(
    QualityRow,
    "quality",
    encodings {
        run_id: DictionaryWithRange,
        source: Dictionary,
        severity: Dictionary,
        message: Dictionary,
        time_ns: Delta,
    },
);

/// One counter value printed by `perf stat` (per interval with `-I`, per CPU with `-A`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerfStatRow {
    pub run_id: String,
    /// End of the interval on the run clock (`-I`), when the runner knows when perf started.
    pub time_ns: Option<i64>,
    /// End of the interval since perf started, as `-I` prints it.
    pub offset_ns: Option<i64>,
    /// The CPU of a `-A` per-CPU row; null for aggregated counts.
    pub cpu: Option<i32>,
    /// Event name without its PMU (`cycles`, `task-clock`; `aperf` for `msr/aperf/`).
    pub event: String,
    /// The PMU of a `pmu/event/` name (`cpu_core`, `cpu_atom`, `msr`), null for plain names.
    pub pmu: Option<String>,
    /// Null when perf printed `<not counted>` or `<not supported>`.
    pub value: Option<f64>,
    /// The counter's unit as perf prints it (`msec` for task-clock), empty for plain counts.
    pub unit: String,
    /// Share of the time the counter was running (multiplexing), in percent.
    pub run_pct: Option<f64>,
    /// perf's derived metric next to the count (`1.56` of `insn per cycle`).
    pub metric_value: Option<f64>,
    pub metric_unit: Option<String>,
    pub workload: Option<String>,
}
table!(
    PerfStatRow,
    "perf_stat",
    encodings {
        run_id: DictionaryWithRange,
        time_ns: Delta,
        offset_ns: Delta,
        event: Dictionary,
        pmu: Dictionary,
        unit: Dictionary,
        metric_unit: Dictionary,
        workload: Dictionary,
    },
);

/// One thread's line of the `perf sched timehist -s` runtime summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimehistSummaryRow {
    pub run_id: String,
    pub tid: i32,
    pub pid: i32,
    pub comm: String,
    /// Parent pid as perf prints it (`-1` when perf did not see the fork).
    pub parent_pid: i32,
    /// Number of times the thread was switched in.
    pub sched_in: i64,
    pub run_ns: i64,
    pub min_run_ns: i64,
    pub avg_run_ns: i64,
    pub max_run_ns: i64,
    /// Standard deviation of the run times, in percent of the mean.
    pub stddev_pct: f64,
    /// Migration count (perf prints 0 unless `-M` was given).
    pub migrations: i64,
    /// Listed under `Terminated tasks:`.
    pub terminated: bool,
    pub workload: Option<String>,
}
table!(
    TimehistSummaryRow,
    "timehist_summary",
    encodings {
        run_id: DictionaryWithRange,
        comm: Dictionary,
        run_ns: Delta,
        min_run_ns: Delta,
        avg_run_ns: Delta,
        max_run_ns: Delta,
        workload: Dictionary,
    },
);
