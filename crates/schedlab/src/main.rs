//! The schedlab command line: argument parsing and terminal output only (ripgrep's shape:
//! `main → run(args)`, errors printed with their chain, exit code 2 for usage and input errors).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use schedlab_parse::{ParseContext, ParserKind};
use schedlab_runner::Judgement;
use schedlab_runner::import::{ImportFile, ImportRequest};
use schedlab_runner::layout::{Layout, check_name_part};
use schedlab_runner::{Outcome, Runner, RunnerOptions, Stage, StageSelection};
use schedlab_spec::selector::WorkloadSelector;
use schedlab_spec::{CompileOptions, Plan};

/// Run Linux scheduler experiments and turn their traces into tables and reports.
///
/// A pipeline (YAML) describes four stages: collect (workloads and monitors such as
/// `perf sched record`), parse (raw files into Parquet tables), aggregate (the figures:
/// residency per CPU and core class, migrations, scheduling delay, CPU time, turbostat's
/// activity, CPUs per phase, the step in package power) and summarize (report/summary.md,
/// index.html, SVG plots). Every stage's output is kept under DATA/PIPELINE/, and a stage whose
/// inputs did not change is not run again. `compare` tells a real difference from noise.
#[derive(Parser)]
#[command(name = "schedlab", version, max_term_width = 100)]
struct Args {
    /// More log output (-v info, -vv debug); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a pipeline: collect what is missing, then parse, aggregate and summarize what is stale.
    ///
    /// Exit codes: 0 done; 1 a run collected now is `failed` (a workload exited with a non-zero
    /// code or was killed by a signal schedlab did not send, or a monitor failed); 3 a run
    /// collected now is `workload-stopped` (schedlab stopped a workload at the collection's end
    /// before it ended by itself; `stop: expected` on the workload says that is meant); 2
    /// invalid pipeline, input or environment; 130 interrupted. The quality table says how each
    /// workload ended.
    Run {
        pipeline: PathBuf,
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        form: Form,
        /// Tag every run of this invocation (e.g. the kernel under test); tagged runs are
        /// collected beside untagged ones. The same label in a later invocation (after a
        /// reboot, say) continues its runs: only the missing repetitions are collected.
        #[arg(long)]
        label: Option<String>,
        /// Repetitions instead of the pipeline's `repeat`. Run ids do not depend on it: raising
        /// it collects only the repetitions not yet on disk.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        repeat: Option<u32>,
        /// Start at this stage (collect, parse, aggregate, summarize) and recompute it and every
        /// later stage (collect collects the missing runs; only --force collects again).
        #[arg(long, value_parser = parse_stage, conflicts_with = "only")]
        from: Option<Stage>,
        /// Run this stage alone, recomputed (`--only collect` collects the missing runs and
        /// analyses nothing: what each test machine runs before `schedlab gather`).
        #[arg(long, value_parser = parse_stage)]
        only: Option<Stage>,
        /// Recompute every selected stage, fresh or not (collect: every run again, replacing it).
        #[arg(long)]
        force: bool,
        /// Print each run's timeline (what starts when, with which command line); start nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Parse, aggregate and summarize from the runs on disk; never collects.
    ///
    /// Only runs that are new or changed are parsed and aggregated (each run has its own
    /// partition of every table, `tables/<table>/run_id=<run>/`); the summary is then made from
    /// every run. With --runs, only those runs are parsed and aggregated and nothing is
    /// summarized, and several such commands may run at once on one data directory: a batch
    /// system can analyse one run per job, then run `schedlab analyze` once to summarize.
    Analyze {
        pipeline: PathBuf,
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        form: Form,
        /// Recompute every stage, fresh or not.
        #[arg(long)]
        force: bool,
        /// Parse and aggregate only these runs (ids as `schedlab status` lists them).
        #[arg(long, num_args = 1.., value_name = "RUN_ID")]
        runs: Vec<String>,
    },
    /// Check a pipeline's expectations: exit 0 when all hold, 1 when one fails, 2 when one
    /// cannot be judged.
    ///
    /// Brings the runs up to date as `run` does (collects the missing runs of --label, parses,
    /// aggregates and summarizes what is stale), then judges the pipeline's `expect:` entries
    /// on that label's runs (the summarize stage writes DATA/PIPELINE/report/expectations.parquet):
    /// a figure holds when it is within its bound in every run. It prints each expectation's
    /// value per run, their mean and the result; a failure names the figure, its value and the
    /// bound. It cannot judge when a figure is missing, a run failed, or a comparison has too
    /// few runs; an invalid pipeline or a run that cannot be collected exits 2 as well.
    ///
    /// With --bisect, "cannot judge" and errors exit 125, which `git bisect run` takes as
    /// "skip this commit":
    ///   git bisect start BAD GOOD
    ///   git bisect run schedlab check P.yaml --bisect
    /// (a kernel bisect builds and boots each commit's kernel and runs the check under it, with
    /// --label naming the commit, so that each kernel's runs are judged apart).
    #[command(verbatim_doc_comment)]
    Check {
        pipeline: PathBuf,
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        form: Form,
        /// Judge the runs of this label (collecting them as `run --label` does).
        #[arg(long)]
        label: Option<String>,
        /// Repetitions instead of the pipeline's `repeat` (as `run --repeat`).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        repeat: Option<u32>,
        /// Exit 125 (`git bisect run`'s "skip") instead of 2 when the runs cannot judge.
        #[arg(long)]
        bisect: bool,
    },
    /// Compare groups of runs: is a difference real, or noise?
    ///
    /// Groups the completed runs by their --label (e.g. the kernel each was collected under), by
    /// their whole matrix variant, by one matrix variable, or by repetition number (first runs
    /// against second runs). For every workload and figure it prints each group's mean over its
    /// repetitions with a 95 % confidence interval (Student's t), and its difference from the
    /// baseline group with Welch's 95 % interval and q: Welch's p adjusted together with every
    /// other figure's and group's of the comparison (Benjamini-Hochberg false discovery rate),
    /// since among 26 figures tested one or two pass p < 0.05 by chance alone. The verdict is
    /// `higher` or `lower` when q < 0.05, `within noise` otherwise, and `within noise` for any
    /// difference smaller than --min-effect. The exact Mann-Whitney U test checks Welch's from
    /// the ranks alone (its Hodges-Lehmann shift and interval are in the Parquet file); where it
    /// disagrees (and has runs enough to reach p < 0.05) the verdict is `inconclusive`. Where a
    /// group's runs are all equal (a count of 0 in every run), the rank test's p bounds
    /// Welch's. Intervals of figures that cannot be negative, or above 1 for a share, stay in
    /// that range: where Student's or Welch's would leave it, a percentile bootstrap (marked †)
    /// replaces it. A figure equal to another in every run is compared once, under the first
    /// name, the others in brackets: `cpu_share/run (= cpu_share/run/P)`. A group whose runs
    /// drift with the order they were collected in (a least-squares slope whose 95 % interval
    /// excludes zero) gets an "order effect" note under the table. Runs whose other matrix
    /// values or label differ (the context) are not compared with each other.
    ///
    /// Figures: everything in workload_metrics (`time/wall_time_s`, `stress-ng/…`,
    /// `openssl/…`), the runner's own wall time per workload process (`runner/wall_s`), CPU
    /// time summed over the workload's threads (`sched/cpu_time_s` or `placement/cpu_time_s`,
    /// when the pipeline aggregates cpu_time), openssl's throughput over wall time
    /// (`throughput/…`), CPUs received per phase in total and per class (`cpu_share/…`),
    /// residency per class (`residency/…`), migrations and their rate (`migrations/…`),
    /// scheduling delay mean and p99 after wakeup and after preemption (`sched_delay/…`),
    /// turbostat's figures for all CPUs and per class (`turbostat/…`), the power step
    /// (`power_step/…`), and the "Why here?" figures (`placement_cost/…`,
    /// `wakeup_placement/…`, `migration_classes/…`). Stale analysis stages run first (never
    /// collect); the result is
    /// written to DATA/PIPELINE/compare/by-BY.parquet, by-BY.md and by-BY.html (a chart per
    /// figure: each group's mean and 95 % interval against the baseline).
    #[command(verbatim_doc_comment)]
    Compare {
        pipeline: PathBuf,
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        form: Form,
        #[command(flatten)]
        groups: Groups,
        /// Print only the figures whose name contains this text (repeatable); the files keep
        /// every figure.
        #[arg(long)]
        metric: Vec<String>,
        /// Compare with the runs of another pipeline (in the same data directory), grouped by
        /// its matrix variants, as the baseline: e.g. a workload in a busy machine against the
        /// same workload alone. Written to compare/by-BY-against-OTHER.{parquet,md,html}.
        #[arg(long, value_name = "OTHER.yaml")]
        against: Option<PathBuf>,
        /// With --against: this pipeline's workload A is the other's B (repeatable); workloads
        /// of the same name match without it.
        #[arg(long, value_name = "A=B", value_parser = parse_map, requires = "against")]
        map: Vec<(String, String)>,
        /// The smallest difference that matters, in percent of the baseline's mean (`2%` or
        /// `2`): a smaller one is `within noise` whatever its q (a 0.3 % drift between labels
        /// collected an hour apart can be real and still not what was asked).
        #[arg(long, value_parser = parse_percent, value_name = "PERCENT")]
        min_effect: Option<f64>,
        /// Print the rows (those --metric selects) as a JSON array of the Parquet file's
        /// columns instead of the table (an infinite interval end is null).
        #[arg(long)]
        json: bool,
        /// Each workload's instances per core class they ran on (`background on LPE`: the
        /// mean of those instances per run; the pipeline must aggregate residency); with
        /// --against, against the other pipeline's runs pinned to that class, one baseline
        /// group. Written to compare/by-BY[-against-OTHER]-per-class.{parquet,md,html}.
        #[arg(long)]
        per_class: bool,
    },
    /// How many runs a comparison needs to resolve a difference of a given size
    ///
    /// From the spread the runs on disk already show, per workload, figure and group against
    /// the baseline (grouped as `compare` groups them): the repetitions each group needs for a
    /// two-sided Welch test at alpha 0.05 to find a difference of --detect percent of the
    /// baseline's mean with 80 % power, and how long collecting the missing runs takes (their
    /// group's mean run duration plus the pipeline's cooldown, per run). The count comes from
    /// the noncentral t distribution of Welch's statistic with equal group sizes (with equal
    /// spreads, what statsmodels' TTestIndPower.solve_power gives); it never grows with the
    /// difference asked for, and beyond 100000 runs per group it says "more than 100000". The
    /// count is per figure, at alpha 0.05: compare adjusts for the figures tested together, so
    /// a figure among many needs somewhat more. Stale analysis stages run first (never
    /// collect); nothing is written.
    #[command(verbatim_doc_comment)]
    Plan {
        pipeline: PathBuf,
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        form: Form,
        #[command(flatten)]
        groups: Groups,
        /// The difference to resolve, in percent of the baseline's mean: `1%` or `1`.
        #[arg(long, value_parser = parse_percent, value_name = "PERCENT")]
        detect: f64,
        /// Only the figures whose name contains this text (repeatable).
        #[arg(long)]
        metric: Vec<String>,
        /// Print the rows as a JSON array instead of the table (with the means and standard
        /// deviations planned from).
        #[arg(long)]
        json: bool,
    },
    /// Check pipelines without running anything: every error with file:line:column and a hint.
    Validate {
        #[arg(required = true)]
        pipelines: Vec<PathBuf>,
        #[command(flatten)]
        form: Form,
    },
    /// List the runs on disk and say, per stage and run, whether it is fresh or what made it
    /// stale.
    Status {
        pipeline: PathBuf,
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        form: Form,
        /// Which label's runs count as missing (as `run --label`).
        #[arg(long)]
        label: Option<String>,
        /// Repetitions instead of the pipeline's `repeat` (as `run --repeat`).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        repeat: Option<u32>,
    },
    /// Bring runs collected on other machines into one data directory (--data), verified.
    ///
    /// The many-machines workflow (docs/src/scale.md):
    ///   1. on each test machine:  schedlab run P.yaml --only collect --label HOST
    ///   2. bring each machine's data directory here: a mounted share, or
    ///      rsync -a HOST:schedlab/data/ hosts/HOST/
    ///   3. here:                  schedlab gather hosts/* --data data
    ///   4. once:                  schedlab analyze P.yaml --data data
    ///
    /// Each SRC is a data directory (SRC/PIPELINE/runs/RUN/: every pipeline in it, or
    /// --pipeline's) or a pipeline directory (SRC/runs/RUN/, named as you like: its runs go to
    /// the pipeline their manifests name). Only complete runs are gathered; partial and
    /// interrupted ones (names with a `.`) are left out. Every raw file is checked against the
    /// size and BLAKE3 digest its run's manifest recorded, and a file the manifest does not list
    /// refuses the run too. A refused run is not copied at all; the others still are.
    ///
    /// A run id already in DATA is skipped when its manifest is the same byte for byte (gathering
    /// a source again copies only its new runs), and refused as a duplicate otherwise: without
    /// --label, two machines give their runs the same ids. A run is copied as RUN.partial and
    /// renamed when all of it is verified and synced, under DATA/PIPELINE/.lock; Ctrl-C removes
    /// the run being copied. Exit code 2 when a run was refused.
    #[command(verbatim_doc_comment)]
    Gather {
        /// Data directories or pipeline directories to gather from.
        #[arg(required = true)]
        sources: Vec<PathBuf>,
        #[command(flatten)]
        common: Common,
        /// Gather only the runs of this pipeline.
        #[arg(long)]
        pipeline: Option<String>,
    },
    /// Add files recorded without schedlab as a new run of PIPELINE, for `schedlab analyze`.
    ///
    /// The files are what the seed articles' shell scripts leave behind: a perf.data from
    /// `perf sched record -a` (file or pipe mode, compressed records or not), `perf sched
    /// timehist` text, a turbostat log, the output of stress-ng, openssl speed or `time -v`,
    /// perf stat's; `-` reads one from standard input. Each file's kind is told from its
    /// content (one line per file says which, and why); --as says it instead. The files are
    /// hard-linked (or copied) into DATA/PIPELINE/runs/RUN/raw/ with a manifest saying where
    /// they came from, their digests, and what an import cannot know (process start and end
    /// times, the sysfs topology, ...), which the quality table repeats. Importing the same
    /// files again is refused: the run id is made from their digests.
    ///
    /// Workloads are found in the trace by --workload NAME=SELECTOR (or the pipeline's
    /// `import: workloads:`), SELECTOR one of:
    ///   comm:NAME    threads of that command name (comm:stress-ng* for a prefix), and what
    ///                they fork
    ///   pid:PID      the threads of one process
    ///   tree:PID     a process, its threads and every process forked from them
    /// A workload's lifetime is its threads' span in the trace. A tool's output goes to the
    /// only workload, or to the one named like the tool; write it as NAME=FILE otherwise.
    ///
    /// Example (seed page 8's foreground-vs-background, recorded by hand):
    ///   schedlab import pipelines/imported.yaml perf.data stress.txt speed.txt \
    ///     --workload background=comm:stress-ng* --workload foreground=comm:openssl \
    ///     --label by-hand
    ///   schedlab analyze pipelines/imported.yaml
    /// or straight from perf, with no file in between:
    ///   perf sched record -a -k CLOCK_MONOTONIC -o - -- CMD | \
    ///     schedlab import pipelines/imported.yaml - --workload app=comm:CMD
    #[command(verbatim_doc_comment)]
    Import {
        pipeline: PathBuf,
        /// Files to import, each FILE or NAME=FILE (the output of workload NAME); `-` is
        /// standard input.
        #[arg(required = true, value_name = "[NAME=]FILE")]
        files: Vec<String>,
        #[command(flatten)]
        common: Common,
        /// How a workload's threads are found in the trace: NAME=comm:NAME, NAME=pid:PID or
        /// NAME=tree:PID (repeatable; replaces the pipeline's selector of the same name).
        #[arg(long = "workload", value_name = "NAME=SELECTOR", value_parser = parse_workload)]
        workloads: Vec<WorkloadSelector>,
        /// Tag the run, as `schedlab run --label` does (compare groups by it).
        #[arg(long)]
        label: Option<String>,
        /// A variable of the run, k=v (repeatable): `compare --by k` groups by it.
        #[arg(long = "var", value_name = "K=V", value_parser = parse_var)]
        vars: Vec<(String, String)>,
        /// The kind of every file, instead of telling it from the content: perf-sched,
        /// trace-cmd, timehist, turbostat, stress-ng, openssl, time, perf-stat.
        #[arg(long = "as", value_name = "KIND", value_parser = parse_named_kind)]
        kind: Option<ParserKind>,
        /// Read a perf.data cut short or left unfinished by perf, or a v6 trace.dat cut inside
        /// its CPU data, as far as it goes (see `schedlab parse --salvage`).
        #[arg(long)]
        salvage: bool,
    },
    /// Run one parser on existing files and write its tables as Parquet into --out.
    ///
    /// The rows of all INPUTS go into one file per table, in the order the inputs are given;
    /// files are parsed in parallel. perf-sched reads perf.data natively (perf is not needed)
    /// and writes sched_slices, migrations, wakeups, threads, traces, losses and quality;
    /// trace-cmd reads trace.dat (v6, v7) natively into the same tables and cpu_freq_idle;
    /// timehist reads the text of `perf sched timehist [-M] [-V] [-w] [-s]`. The tables appear
    /// together when every input was read, or not at all; the paths written are printed.
    #[command(verbatim_doc_comment)]
    Parse {
        /// perf-sched, trace-cmd, timehist, turbostat, stress-ng, openssl, time, perf-stat, or
        /// `auto`: told
        /// from each file's content (one line per file says what was found, and why).
        #[arg(value_parser = parse_kind)]
        kind: ParserChoice,
        /// Files to read (perf.data for perf-sched, trace.dat for trace-cmd, the tool's saved
        /// output otherwise).
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Directory for the tables (created if needed; existing tables are replaced).
        #[arg(long)]
        out: PathBuf,
        /// run_id written into every row.
        #[arg(long, default_value = "standalone")]
        run_id: String,
        /// Read a perf.data that was cut short (interrupted copy, full disk) or that perf did
        /// not finish (killed: its header's data size is 0) up to its last complete record,
        /// or a v6 trace.dat cut inside its CPU data up to each CPU's last complete page, with
        /// a quality row saying how many bytes could not be read and what was lost.
        #[arg(long)]
        salvage: bool,
    },
    /// Write a run in a format other tools open (see `schedlab export perfetto --help`).
    Export {
        #[command(subcommand)]
        format: ExportFormat,
    },
    /// Print this machine's CPUs and their core classes (P, E, LPE; big/little).
    Topology {
        /// Read a captured sysfs tree (the directory holding devices/system/cpu, or one holding
        /// sys/) instead of /sys.
        #[arg(long)]
        sysfs: Option<PathBuf>,
    },
    /// The built-in periodic workload (started by the collector, not meant to be typed).
    #[command(hide = true)]
    PeriodicWorker {
        #[arg(long)]
        threads: u32,
        #[arg(long)]
        period_ns: u64,
        #[arg(long)]
        busy_ns: u64,
        #[arg(long)]
        duration_ns: u64,
        #[arg(long)]
        report: PathBuf,
    },
}

/// The two trace formats of `schedlab export perfetto`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TraceFormat {
    Pftrace,
    Json,
}

