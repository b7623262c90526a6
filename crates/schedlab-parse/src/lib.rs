//! Raw files of a run into rows of the table contract.
//!
//! # Brief overview
//!
//! [`ParserKind`] names every parser a pipeline or `schedlab parse KIND` can ask for, and
//! [`detect`] tells it from a file's content. [`parse`]
//! runs one parser on one file's bytes with a [`ParseContext`] (which run, which workload, when it
//! ran) and returns a [`Parsed`]: the rows it produced for each table, plus quality rows for
//! whatever it could not read. [`Parsed::write_to`] persists the tables, except the per-event
//! tables (`sched_slices`, `migrations`, `wakeups`): those grow with the trace, so they stream
//! into [`EventTables`] (encoded in rayon's pool) as they are read, one part per input,
//! and [`EventParts`] joins the parts in input order. [`parse_files_to`] does all of it, files
//! in parallel, for `schedlab parse KIND FILE… --out DIR`; the runner's parse stage does the same
//! per run with [`parse_file_streaming`].
//!
//! One module per tool, each owning its output's schema: [`turbostat`] (an Arrow batch per
//! file, since its columns depend on the machine and `--show` set), [`stress_ng`], [`openssl`]
//! and [`time`] (rows of `workload_metrics`), [`perf_stat`] (`perf_stat`), [`timehist`]
//! (`sched_slices`, `migrations`, `wakeups`, `timehist_summary`). Each has
//! `parse(text, source_name, ctx) -> Result<Parsed, ParseError>`.
//!
//! Workload metric names are paths: `<subject>/<measure>` with the unit in its own column
//! (`cpu/bogo_ops` ops, `cpu/usr_time_s` s, `sha256/16384/bytes_per_s` B/s); figures about the
//! whole run have no subject (`completed_in_s`, `wall_time_s`).
//!
//! Every parser keeps the lines it understands. Lines of a form it does not know become one
//! `warning` quality row (source = the parser's name) naming the first of them as file:line;
//! only text with nothing readable at all is a [`ParseError::Text`]. A workload's stdout and
//! stderr are parsed apart by [`parse_outputs`], which fails only when neither has results.
//!
//! # Key design decision
//!
//! Text parsers do no file I/O: they take `&str` and a source name for error messages, so tests
//! feed them fixture text and fuzzers feed them garbage. Only the perf.data and trace.dat readers
//! take a path, because they map the file instead of reading it into memory.

use std::path::PathBuf;

use arrow_array::RecordBatch;
use schedlab_tables::{
    CpuFreqIdleRow, LossRow, MigrationRow, PerfStatRow, QualityRow, SchedRuntimeRow, SchedSliceRow,
    TableError, ThreadRow, TimehistSummaryRow, TraceRow, WakeupRow, WorkloadMetricRow,
};

pub mod detect;
mod events;
mod file;
pub mod openssl;
pub mod perf_stat;
pub mod stress_ng;
mod text;
pub mod time;
pub mod timehist;
pub mod turbostat;

pub use events::{EventParts, EventTables};
pub use file::{parse_file, parse_file_streaming, parse_files_to};
pub use schedlab_perf::{HeaderFacts, header_facts as perf_header_facts};
pub use schedlab_perfetto::header_facts as perfetto_header_facts;
pub use schedlab_tables::selector::{Select, WorkloadSelector};
pub use schedlab_tracecmd::header_facts as trace_cmd_header_facts;
pub use turbostat::concat_turbostat;

/// Every parser schedlab has, by the name pipelines and the command line use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ParserKind {
    /// perf.data written by `perf sched record` (read natively, perf not needed).
    PerfSched,
    /// trace.dat written by `trace-cmd record` or `trace-cmd extract`, file format v6 or v7
    /// (read natively, trace-cmd not needed).
    TraceCmd,
    /// A Perfetto protobuf trace with ftrace sched events (read natively).
    Perfetto,
    /// Text printed by `perf sched timehist [-M] [-V] [-w]`.
    Timehist,
    Turbostat,
    StressNg,
    Openssl,
    /// `/usr/bin/time -v` or the shell's `time`.
    Time,
    PerfStat,
}

