//! Where everything of a pipeline lives under the data directory. Only the runner knows this.
//!
//! ```text
//! data/<pipeline>/runs/<run_id>/{manifest.json, raw/}   one directory per collected run
//! data/<pipeline>/runs/<run_id>.partial/                 a run being collected
//! data/<pipeline>/runs/<run_id>.interrupted-<n>/         a run stopped by Ctrl-C, kept
//! data/<pipeline>/tables/*.parquet                       parse output
//! data/<pipeline>/aggregates/*.parquet                   aggregate output
//! data/<pipeline>/report/                                summarize output
//! data/<pipeline>/state.json                             stage fingerprints
//! data/<pipeline>/.lock                                  held while a command writes
//! ```

use std::path::{Path, PathBuf};

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

    pub fn runs(&self) -> PathBuf {
        self.root.join("runs")
    }

    pub fn run(&self, run_id: &str) -> PathBuf {
        self.runs().join(run_id)
    }

    pub fn partial_run(&self, run_id: &str) -> PathBuf {
        self.runs().join(format!("{run_id}.partial"))
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

    pub fn state(&self) -> PathBuf {
        self.root.join("state.json")
    }

    pub fn lock(&self) -> PathBuf {
        self.root.join(".lock")
    }

    /// A path relative to the pipeline root, as state.json and messages show it.
    pub fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}
