//! What a command asks the runner for (its stages and options) and what the runner did.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::state::Stage;

/// Which stages a command runs, and which it recomputes whatever their fingerprints say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageSelection {
    pub stages: BTreeSet<Stage>,
    pub forced: BTreeSet<Stage>,
}

impl StageSelection {
    /// All four stages, each skipped when fresh.
    pub fn all() -> StageSelection {
        StageSelection {
            stages: Stage::ALL.into_iter().collect(),
            forced: BTreeSet::new(),
        }
    }

    /// Parse, aggregate and summarize: never collect.
    pub fn analysis() -> StageSelection {
        StageSelection {
            stages: Stage::ALL[1..].iter().copied().collect(),
            forced: BTreeSet::new(),
        }
    }

    /// `--from STAGE`: that stage and the ones after it, all recomputed (collect: the missing
    /// runs only; a collected run is replaced by `--force` alone).
    pub fn from(stage: Stage) -> StageSelection {
        let stages: BTreeSet<Stage> = Stage::ALL.into_iter().filter(|s| *s >= stage).collect();
        StageSelection {
            forced: stages
                .iter()
                .copied()
                .filter(|s| *s != Stage::Collect)
                .collect(),
            stages,
        }
    }

    /// `--only STAGE`: that stage alone, recomputed (collect: the missing runs only, so that
    /// `--only collect` on each test machine adds runs without replacing any).
    pub fn only(stage: Stage) -> StageSelection {
        StageSelection {
            stages: [stage].into(),
            forced: [stage]
                .into_iter()
                .filter(|s| *s != Stage::Collect)
                .collect(),
        }
    }

    /// `--force`: every selected stage recomputed (collect: every run collected again).
    pub fn forcing_all(mut self) -> StageSelection {
        self.forced = self.stages.clone();
        self
    }
}

/// How a command is run.
#[derive(Debug, Clone)]
pub struct RunnerOptions {
    pub data_dir: PathBuf,
    /// The pipeline file as the user named it, for messages.
    pub pipeline_file: String,
    pub label: Option<String>,
    pub selection: StageSelection,
    /// The schedlab binary (runs the built-in periodic workload).
    pub self_exe: PathBuf,
    /// Set by the Ctrl-C / SIGTERM handler.
    pub interrupt: Arc<AtomicBool>,
    pub progress: bool,
    /// Parse and aggregate only these runs (`analyze --runs`), and do not summarize: one job of
    /// a batch system that analyses runs in parallel. `None`: every run.
    pub runs: Option<Vec<String>>,
}

/// What a command did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The summary, when summarize ran or its report was fresh.
    pub summary: Option<String>,
    pub interrupted: bool,
    /// Runs collected by this command that ended `failed`.
    pub failed_runs: Vec<String>,
    /// Runs collected by this command that ended `workload-stopped`: a workload was stopped at
    /// the collection's end before it ended by itself.
    pub stopped_runs: Vec<String>,
}
