//! `schedlab topology`: this machine's CPUs and core classes, or a captured sysfs tree's.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::cli::TopologyArgs;

pub fn topology(args: TopologyArgs) -> anyhow::Result<ExitCode> {
    let root = args.sysfs.unwrap_or_else(|| PathBuf::from("/sys"));
    let cpus = schedlab_topology::detect(&root)?;
    print!("{}", schedlab_topology::render_table(&cpus));
    Ok(ExitCode::SUCCESS)
}
