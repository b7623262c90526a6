//! `schedlab status`: the runs on disk and each stage's freshness, with the reasons.

use std::process::ExitCode;

use schedlab_runner::{Runner, StageSelection};

use super::pipeline::{Scope, load_plan, runner_options};
use crate::cli::StatusArgs;

pub fn status(args: StatusArgs) -> anyhow::Result<ExitCode> {
    let scope = Scope {
        label: args.label,
        repeat: args.repeat,
        short: args.form.short,
        ..Scope::default()
    };
    let plan = load_plan(
        &args.pipeline,
        scope.repeat,
        scope.short,
        Some(&args.common.data),
    )?;
    let options = runner_options(&args.pipeline, &args.common, scope, StageSelection::all())?;
    let say = |_: &str| {};
    let status = Runner::new(&plan, &options, &say).status()?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&status)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("pipeline {} ({})", status.pipeline, status.root.display());
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
