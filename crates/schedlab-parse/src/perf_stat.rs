//! `perf stat` counter output: the default human form and `-x,` CSV, with `-I` intervals,
//! `-A` per-CPU rows and hybrid PMU names (`cpu_core/cycles/`, `cpu_atom/cycles/`).
//!
//! On a hybrid machine the same event is counted once per core type, so the PMU is split off
//! into its own column: `cpu_core/instructions/` becomes event `instructions`, pmu `cpu_core`,
//! and an analysis can compare P- and E-core counts of one event. The elapsed/user/sys lines of
//! the human form become events `time_elapsed`, `time_user`, `time_sys` in seconds.

use schedlab_tables::PerfStatRow;

use crate::text::{Unrecognized, decimal_scaled, number, numbered_lines, text_error};
use crate::{ParseContext, ParseError, Parsed};

const PARSER: &str = "perf-stat";

/// One counter line before it is placed on the run clock.
struct Count<'a> {
    offset_ns: Option<i64>,
    cpu: Option<i32>,
    value: Option<f64>,
    unit: &'a str,
    event: &'a str,
    run_pct: Option<f64>,
    metric_value: Option<f64>,
    metric_unit: Option<&'a str>,
}

/// Parses what `perf stat` wrote to stderr (the workload's own output may be mixed in).
pub fn parse(text: &str, source_name: &str, ctx: &ParseContext) -> Result<Parsed, ParseError> {
    let mut rows = Vec::new();
    let mut unknown = Unrecognized::new(PARSER);
    for (line_no, line) in numbered_lines(text) {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || is_chatter(trimmed) {
            continue;
        }
        let count = if trimmed.contains(',') {
            csv_line(trimmed)
        } else {
            None
        };
        match count.or_else(|| human_line(trimmed)) {
            Some(count) => rows.push(to_row(count, ctx)),
            None => unknown.note(line_no, line),
        }
    }
    if rows.is_empty() {
        let line = unknown.first_line().unwrap_or(1);
        return Err(text_error(
            source_name,
            line,
            "no counter line (hint: is this the stderr of `perf stat`?)",
        ));
    }
    let mut parsed = Parsed {
        perf_stat: rows,
        ..Parsed::default()
    };
    parsed
        .quality
        .extend(unknown.into_quality(ctx, source_name));
    Ok(parsed)
}

/// perf's own lines that carry no count.
fn is_chatter(line: &str) -> bool {
    line.starts_with("Performance counter stats for") || line.starts_with("perf version ")
}

fn to_row(count: Count<'_>, ctx: &ParseContext) -> PerfStatRow {
    let (pmu, event) = split_pmu(count.event);
    PerfStatRow {
        run_id: ctx.run_id.clone(),
        time_ns: count
            .offset_ns
            .zip(ctx.start_ns)
            .and_then(|(offset, start)| start.checked_add(offset)),
        offset_ns: count.offset_ns,
        cpu: count.cpu,
        event,
        pmu,
        value: count.value,
        unit: count.unit.to_owned(),
        run_pct: count.run_pct,
        metric_value: count.metric_value,
        metric_unit: count
            .metric_unit
            .filter(|u| !u.is_empty())
            .map(str::to_owned),
        workload: ctx.workload.clone(),
    }
}

/// `cpu_core/cycles/` → (Some("cpu_core"), "cycles"); `cpu_core/cycles/u` → "cycles:u";
/// `cycles` → (None, "cycles").
fn split_pmu(name: &str) -> (Option<String>, String) {
    if let Some((pmu, rest)) = name.split_once('/')
        && let Some((event, modifiers)) = rest.rsplit_once('/')
        && !pmu.is_empty()
        && !event.is_empty()
    {
        let event = if modifiers.is_empty() {
            event.to_owned()
        } else {
            format!("{event}:{modifiers}")
        };
        return (Some(pmu.to_owned()), event);
    }
    (None, name.to_owned())
}

/// `CPU3` → 3.
fn cpu_field(field: &str) -> Option<i32> {
    field.trim().strip_prefix("CPU")?.parse().ok()
}

/// A count as perf prints it: a number (`,` separators allowed in the human form), or
/// `<not counted>` / `<not supported>` (null).
fn count_value(field: &str) -> Option<Option<f64>> {
    let field = field.trim();
    if field.starts_with("<not ") {
        return Some(None);
    }
    number(&field.replace(',', "")).map(Some)
}

