//! `schedlab plan`: the analysis brought up to date, then the runs per group each figure needs
//! to resolve a difference of the size asked.

use std::process::ExitCode;

use anyhow::bail;
use schedlab_runner::StageSelection;

use super::EXIT_INTERRUPTED;
use super::compare::Asked;
use super::pipeline::execute_then;
use crate::cli::PlanArgs;

/// Prints the runs needed per figure (those whose name contains one of `--metric`, or all).
pub fn plan(args: PlanArgs) -> anyhow::Result<ExitCode> {
    let asked = Asked {
        groups: &args.groups,
        metric: &args.metric,
        min_effect: None,
        json: args.json,
        per_class: false,
    };
    let detect = args.detect;
    execute_then(
        &args.pipeline,
        &args.common,
        args.form.into(),
        StageSelection::analysis(),
        |runner, outcome| {
            if outcome.interrupted {
                return Ok(ExitCode::from(EXIT_INTERRUPTED));
            }
            let by = schedlab_runner::GroupBy::from_name(&asked.groups.by);
            let rows: Vec<_> = (runner.runs_needed(&by, &asked.groups.selection(), detect)?)
                .into_iter()
                .filter(|r| asked.shows(&r.metric, r.stands_for.as_deref()))
                .collect();
            if rows.is_empty() {
                bail!(
                    "no figure to plan for: it needs runs in the baseline and another group{}",
                    if asked.metric.is_empty() {
                        String::new()
                    } else {
                        format!(" whose name contains {}", asked.metric.join(" or "))
                    }
                );
            }
            if asked.json {
                println!("{}", serde_json::to_string_pretty(&rows)?);
                return Ok(ExitCode::SUCCESS);
            }
            println!(
                "Runs per group to find a difference of {detect} % of the baseline's mean with \
                 80 % power (two-sided Welch, alpha 0.05):\n"
            );
            print!("{}", schedlab_runner::runs_needed_table(&rows));
            Ok(ExitCode::SUCCESS)
        },
    )
}
