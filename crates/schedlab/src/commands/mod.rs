//! One module per subcommand: each takes its clap arguments, calls the library crates, prints
//! what they return and says which exit code that is. What several commands share (loading a
//! pipeline, running its stages, Ctrl-C) lives in `pipeline` and `interrupt`.

mod analyze;
mod check;
mod compare;
mod completions;
mod export;
mod gather;
mod import;
mod interrupt;
mod man;
mod parse;
mod periodic_worker;
mod pipeline;
mod plan;
mod run;
mod status;
mod topology;
mod validate;

use std::process::ExitCode;

use crate::cli::Command;

/// Exit code for errors in what the user gave (pipeline, input files).
pub const EXIT_INPUT: u8 = 2;

/// `check --bisect`'s exit code when the runs cannot judge: `git bisect run`'s "skip".
const EXIT_SKIP: u8 = 125;

/// Exit code after Ctrl-C / SIGTERM, as shells report SIGINT.
const EXIT_INTERRUPTED: u8 = 130;

/// Exit code when a run collected now is `workload-stopped`: its figures may cover only part of
/// a workload's work, which a script must be able to tell from a run that failed (1).
const EXIT_WORKLOAD_STOPPED: u8 = 3;

/// Runs the subcommand and says what to exit with.
pub fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Run(args) => run::run(args),
        Command::Analyze(args) => analyze::analyze(args),
        Command::Check(args) => check::check(args),
        Command::Compare(args) => compare::compare(args),
        Command::Plan(args) => plan::plan(args),
        Command::Validate(args) => Ok(validate::validate(&args)),
        Command::Status(args) => status::status(args),
        Command::Gather(args) => gather::gather(&args),
        Command::Import(args) => import::import(args),
        Command::Parse(args) => parse::parse(args),
        Command::Export(args) => export::export(args),
        Command::Topology(args) => topology::topology(args),
        Command::Completions(args) => completions::completions(&args),
        Command::Man(args) => man::man(&args),
        Command::PeriodicWorker(args) => periodic_worker::periodic_worker(&args),
    }
}
