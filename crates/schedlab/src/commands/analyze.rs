//! `schedlab analyze`: the stale analysis of the runs on disk, never a collection.

use std::process::ExitCode;

use schedlab_runner::StageSelection;

use super::pipeline::{Scope, execute};
use crate::cli::AnalyzeArgs;

pub fn analyze(args: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let selection = if args.force {
        StageSelection::analysis().forcing_all()
    } else {
        StageSelection::analysis()
    };
    let scope = Scope {
        runs: (!args.runs.is_empty()).then_some(args.runs),
        short: args.form.short,
        ..Scope::default()
    };
    execute(&args.pipeline, &args.common, scope, selection)
}
