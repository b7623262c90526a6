//! Where everything of a pipeline lives under the data directory. Only the runner knows this.
//!
//! ```text
//! data/<pipeline>/runs/<run_id>/{manifest.json, raw/}   one directory per collected run
//! data/<pipeline>/runs/<run_id>.partial/                 a run being collected or gathered
//! data/<pipeline>/runs/<run_id>.interrupted-<n>/         a run stopped by Ctrl-C, kept
//! data/<pipeline>/tables/<table>/run_id=<run_id>/part-0.parquet      parse output, per run
//! data/<pipeline>/aggregates/<name>/run_id=<run_id>/part-0.parquet   aggregate output, per run
//! data/<pipeline>/report/{summary.md, index.html}        summarize output
//! data/<pipeline>/report/<plot>-<run_id>.svg             its plots
//! data/<pipeline>/state/{parse,aggregate}/<run_id>.json  what each run's results came from
//! data/<pipeline>/state/summarize.json                   what the report came from
//! data/<pipeline>/state/digests.json                     digests of files, trusted while stat matches
//! data/<pipeline>/state/locks/<run_id>.lock              held while a command computes that run
//! data/<pipeline>/.lock                                  held while a command writes
//! data/<pipeline>/compare/by-<key>.{parquet,md}          `schedlab compare` output
//! ```
//!
//! Inside a run directory, the names are the manifest format's
//! ([`schedlab_tables::manifest::MANIFEST_FILE`], [`RAW_DIR`]), because the manifest records its
//! raw files relative to the run directory; the functions here are still the only place that
//! joins them onto a path. Inside `tables/` and `aggregates/`, the partition names are the table
//! contract's ([`schedlab_tables::Partition`]): DuckDB, polars and Spark read them as Hive
//! partitions.

use std::path::{Path, PathBuf};

use schedlab_tables::Partition;
use schedlab_tables::manifest::{MANIFEST_FILE, RAW_DIR};

use crate::state::Stage;

/// Whether `text` may be part of a directory name: a `--label` or a matrix variable or value
/// (parts of a run directory's name, `<set>-<label>-<variable>=<value>-r<n>`), or a pipeline's
/// name (its data directory). If not, the error is the rule in words. Only letters, digits, `-`
/// and `_`: a `.` marks a run directory that is not complete (`<run>.partial`,
/// `<run>.interrupted-<n>`), `,` and `=` join matrix values in a run id, and `/` leaves the
/// directory.
pub fn check_name_part(text: &str) -> Result<(), String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if !text.is_empty() && text.chars().all(allowed) {
        return Ok(());
    }
    Err("use letters, digits, `-` and `_` (it becomes part of directory names)".into())
}

#[derive(Debug, Clone)]
pub struct Layout {
    pub root: PathBuf,
}

impl Layout {
    pub fn new(data_dir: &Path, pipeline: &str) -> Layout {
        Layout {
            root: data_dir.join(pipeline),
        }
    }

    /// The layout of the pipeline directory `root` itself, whatever its name (`schedlab gather`
    /// reads one copied under a machine's name).
    pub fn at(root: &Path) -> Layout {
        Layout {
            root: root.to_owned(),
        }
    }

    /// Whether `name`, an entry of `runs/`, is a complete run: partial and interrupted runs
    /// carry a `.` (`<run>.partial`, `<run>.interrupted-<n>`), which no run id holds.
    pub fn is_complete_run_name(name: &str) -> bool {
        !name.contains('.')
    }

    pub fn runs(&self) -> PathBuf {
        self.root.join("runs")
    }

    pub fn run(&self, run_id: &str) -> PathBuf {
        self.runs().join(run_id)
    }

    pub fn partial_run(&self, run_id: &str) -> PathBuf {
        self.runs().join(format!("{run_id}.partial"))
    }

    /// Where a run stopped by Ctrl-C is kept (`secs`: when, in seconds since the epoch), beside
    /// the complete runs but never taken for one.
    pub fn interrupted_run(&self, run_id: &str, secs: u64) -> PathBuf {
        self.runs().join(format!("{run_id}.interrupted-{secs}"))
    }

    /// The manifest of the run in `run_dir` (complete, partial or interrupted).
    pub fn manifest(run_dir: &Path) -> PathBuf {
        run_dir.join(MANIFEST_FILE)
    }

    /// The directory of the raw files of the run in `run_dir`.
    pub fn raw(run_dir: &Path) -> PathBuf {
        run_dir.join(RAW_DIR)
    }

    /// A file of the run in `run_dir` (complete, partial or interrupted), given as its manifest
    /// names it (relative to the run directory).
    pub fn file_of_run(run_dir: &Path, file: &str) -> PathBuf {
        run_dir.join(file)
    }

    /// A file of run `run_id`, given as its manifest names it (relative to the run directory).
    pub fn run_file(&self, run_id: &str, file: &str) -> PathBuf {
        Layout::file_of_run(&self.run(run_id), file)
    }

    pub fn tables(&self) -> PathBuf {
        self.root.join("tables")
    }