/// The formats `schedlab export` writes.
#[derive(Subcommand)]
enum ExportFormat {
    /// A run's trace for ui.perfetto.dev, for drill-down beyond the report.
    ///
    /// Writes Perfetto's protobuf trace (.pftrace) by default: each slice's sched_switch, the
    /// wakeups (sched_waking, sched_wakeup, sched_wakeup_new), migrations, thread exits,
    /// cpu_frequency and cpu_idle in per-CPU ftrace bundles, so that Perfetto draws its CPU
    /// tracks, thread states and wakeups; the processes and threads with their names; each
    /// CPU's core class (CpuInfo's processor); counter tracks from the `cpu` monitor and
    /// turbostat; and the workloads' lifetimes on a `workloads` track. Times are the tables'
    /// CLOCK_MONOTONIC nanoseconds. `--format json` writes the Chrome JSON trace event format
    /// instead (slices as generic tracks, times in microseconds since otherData.origin_ns). The
    /// run must be analysed (its tables written). Examples:
    ///   schedlab export perfetto data/quickstart/runs/177b5fd3-r1 --out run.pftrace
    ///   schedlab export perfetto pipelines/quickstart.yaml --run 177b5fd3-r1 --out run.pftrace
    ///   schedlab export perfetto data/quickstart/runs/177b5fd3-r1 --format json --out run.json
    #[command(verbatim_doc_comment)]
    Perfetto {
        /// The run's directory (DATA/PIPELINE/runs/RUN_ID), or the pipeline file, with --run.
        #[arg(value_name = "RUN_DIR|PIPELINE.yaml")]
        source: PathBuf,
        /// With a pipeline file: the run (as `schedlab status` lists it); not needed when the
        /// pipeline has one run on disk.
        #[arg(long = "run", value_name = "RUN_ID")]
        run_id: Option<String>,
        /// The trace file to write (replaced whole; nothing is left half-written); with
        /// `--format json`, a name ending in .gz is gzip-compressed, about a tenth of the size,
        /// and opens the same.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// pftrace: Perfetto's protobuf trace; json: the Chrome JSON trace event format.
        #[arg(long, value_enum, default_value_t = TraceFormat::Pftrace)]
        format: TraceFormat,
        #[command(flatten)]
        common: Common,
    },
}

