//! The built-in periodic workload, which the collector starts as this executable so that it
//! runs as a process of its own, with its own threads to trace.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use crate::cli::PeriodicWorkerArgs;

pub fn periodic_worker(args: &PeriodicWorkerArgs) -> anyhow::Result<ExitCode> {
    let config = schedlab_collect::periodic::PeriodicConfig {
        threads: args.threads,
        period: Duration::from_nanos(args.period_ns),
        busy: Duration::from_nanos(args.busy_ns),
        duration: Duration::from_nanos(args.duration_ns),
    };
    schedlab_collect::periodic::run(config)
        .write(&args.report)
        .with_context(|| format!("writing {}", args.report.display()))?;
    Ok(ExitCode::SUCCESS)
}