    pub fn aggregates(&self) -> PathBuf {
        self.root.join("aggregates")
    }

    pub fn report(&self) -> PathBuf {
        self.root.join("report")
    }

    /// The expectations as the summarize stage judged them (`schedlab check` reads it).
    pub fn expectations(&self) -> PathBuf {
        self.report().join("expectations.parquet")
    }

    /// The report's page, with the plots inline.
    pub fn index_html(&self) -> PathBuf {
        self.report().join("index.html")
    }

    /// The summary, as the terminal shows it after `run`.
    pub fn summary_md(&self) -> PathBuf {
        self.report().join("summary.md")
    }

    /// Run `run_id`'s partition of every table under `root` (`tables/` or `aggregates/`).
    pub fn partition<'a>(root: &'a Path, run_id: &'a str) -> Partition<'a> {
        Partition { root, run_id }
    }

    /// The directory a stage's staging area for one run is made in: beside the dataset, so that
    /// moving a finished partition into place is a rename.
    pub fn staging(dir: &Path, run_id: &str) -> std::io::Result<tempfile::TempDir> {
        std::fs::create_dir_all(dir)?;
        tempfile::Builder::new()
            .prefix(&format!(".staging-{run_id}-"))
            .tempdir_in(dir)
    }

    pub fn state_dir(&self) -> PathBuf {
        self.root.join("state")
    }

    /// The records of one per-run stage (parse, aggregate).
    pub fn records(&self, stage: Stage) -> PathBuf {
        self.state_dir().join(stage.name())
    }

    /// What `stage` computed for `run_id` came from (parse, aggregate), or, for summarize, what
    /// the report came from.
    pub fn record(&self, stage: Stage, run_id: Option<&str>) -> PathBuf {
        match run_id {
            Some(run_id) => self.records(stage).join(format!("{run_id}.json")),
            None => self.state_dir().join(format!("{}.json", stage.name())),
        }
    }

    /// The run a record file is of.
    pub fn record_run(path: &Path) -> Option<String> {
        let name = path.file_name()?.to_str()?;
        name.strip_suffix(".json").map(str::to_owned)
    }

    pub fn digest_cache(&self) -> PathBuf {
        self.state_dir().join("digests.json")
    }

    /// Held while a command computes `run_id`'s tables or aggregates.
    pub fn run_lock(&self, run_id: &str) -> PathBuf {
        self.state_dir()
            .join("locks")
            .join(format!("{run_id}.lock"))
    }

    /// The one state file of the first schedlab versions (one record per stage, tables of all
    /// runs in one file each): found, it means the data directory is of that layout.
    pub fn legacy_state(&self) -> PathBuf {
        self.root.join("state.json")
    }

    /// `schedlab compare`'s output: `by-<key>.parquet` and `by-<key>.md`.
    pub fn compare(&self) -> PathBuf {
        self.root.join("compare")
    }

    /// `schedlab compare --by <key>`'s table and its Markdown rendering.
    pub fn comparison(&self, key: &str) -> (PathBuf, PathBuf) {
        let file = |extension: &str| self.compare().join(format!("by-{key}.{extension}"));
        (file("parquet"), file("md"))
    }

    /// `schedlab compare --by <key>`'s page: the Markdown with a chart per figure.
    pub fn comparison_html(&self, key: &str) -> PathBuf {
        self.compare().join(format!("by-{key}.html"))
    }

    /// The per-run values a comparison under `key` was made of.
    pub fn comparison_observations(&self, key: &str) -> PathBuf {
        self.compare()
            .join(format!("by-{key}.observations.parquet"))
    }

    pub fn state(&self) -> PathBuf {
        self.root.join("state.json")
    }

    pub fn lock(&self) -> PathBuf {
        self.root.join(".lock")
    }

    /// Removes what an earlier stage killed mid-write left in the stage directory `dir`:
    /// temporary tables (`.tmp-*`), unjoined parts (`.parts-*`) and unfinished partitions
    /// (`.staging-*`). Only safe under the exclusive data lock, when no other schedlab writes
    /// there.
    pub fn sweep_leftovers(dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let ours = [".tmp-", ".parts-", ".staging-"];
            if !ours.iter().any(|prefix| name.starts_with(prefix)) {
                continue;
            }
            let path = entry.path();
            let removed = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            match removed {
                Ok(()) => {
                    tracing::debug!("removed {}, left by an interrupted stage", path.display())
                }
                Err(err) => tracing::warn!("could not remove {}: {err}", path.display()),
            }
        }
    }

    /// A path relative to the pipeline root, as state.json and messages show it.
    pub fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

/// The report's files, under `report/`. The plots sit beside `index.html`, which carries them
/// inline.
impl schedlab_report::ReportPaths for Layout {
    fn summary_md(&self) -> PathBuf {
        Layout::summary_md(self)
    }

    fn index_html(&self) -> PathBuf {
        Layout::index_html(self)
    }

    fn plot_svg(&self, kind: &str, run_id: &str) -> PathBuf {
        self.report().join(format!("{kind}-{run_id}.svg"))
    }
}
