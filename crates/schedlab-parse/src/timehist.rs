//! The text `perf sched timehist [-M] [-V] [-w] [--state]` prints, and its `-s` summary.
//!
//! The seed articles kept only this text. Read back, it gives the same tables as a perf.data
//! (sched_slices, migrations, wakeups, and threads with the span of their slices), with what the
//! text lacks derived or marked unknown:
//! a slice starts at its switch-out time minus its run time; `preempt_wait_ns` is not printed
//! (0); `prev_state` is empty without `--state`; a wakeup's `target_cpu` is not printed (-1) and
//! its waker is the task the line is printed under. Times are seconds and milliseconds with
//! microsecond precision, converted to nanoseconds exactly (no float rounding).
//!
//! Columns are found by shape, not position: `-V` inserts a CPU-visual column as wide as the
//! CPU count, and a long `comm[tid/pid]` overflows its column and shifts the rest. So a row is
//! read from both ends: time and `[cpu]` from the left, the numbers (and state) from the right,
//! the task name is what remains. Rows without their header (filtered with grep) are read too.

use std::collections::BTreeMap;

use schedlab_tables::selector::Select;
use schedlab_tables::{MigrationRow, SchedSliceRow, ThreadRow, TimehistSummaryRow, WakeupRow};

use crate::text::{Unrecognized, decimal_scaled, numbered_lines, split_last_tokens, text_error};
use crate::{ParseContext, ParseError, Parsed};

const PARSER: &str = "timehist";
const NS_PER_S: i64 = 1_000_000_000;
const NS_PER_MS: i64 = 1_000_000;

/// Which part of the output the parser is in.
#[derive(Clone, Copy, PartialEq)]
enum Section {
    Preamble,
    /// Under a listing header; `visual` when it has the `-V` CPU column.
    Listing {
        visual: bool,
    },
    Summary {
        terminated: bool,
    },
    Totals,
}

/// A task as timehist prints it: `comm[tid/pid]`, `comm[tid]`, `<idle>`, `swapper`.
struct Task<'a> {
    comm: &'a str,
    tid: i32,
    pid: i32,
}

/// Parses `perf sched timehist` output (listing, `-s` summary, or both).
pub fn parse(text: &str, source_name: &str, ctx: &ParseContext) -> Result<Parsed, ParseError> {
    let mut parsed = Parsed::default();
    let mut unknown = Unrecognized::new(PARSER);
    let mut section = Section::Preamble;
    for (line_no, line) in numbered_lines(text) {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.ends_with("callchains.") || trimmed.starts_with("---") {
            continue;
        }
        if trimmed.contains("task name") && trimmed.contains("wait time") {
            let tokens: Vec<&str> = trimmed.split_whitespace().collect();
            let visual = tokens.get(2).is_some_and(|t| *t != "task");
            section = Section::Listing { visual };
            continue;
        }
        if trimmed == "Runtime summary" {
            section = Section::Summary { terminated: false };
            continue;
        }
        if trimmed == "Terminated tasks:" {
            section = Section::Summary { terminated: true };
            continue;
        }
        if trimmed == "Idle stats:" || trimmed.starts_with("Total ") {
            section = Section::Totals;
            continue;
        }
        let understood = match section {
            Section::Listing { visual } => {
                trimmed.starts_with("[tid/pid]")
                    || read_listing_row(line, visual, ctx, &mut parsed).is_some()
            }
            Section::Summary { terminated } => {
                trimmed.starts_with("comm ")
                    || trimmed.starts_with("(count)")
                    || read_summary_row(trimmed, terminated, ctx, &mut parsed).is_some()
            }
            Section::Totals => trimmed.starts_with("CPU "),
            // Rows kept without their header (`timehist … | grep openssl`, as the seeds did):
            // a one-letter `-V` marker is stripped, since no task name is a lone letter.
            Section::Preamble => {
                let read = read_listing_row(line, true, ctx, &mut parsed).is_some();
                if read {
                    section = Section::Listing { visual: true };
                }
                read
            }
        };
        if !understood {
            unknown.note(line_no, line);
        }
    }
    let rows = parsed.sched_slices.len()
        + parsed.migrations.len()
        + parsed.wakeups.len()
        + parsed.timehist_summary.len();
    if rows == 0 {
        let line = unknown.first_line().unwrap_or(1);
        return Err(text_error(
            source_name,
            line,
            "no timehist row (hint: expected the output of `perf sched timehist` with its header)",
        ));
    }
    parsed
        .quality
        .extend(unknown.into_quality(ctx, source_name));
    parsed.threads = threads_of(&parsed.sched_slices);
    Ok(parsed)
}

