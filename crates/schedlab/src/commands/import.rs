//! `schedlab import`: files recorded without schedlab added as a new run of a pipeline, and
//! what to run next.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use schedlab_runner::import::{ImportFile, ImportRequest};

use schedlab_runner::load::LoadOptions;

use super::pipeline::{check_label, load};
use crate::cli::{DEFAULT_DATA, ImportArgs};

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
    let options = LoadOptions {
        importing: Some(&request.workloads),
        ..LoadOptions::default()
    };
    let plan = load(pipeline, &options)?;
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
        "next: `{}` parses, aggregates and summarizes it with the other runs",
        analyze_command(pipeline, &args.common.data)
    );
    Ok(ExitCode::SUCCESS)
}

/// The `schedlab analyze` that sees the run just imported: the same pipeline and data directory.
fn analyze_command(pipeline: &Path, data: &Path) -> String {
    let mut command = format!(
        "schedlab analyze {}",
        shell_word(&pipeline.display().to_string())
    );
    if data != Path::new(DEFAULT_DATA) {
        command.push_str(&format!(
            " --data {}",
            shell_word(&data.display().to_string())
        ));
    }
    command
}

/// `text` as one word of a shell command line: quoted when it holds anything but plain path
/// characters.
fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}
