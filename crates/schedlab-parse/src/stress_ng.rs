//! stress-ng's own report: the `--metrics-brief` / `--metrics` table, its miscellaneous
//! metrics, the `--times` block, the pass/fail trailer and the "successful run completed" line.
//!
//! The seeds read throughput (bogo ops/s) and CPU time (usr + sys) off this table, so every
//! column becomes a `workload_metrics` row. stress-ng changed its log tag (`info:` → `metrc:`),
//! its header spacing and where it prints the completion line over the years; rows are therefore
//! recognised by shape (a stressor name and as many numbers as the header has columns), never by
//! exact spacing.
//!
//! Metric names are `<stressor>/<measure>` for table and miscellaneous rows (`cpu/bogo_ops`,
//! `cpu/usr_time_s`, `memrate/write128_mb_per_sec`) and plain names for the whole run
//! (`completed_in_s`, `times/user_s`, `stressors_failed`).

use schedlab_tables::Severity;

use crate::text::{
    Metrics, Unrecognized, duration_seconds, number, quality, snake_case, text_error,
};
use crate::{ParseContext, ParseError, Parsed};

const PARSER: &str = "stress-ng";

/// The columns of the metrics table in the order stress-ng prints them, as
/// (metric, unit). `--metrics-brief` prints the first six; `--metrics` adds the rest.
const COLUMNS: [(&str, &str); 8] = [
    ("bogo_ops", "ops"),
    ("real_time_s", "s"),
    ("usr_time_s", "s"),
    ("sys_time_s", "s"),
    ("bogo_ops_per_s_real", "ops/s"),
    ("bogo_ops_per_s_cpu", "ops/s"),
    ("cpu_used_per_instance_pct", "%"),
    ("rss_max_kib", "KiB"),
];

/// Parses stress-ng's stdout/stderr (`--metrics-brief` or `--metrics`, any version since 2020).
pub fn parse(text: &str, source_name: &str, ctx: &ParseContext) -> Result<Parsed, ParseError> {
    let mut metrics = Metrics::new(ctx, PARSER);
    let mut parsed = Parsed::default();
    let mut unknown = Unrecognized::new(PARSER);
    let mut table_columns: Option<usize> = None;
    let mut stress_ng_lines = 0usize;
    for (line_no, line) in crate::text::numbered_lines(text) {
        let Some((tag, message)) = split_log_line(line) else {
            if !line.trim().is_empty() {
                unknown.note(line_no, line);
            }
            continue;
        };
        stress_ng_lines += 1;
        match tag {
            "fail" | "error" => {
                parsed.quality.push(quality(
                    ctx,
                    PARSER,
                    Severity::Error,
                    format!("{source_name}:{line_no}: {message}"),
                ));
                continue;
            }
            "warn" => {
                parsed.quality.push(quality(
                    ctx,
                    PARSER,
                    Severity::Warning,
                    format!("{source_name}:{line_no}: {message}"),
                ));
                continue;
            }
            _ => {}
        }
        if message.starts_with("stressor ") && message.contains("bogo ops") {
            table_columns = Some(if message.contains("CPU used per") {
                8
            } else {
                6
            });
            continue;
        }
        if message.starts_with("(secs)") || message.starts_with("miscellaneous metrics") {
            continue;
        }
        if let Some(rest) = message.strip_prefix("successful run completed in ") {
            let shown = rest.split(" (").next().unwrap_or(rest);
            match duration_seconds(shown) {
                Some(seconds) => metrics.push(0, "completed_in_s".into(), seconds, "s"),
                None => unknown.note(line_no, line),
            }
            continue;
        }
        if read_trailer(
            message,
            ctx,
            source_name,
            line_no,
            &mut metrics,
            &mut parsed,
        ) {
            continue;
        }
        if let Some(columns) = table_columns
            && read_table_row(message, columns, &mut metrics)
        {
            continue;
        }
        if read_misc_metric(message, &mut metrics) {
            continue;
        }
        // Any other info line (dispatching hogs, per-instance notes) is chatter; a metrc: line
        // we cannot read is a table form we do not know.
        if tag == "metrc" {
            unknown.note(line_no, line);
        }
    }
    if stress_ng_lines == 0 {
        let line = unknown.first_line().unwrap_or(1);
        return Err(text_error(
            source_name,
            line,
            "no `stress-ng: <tag>: [pid]` line (hint: is this stress-ng output?)",
        ));
    }
    parsed.workload_metrics = metrics.rows;
    parsed
        .quality
        .extend(unknown.into_quality(ctx, source_name));
    Ok(parsed)
}