/// One row per thread the listing shows on a CPU: its last command name, its workload, and the
/// span of its slices. The text has no fork or exit events, so `start_ns` and `end_ns` are
/// null and the span is what an imported run's lifetimes come from.
fn threads_of(slices: &[SchedSliceRow]) -> Vec<ThreadRow> {
    let mut by_tid: BTreeMap<i32, ThreadRow> = BTreeMap::new();
    for s in slices.iter().filter(|s| s.tid != 0) {
        let t = by_tid.entry(s.tid).or_insert_with(|| ThreadRow {
            run_id: s.run_id.clone(),
            tid: s.tid,
            pid: s.pid,
            parent_tid: None,
            comm: s.comm.clone(),
            start_ns: None,
            end_ns: None,
            workload: None,
            first_run_ns: Some(s.start_ns),
            last_run_ns: Some(s.end_ns),
        });
        t.comm = s.comm.clone();
        t.workload = t.workload.take().or_else(|| s.workload.clone());
        t.first_run_ns = t.first_run_ns.min(Some(s.start_ns));
        t.last_run_ns = t.last_run_ns.max(Some(s.end_ns));
    }
    by_tid.into_values().collect()
}

/// The workload that selects `task`. Timehist text has no fork events, so `tree:` takes the
/// process and its threads only, not the processes it forked.
fn workload_of(ctx: &ParseContext, task: &Task<'_>) -> Option<String> {
    (ctx.workloads.iter())
        .find(|w| match &w.select {
            Select::Tree(pid) => *pid == task.pid || *pid == task.tid,
            Select::Pid(pid) => *pid == task.pid,
            Select::Comm(_) => w.select.matches_comm(task.comm.as_bytes()),
        })
        .map(|w| w.workload.clone())
}

/// `comm[tid/pid]` (the closing `]` may be cut off), `<idle>` or a bare `swapper`.
fn read_task(text: &str) -> Option<Task<'_>> {
    let text = text.trim();
    if text == "<idle>" || text == "swapper" {
        return Some(Task {
            comm: text,
            tid: 0,
            pid: 0,
        });
    }
    let open = text.rfind('[')?;
    let ids = text[open + 1..].trim_end_matches(']');
    let (tid, pid) = match ids.split_once('/') {
        Some((tid, pid)) => (tid.parse().ok()?, pid.parse().ok()?),
        None => {
            let tid = ids.parse().ok()?;
            (tid, tid)
        }
    };
    Some(Task {
        comm: &text[..open],
        tid,
        pid,
    })
}

