//! `schedlab parse`: one parser on existing files, its tables written into `--out`, under a
//! progress bar on a terminal.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use schedlab_parse::{ParseContext, ParserKind};
use schedlab_runner::progress;

use crate::cli::{ParseArgs, ParserChoice};

pub fn parse(args: ParseArgs) -> anyhow::Result<ExitCode> {
    let kind = match args.kind {
        ParserChoice::Named(kind) => kind,
        ParserChoice::Auto => {
            let mut say = |input: &std::path::Path, found: &schedlab_parse::detect::Detected| {
                eprintln!("{}: {} ({})", input.display(), found.kind, found.evidence);
            };
            schedlab_parse::detect::detect_kind(&args.inputs, &mut say)?
        }
    };
    let ctx = ParseContext {
        run_id: args.run_id,
        salvage: args.salvage,
        ..ParseContext::default()
    };
    let written = with_parse_progress(kind, &args.inputs, ctx, |ctx| {
        schedlab_parse::parse_files_to(kind, &args.inputs, ctx, &args.out)
    });
    for path in written? {
        println!("{}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `parse` under a progress bar on a terminal: bytes read for perf.data (the reader counts
/// them into the context), a spinner with the elapsed time for text.
fn with_parse_progress<T>(
    kind: ParserKind,
    inputs: &[PathBuf],
    mut ctx: ParseContext,
    parse: impl FnOnce(&ParseContext) -> T,
) -> T {
    let what = format!("parse {kind}");
    if !kind.is_trace_file() {
        let bar = progress::spinner(&what);
        let result = parse(&ctx);
        bar.finish_and_clear();
        return result;
    }
    let total = (inputs.iter())
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let bar = progress::bytes_bar(&what, total);
    let read = Arc::new(AtomicU64::new(0));
    ctx.bytes_read = Some(read.clone());
    // The bar follows the counter ten times a second and stops the moment parsing ends (a
    // plain sleep here kept every command waiting up to 100 ms, a quarter of a large parse).
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let result = std::thread::scope(|scope| {
        let (bar, read) = (bar.clone(), read.clone());
        scope.spawn(move || {
            while let Err(RecvTimeoutError::Timeout) =
                stopped.recv_timeout(Duration::from_millis(100))
            {
                bar.set_position(read.load(Ordering::Relaxed));
            }
        });
        let result = parse(&ctx);
        drop(stop);
        result
    });
    bar.finish_and_clear();
    result
}
