//! The command line's shape: every subcommand, flag and value parser as clap types, apart from
//! what the commands do with them, so that `--help`, the man page and the shell completions are
//! all made from this one file.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use schedlab_parse::ParserKind;
use schedlab_runner::Stage;
use schedlab_spec::selector::WorkloadSelector;

/// Run Linux scheduler experiments and turn their traces into tables and reports.
///
/// A pipeline (YAML) describes four stages: collect (workloads and monitors such as
/// `perf sched record`), parse (raw files into Parquet tables), aggregate (the figures:
/// residency per CPU and core class, migrations, scheduling delay, CPU time, turbostat's
/// activity, CPUs per phase, the step in package power) and summarize (report/summary.md,
/// index.html, SVG plots). Every stage's output is kept under DATA/PIPELINE/, and a stage whose
/// inputs did not change is not run again. `compare` tells a real difference from noise.
#[derive(Parser)]
#[command(name = "schedlab", version, max_term_width = 100, after_help = EXIT_TOP)]
pub struct Args {
    /// More log output (-v info, -vv debug); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run a pipeline: collect what is missing, then parse, aggregate and summarize what is stale.
    ///
    /// The quality table says how each workload ended.
    #[command(after_help = EXIT_RUN)]
    Run(RunArgs),
    /// Parse, aggregate and summarize from the runs on disk; never collects.
    ///
    /// Only runs that are new or changed are parsed and aggregated (each run has its own
    /// partition of every table, `tables/<table>/run_id=<run>/`); the summary is then made from
    /// every run. With --runs, only those runs are parsed and aggregated and nothing is
    /// summarized, and several such commands may run at once on one data directory: a batch
    /// system can analyse one run per job, then run `schedlab analyze` once to summarize.
    #[command(after_help = EXIT_ANALYSIS)]
    Analyze(AnalyzeArgs),
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
    #[command(after_help = EXIT_CHECK)]
    Check(CheckArgs),
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
    #[command(after_help = EXIT_ANALYSIS)]
    Compare(CompareArgs),
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
    #[command(after_help = EXIT_ANALYSIS)]
    Plan(PlanArgs),
    /// Check pipelines without running anything: every error with file:line:column and a hint.
    #[command(after_help = EXIT_VALIDATE)]
    Validate(ValidateArgs),
    /// List the runs on disk and say, per stage and run, whether it is fresh or what made it
    /// stale.
    #[command(after_help = EXIT_INPUT_ONLY)]
    Status(StatusArgs),
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
    #[command(after_help = EXIT_GATHER)]
    Gather(GatherArgs),
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
    #[command(after_help = EXIT_INPUT_ONLY)]
    Import(ImportArgs),
    /// Run one parser on existing files and write its tables as Parquet into --out.
    ///
    /// The rows of all INPUTS go into one file per table, in the order the inputs are given;
    /// files are parsed in parallel. perf-sched reads perf.data natively (perf is not needed)
    /// and writes sched_slices, migrations, wakeups, threads, traces, losses and quality;
    /// trace-cmd reads trace.dat (v6, v7) natively into the same tables and cpu_freq_idle;
    /// perfetto reads Perfetto protobuf traces (.pftrace) with ftrace sched events the same way;
    /// timehist reads the text of `perf sched timehist [-M] [-V] [-w] [-s]`. The tables appear
    /// together when every input was read, or not at all; the paths written are printed.
    #[command(verbatim_doc_comment)]
    #[command(after_help = EXIT_INPUT_ONLY)]
    Parse(ParseArgs),
    /// Write a run in a format other tools open (see `schedlab export perfetto --help`).
    Export(ExportArgs),
    /// Print this machine's CPUs and their core classes (P, E, LPE; big/little).
    #[command(after_help = EXIT_INPUT_ONLY)]
    Topology(TopologyArgs),
    /// Print a shell's completion script for schedlab.
    ///
    /// bash:  schedlab completions bash > ~/.local/share/bash-completion/completions/schedlab
    /// zsh:   schedlab completions zsh > "${fpath[1]}/_schedlab"
    /// fish:  schedlab completions fish > ~/.config/fish/completions/schedlab.fish
    #[command(verbatim_doc_comment)]
    Completions(CompletionsArgs),
    /// Write schedlab's man pages (schedlab.1, and schedlab-COMMAND.1 per command) into a
    /// directory.
    #[command(after_help = EXIT_INPUT_ONLY)]
    Man(ManArgs),
    /// The built-in periodic workload (started by the collector, not meant to be typed).
    #[command(hide = true)]
    PeriodicWorker(PeriodicWorkerArgs),
}