/// One listing row: a slice, an `awakened:` wakeup or a `migrated:` migration.
fn read_listing_row(
    line: &str,
    visual: bool,
    ctx: &ParseContext,
    parsed: &mut Parsed,
) -> Option<()> {
    let line = line.trim();
    let (time, rest) = line.split_once(char::is_whitespace)?;
    let time_ns = decimal_scaled(time, NS_PER_S)?;
    let rest = rest.trim_start();
    let cpu: i32 = rest.strip_prefix('[')?.split_once(']')?.0.parse().ok()?;
    let rest = &rest[rest.find(']')? + 1..];
    let strip_marker = |left: &str| -> String {
        let left = left.trim();
        match left.split_once(char::is_whitespace) {
            Some((marker, task)) if visual && marker.chars().count() == 1 => task.trim().to_owned(),
            _ => left.to_owned(),
        }
    };
    if let Some((left, wakee)) = rest.split_once("awakened: ") {
        let waker = strip_marker(left);
        let waker = read_task(&waker)?;
        let wakee = read_task(wakee)?;
        parsed.wakeups.push(WakeupRow {
            run_id: ctx.run_id.as_str().into(),
            time_ns,
            pid: wakee.pid,
            tid: wakee.tid,
            comm: wakee.comm.into(),
            target_cpu: -1,
            waker_tid: Some(waker.tid),
            kind: "wakeup".into(),
            workload: workload_of(ctx, &wakee).map(Into::into),
        });
        return Some(());
    }
    if let Some((_, migrated)) = rest.split_once("migrated: ") {
        let (task, cpus) = migrated.rsplit_once(" cpu ")?;
        let (from, to) = cpus.split_once("=>")?;
        let task = read_task(task)?;
        parsed.migrations.push(MigrationRow {
            run_id: ctx.run_id.as_str().into(),
            time_ns,
            pid: task.pid,
            tid: task.tid,
            comm: task.comm.into(),
            from_cpu: from.trim().parse().ok()?,
            to_cpu: to.trim().parse().ok()?,
            workload: workload_of(ctx, &task).map(Into::into),
        });
        return Some(());
    }
    // `--state` adds a letter after the three times.
    let state = rest
        .split_whitespace()
        .last()
        .is_some_and(|last| decimal_scaled(last, NS_PER_MS).is_none());
    let (left, tokens) = split_last_tokens(rest, if state { 4 } else { 3 })?;
    let ms = |i: usize| decimal_scaled(tokens[i], NS_PER_MS);
    let (wait_ns, sched_delay_ns, run_ns) = (ms(0)?, ms(1)?, ms(2)?);
    let left = strip_marker(left);
    let task = read_task(&left)?;
    parsed.sched_slices.push(SchedSliceRow {
        run_id: ctx.run_id.as_str().into(),
        cpu,
        pid: task.pid,
        tid: task.tid,
        comm: task.comm.into(),
        start_ns: time_ns.checked_sub(run_ns)?,
        end_ns: time_ns,
        run_ns,
        wait_ns,
        sched_delay_ns,
        preempt_wait_ns: 0,
        prev_state: if state { tokens[3].into() } else { "".into() },
        workload: workload_of(ctx, &task).map(Into::into),
        // perf's listing does not print priorities.
        prio: None,
    });
    Some(())
}

/// `comm[tid/pid]  parent  sched-in  run-time  min-run  avg-run  max-run  stddev  migrations`.
fn read_summary_row(
    line: &str,
    terminated: bool,
    ctx: &ParseContext,
    parsed: &mut Parsed,
) -> Option<()> {
    let (name, tokens) = split_last_tokens(line, 8)?;
    let task = read_task(name)?;
    let int = |i: usize| tokens[i].parse::<i64>().ok();
    let ms = |i: usize| decimal_scaled(tokens[i], NS_PER_MS);
    let row = TimehistSummaryRow {
        run_id: ctx.run_id.clone(),
        tid: task.tid,
        pid: task.pid,
        comm: task.comm.to_owned(),
        parent_pid: tokens[0].parse().ok()?,
        sched_in: int(1)?,
        run_ns: ms(2)?,
        min_run_ns: ms(3)?,
        avg_run_ns: ms(4)?,
        max_run_ns: ms(5)?,
        stddev_pct: crate::text::number(tokens[6])?,
        migrations: int(7)?,
        terminated,
        workload: workload_of(ctx, &task),
    };
    parsed.timehist_summary.push(row);
    Some(())
}
