//! One parser on one file: the entry point for `schedlab parse KIND FILE…` and the parse stage.

use std::path::{Path, PathBuf};

use crate::{ParseContext, ParseError, Parsed, ParserKind, parse, perf_sched};

/// Parses the files `paths` with parser `kind` and writes its tables into `dir` (the rows of all
/// files in one table each); returns the files written. perf.data streams into the tables as it
/// is read, so memory stays bounded whatever the trace size; other kinds are parsed whole, then
/// written (see [`Parsed::write_to`]).
pub fn parse_files_to(
    kind: ParserKind,
    paths: &[PathBuf],
    ctx: &ParseContext,
    dir: &Path,
) -> Result<Vec<PathBuf>, ParseError> {
    if kind == ParserKind::PerfSched {
        return perf_sched::write_tables(paths, ctx, dir);
    }
    let mut all = Parsed::default();
    for path in paths {
        all.extend(parse_file(kind, path, ctx)?);
    }
    Ok(all.write_to(dir, &[kind])?)
}

/// Parses the file at `path` with parser `kind`. perf.data is mapped and read natively by
/// schedlab-perf; every other kind is text read whole (tool outputs are small).
pub fn parse_file(kind: ParserKind, path: &Path, ctx: &ParseContext) -> Result<Parsed, ParseError> {
    if kind == ParserKind::PerfSched {
        let options = schedlab_perf::SchedOptions {
            run_id: ctx.run_id.clone(),
            workload_pids: ctx.workload_pids.clone(),
        };
        let tables = schedlab_perf::read_sched(path, &options)?;
        return Ok(Parsed {
            sched_slices: tables.sched_slices,
            migrations: tables.migrations,
            wakeups: tables.wakeups,
            threads: tables.threads,
            quality: tables.quality,
            trace_window: tables.window,
            ..Parsed::default()
        });
    }
    let bytes = std::fs::read(path).map_err(|source| ParseError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse(kind, &path.display().to_string(), &bytes, ctx)
}
