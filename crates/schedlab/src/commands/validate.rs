//! `schedlab validate`: every pipeline's diagnostics, nothing run.

use std::process::ExitCode;

use super::EXIT_INPUT;
use super::pipeline::load_plan;
use crate::cli::ValidateArgs;

/// Exits 2 when any pipeline has a diagnostic.
pub fn validate(args: &ValidateArgs) -> ExitCode {
    let mut failed = false;
    for pipeline in &args.pipelines {
        match load_plan(pipeline, None, args.form.short, None) {
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
