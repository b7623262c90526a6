//! `schedlab run`: collect what is missing, then the stale analysis; or, with `--dry-run`, each
//! run's timeline with nothing started.

use std::process::ExitCode;

use schedlab_runner::{Runner, StageSelection};

use super::pipeline::{Scope, execute, load_plan, runner_options};
use crate::cli::RunArgs;

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let selection = match (args.from, args.only) {
        (Some(stage), _) => StageSelection::from(stage),
        (_, Some(stage)) => StageSelection::only(stage),
        _ => StageSelection::all(),
    };
    let selection = if args.force {
        selection.forcing_all()
    } else {
        selection
    };
    let scope = Scope {
        label: args.label,
        repeat: args.repeat,
        short: args.form.short,
        ..Scope::default()
    };
    if args.dry_run {
        let plan = load_plan(
            &args.pipeline,
            scope.repeat,
            scope.short,
            Some(&args.common.data),
        )?;
        let options = runner_options(&args.pipeline, &args.common, scope, selection)?;
        let say = |_: &str| {};
        for line in Runner::new(&plan, &options, &say).dry_run() {
            println!("{line}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    execute(&args.pipeline, &args.common, scope, selection)
}
