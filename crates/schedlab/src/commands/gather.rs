//! `schedlab gather`: the complete runs of other machines' data directories copied into
//! `--data`, verified against their manifests.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::interrupt::stop_on_interrupt;
use super::{EXIT_INPUT, EXIT_INTERRUPTED};
use crate::cli::GatherArgs;

/// Exits 2 when a run was refused. The first Ctrl-C stops after removing the run being copied;
/// a second exits at once.
pub fn gather(args: &GatherArgs) -> anyhow::Result<ExitCode> {
    let interrupt = Arc::new(AtomicBool::new(false));
    stop_on_interrupt(&interrupt, "removing the run being copied")?;
    let options = schedlab_runner::gather::GatherOptions {
        pipeline: args.pipeline.as_deref(),
        interrupt: &interrupt,
        progress: std::io::stderr().is_terminal(),
    };
    let say = |line: &str| eprintln!("{line}");
    let report = schedlab_runner::gather::gather(&args.sources, &args.common.data, &options, &say)?;
    println!("{}", report.summary());
    if report.interrupted {
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    if !report.refused.is_empty() {
        eprintln!(
            "schedlab: {} run(s) refused (see above); nothing of them was copied",
            report.refused.len()
        );
        return Ok(ExitCode::from(EXIT_INPUT));
    }
    Ok(ExitCode::SUCCESS)
}
