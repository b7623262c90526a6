//! `schedlab import`: files recorded without schedlab added as a new run of a pipeline, and
//! what to run next.

use std::io::IsTerminal;
use std::process::ExitCode;

use schedlab_runner::import::{ImportFile, ImportRequest};

use super::pipeline::{check_label, load_plan};
use crate::cli::ImportArgs;

pub fn import(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let request = ImportRequest {
        files: args.files.iter().map(|f| ImportFile::from_arg(f)).collect(),
        kind: args.kind,
        workloads: args.workloads,
        label: args.label,
        vars: args.vars.into_iter().collect(),
        salvage: args.salvage,
        progress: std::io::stderr().is_terminal(),
    };
    let pipeline = &args.pipeline;
    let plan = load_plan(pipeline, None, false)?;
    check_label(request.label.as_deref())?;
    let say = |line: &str| eprintln!("{line}");
    let report = schedlab_runner::import::import(&plan, &args.common.data, &request, &say)?;
    println!(
        "imported {} file(s) as run {} of pipeline `{}`{}",
        report.files.len(),
        report.run_id,
        plan.name,
        if report.copied {
            " (copied: the files are on another file system)"
        } else {
            ""
        }
    );
    eprintln!(
        "next: `schedlab analyze {}` parses, aggregates and summarizes it with the other runs",
        pipeline.display()
    );
    Ok(ExitCode::SUCCESS)
}
