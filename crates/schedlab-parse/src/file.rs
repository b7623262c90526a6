//! One parser on one file: the entry point for `schedlab parse KIND FILE…` and the parse stage.

use std::path::Path;

use crate::{ParseContext, ParseError, Parsed, ParserKind, parse};

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
            ..Parsed::default()
        });
    }
    let bytes = std::fs::read(path).map_err(|source| ParseError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse(kind, &path.display().to_string(), &bytes, ctx)
}