impl ParserKind {
    pub const ALL: [ParserKind; 9] = [
        ParserKind::PerfSched,
        ParserKind::TraceCmd,
        ParserKind::Perfetto,
        ParserKind::Timehist,
        ParserKind::Turbostat,
        ParserKind::StressNg,
        ParserKind::Openssl,
        ParserKind::Time,
        ParserKind::PerfStat,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ParserKind::PerfSched => "perf-sched",
            ParserKind::TraceCmd => "trace-cmd",
            ParserKind::Perfetto => "perfetto",
            ParserKind::Timehist => "timehist",
            ParserKind::Turbostat => "turbostat",
            ParserKind::StressNg => "stress-ng",
            ParserKind::Openssl => "openssl",
            ParserKind::Time => "time",
            ParserKind::PerfStat => "perf-stat",
        }
    }

    pub fn from_name(name: &str) -> Option<ParserKind> {
        ParserKind::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// Whether the parser produces the per-event tables (`sched_slices`, `migrations`,
    /// `wakeups`), which are written through [`EventParts`] rather than [`Parsed::write_to`].
    pub fn has_events(self) -> bool {
        matches!(
            self,
            ParserKind::PerfSched
                | ParserKind::TraceCmd
                | ParserKind::Perfetto
                | ParserKind::Timehist
        )
    }

    /// Whether the parser reads a binary trace (perf.data, trace.dat, .pftrace) from its path, mapped,
    /// rather than text: such files are big, so `schedlab parse` shows the bytes read.
    pub fn is_trace_file(self) -> bool {
        matches!(
            self,
            ParserKind::PerfSched | ParserKind::TraceCmd | ParserKind::Perfetto
        )
    }
}

impl std::fmt::Display for ParserKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a parser needs to know about the run a file came from.
#[derive(Debug, Clone, Default)]
pub struct ParseContext {
    pub run_id: String,
    /// The workload whose output this is (text parsers), if any.
    pub workload: Option<String>,
    /// Which instance of the workload.
    pub instance: u32,
    /// CLOCK_MONOTONIC time the producing process started, when the runner knows it.
    pub start_ns: Option<i64>,
    /// CLOCK_MONOTONIC time the producing process ended, when the runner knows it.
    pub end_ns: Option<i64>,
    /// The run's workloads and how their threads are found (see
    /// [`schedlab_tables::selector`]): the processes the runner started and their descendants,
    /// or for an imported recording what its user named.
    pub workloads: Vec<WorkloadSelector>,
    /// Bytes of perf.data records read so far are added here (for a progress bar).
    pub bytes_read: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// Read a damaged recording as far as it goes instead of refusing it: a perf.data cut
    /// short or left unfinished by perf is read up to its last complete record, with a quality
    /// row saying what was lost (`--salvage`). Parsers without a salvage mode ignore it.
    pub salvage: bool,
}

/// Rows produced by parsing, one vector per table.
#[derive(Debug, Default)]
pub struct Parsed {
    pub sched_slices: Vec<SchedSliceRow>,
    pub migrations: Vec<MigrationRow>,
    pub wakeups: Vec<WakeupRow>,
    pub threads: Vec<ThreadRow>,
    pub workload_metrics: Vec<WorkloadMetricRow>,
    pub quality: Vec<QualityRow>,
    /// One batch per turbostat file; columns differ between machines and `--show` sets, so
    /// [`concat_turbostat`] unifies them (null fill) before writing.
    pub turbostat: Vec<RecordBatch>,
    pub perf_stat: Vec<PerfStatRow>,
    pub timehist_summary: Vec<TimehistSummaryRow>,
    /// One row per perf.data file read: what recorded it, on which clock.
    pub traces: Vec<TraceRow>,
    /// Ring-buffer overflows in perf.data and trace.dat files, with the spans they hide.
    pub losses: Vec<LossRow>,
    /// From a trace.dat: each CPU's frequency and idle state, span by span. Streamed through
    /// [`EventTables`] like the per-event tables.
    pub cpu_freq_idle: Vec<CpuFreqIdleRow>,
    /// The kernel's accounting of CPU time in perf.data files, per thread and CPU.
    pub sched_runtime: Vec<SchedRuntimeRow>,
    /// From a perf.data file: the span in which every CPU has data (ring buffers start and
    /// overflow at different times); analyses can clip to it.
    pub trace_window: Option<(i64, i64)>,
}