#[derive(clap::Args)]
struct Common {
    /// Where pipeline data lives: DATA/PIPELINE/{runs,tables,aggregates,report}.
    #[arg(long, default_value = "data", env = "SCHEDLAB_DATA")]
    data: PathBuf,
}

/// Which form of the pipeline a command is about.
#[derive(clap::Args, Clone, Copy)]
struct Form {
    /// The pipeline's short form (its `short:` values: seconds instead of minutes, one
    /// repetition), named PIPELINE-short, so that its runs have their own data directory.
    #[arg(long)]
    short: bool,
}

impl From<Form> for Scope {
    fn from(form: Form) -> Scope {
        Scope {
            short: form.short,
            ..Scope::default()
        }
    }
}

/// How `compare` and `plan` group runs.
#[derive(clap::Args)]
struct Groups {
    /// `label`, `variant`, `repetition`, or the name of a matrix variable.
    #[arg(long, default_value = "label")]
    by: String,
    /// The group the others are compared with (a matrix variable's value alone will do).
    /// Default: the group with the most runs, ties going to the label collected first, the first
    /// repetition, or the matrix's first value as the pipeline lists it (so a lone run beside
    /// groups of several is never the baseline); with --against, the other pipeline's.
    #[arg(long)]
    baseline: Option<String>,
    /// Only these groups, comma-separated (names, or a matrix variable's values alone):
    /// `--groups a,b` leaves out the runs of any other label.
    #[arg(long = "groups", value_delimiter = ',', value_name = "GROUP,...")]
    only: Vec<String>,
}

