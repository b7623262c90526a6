//! `schedlab check`: the runs brought up to date, then the pipeline's expectations judged on
//! one label's runs, and the exit code a script or `git bisect run` acts on.

use std::path::Path;
use std::process::ExitCode;

use anyhow::bail;
use schedlab_runner::{Judgement, StageSelection, progress};

use super::pipeline::{Scope, execute_then, load_plan};
use super::{EXIT_INPUT, EXIT_INTERRUPTED, EXIT_SKIP};
use crate::cli::{CheckArgs, Common};

/// Exits 0 when every expectation holds, 1 when one fails, 2 (125 with `--bisect`, errors too)
/// when one cannot be judged.
pub fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let scope = Scope {
        label: args.label.clone(),
        repeat: args.repeat,
        short: args.form.short,
        ..Scope::default()
    };
    match judge(&args.pipeline, &args.common, scope, &args) {
        Err(err) if args.bisect => {
            crate::print_error(&err);
            Ok(ExitCode::from(EXIT_SKIP))
        }
        checked => checked,
    }
}

fn judge(
    pipeline: &Path,
    common: &Common,
    scope: Scope,
    args: &CheckArgs,
) -> anyhow::Result<ExitCode> {
    let plan = load_plan(pipeline, scope.repeat, scope.short, Some(&common.data))?;
    if plan.summarize.expect.is_empty() {
        bail!(
            "{} has no expectations to check (hint: add `expect:`, e.g. `- residency: {{ \
             workload: W, class: P, share: \">= 0.95\" }}`)",
            pipeline.display()
        );
    }
    execute_then(
        pipeline,
        common,
        scope,
        StageSelection::all(),
        |runner, outcome| {
            if outcome.interrupted {
                return Ok(ExitCode::from(EXIT_INTERRUPTED));
            }
            let bar = progress::spinner("check");
            let report = runner.check();
            bar.finish_and_clear();
            let report = report?;
            let label = report.label.as_deref().unwrap_or("(no label)");
            if args.json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                match schedlab_runner::expectations_table(&report.rows) {
                    Some(table) => print!("{table}"),
                    None => println!("no runs of label {label} to judge"),
                }
            }
            for row in report.not_passing() {
                eprintln!(
                    "schedlab: check: expectation {} {}: {} {}: {}",
                    row.expectation,
                    if row.judgement == Judgement::Fail {
                        "fails"
                    } else {
                        "cannot be judged"
                    },
                    row.figure,
                    row.bound,
                    row.reason.as_deref().unwrap_or("no runs")
                );
            }
            eprintln!(
                "check: {} for label {label} (from {})",
                report.judgement,
                report.file.display()
            );
            Ok(ExitCode::from(match report.judgement {
                Judgement::Pass => 0,
                Judgement::Fail => 1,
                Judgement::CannotJudge if args.bisect => EXIT_SKIP,
                Judgement::CannotJudge => EXIT_INPUT,
            }))
        },
    )
}
