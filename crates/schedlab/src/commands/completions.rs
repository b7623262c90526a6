//! `schedlab completions SHELL`: a completion script made from the clap definitions, so it
//! offers exactly the commands and flags this build has.

use std::process::ExitCode;

use clap::CommandFactory;

use crate::cli::{Args, CompletionsArgs};

pub fn completions(args: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut command = Args::command();
    clap_complete::generate(args.shell, &mut command, "schedlab", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}