impl Groups {
    fn selection(&self) -> schedlab_runner::Selection {
        schedlab_runner::Selection {
            baseline: self.baseline.clone(),
            groups: self.only.clone(),
        }
    }
}

/// `a=b`: a workload of this pipeline and one of another.
fn parse_map(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((a, b)) if !a.is_empty() && !b.is_empty() => Ok((a.to_owned(), b.to_owned())),
        _ => Err(format!(
            "`{text}` is not A=B (this pipeline's workload = the other's)"
        )),
    }
}

/// `1%`, `1 %` or `1`: a positive percentage.
fn parse_percent(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(percent) if percent > 0.0 && percent.is_finite() => Ok(percent),
        _ => Err(format!("`{text}` is not a positive percentage (e.g. `2%`)")),
    }
}

fn parse_stage(text: &str) -> Result<Stage, String> {
    Stage::from_name(text).ok_or_else(|| {
        format!("unknown stage `{text}` (stages: collect, parse, aggregate, summarize)")
    })
}

/// The parser `schedlab parse` was asked for.
#[derive(Debug, Clone, Copy)]
enum ParserChoice {
    Named(ParserKind),
    /// Told from the files' content.
    Auto,
}

fn parse_kind(text: &str) -> Result<ParserChoice, String> {
    if text == "auto" {
        return Ok(ParserChoice::Auto);
    }
    ParserKind::from_name(text)
        .map(ParserChoice::Named)
        .ok_or_else(|| {
            let names: Vec<&str> = ParserKind::ALL.iter().map(|k| k.name()).collect();
            format!(
                "unknown parser `{text}` (parsers: {}, auto)",
                names.join(", ")
            )
        })
}

fn parse_named_kind(text: &str) -> Result<ParserKind, String> {
    match parse_kind(text)? {
        ParserChoice::Named(kind) => Ok(kind),
        ParserChoice::Auto => Err("`auto` is what happens without --as".into()),
    }
}

fn parse_workload(text: &str) -> Result<WorkloadSelector, String> {
    text.parse()
        .map_err(|err: schedlab_spec::selector::SelectError| err.to_string())
}

fn parse_var(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.to_owned())),
        _ => Err(format!("`{text}` is not K=V")),
    }
}

/// `NAME=FILE` names the workload whose output FILE is; a path that exists as given is a file,
/// even with a `=` in it.
fn import_file(text: &str) -> ImportFile {
    match text.split_once('=') {
        Some((name, path)) if !Path::new(text).exists() && !name.contains('/') => ImportFile {
            path: PathBuf::from(path),
            workload: Some(name.to_owned()),
        },
        _ => ImportFile {
            path: PathBuf::from(text),
            workload: None,
        },
    }
}