/// `stress-ng: info:  [2680] message` → (`info`, `message`).
fn split_log_line(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix("stress-ng:")?;
    let (tag, rest) = rest.trim_start().split_once(':')?;
    let rest = rest.trim_start();
    let message = match rest.strip_prefix('[') {
        Some(after) => after.split_once(']')?.1,
        None => rest,
    };
    Some((tag.trim(), message.trim()))
}

/// A table row: a stressor name followed by exactly `columns` numbers.
fn read_table_row(message: &str, columns: usize, metrics: &mut Metrics<'_>) -> bool {
    let tokens: Vec<&str> = message.split_whitespace().collect();
    if tokens.len() != columns + 1 {
        return false;
    }
    let Some(values) = tokens[1..]
        .iter()
        .map(|t| number(t))
        .collect::<Option<Vec<f64>>>()
    else {
        return false;
    };
    for ((name, unit), value) in COLUMNS.iter().zip(values) {
        metrics.push(0, format!("{}/{name}", tokens[0]), value, unit);
    }
    true
}

/// A miscellaneous metric: `memrate 1656.82 write128 MB/sec (average per stressor)`.
fn read_misc_metric(message: &str, metrics: &mut Metrics<'_>) -> bool {
    let read = || {
        let (stressor, after) = message.split_once(char::is_whitespace)?;
        if stressor.ends_with(':') {
            return None;
        }
        let (value_text, description) = after.trim_start().split_once(char::is_whitespace)?;
        let value = number(value_text)?;
        // Drop the trailing "(average per stressor)" / "(geometric mean of 128 instances)".
        let description = match description.rsplit_once(" (") {
            Some((head, how)) if how.contains("mean") || how.contains("average") => head,
            _ => description,
        }
        .trim();
        if description.is_empty() {
            return None;
        }
        let spelled = description
            .replace("MB/sec", "MB per sec")
            .replace('/', " per ");
        Some((
            format!("{stressor}/{}", snake_case(&spelled)),
            value,
            misc_unit(&spelled),
        ))
    };
    match read() {
        Some((metric, value, unit)) => {
            metrics.push(0, metric, value, unit);
            true
        }
        None => false,
    }
}

/// The unit a miscellaneous metric's description implies.
fn misc_unit(description: &str) -> &'static str {
    let lower = description.to_ascii_lowercase();
    if lower.starts_with('%') {
        "%"
    } else if lower.contains("mb per sec") {
        "MB/s"
    } else if lower.starts_with("nanosec") {
        "ns"
    } else if lower.contains("per sec") {
        "1/s"
    } else {
        "1"
    }
}

/// The `--times` block and the pass/fail trailer. Returns whether `message` was one of them.
fn read_trailer(
    message: &str,
    ctx: &ParseContext,
    source_name: &str,
    line_no: usize,
    metrics: &mut Metrics<'_>,
    parsed: &mut Parsed,
) -> bool {
    if let Some(rest) = message.strip_prefix("for a ") {
        if let Some(seconds) = rest.strip_suffix(" run time:").and_then(duration_seconds) {
            metrics.push(0, "times/run_time_s".into(), seconds, "s");
            return true;
        }
        return false;
    }
    // `5597.73s user time   ( 97.09%)`
    let head = message.split(" (").next().unwrap_or(message).trim();
    for (suffix, name) in [
        ("available CPU time", "times/available_cpu_s"),
        ("user time", "times/user_s"),
        ("system time", "times/system_s"),
        ("total time", "times/total_s"),
    ] {
        if let Some(value) = head
            .strip_suffix(suffix)
            .and_then(|v| v.trim().strip_suffix('s'))
            .and_then(number)
        {
            metrics.push(0, name.into(), value, "s");
            return true;
        }
    }
    if message.starts_with("load average:") {
        return true;
    }
    for (prefix, name) in [
        ("passed:", "stressors_passed"),
        ("failed:", "stressors_failed"),
        ("skipped:", "stressors_skipped"),
        ("metrics untrustworthy:", "stressors_untrustworthy"),
    ] {
        if let Some(rest) = message.strip_prefix(prefix) {
            let count_text = rest.trim().split(':').next().unwrap_or("");
            let Some(count) = number(count_text) else {
                return false;
            };
            metrics.push(0, name.into(), count, "stressors");
            if count > 0.0 && name != "stressors_passed" && name != "stressors_skipped" {
                let severity = if name == "stressors_failed" {
                    Severity::Error
                } else {
                    Severity::Warning
                };
                let message = format!("{source_name}:{line_no}: stress-ng reports {message}");
                parsed.quality.push(quality(ctx, PARSER, severity, message));
            }
            return true;
        }
    }
    false
}
