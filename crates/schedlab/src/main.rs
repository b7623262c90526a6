//! The schedlab command line: argument parsing and terminal output only (ripgrep's shape:
//! `main → dispatch(args)`, errors printed with their chain, exit code 2 for usage and input
//! errors). The clap types are in `cli`, each subcommand in a module of `commands`, and what
//! they do in the library crates, where tests reach it.

mod cli;
mod commands;
mod huge_pages;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use schedlab_runner::load::LoadError;

/// Asks glibc's allocator to keep freed memory for reuse rather than hand it back to the kernel,
/// in one arena.
///
/// Parsing a trace allocates and frees megabytes per block (decoded events, Arrow arrays); by
/// default glibc serves such sizes with fresh mmaps and trims freed heap, so every block paid
/// for page faults and zeroing again. Up to 64 MiB of freed memory stays with the process.
///
/// One arena: glibc gives threads arenas of their own (up to eight per core), and each keeps
/// what was freed in it. The reader's rayon threads and the encoders allocate and free the same
/// megabytes in turn, so with many arenas every one grows to the largest block any thread has
/// held there, and peak memory with them. jemalloc and mimalloc were no better: as much memory
/// or more with their default decay, less only when returning every freed page at once, at many
/// times the system CPU time.
fn keep_freed_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: called first thing in main, before any other thread exists; mallopt only sets
    // allocator tunables and is harmless if it refuses a value.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
}

#[global_allocator]
static ALLOCATOR: huge_pages::HugePagesForLargeAllocations =
    huge_pages::HugePagesForLargeAllocations;

fn main() -> ExitCode {
    keep_freed_memory();
    let args = cli::Args::parse();
    init_logging(args.verbose);
    match commands::dispatch(args.command) {
        Ok(code) => code,
        Err(err) => {
            print_error(&err);
            ExitCode::from(commands::EXIT_INPUT)
        }
    }
}

fn print_error(err: &anyhow::Error) {
    match err.downcast_ref::<LoadError>() {
        // Diagnostics carry their own `file:line:column: error:` prefix.
        Some(invalid @ LoadError::Invalid(_)) => eprintln!("{invalid}"),
        _ => eprintln!("schedlab: error: {}", error_message(err)),
    }
}

/// The error and its causes, each said once. A library error often puts its cause in its own
/// message as well (`{path}: {source}`), where `{:#}` would print the cause twice.
fn error_message(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain().map(ToString::to_string) {
        if !text.contains(&cause) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&cause);
        }
    }
    text
}

fn init_logging(verbose: u8) {
    // The plots' rasterizer (usvg) warns of every zero-width rectangle, which plotters writes
    // for a span shorter than a pixel: invisible either way, and not the user's concern.
    let default = match verbose {
        0 => "warn,usvg=error",
        1 => "info,usvg=error",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal());
    // Warnings a user reads at a glance look like schedlab's other messages; -v logs, with
    // their times and levels, are for following a run.
    if verbose == 0 {
        logs.event_format(Plain).init();
    } else {
        logs.init();
    }
}

/// `schedlab: warning: message field=value`: a log event in the form of schedlab's own lines.
struct Plain;

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for Plain
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let level = match *event.metadata().level() {
            tracing::Level::ERROR => "error",
            tracing::Level::WARN => "warning",
            tracing::Level::INFO => "info",
            _ => "debug",
        };
        write!(writer, "schedlab: {level}: ")?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}