/// `import`: adds the files as a run of the pipeline and says what to run next.
fn import(pipeline: &Path, common: &Common, request: &ImportRequest) -> anyhow::Result<ExitCode> {
    let plan = load_plan(pipeline, None, false)?;
    if let Some(label) = &request.label
        && let Err(rule) = check_name_part(label)
    {
        bail!("label `{label}` is not usable in a directory name (hint: {rule})");
    }
    let say = |line: &str| eprintln!("{line}");
    let report = schedlab_runner::import::import(&plan, &common.data, request, &say)?;
    println!(
        "imported {} file(s) as run {} of pipeline `{}`{}",
        report.files.len(),
        report.run_id,
        plan.name,
        if report.copied {
            " (copied: the files are on another file system)"
        } else {
            ""
        }
    );
    eprintln!(
        "next: `schedlab analyze {}` parses, aggregates and summarizes it with the other runs",
        pipeline.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The one kind of `inputs`, told from their content; each file's kind and evidence said on
/// stderr. Files of different kinds would replace each other's tables in one --out, so they
/// are an error, as is a file no rule recognises.
fn detect_kind(inputs: &[PathBuf]) -> anyhow::Result<ParserKind> {
    let mut kinds = Vec::new();
    for input in inputs {
        let detected = schedlab_parse::detect::detect_file(input)
            .with_context(|| format!("{}: cannot read it", input.display()))?;
        let Some(detected) = detected else {
            let names: Vec<&str> = ParserKind::ALL.iter().map(|k| k.name()).collect();
            anyhow::bail!(
                "{}: not recognisably the output of any parser's tool; hint: name its parser \
                 instead of `auto` ({})",
                input.display(),
                names.join(", ")
            );
        };
        eprintln!(
            "{}: {} ({})",
            input.display(),
            detected.kind,
            detected.evidence
        );
        kinds.push(detected.kind);
    }
    kinds.sort();
    kinds.dedup();
    match kinds[..] {
        [kind] => Ok(kind),
        _ => anyhow::bail!(
            "the files are of different kinds ({}): parse each kind into its own --out",
            kinds
                .iter()
                .map(|k| k.name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Exit code for errors in what the user gave (pipeline, input files).
const EXIT_INPUT: u8 = 2;
/// Asks glibc's allocator to keep freed memory for reuse rather than hand it back to the kernel,
/// in one arena.
///
/// Parsing a trace allocates and frees megabytes per block (decoded events, Arrow arrays); by
/// default glibc serves such sizes with fresh mmaps and trims freed heap, so every block paid
/// for page faults and zeroing again. Up to 64 MiB of freed memory stays with the process.
///
/// One arena: glibc gives threads arenas of their own (up to eight per core), and each keeps
/// what was freed in it. The reader's rayon threads and the encoders allocate and free the same
/// megabytes in turn, so with many arenas every one grows to the largest block any thread has
/// held there, and peak memory with them. jemalloc and mimalloc were no better: as much memory
/// or more with their default decay, less only when returning every freed page at once, at many
/// times the system CPU time.
fn keep_freed_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: called first thing in main, before any other thread exists; mallopt only sets
    // allocator tunables and is harmless if it refuses a value.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
}

/// Runs `parse` under a progress bar on a terminal: bytes read for perf.data (the reader counts
/// them into the context), a spinner with the elapsed time for text.
fn with_parse_progress<T>(
    kind: ParserKind,
    inputs: &[PathBuf],
    mut ctx: ParseContext,
    parse: impl FnOnce(&ParseContext) -> T,
) -> T {
    use schedlab_runner::progress;
    use std::sync::atomic::AtomicU64;

    let what = format!("parse {kind}");
    if !kind.is_trace_file() {
        let bar = progress::spinner(&what);
        let result = parse(&ctx);
        bar.finish_and_clear();
        return result;
    }
    let total = (inputs.iter())
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let bar = progress::bytes_bar(&what, total);
    let read = Arc::new(AtomicU64::new(0));
    ctx.bytes_read = Some(read.clone());
    // The bar follows the counter ten times a second and stops the moment parsing ends (a
    // plain sleep here kept every command waiting up to 100 ms, a quarter of a large parse).
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let result = std::thread::scope(|scope| {
        let (bar, read) = (bar.clone(), read.clone());
        scope.spawn(move || {
            while let Err(RecvTimeoutError::Timeout) =
                stopped.recv_timeout(Duration::from_millis(100))
            {
                bar.set_position(read.load(Ordering::Relaxed));
            }
        });
        let result = parse(&ctx);
        drop(stop);
        result
    });
    bar.finish_and_clear();
    result
}

/// `check --bisect`'s exit code when the runs cannot judge: `git bisect run`'s "skip".
const EXIT_SKIP: u8 = 125;

/// Exit code after Ctrl-C / SIGTERM, as shells report SIGINT.
const EXIT_INTERRUPTED: u8 = 130;

/// Exit code when a run collected now is `workload-stopped`: its figures may cover only part of
/// a workload's work, which a script must be able to tell from a run that failed (1).
const EXIT_WORKLOAD_STOPPED: u8 = 3;

fn main() -> ExitCode {
    keep_freed_memory();
    let args = Args::parse();
    init_logging(args.verbose);
    match run(args) {
        Ok(code) => code,
        Err(err) => {
            print_error(&err);
            ExitCode::from(EXIT_INPUT)
        }
    }
}

fn print_error(err: &anyhow::Error) {
    match err.downcast_ref::<InvalidPipeline>() {
        // Diagnostics carry their own `file:line:column: error:` prefix.
        Some(invalid) => eprintln!("{invalid}"),
        None => eprintln!("schedlab: error: {}", error_message(err)),
    }
}

/// The error and its causes, each said once. A library error often puts its cause in its own
/// message as well (`{path}: {source}`), where `{:#}` would print the cause twice.
fn error_message(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain().map(ToString::to_string) {
        if !text.contains(&cause) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&cause);
        }
    }
    text
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal());
    // Warnings a user reads at a glance need no timestamp; -v logs are for following a run.
    if verbose == 0 {
        logs.without_time().init();
    } else {
        logs.init();
    }
}

fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Run {
            pipeline,
            common,
            form,
            label,
            repeat,
            from,
            only,
            force,
            dry_run,
        } => {
            let selection = match (from, only) {
                (Some(stage), _) => StageSelection::from(stage),
                (_, Some(stage)) => StageSelection::only(stage),
                _ => StageSelection::all(),
            };
            let selection = if force {
                selection.forcing_all()
            } else {
                selection
            };
            let scope = Scope {
                label,
                repeat,
                short: form.short,
                ..Scope::default()
            };
            if dry_run {
                return dry_run_timeline(&pipeline, &common, scope, selection);
            }
            execute(&pipeline, &common, scope, selection)
        }
        Command::Analyze {
            pipeline,
            common,
            form,
            force,
            runs,
        } => {
            let selection = if force {
                StageSelection::analysis().forcing_all()
            } else {
                StageSelection::analysis()
            };
            let scope = Scope {
                runs: (!runs.is_empty()).then_some(runs),
                short: form.short,
                ..Scope::default()
            };
            execute(&pipeline, &common, scope, selection)
        }
        Command::Check {
            pipeline,
            common,
            form,
            label,
            repeat,
            bisect,
        } => {
            let scope = Scope {
                label,
                repeat,
                short: form.short,
                ..Scope::default()
            };
            let checked = check(&pipeline, &common, scope, bisect);
            match checked {
                Err(err) if bisect => {
                    print_error(&err);
                    Ok(ExitCode::from(EXIT_SKIP))
                }
                checked => checked,
            }
        }
        Command::Compare {
            pipeline,
            common,
            form,
            groups,
            metric,
            against,
            map,
            min_effect,
            json,
            per_class,
        } => {
            let asked = Asked {
                groups: &groups,
                metric: &metric,
                min_effect,
                json,
                per_class,
            };
            let against = against.as_deref().map(|other| (other, &map[..]));
            compare(&pipeline, &common, form, &asked, against)
        }
        Command::Plan {
            pipeline,
            common,
            form,
            groups,
            detect,
            metric,
            json,
        } => {
            let asked = Asked {
                groups: &groups,
                metric: &metric,
                min_effect: None,
                json,
                per_class: false,
            };
            plan(&pipeline, &common, form, &asked, detect)
        }
        Command::Validate { pipelines, form } => Ok(validate(&pipelines, form)),
        Command::Status {
            pipeline,
            common,
            form,
            label,
            repeat,
        } => status(
            &pipeline,
            &common,
            Scope {
                label,
                repeat,
                short: form.short,
                ..Scope::default()
            },
        ),
        Command::Gather {
            sources,
            common,
            pipeline,
        } => gather(&sources, &common, pipeline.as_deref()),
        Command::Import {
            pipeline,
            files,
            common,
            workloads,
            label,
            vars,
            kind,
            salvage,
        } => {
            let request = ImportRequest {
                files: files.iter().map(|f| import_file(f)).collect(),
                kind,
                workloads,
                label,
                vars: vars.into_iter().collect(),
                salvage,
                progress: std::io::stderr().is_terminal(),
            };
            import(&pipeline, &common, &request)
        }
        Command::Parse {
            kind,
            inputs,
            out,
            run_id,
            salvage,
        } => {
            let kind = match kind {
                ParserChoice::Named(kind) => kind,
                ParserChoice::Auto => detect_kind(&inputs)?,
            };
            let ctx = ParseContext {
                run_id,
                salvage,
                ..ParseContext::default()
            };
            let written = with_parse_progress(kind, &inputs, ctx, |ctx| {
                schedlab_parse::parse_files_to(kind, &inputs, ctx, &out)
            });
            for path in written? {
                println!("{}", path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Export {
            format:
                ExportFormat::Perfetto {
                    source,
                    run_id,
                    out,
                    format,
                    common,
                },
        } => export_perfetto(&source, run_id, (&out, format), &common),
        Command::Topology { sysfs } => {
            let root = sysfs.unwrap_or_else(|| PathBuf::from("/sys"));
            let cpus = schedlab_topology::detect(&root)?;
            print!("{}", schedlab_topology::render_table(&cpus));
            Ok(ExitCode::SUCCESS)
        }
        Command::PeriodicWorker {
            threads,
            period_ns,
            busy_ns,
            duration_ns,
            report,
        } => {
            let config = schedlab_collect::periodic::PeriodicConfig {
                threads,
                period: Duration::from_nanos(period_ns),
                busy: Duration::from_nanos(busy_ns),
                duration: Duration::from_nanos(duration_ns),
            };
            schedlab_collect::periodic::run(config)
                .write(&report)
                .with_context(|| format!("writing {}", report.display()))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `export perfetto`: finds the run's tables from its directory or its pipeline, and writes
/// its trace.
fn export_perfetto(
    source: &Path,
    run_id: Option<String>,
    (out, format): (&Path, TraceFormat),
    common: &Common,
) -> anyhow::Result<ExitCode> {
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
        run_of_directory(source)?
    } else {
        let plan = load_plan(source, None, false)?;
        let layout = Layout::new(&common.data, &plan.name);
        let run_id = match run_id {
            Some(run_id) => run_id,
            None => only_run(&layout, source)?,
        };
        (layout, run_id)
    };
    let interrupt = Arc::new(AtomicBool::new(false));
    stop_on_interrupt(&interrupt, "removing the unfinished trace")?;
    let tables = layout.tables();
    let exported = match format {
        TraceFormat::Pftrace => {
            schedlab_export::pftrace::export_run(&tables, &run_id, out, &interrupt)
                .map(|summary| print_pftrace_summary(out, &run_id, &summary))
        }
        TraceFormat::Json => schedlab_export::json::export_run(&tables, &run_id, out, &interrupt)
            .map(|summary| print_json_summary(out, &run_id, &summary)),
    };
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
         {} cpu_idle, {} processes and {} threads, {} counter values, {} workloads ({:.1} MiB); \
         open it in ui.perfetto.dev",
        out.display(),
        summary.switches,
        summary.wakeups,
        summary.migrations,
        summary.exits,
        summary.cpu_frequency,
        summary.cpu_idle,
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

/// The pipeline directory and run id of a run directory (`DATA/PIPELINE/runs/RUN_ID`).
fn run_of_directory(dir: &Path) -> anyhow::Result<(Layout, String)> {
    let dir = (dir.canonicalize()).with_context(|| format!("cannot read {}", dir.display()))?;
    let run_id = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    let root = dir.parent().and_then(Path::parent);
    match (run_id, root) {
        (Some(run_id), Some(root)) if Layout::at(root).run(&run_id) == dir => {
            Ok((Layout::at(root), run_id))
        }
        _ => bail!(
            "{} is not a run directory (DATA/PIPELINE/runs/RUN_ID)",
            dir.display()
        ),
    }
}

/// The one complete run of a pipeline on disk; an error listing them when there are several.
fn only_run(layout: &Layout, pipeline: &Path) -> anyhow::Result<String> {
    let runs_dir = layout.runs();
    let mut runs: Vec<String> = std::fs::read_dir(&runs_dir)
        .with_context(|| {
            format!(
                "no runs of {} in {} (hint: `schedlab run {}`)",
                pipeline.display(),
                runs_dir.display(),
                pipeline.display()
            )
        })?
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| Layout::is_complete_run_name(name))
        .collect();
    runs.sort();
    match &runs[..] {
        [run] => Ok(run.clone()),
        [] => bail!(
            "no complete run of {} in {}",
            pipeline.display(),
            runs_dir.display()
        ),
        _ => bail!(
            "{} has {} runs; say which with --run: {}",
            pipeline.display(),
            runs.len(),
            runs.join(", ")
        ),
    }
}

/// `run --dry-run`: each run's timeline, nothing started.
fn dry_run_timeline(
    pipeline: &Path,
    common: &Common,
    scope: Scope,
    selection: StageSelection,
) -> anyhow::Result<ExitCode> {
    let plan = load_plan(pipeline, scope.repeat, scope.short)?;
    let options = runner_options(pipeline, common, scope, selection)?;
    let say = |_: &str| {};
    for line in Runner::new(&plan, &options, &say).dry_run() {
        println!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

/// What `compare` and `plan` were asked to show.
struct Asked<'a> {
    groups: &'a Groups,
    /// Only the figures whose name (or a name it stands for) contains one of these.
    metric: &'a [String],
    min_effect: Option<f64>,
    json: bool,
    /// Each workload's instances per core class they ran on (`compare --per-class`).
    per_class: bool,
}

impl Asked<'_> {
    fn shows(&self, metric: &str, stands_for: Option<&str>) -> bool {
        let names =
            std::iter::once(metric).chain(stands_for.into_iter().flat_map(|s| s.split(',')));
        self.metric.is_empty()
            || names
                .into_iter()
                .any(|n| self.metric.iter().any(|m| n.contains(m)))
    }
}

/// `compare`: brings the analysis up to date, then prints the comparison's figures (those whose
/// name contains one of `metric`, or all).
fn compare(
    pipeline: &Path,
    common: &Common,
    form: Form,
    asked: &Asked<'_>,
    against: Option<(&Path, &[(String, String)])>,
) -> anyhow::Result<ExitCode> {
    let Some((other, map)) = against else {
        return compare_with(pipeline, common, form, asked, None);
    };
    // The other pipeline's analysis first, then this one's, then both compared.
    execute_then(
        other,
        common,
        form.into(),
        StageSelection::analysis(),
        |theirs, outcome| {
            if outcome.interrupted {
                return Ok(ExitCode::from(EXIT_INTERRUPTED));
            }
            compare_with(pipeline, common, form, asked, Some((theirs, map)))
        },
    )
}

/// `compare` once the other pipeline (if any) is analysed.
fn compare_with(
    pipeline: &Path,
    common: &Common,
    form: Form,
    asked: &Asked<'_>,
    against: Option<(&Runner<'_>, &[(String, String)])>,
) -> anyhow::Result<ExitCode> {
    let analysis = StageSelection::analysis();
    execute_then(
        pipeline,
        common,
        form.into(),
        analysis,
        |runner, outcome| {
            if outcome.interrupted {
                return Ok(ExitCode::from(EXIT_INTERRUPTED));
            }
            let by = schedlab_runner::GroupBy::from_name(&asked.groups.by);
            let selection = asked.groups.selection();
            let comparison = match against {
                _ if asked.per_class => {
                    let (other, map) = against.map_or((None, &[][..]), |(o, m)| (Some(o), m));
                    runner.compare_per_class(other, &by, map, &selection, asked.min_effect)?
                }
                None => runner.compare(&by, &selection, asked.min_effect)?,
                Some((other, map)) => {
                    runner.compare_against(other, &by, map, &selection, asked.min_effect)?
                }
            };
            // How many differences q adjusts for: all the comparison's, not only those shown.
            let adjustment = schedlab_runner::adjustment(&comparison.rows);
            let shown: Vec<_> = (comparison.rows.into_iter())
                .filter(|r| asked.shows(&r.metric, r.stands_for.as_deref()))
                .collect();
            if shown.is_empty() && !asked.metric.is_empty() {
                bail!(
                    "no figure's name contains {} (see {})",
                    asked.metric.join(" or "),
                    comparison.markdown.display()
                );
            }
            if shown.is_empty() {
                bail!(
                    "the runs have no figures to compare (hint: a workload with `parse:`, or the \
                 cpu_time, cpu_share or cpu_activity aggregates, give them)"
                );
            }
            if asked.json {
                println!("{}", serde_json::to_string_pretty(&shown)?);
            } else {
                println!("{}\n", comparison.config.join("\n"));
                print!("{}", schedlab_runner::comparison_table(&shown));
                if let Some(line) = adjustment {
                    println!("\n{line}");
                }
                let notes = schedlab_runner::notes(&shown);
                if !notes.is_empty() {
                    println!("\n{}", notes.join("\n"));
                }
            }
            eprintln!(
                "compare: wrote {}, {} (a chart per figure) and {}",
                comparison.markdown.display(),
                comparison.html.display(),
                comparison.parquet.display()
            );
            Ok(ExitCode::SUCCESS)
        },
    )
}

/// `check`: brings the runs up to date as `run` does, then prints the expectations of the
/// label's runs and exits by them: 0 all hold, 1 one fails, 2 (125 with `bisect`) one cannot
/// be judged.
fn check(pipeline: &Path, common: &Common, scope: Scope, bisect: bool) -> anyhow::Result<ExitCode> {
    let plan = load_plan(pipeline, scope.repeat, scope.short)?;
    if plan.summarize.expect.is_empty() {
        bail!(
            "{} has no expectations to check (hint: add `expect:`, e.g. `- residency: {{ \
             workload: W, class: P, share: \">= 0.95\" }}`)",
            pipeline.display()
        );
    }
    execute_then(
        pipeline,
        common,
        scope,
        StageSelection::all(),
        |runner, outcome| {
            if outcome.interrupted {
                return Ok(ExitCode::from(EXIT_INTERRUPTED));
            }
            let report = runner.check()?;
            let label = report.label.as_deref().unwrap_or("(no label)");
            match schedlab_runner::expectations_table(&report.rows) {
                Some(table) => print!("{table}"),
                None => println!("no runs of label {label} to judge"),
            }
            for row in report.not_passing() {
                eprintln!(
                    "schedlab: check: expectation {} {}: {} {}: {}",
                    row.expectation,
                    if row.judgement == Judgement::Fail {
                        "fails"
                    } else {
                        "cannot be judged"
                    },
                    row.figure,
                    row.bound,
                    row.reason.as_deref().unwrap_or("no runs")
                );
            }
            eprintln!(
                "check: {} for label {label} (from {})",
                report.judgement,
                report.file.display()
            );
            Ok(ExitCode::from(match report.judgement {
                Judgement::Pass => 0,
                Judgement::Fail => 1,
                Judgement::CannotJudge if bisect => EXIT_SKIP,
                Judgement::CannotJudge => EXIT_INPUT,
            }))
        },
    )
}

/// `plan`: brings the analysis up to date, then prints the runs needed per figure (those whose
/// name contains one of `metric`, or all).
fn plan(
    pipeline: &Path,
    common: &Common,
    form: Form,
    asked: &Asked<'_>,
    detect: f64,
) -> anyhow::Result<ExitCode> {
    execute_then(
        pipeline,
        common,
        form.into(),
        StageSelection::analysis(),
        |runner, outcome| {
            if outcome.interrupted {
                return Ok(ExitCode::from(EXIT_INTERRUPTED));
            }
            let by = schedlab_runner::GroupBy::from_name(&asked.groups.by);
            let rows: Vec<_> = (runner.runs_needed(&by, &asked.groups.selection(), detect)?)
                .into_iter()
                .filter(|r| asked.shows(&r.metric, r.stands_for.as_deref()))
                .collect();
            if rows.is_empty() {
                bail!(
                    "no figure to plan for: it needs runs in the baseline and another group{}",
                    if asked.metric.is_empty() {
                        String::new()
                    } else {
                        format!(" whose name contains {}", asked.metric.join(" or "))
                    }
                );
            }
            if asked.json {
                println!("{}", serde_json::to_string_pretty(&rows)?);
                return Ok(ExitCode::SUCCESS);
            }
            println!(
                "Runs per group to find a difference of {detect} % of the baseline's mean with \
                 80 % power (two-sided Welch, alpha 0.05):\n"
            );
            print!("{}", schedlab_runner::runs_needed_table(&rows));
            Ok(ExitCode::SUCCESS)
        },
    )
}

/// `validate`: every pipeline's diagnostics, and exit 2 when any has one.
fn validate(pipelines: &[PathBuf], form: Form) -> ExitCode {
    let mut failed = false;
    for pipeline in pipelines {
        match load_plan(pipeline, None, form.short) {
            Ok(plan) => println!("{}: ok ({} runs)", pipeline.display(), plan.runs.len()),
            Err(err) => {
                eprintln!("{err}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::from(EXIT_INPUT)
    } else {
        ExitCode::SUCCESS
    }
}

/// `status`: the runs on disk and each stage's freshness.
fn status(pipeline: &Path, common: &Common, scope: Scope) -> anyhow::Result<ExitCode> {
    let plan = load_plan(pipeline, scope.repeat, scope.short)?;
    let options = runner_options(pipeline, common, scope, StageSelection::all())?;
    let say = |_: &str| {};
    let status = Runner::new(&plan, &options, &say).status()?;
    println!("pipeline {} ({})", plan.name, status.root.display());
    println!("runs on disk:");
    if status.runs.is_empty() {
        println!("  none");
    }
    for run in &status.runs {
        let tag = if run.current {
            ""
        } else {
            "  (not of the current collect section)"
        };
        println!(
            "  {:<40} {:<16} {}{tag}",
            run.run_id, run.status, run.started_at
        );
        for ending in &run.endings {
            println!("    {ending}");
        }
        for (stage, reasons) in &run.stale {
            println!("    {} stale: {}", stage.name(), reasons.join("; "));
        }
    }
    println!("stages:");
    for (stage, reasons) in &status.stages {
        if reasons.is_empty() {
            println!("  {:<10} fresh", stage.name());
        } else {
            println!("  {:<10} stale: {}", stage.name(), reasons.join("; "));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A pipeline that failed validation: its rendered diagnostics.
#[derive(Debug)]
struct InvalidPipeline(String);

impl std::fmt::Display for InvalidPipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidPipeline {}

/// Reads and compiles a pipeline (with `repeat` instead of its own, if given); the error is the
/// rendered list of diagnostics.
fn load_plan(path: &Path, repeat: Option<u32>, short: bool) -> anyhow::Result<Plan> {
    let source =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let parsers: Vec<&str> = ParserKind::ALL.iter().map(|k| k.name()).collect();
    let nproc = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    // Without a readable /sys there are no classes, and a pipeline that names one says so.
    let classes = match schedlab_topology::detect(Path::new("/sys")) {
        Ok(cpus) => schedlab_topology::classes(&cpus),
        Err(err) => {
            eprintln!("schedlab: warning: cannot read this machine's core classes: {err}");
            Vec::new()
        }
    };
    let options = CompileOptions {
        parsers: &parsers,
        nproc,
        classes: &classes,
        short,
        name_part: check_name_part,
        repeat,
    };
    schedlab_spec::compile(&path.display().to_string(), &source, &options).map_err(|errors| {
        let count = errors.len();
        let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
        let plural = if count == 1 { "" } else { "s" };
        anyhow::Error::new(InvalidPipeline(format!(
            "{}\n{count} error{plural} in {}",
            text.join("\n"),
            path.display()
        )))
    })
}

/// Which runs a command is about: collected under which label, how many repetitions, and for
/// `analyze --runs`, which runs alone.
#[derive(Default)]
struct Scope {
    label: Option<String>,
    repeat: Option<u32>,
    runs: Option<Vec<String>>,
    /// The pipeline's short form.
    short: bool,
}

fn runner_options(
    pipeline: &Path,
    common: &Common,
    scope: Scope,
    selection: StageSelection,
) -> anyhow::Result<RunnerOptions> {
    let Scope { label, runs, .. } = scope;
    if let Some(label) = &label
        && let Err(rule) = check_name_part(label)
    {
        bail!("label `{label}` is not usable in a directory name (hint: {rule})");
    }
    Ok(RunnerOptions {
        data_dir: common.data.clone(),
        pipeline_file: pipeline.display().to_string(),
        label,
        selection,
        self_exe: std::env::current_exe().context("cannot find the schedlab executable")?,
        interrupt: Arc::new(AtomicBool::new(false)),
        progress: std::io::stderr().is_terminal(),
        runs,
    })
}

/// The first Ctrl-C or SIGTERM sets the runner's flag (it stops workloads and monitors, or
/// stops after the running stage); a second exits at once.
fn stop_on_interrupt(flag: &Arc<AtomicBool>, what_happens: &'static str) -> anyhow::Result<()> {
    // One handler per process; `compare --against` runs two pipelines' analyses, each with its
    // own flag, so every flag registered is set, and the latest says what happens.
    static WATCHED: Mutex<Vec<(Arc<AtomicBool>, &'static str)>> = Mutex::new(Vec::new());
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    let watched = || {
        WATCHED
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    };
    watched().push((flag.clone(), what_happens));
    let installed = INSTALLED.get_or_init(|| {
        ctrlc::set_handler(move || {
            let watched = watched();
            let again = (watched.iter()).fold(false, |again, (flag, _)| {
                flag.swap(true, Ordering::SeqCst) || again
            });
            if again {
                eprintln!("schedlab: second interrupt, exiting now");
                std::process::exit(i32::from(EXIT_INTERRUPTED));
            }
            let what = watched.last().map_or("stopping", |(_, what)| what);
            eprintln!("schedlab: interrupted: {what}…");
        })
        .map_err(|err| err.to_string())
    });
    installed
        .clone()
        .map_err(|err| anyhow::anyhow!("cannot install the Ctrl-C handler: {err}"))
}

fn execute(
    pipeline: &Path,
    common: &Common,
    scope: Scope,
    selection: StageSelection,
) -> anyhow::Result<ExitCode> {
    execute_then(pipeline, common, scope, selection, |_, outcome| {
        if let Some(summary) = &outcome.summary {
            println!("{summary}");
        }
        if outcome.interrupted {
            return Ok(ExitCode::from(EXIT_INTERRUPTED));
        }
        if !outcome.failed_runs.is_empty() {
            eprintln!(
                "schedlab: {} run(s) failed: {} (see the quality table)",
                outcome.failed_runs.len(),
                outcome.failed_runs.join(", ")
            );
            return Ok(ExitCode::from(1));
        }
        if !outcome.stopped_runs.is_empty() {
            eprintln!(
                "schedlab: {} run(s) had a workload stopped at the end of collection before it \
                 ended by itself: {} (see the quality table; `stop: expected` on a workload says \
                 its stop is part of the experiment)",
                outcome.stopped_runs.len(),
                outcome.stopped_runs.join(", ")
            );
            return Ok(ExitCode::from(EXIT_WORKLOAD_STOPPED));
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// Loads the pipeline, stops on the first Ctrl-C, runs the selected stages, and hands the
/// runner and what it did to `then` (which says what an interrupted command exits with).
fn execute_then(
    pipeline: &Path,
    common: &Common,
    scope: Scope,
    selection: StageSelection,
    then: impl FnOnce(&Runner<'_>, Outcome) -> anyhow::Result<ExitCode>,
) -> anyhow::Result<ExitCode> {
    let plan = load_plan(pipeline, scope.repeat, scope.short)?;
    let options = runner_options(pipeline, common, scope, selection)?;
    stop_on_interrupt(
        &options.interrupt,
        "stopping workloads and monitors, or after the running stage",
    )?;
    let say = |line: &str| eprintln!("{line}");
    let runner = Runner::new(&plan, &options, &say);
    let outcome = runner.execute()?;
    then(&runner, outcome)
}

/// `gather`: copies the complete runs of `sources` into --data, verified; exits 2 when a run was
/// refused. The first Ctrl-C stops after removing the run being copied; a second exits at once.
fn gather(
    sources: &[PathBuf],
    common: &Common,
    pipeline: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let interrupt = Arc::new(AtomicBool::new(false));
    stop_on_interrupt(&interrupt, "removing the run being copied")?;
    let options = schedlab_runner::gather::GatherOptions {
        pipeline,
        interrupt: &interrupt,
        progress: std::io::stderr().is_terminal(),
    };
    let say = |line: &str| eprintln!("{line}");
    let report = schedlab_runner::gather::gather(sources, &common.data, &options, &say)?;
    println!("{}", report.summary());
    if report.interrupted {
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    if !report.refused.is_empty() {
        eprintln!(
            "schedlab: {} run(s) refused (see above); nothing of them was copied",
            report.refused.len()
        );
        return Ok(ExitCode::from(EXIT_INPUT));
    }
    Ok(ExitCode::SUCCESS)
}