/// The arguments of `schedlab run`.
#[derive(clap::Args)]
pub struct RunArgs {
    pub pipeline: PathBuf,
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub form: Form,
    /// Tag every run of this invocation (e.g. the kernel under test); tagged runs are
    /// collected beside untagged ones. The same label in a later invocation (after a
    /// reboot, say) continues its runs: only the missing repetitions are collected.
    #[arg(long)]
    pub label: Option<String>,
    /// Repetitions instead of the pipeline's `repeat`. Run ids do not depend on it: raising
    /// it collects only the repetitions not yet on disk.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: Option<u32>,
    /// Start at this stage (collect, parse, aggregate, summarize) and recompute it and every
    /// later stage (collect collects the missing runs; only --force collects again).
    #[arg(long, value_parser = parse_stage, conflicts_with = "only")]
    pub from: Option<Stage>,
    /// Run this stage alone, recomputed (`--only collect` collects the missing runs and
    /// analyses nothing: what each test machine runs before `schedlab gather`).
    #[arg(long, value_parser = parse_stage)]
    pub only: Option<Stage>,
    /// Recompute every selected stage, fresh or not (collect: every run again, replacing it).
    #[arg(long)]
    pub force: bool,
    /// Print each run's timeline (what starts when, with which command line); start nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// The arguments of `schedlab analyze`.
#[derive(clap::Args)]
pub struct AnalyzeArgs {
    pub pipeline: PathBuf,
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub form: Form,
    /// Recompute every stage, fresh or not.
    #[arg(long)]
    pub force: bool,
    /// Parse and aggregate only these runs (ids as `schedlab status` lists them).
    #[arg(long, num_args = 1.., value_name = "RUN_ID")]
    pub runs: Vec<String>,
}

/// The arguments of `schedlab check`.
#[derive(clap::Args)]
pub struct CheckArgs {
    pub pipeline: PathBuf,
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub form: Form,
    /// Judge the runs of this label (collecting them as `run --label` does).
    #[arg(long)]
    pub label: Option<String>,
    /// Repetitions instead of the pipeline's `repeat` (as `run --repeat`).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: Option<u32>,
    /// Exit 125 (`git bisect run`'s "skip") instead of 2 when the runs cannot judge.
    #[arg(long)]
    pub bisect: bool,
    /// Print the judgement and every expectation row as one JSON object instead of the table
    /// (the exit code is the same).
    #[arg(long)]
    pub json: bool,
}

/// The arguments of `schedlab compare`.
#[derive(clap::Args)]
pub struct CompareArgs {
    pub pipeline: PathBuf,
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub form: Form,
    #[command(flatten)]
    pub groups: Groups,
    /// Print only the figures whose name contains this text (repeatable); the files keep
    /// every figure.
    #[arg(long)]
    pub metric: Vec<String>,
    /// Compare with the runs of another pipeline (in the same data directory), grouped by
    /// its matrix variants, as the baseline: e.g. a workload in a busy machine against the
    /// same workload alone. Written to compare/by-BY-against-OTHER.{parquet,md,html}.
    #[arg(long, value_name = "OTHER.yaml")]
    pub against: Option<PathBuf>,
    /// With --against: this pipeline's workload A is the other's B (repeatable); workloads
    /// of the same name match without it.
    #[arg(long, value_name = "A=B", value_parser = parse_map, requires = "against")]
    pub map: Vec<(String, String)>,
    /// The smallest difference that matters, in percent of the baseline's mean (`2%` or
    /// `2`): a smaller one is `within noise` whatever its q (a 0.3 % drift between labels
    /// collected an hour apart can be real and still not what was asked).
    #[arg(long, value_parser = parse_percent, value_name = "PERCENT")]
    pub min_effect: Option<f64>,
    /// Print the rows (those --metric selects) as a JSON array of the Parquet file's
    /// columns instead of the table (an infinite interval end is null).
    #[arg(long)]
    pub json: bool,
    /// Each workload's instances per core class they ran on (`background on LPE`: the
    /// mean of those instances per run; the pipeline must aggregate residency); with
    /// --against, against the other pipeline's runs pinned to that class, one baseline
    /// group. Written to compare/by-BY[-against-OTHER]-per-class.{parquet,md,html}.
    #[arg(long)]
    pub per_class: bool,
}

/// The arguments of `schedlab plan`.
#[derive(clap::Args)]
pub struct PlanArgs {
    pub pipeline: PathBuf,
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub form: Form,
    #[command(flatten)]
    pub groups: Groups,
    /// The difference to resolve, in percent of the baseline's mean: `1%` or `1`.
    #[arg(long, value_parser = parse_percent, value_name = "PERCENT")]
    pub detect: f64,
    /// Only the figures whose name contains this text (repeatable).
    #[arg(long)]
    pub metric: Vec<String>,
    /// Print the rows as a JSON array instead of the table (with the means and standard
    /// deviations planned from).
    #[arg(long)]
    pub json: bool,
}

/// The arguments of `schedlab validate`.
#[derive(clap::Args)]
pub struct ValidateArgs {
    #[arg(required = true)]
    pub pipelines: Vec<PathBuf>,
    #[command(flatten)]
    pub form: Form,
}

/// The arguments of `schedlab status`.
#[derive(clap::Args)]
pub struct StatusArgs {
    pub pipeline: PathBuf,
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub form: Form,
    /// Which label's runs count as missing (as `run --label`).
    #[arg(long)]
    pub label: Option<String>,
    /// Repetitions instead of the pipeline's `repeat` (as `run --repeat`).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: Option<u32>,
    /// Print the runs and stages as one JSON object instead of the lines (see the docs'
    /// Scripting page for its shape).
    #[arg(long)]
    pub json: bool,
}

/// The arguments of `schedlab gather`.
#[derive(clap::Args)]
pub struct GatherArgs {
    /// Data directories or pipeline directories to gather from.
    #[arg(required = true)]
    pub sources: Vec<PathBuf>,
    #[command(flatten)]
    pub common: Common,
    /// Gather only the runs of this pipeline.
    #[arg(long)]
    pub pipeline: Option<String>,
}

/// The arguments of `schedlab import`.
#[derive(clap::Args)]
pub struct ImportArgs {
    pub pipeline: PathBuf,
    /// Files to import, each FILE or NAME=FILE (the output of workload NAME); `-` is
    /// standard input.
    #[arg(required = true, value_name = "[NAME=]FILE")]
    pub files: Vec<String>,
    #[command(flatten)]
    pub common: Common,
    /// How a workload's threads are found in the trace: NAME=comm:NAME, NAME=pid:PID or
    /// NAME=tree:PID (repeatable; replaces the pipeline's selector of the same name).
    #[arg(long = "workload", value_name = "NAME=SELECTOR", value_parser = parse_workload)]
    pub workloads: Vec<WorkloadSelector>,
    /// Tag the run, as `schedlab run --label` does (compare groups by it).
    #[arg(long)]
    pub label: Option<String>,
    /// A variable of the run, k=v (repeatable): `compare --by k` groups by it.
    #[arg(long = "var", value_name = "K=V", value_parser = parse_var)]
    pub vars: Vec<(String, String)>,
    /// The kind of every file, instead of telling it from the content: perf-sched,
    /// trace-cmd, perfetto, timehist, turbostat, stress-ng, openssl, time, perf-stat.
    #[arg(long = "as", value_name = "KIND", value_parser = parse_named_kind)]
    pub kind: Option<ParserKind>,
    /// Read a perf.data cut short or left unfinished by perf, a v6 trace.dat cut inside
    /// its CPU data, or a Perfetto trace cut or damaged, as far as it goes (see `schedlab
    /// parse --salvage`).
    #[arg(long)]
    pub salvage: bool,
}

/// The arguments of `schedlab parse`.
#[derive(clap::Args)]
pub struct ParseArgs {
    /// perf-sched, trace-cmd, perfetto, timehist, turbostat, stress-ng, openssl, time,
    /// perf-stat, or `auto`: told
    /// from each file's content (one line per file says what was found, and why).
    #[arg(value_parser = parse_kind)]
    pub kind: ParserChoice,
    /// Files to read (perf.data for perf-sched, trace.dat for trace-cmd, .pftrace for
    /// perfetto, the tool's saved output otherwise).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Directory for the tables (created if needed; existing tables are replaced).
    #[arg(long)]
    pub out: PathBuf,
    /// run_id written into every row.
    #[arg(long, default_value = "standalone")]
    pub run_id: String,
    /// Read a perf.data that was cut short (interrupted copy, full disk) or that perf did
    /// not finish (killed: its header's data size is 0) up to its last complete record,
    /// a v6 trace.dat cut inside its CPU data up to each CPU's last complete page, or a
    /// Perfetto trace up to the packet before a cut or damage, with a quality row saying how
    /// many bytes could not be read and what was lost.
    #[arg(long)]
    pub salvage: bool,
}

/// The arguments of `schedlab export`.
#[derive(clap::Args)]
pub struct ExportArgs {
    #[command(subcommand)]
    pub format: ExportFormat,
}

/// The arguments of `schedlab topology`.
#[derive(clap::Args)]
pub struct TopologyArgs {
    /// Read a captured sysfs tree (the directory holding devices/system/cpu, or one holding
    /// sys/) instead of /sys.
    #[arg(long)]
    pub sysfs: Option<PathBuf>,
}

/// The arguments of `schedlab completions`.
#[derive(clap::Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    pub shell: clap_complete::Shell,
}

