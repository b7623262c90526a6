//! Reads a perf.data file and prints how many rows each table got.
//!
//! `read_sched FILE [--collect | --compact]`: streams rows by default (bounded memory);
//! `--collect` builds the whole tables in memory with `read_sched`; `--compact` streams the
//! compact batches `schedlab parse` encodes, so it times the reader without the rows.

use std::path::PathBuf;
use std::process::ExitCode;

use schedlab_perf::{SchedOptions, read_sched, stream_sched, stream_sched_compact};

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(path) = args.next().map(PathBuf::from) else {
        eprintln!("usage: read_sched FILE [--collect | --compact]");
        return ExitCode::from(2);
    };
    let mode = args.next();
    let (collect, compact) = (
        mode.as_ref().is_some_and(|a| a == "--collect"),
        mode.as_ref().is_some_and(|a| a == "--compact"),
    );
    let opts = SchedOptions {
        run_id: "bench".into(),
        workloads: Vec::new(),
        ..Default::default()
    };
    let (mut slices, mut migrations, mut wakeups) = (0usize, 0usize, 0usize);
    let result = if collect {
        read_sched(&path, &opts).inspect(|t| {
            (slices, migrations, wakeups) =
                (t.sched_slices.len(), t.migrations.len(), t.wakeups.len());
        })
    } else if compact {
        stream_sched_compact(&path, &opts, |b| {
            slices += b.sched_slices.len();
            migrations += b.migrations.len();
            wakeups += b.wakeups.len();
        })
    } else {
        stream_sched(&path, &opts, |b| {
            slices += b.sched_slices.len();
            migrations += b.migrations.len();
            wakeups += b.wakeups.len();
        })
    };
    match result {
        Ok(t) => {
            println!(
                "sched_slices {slices}\nmigrations {migrations}\nwakeups {wakeups}\nthreads {}\nquality {}\nwindow {:?}",
                t.threads.len(),
                t.quality.len(),
                t.window
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