impl Parsed {
    /// Appends every table of `other` to this one.
    pub fn extend(&mut self, other: Parsed) {
        self.sched_slices.extend(other.sched_slices);
        self.migrations.extend(other.migrations);
        self.wakeups.extend(other.wakeups);
        self.threads.extend(other.threads);
        self.workload_metrics.extend(other.workload_metrics);
        self.quality.extend(other.quality);
        self.turbostat.extend(other.turbostat);
        self.perf_stat.extend(other.perf_stat);
        self.timehist_summary.extend(other.timehist_summary);
        self.traces.extend(other.traces);
        self.losses.extend(other.losses);
        self.cpu_freq_idle.extend(other.cpu_freq_idle);
        self.sched_runtime.extend(other.sched_runtime);
        self.trace_window = self.trace_window.or(other.trace_window);
    }

    /// Writes every table into `dir` (`DIR/<table>.parquet`, or a run's partition), each atomically, except the per-event
    /// tables: those stream through [`EventParts`], which [`EventTables::take_from`] moves
    /// a parser's event rows into first. Tables that no parser of these kinds produces are
    /// skipped; tables they produce are written even when empty, so a reader can tell "nothing
    /// happened" from "not parsed".
    ///
    /// # Panics
    ///
    /// If event rows are still here: they would be lost (a bug in the caller, not in the input).
    pub fn write_to(
        &self,
        dir: &(impl schedlab_tables::TableDir + ?Sized),
        kinds: &[ParserKind],
    ) -> Result<Vec<PathBuf>, TableError> {
        use schedlab_tables::write_table;
        assert!(
            self.sched_slices.is_empty()
                && self.migrations.is_empty()
                && self.wakeups.is_empty()
                && self.cpu_freq_idle.is_empty(),
            "event rows must go through EventTables before write_to"
        );
        let mut written = Vec::new();
        let metrics = kinds.iter().any(|k| {
            matches!(
                k,
                ParserKind::StressNg
                    | ParserKind::Openssl
                    | ParserKind::Time
                    | ParserKind::PerfStat
            )
        });
        if kinds.iter().any(|k| k.has_events()) {
            written.push(write_table(dir, &self.threads)?);
        }
        if kinds.iter().any(|k| k.is_trace_file()) {
            written.push(write_table(dir, &self.traces)?);
            written.push(write_table(dir, &self.losses)?);
            written.push(write_table(dir, &self.sched_runtime)?);
        }
        if kinds.contains(&ParserKind::Timehist) {
            written.push(write_table(dir, &self.timehist_summary)?);
        }
        if metrics {
            written.push(write_table(dir, &self.workload_metrics)?);
        }
        if kinds.contains(&ParserKind::PerfStat) {
            written.push(write_table(dir, &self.perf_stat)?);
        }
        if kinds.contains(&ParserKind::Turbostat) {
            let path =
                schedlab_tables::table_path_named(dir, schedlab_tables::turbostat::TURBOSTAT);
            schedlab_tables::create_parent(&path)?;
            schedlab_tables::write_batch(
                &path,
                &concat_turbostat(&self.turbostat),
                schedlab_tables::turbostat::TURBOSTAT_ENCODINGS,
            )?;
            written.push(path);
        }
        written.push(write_table(dir, &self.quality)?);
        Ok(written)
    }
}

