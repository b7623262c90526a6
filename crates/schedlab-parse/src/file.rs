//! One parser on files: the entry points for `schedlab parse KIND FILE…` and the parse stage.

use std::path::{Path, PathBuf};

use crate::{EventParts, EventTables, ParseContext, ParseError, Parsed, ParserKind, parse};

/// Parses the files `paths` with parser `kind` and writes its tables into `dir` (the rows of all
/// files in one table each, in the order of `paths`); returns the files written. Files are
/// parsed in parallel, and their event rows stream into the tables as they are read (see
/// [`EventParts`]), so memory stays bounded whatever the trace size. Nothing is written when a
/// file fails.
pub fn parse_files_to(
    kind: ParserKind,
    paths: &[PathBuf],
    ctx: &ParseContext,
    dir: &Path,
) -> Result<Vec<PathBuf>, ParseError> {
    let mut all = Parsed::default();
    if !kind.has_events() {
        for path in paths {
            all.extend(parse_file(kind, path, ctx)?);
        }
        return Ok(all.write_to(dir, &[kind])?);
    }
    let cpu_freq_idle = matches!(kind, ParserKind::TraceCmd | ParserKind::Perfetto);
    let (per_file, mut written) =
        EventParts::parse_each(dir, paths, cpu_freq_idle, |path, events| {
            parse_file_streaming(kind, path, ctx, events)
        })?;
    per_file.into_iter().for_each(|rest| all.extend(rest));
    written.extend(all.write_to(dir, &[kind])?);
    Ok(written)
}

/// Parses the file at `path` with parser `kind` into memory. perf.data, trace.dat and Perfetto
/// traces are mapped and read natively by schedlab-perf, schedlab-tracecmd and schedlab-perfetto; every other kind is text read
/// whole (tool outputs are small).
pub fn parse_file(kind: ParserKind, path: &Path, ctx: &ParseContext) -> Result<Parsed, ParseError> {
    if kind == ParserKind::PerfSched {
        return Ok(from_trace(schedlab_perf::read_sched(
            path,
            &sched_options(ctx),
        )?));
    }
    if kind == ParserKind::TraceCmd {
        let tables = schedlab_tracecmd::read_sched(path, &sched_options(ctx))?;
        return Ok(Parsed {
            cpu_freq_idle: tables.cpu_freq_idle,
            ..from_trace(tables.sched)
        });
    }
    if kind == ParserKind::Perfetto {
        let tables = schedlab_perfetto::read_sched(path, &sched_options(ctx))?;
        return Ok(Parsed {
            cpu_freq_idle: tables.cpu_freq_idle,
            ..from_trace(tables.sched)
        });
    }
    let bytes = std::fs::read(path).map_err(|source| ParseError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse(kind, &path.display().to_string(), &bytes, ctx)
}

/// Like [`parse_file`], but the event rows (`sched_slices`, `migrations`, `wakeups`) go to
/// `events` as they are read instead of into the returned [`Parsed`].
pub fn parse_file_streaming(
    kind: ParserKind,
    path: &Path,
    ctx: &ParseContext,
    events: &EventTables,
) -> Result<Parsed, ParseError> {
    if kind == ParserKind::PerfSched {
        let tables = schedlab_perf::stream_sched_compact(path, &sched_options(ctx), |batch| {
            events.add(batch)
        })?;
        return Ok(from_trace(tables));
    }
    if kind == ParserKind::TraceCmd {
        let tables =
            schedlab_tracecmd::stream_sched_compact(path, &sched_options(ctx), |batch, spans| {
                events.add(batch);
                events.add_cpu_freq_idle(spans);
            })?;
        return Ok(from_trace(tables.sched));
    }
    if kind == ParserKind::Perfetto {
        let tables =
            schedlab_perfetto::stream_sched_compact(path, &sched_options(ctx), |batch, spans| {
                events.add(batch);
                events.add_cpu_freq_idle(spans);
            })?;
        return Ok(from_trace(tables.sched));
    }
    let mut parsed = parse_file(kind, path, ctx)?;
    events.take_from(&mut parsed);
    Ok(parsed)
}

/// The tables of one perf.data or trace.dat file (their event tables are empty when streamed).
fn from_trace(tables: schedlab_perf::SchedTables) -> Parsed {
    Parsed {
        sched_slices: tables.sched_slices,
        migrations: tables.migrations,
        wakeups: tables.wakeups,
        threads: tables.threads,
        quality: tables.quality,
        trace_window: tables.window,
        traces: tables.trace.into_iter().collect(),
        losses: tables.losses,
        sched_runtime: tables.sched_runtime,
        ..Parsed::default()
    }
}

fn sched_options(ctx: &ParseContext) -> schedlab_perf::SchedOptions {
    schedlab_perf::SchedOptions {
        run_id: ctx.run_id.clone(),
        workloads: ctx.workloads.clone(),
        bytes_read: ctx.bytes_read.clone(),
        salvage: ctx.salvage,
    }
}
