//! The stage graph: collect → parse → aggregate → summarize, with persistent fingerprints.
//!
//! # Brief overview
//!
//! [`Runner::execute`] runs a [`schedlab_spec::Plan`]'s stages over the data layout of
//! [`layout`]; [`Runner::status`] says which runs are on disk and which runs' stages are fresh.
//! Collection is per run: a run whose directory exists was collected and is never collected again
//! (unless forced), and runs are named by what they do ([`identity`]), so that more repetitions or
//! a label continued later add runs instead of replacing them. Parse and aggregate are per run
//! too: each run has its own partition of every table and aggregate, and its own record of what
//! they were computed from ([`state`]: the stage's part of the YAML, the program build, the
//! digests of its input files). Only new or changed runs are computed; the others' files are not
//! touched. Summarize reads every run's partitions and is recomputed when any of them changed.
//!
//! # Key design decision
//!
//! A stage reads files and writes files; nothing passes between stages in memory, so any stage
//! can run alone and an analyst reruns only the analysis. Digests are cheap on gigabytes of raw
//! data ([`digest`]): raw files are hashed once, when their run ends, and trusted afterwards while
//! their size, mtime and inode are unchanged. Cost grows with what is new: adding run 21 to 20
//! parses and aggregates one run, then summarizes.

mod check;
mod collect_stage;
mod comparison;
pub mod config_diff;
pub mod digest;
mod error;
mod files;
pub mod gather;
pub mod identity;
pub mod import;
mod inputs;
pub mod layout;
pub mod load;
mod lock;
mod migrate;
mod options;
mod parse_stage;
mod partitions;
mod per_class;
mod per_run;
pub mod progress;
pub mod run_dir;
mod runner;
pub mod state;
mod status;
mod summarize_stage;

pub use check::CheckReport;
pub use comparison::Comparison;
pub use error::RunnerError;
pub use identity::RunIds;
pub use layout::Layout;
pub use options::{Outcome, RunnerOptions, StageSelection};
pub use parse_stage::CollectedRun;
pub use runner::Runner;
pub use schedlab_analyze::compare::{GroupBy, Selection, adjustment, notes};
pub use schedlab_report::{comparison_table, expectations_table, runs_needed_table};
pub use schedlab_tables::Judgement;
pub use state::Stage;
pub use status::{RunOnDisk, StatusReport};
