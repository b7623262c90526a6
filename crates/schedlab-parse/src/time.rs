//! What `/usr/bin/time -v` and the shell's `time` keyword print about a command.
//!
//! Seed 002 compares kernel builds by wall and CPU seconds measured with `time`; the same
//! record also gives max RSS and context switches, which explain a slow run. GNU time's verbose
//! record is `Key: value` lines; records can be appended back to back with no separator, so a
//! record ends when a key repeats (or at `Command being timed`). The shell's `time` prints
//! `real`/`user`/`sys` with `XmY.YYYs` (bash) or plain seconds (`time -p`).
//!
//! Metric names: `wall_time_s`, `user_time_s`, `sys_time_s` (s), `cpu_pct` (%),
//! `max_rss_kib`, `avg_rss_kib`, … (KiB), `voluntary_ctx_switches`, `involuntary_ctx_switches`,
//! `major_page_faults`, `minor_page_faults`, `swaps`, `fs_inputs`, `fs_outputs`,
//! `socket_msgs_sent`, `socket_msgs_received`, `signals_delivered` (count), `page_size_bytes`
//! (B), `exit_status` (code). The n-th record of a file is instance `ctx.instance + n`.

use std::collections::HashSet;

use schedlab_tables::Severity;

use crate::text::{
    Metrics, Unrecognized, duration_seconds, number, numbered_lines, quality, text_error,
};
use crate::{ParseContext, ParseError, Parsed};

const PARSER: &str = "time";

/// GNU time's verbose keys, as (key, metric, unit).
const GNU_KEYS: [(&str, &str, &str); 22] = [
    ("User time (seconds)", "user_time_s", "s"),
    ("System time (seconds)", "sys_time_s", "s"),
    ("Percent of CPU this job got", "cpu_pct", "%"),
    (
        "Elapsed (wall clock) time (h:mm:ss or m:ss)",
        "wall_time_s",
        "s",
    ),
    (
        "Average shared text size (kbytes)",
        "avg_shared_text_kib",
        "KiB",
    ),
    (
        "Average unshared data size (kbytes)",
        "avg_unshared_data_kib",
        "KiB",
    ),
    ("Average stack size (kbytes)", "avg_stack_kib", "KiB"),
    ("Average total size (kbytes)", "avg_total_kib", "KiB"),
    ("Maximum resident set size (kbytes)", "max_rss_kib", "KiB"),
    ("Average resident set size (kbytes)", "avg_rss_kib", "KiB"),
    (
        "Major (requiring I/O) page faults",
        "major_page_faults",
        "count",
    ),
    (
        "Minor (reclaiming a frame) page faults",
        "minor_page_faults",
        "count",
    ),
    (
        "Voluntary context switches",
        "voluntary_ctx_switches",
        "count",
    ),
    (
        "Involuntary context switches",
        "involuntary_ctx_switches",
        "count",
    ),
    ("Swaps", "swaps", "count"),
    ("File system inputs", "fs_inputs", "count"),
    ("File system outputs", "fs_outputs", "count"),
    ("Socket messages sent", "socket_msgs_sent", "count"),
    ("Socket messages received", "socket_msgs_received", "count"),
    ("Signals delivered", "signals_delivered", "count"),
    ("Page size (bytes)", "page_size_bytes", "B"),
    ("Exit status", "exit_status", "code"),
];

/// The shell keyword's lines, as (word, metric).
const SHELL_KEYS: [(&str, &str); 3] = [
    ("real", "wall_time_s"),
    ("user", "user_time_s"),
    ("sys", "sys_time_s"),
];

/// Parses GNU `time -v` records and shell `time` reports, mixed with the command's own output.
pub fn parse(text: &str, source_name: &str, ctx: &ParseContext) -> Result<Parsed, ParseError> {
    let mut metrics = Metrics::new(ctx, PARSER);
    let mut parsed = Parsed::default();
    let mut unknown = Unrecognized::new(PARSER);
    // Record index and the metrics it already has; a repeated metric starts the next record.
    let mut record: Option<u32> = None;
    let mut seen: HashSet<&str> = HashSet::new();
    let mut start_record = |metric: &'static str, force: bool, record: &mut Option<u32>| -> u32 {
        if record.is_none() || force || !seen.insert(metric) {
            *record = Some(record.map_or(0, |r| r + 1));
            seen.clear();
            seen.insert(metric);
        }
        record.unwrap_or(0)
    };
    for (line_no, line) in numbered_lines(text) {
        let trimmed = line.trim();
        if trimmed.starts_with("Command being timed:") {
            start_record("command", true, &mut record);
            continue;
        }
        if let Some(status) = trimmed.strip_prefix("Command exited with non-zero status ") {
            let message =
                format!("{source_name}:{line_no}: the timed command exited with status {status}");
            parsed
                .quality
                .push(quality(ctx, PARSER, Severity::Warning, message));
            continue;
        }
        if let Some(status) = trimmed.strip_prefix("Command terminated by signal ") {
            let message =
                format!("{source_name}:{line_no}: the timed command was killed by signal {status}");
            parsed
                .quality
                .push(quality(ctx, PARSER, Severity::Warning, message));
            continue;
        }
        if let Some((metric, unit, value)) = gnu_line(trimmed) {
            let index = start_record(metric, false, &mut record);
            match value {
                Some(value) => metrics.push(index, metric.to_owned(), value, unit),
                None => unknown.note(line_no, line),
            }
            continue;
        }
        if let Some((metric, value)) = shell_line(trimmed) {
            let index = start_record(metric, false, &mut record);
            metrics.push(index, metric.to_owned(), value, "s");
            continue;
        }
        // Anything else is the timed command's own output, which is not ours to judge.
        if line.starts_with('\t') && trimmed.contains(": ") {
            unknown.note(line_no, line);
        }
    }
    if metrics.rows.is_empty() {
        let line = unknown.first_line().unwrap_or(1);
        return Err(text_error(
            source_name,
            line,
            "no `time -v` record and no `real`/`user`/`sys` lines (hint: was the command run under /usr/bin/time -v?)",
        ));
    }
    parsed.workload_metrics = metrics.rows;
    parsed
        .quality
        .extend(unknown.into_quality(ctx, source_name));
    Ok(parsed)
}

/// A GNU `Key: value` line: (metric, unit, value; None when the value is unreadable).
fn gnu_line(line: &str) -> Option<(&'static str, &'static str, Option<f64>)> {
    let (key, value) = line.rsplit_once(": ")?;
    let (_, metric, unit) = GNU_KEYS.iter().find(|(k, _, _)| *k == key.trim())?;
    let value = value.trim();
    let value = match *metric {
        "wall_time_s" => clock_seconds(value),
        "cpu_pct" => value.strip_suffix('%').and_then(number),
        _ => number(value),
    };
    Some((metric, unit, value))
}

/// `h:mm:ss` or `m:ss.ss` into seconds.
fn clock_seconds(value: &str) -> Option<f64> {
    let mut total = 0.0;
    for part in value.split(':') {
        total = total * 60.0 + number(part)?;
    }
    Some(total)
}

/// `real\t0m2.017s` (bash) or `real 2.01` (`time -p`).
fn shell_line(line: &str) -> Option<(&'static str, f64)> {
    let mut words = line.split_whitespace();
    let word = words.next()?;
    let value = words.next()?;
    if words.next().is_some() {
        return None;
    }
    let (_, metric) = SHELL_KEYS.iter().find(|(w, _)| *w == word)?;
    Some((metric, duration_seconds(value)?))
}