/// The arguments of `schedlab man`.
#[derive(clap::Args)]
pub struct ManArgs {
    /// The directory to write the pages into (created if needed; pages are replaced whole).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// The arguments of `schedlab periodic-worker`.
#[derive(clap::Args)]
pub struct PeriodicWorkerArgs {
    #[arg(long)]
    pub threads: u32,
    #[arg(long)]
    pub period_ns: u64,
    #[arg(long)]
    pub busy_ns: u64,
    #[arg(long)]
    pub duration_ns: u64,
    #[arg(long)]
    pub report: PathBuf,
}

/// The formats `schedlab export` writes.
#[derive(Subcommand)]
pub enum ExportFormat {
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
    #[command(verbatim_doc_comment, after_help = EXIT_EXPORT)]
    Perfetto(PerfettoArgs),
}

/// The arguments of `schedlab export perfetto`.
#[derive(clap::Args)]
pub struct PerfettoArgs {
    /// The run's directory (DATA/PIPELINE/runs/RUN_ID), or the pipeline file, with --run.
    #[arg(value_name = "RUN_DIR|PIPELINE.yaml")]
    pub source: PathBuf,
    /// With a pipeline file: the run (as `schedlab status` lists it); not needed when the
    /// pipeline has one run on disk.
    #[arg(long = "run", value_name = "RUN_ID")]
    pub run_id: Option<String>,
    /// The trace file to write (replaced whole; nothing is left half-written); with
    /// `--format json`, a name ending in .gz is gzip-compressed, about a tenth of the size,
    /// and opens the same.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// pftrace: Perfetto's protobuf trace; json: the Chrome JSON trace event format.
    #[arg(long, value_enum, default_value_t = TraceFormat::Pftrace)]
    pub format: TraceFormat,
    #[command(flatten)]
    pub common: Common,
}

/// The two trace formats of `schedlab export perfetto`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceFormat {
    Pftrace,
    Json,
}