/// Runs the text parser `kind` on one file's bytes (invalid UTF-8 is replaced, not fatal).
///
/// `source_name` names the file in errors and quality rows. [`ParserKind::PerfSched`] and
/// [`ParserKind::TraceCmd`] are not text formats: their files are mapped and read by
/// [`parse_file`], so they are an error here.
pub fn parse(
    kind: ParserKind,
    source_name: &str,
    bytes: &[u8],
    ctx: &ParseContext,
) -> Result<Parsed, ParseError> {
    let text = String::from_utf8_lossy(bytes);
    match kind {
        ParserKind::PerfSched | ParserKind::TraceCmd | ParserKind::Perfetto => {
            Err(ParseError::Binary {
                source_name: source_name.to_owned(),
                offset: 0,
                message: format!(
                    "{kind} files are read by `parse_file(path)`, not from bytes (hint: use the \
                 timehist parser for text printed by `perf sched timehist`)"
                ),
            })
        }
        ParserKind::Timehist => timehist::parse(&text, source_name, ctx),
        ParserKind::Turbostat => turbostat::parse(&text, source_name, ctx),
        ParserKind::StressNg => stress_ng::parse(&text, source_name, ctx),
        ParserKind::Openssl => openssl::parse(&text, source_name, ctx),
        ParserKind::Time => time::parse(&text, source_name, ctx),
        ParserKind::PerfStat => perf_stat::parse(&text, source_name, ctx),
    }
}

/// Runs the text parser `kind` on each output of one process (its stdout and stderr: `(name,
/// bytes)` pairs) on its own, and joins what they yield. Tools print their results to stdout,
/// some (openssl's `Doing …` lines, GNU time, perf stat) to stderr, and the other stream holds
/// the program's own text, so a file with nothing of the tool's form is no error while another
/// has results; parsed apart, every message names the file and line it is about. When no file
/// has results, the error names every file read and why each gave none.
pub fn parse_outputs(
    kind: ParserKind,
    outputs: &[(&str, &[u8])],
    ctx: &ParseContext,
) -> Result<Parsed, ParseError> {
    let mut parsed = Parsed::default();
    let mut found = false;
    let mut reasons = Vec::new();
    for (name, bytes) in outputs {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            reasons.push(format!("{name} is empty"));
            continue;
        }
        match parse(kind, name, bytes, ctx) {
            Ok(one) => {
                parsed.extend(one);
                found = true;
            }
            Err(err @ ParseError::Text { .. }) => reasons.push(err.to_string()),
            Err(err) => return Err(err),
        }
    }
    if found {
        return Ok(parsed);
    }
    Err(ParseError::NoResults {
        files: outputs.iter().map(|(name, _)| (*name).to_owned()).collect(),
        reasons,
    })
}

/// A file a parser could not read at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Text the parser does not understand, at a line (1-based).
    #[error("{source_name}:{line}: {message}")]
    Text {
        source_name: String,
        line: usize,
        message: String,
    },
    /// None of a process's outputs holds anything of the tool's form ([`parse_outputs`]):
    /// every file read, and why each gave nothing.
    #[error("no results in {}: {}", .files.join(" or "), .reasons.join("; "))]
    NoResults {
        files: Vec<String>,
        reasons: Vec<String>,
    },
    /// A perf.data file the native reader rejected (its message names the file and offset).
    #[error(transparent)]
    Perf(#[from] schedlab_perf::PerfError),
    /// A trace.dat file the native reader rejected (its message names the file and offset).
    #[error(transparent)]
    TraceCmd(#[from] schedlab_tracecmd::TraceCmdError),
    /// A Perfetto trace the native reader rejected (its message names the file and offset).
    #[error(transparent)]
    Perfetto(#[from] schedlab_perfetto::PerfettoError),
    /// A table could not be written (its message names the file).
    #[error(transparent)]
    Table(#[from] TableError),
    /// A binary file that is not what the parser expects, at a byte offset.
    #[error("{source_name}: at byte {offset}: {message}")]
    Binary {
        source_name: String,
        offset: u64,
        message: String,
    },
}