/// `[time,][CPUn,]value,unit,event,run_ns,run_pct[,metric,metric_unit]`.
fn csv_line(line: &str) -> Option<Count<'_>> {
    let fields: Vec<&str> = line.split(',').collect();
    let mut at = 0;
    let mut offset_ns = None;
    let second = fields.get(1)?.trim();
    if number(fields[0]).is_some()
        && (number(second).is_some() || second.starts_with("CPU") || second.starts_with('<'))
    {
        offset_ns = Some(decimal_scaled(fields[0], 1_000_000_000)?);
        at = 1;
    }
    let cpu = cpu_field(fields.get(at)?);
    if cpu.is_some() {
        at += 1;
    }
    let value = count_value(fields.get(at)?)?;
    let unit = fields.get(at + 1)?.trim();
    let event = fields.get(at + 2)?.trim();
    if event.is_empty() || event.contains(char::is_whitespace) || number(unit).is_some() {
        return None;
    }
    let optional = |i: usize| {
        fields
            .get(at + i)
            .map(|f| f.trim())
            .filter(|f| !f.is_empty())
    };
    Some(Count {
        offset_ns,
        cpu,
        value,
        unit,
        event,
        run_pct: optional(4).and_then(number),
        metric_value: optional(5).and_then(number),
        metric_unit: optional(6),
    })
}

/// `[time] [CPUn] value [unit] event [# metric unit…] [(run%)]`, or the
/// `N seconds time elapsed|user|sys` lines.
fn human_line(line: &str) -> Option<Count<'_>> {
    let (counts, comment) = match line.split_once('#') {
        Some((counts, comment)) => (counts.trim(), Some(comment.trim())),
        None => (line, None),
    };
    let (counts, run_pct) = match counts.strip_suffix("%)").and_then(|c| c.rsplit_once('(')) {
        Some((counts, pct)) => (counts.trim(), Some(number(pct)?)),
        None => (counts, None),
    };
    // The run percentage may also trail the metric comment.
    let (comment, run_pct) = match comment
        .and_then(|c| c.strip_suffix("%)"))
        .and_then(|c| c.rsplit_once('('))
    {
        Some((comment, pct)) => (Some(comment.trim()), number(pct).or(run_pct)),
        None => (comment, run_pct),
    };
    let mut tokens: Vec<&str> = counts.split_whitespace().collect();
    if let [value, "seconds", "time", which] = tokens.as_slice() {
        let event = match *which {
            "elapsed" => "time_elapsed",
            "user" => "time_user",
            "sys" => "time_sys",
            _ => return None,
        };
        return Some(Count {
            value: Some(number(value)?),
            unit: "s",
            event,
            ..empty_count()
        });
    }
    if let [value, "seconds", which] = tokens.as_slice()
        && matches!(*which, "user" | "sys")
    {
        let event = if *which == "user" {
            "time_user"
        } else {
            "time_sys"
        };
        return Some(Count {
            value: Some(number(value)?),
            unit: "s",
            event,
            ..empty_count()
        });
    }
    let mut count = empty_count();
    if tokens.len() >= 3
        && number(tokens[0]).is_some()
        && (count_value(tokens[1]).is_some_and(|v| v.is_some())
            || tokens[1].starts_with("CPU")
            || tokens[1].starts_with('<'))
    {
        count.offset_ns = Some(decimal_scaled(tokens[0], 1_000_000_000)?);
        tokens.remove(0);
    }
    if let Some(cpu) = tokens.first().and_then(|t| cpu_field(t)) {
        count.cpu = Some(cpu);
        tokens.remove(0);
    }
    if tokens.first().is_some_and(|t| t.starts_with("<not")) {
        if tokens.len() < 2 {
            return None;
        }
        tokens.drain(..2);
        count.value = None;
    } else {
        count.value = Some(count_value(tokens.first()?)??);
        tokens.remove(0);
    }
    match tokens.as_slice() {
        [event] => count.event = event,
        [unit, event] => {
            count.unit = unit;
            count.event = event;
        }
        _ => return None,
    }
    count.run_pct = run_pct;
    if let Some(comment) = comment.filter(|c| !c.is_empty()) {
        let (value, unit) = comment
            .split_once(char::is_whitespace)
            .unwrap_or((comment, ""));
        count.metric_value = number(&value.replace(',', ""));
        count.metric_unit = count.metric_value.map(|_| unit.trim());
    }
    Some(count)
}

fn empty_count<'a>() -> Count<'a> {
    Count {
        offset_ns: None,
        cpu: None,
        value: None,
        unit: "",
        event: "",
        run_pct: None,
        metric_value: None,
        metric_unit: None,
    }
}