/// `schedlab --help`'s exit codes: every command's, in short.
const EXIT_TOP: &str = "Exit codes: 0 done; 1 a run's workload failed (run), or an expectation \
failed (check); 2 invalid pipeline, input or environment; 3 a run's workload was stopped at the \
end of collection (run); 125 the runs cannot judge (check --bisect); 130 interrupted. Each \
command's --help lists its own.";

const EXIT_RUN: &str = "Exit codes:
  0    done
  1    a run collected now is `failed` (a workload exited with a non-zero code or was killed by a
       signal schedlab did not send, or a monitor failed)
  2    invalid pipeline, input or environment
  3    a run collected now is `workload-stopped` (schedlab stopped a workload at the
       collection's end before it ended by itself; `stop: expected` on the workload says that is
       meant)
  130  interrupted (Ctrl-C or SIGTERM)";

/// Commands that analyse and never collect: `analyze`, `compare`, `plan`.
const EXIT_ANALYSIS: &str = "Exit codes:
  0    done
  2    invalid pipeline, input or environment, or nothing to analyse
  130  interrupted (Ctrl-C or SIGTERM)";

const EXIT_CHECK: &str = "Exit codes:
  0    every expectation holds
  1    an expectation fails
  2    an expectation cannot be judged, or invalid pipeline, input or environment
  125  with --bisect, instead of 2 (`git bisect run`'s skip)
  130  interrupted (Ctrl-C or SIGTERM)";

const EXIT_VALIDATE: &str = "Exit codes:
  0    every pipeline is valid
  2    a pipeline has an error (each is printed)";

const EXIT_GATHER: &str = "Exit codes:
  0    every run found was gathered or was here already
  2    a run was refused, or invalid input
  130  interrupted (Ctrl-C or SIGTERM)";

const EXIT_EXPORT: &str = "Exit codes:
  0    written
  2    invalid input (no such run, tables not written)
  130  interrupted (Ctrl-C or SIGTERM); nothing is left half-written";

/// Commands whose only failure is what they were given.
const EXIT_INPUT_ONLY: &str = "Exit codes:
  0    done
  2    invalid pipeline, input or environment";

/// The data directory when neither `--data` nor `SCHEDLAB_DATA` names one.
pub const DEFAULT_DATA: &str = "data";

#[derive(clap::Args)]
pub struct Common {
    /// Where pipeline data lives: DATA/PIPELINE/{runs,tables,aggregates,report}.
    #[arg(long, default_value = DEFAULT_DATA, env = "SCHEDLAB_DATA")]
    pub data: PathBuf,
}

/// Which form of the pipeline a command is about.
#[derive(clap::Args, Clone, Copy)]
pub struct Form {
    /// The pipeline's short form (its `short:` values: seconds instead of minutes, one
    /// repetition), named PIPELINE-short, so that its runs have their own data directory.
    #[arg(long)]
    pub short: bool,
}

/// How `compare` and `plan` group runs.
#[derive(clap::Args)]
pub struct Groups {
    /// `label`, `variant`, `repetition`, or the name of a matrix variable.
    #[arg(long, default_value = "label")]
    pub by: String,
    /// The group the others are compared with (a matrix variable's value alone will do).
    /// Default: the group with the most runs, ties going to the label collected first, the first
    /// repetition, or the matrix's first value as the pipeline lists it (so a lone run beside
    /// groups of several is never the baseline); with --against, the other pipeline's.
    #[arg(long)]
    pub baseline: Option<String>,
    /// Only these groups, comma-separated (names, or a matrix variable's values alone):
    /// `--groups a,b` leaves out the runs of any other label.
    #[arg(long = "groups", value_delimiter = ',', value_name = "GROUP,...")]
    pub only: Vec<String>,
}

impl Groups {
    pub fn selection(&self) -> schedlab_runner::Selection {
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
pub enum ParserChoice {
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
