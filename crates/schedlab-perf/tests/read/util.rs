//! Parsers for perf's own `perf sched timehist` text, the independent reference the reader is
//! checked against, and small helpers over the reader's tables.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schedlab_perf::{SchedOptions, SchedTables, read_sched};

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

pub fn read(name: &str) -> SchedTables {
    let opts = SchedOptions {
        run_id: "test".into(),
        workloads: Vec::new(),
        ..Default::default()
    };
    read_sched(&fixture(name), &opts).unwrap_or_else(|e| panic!("{e}"))
}

/// perf prints times as truncated microseconds (`%lu.%06lu` seconds, `%lu.%03lu` msec).
pub fn us(ns: i64) -> i64 {
    ns / 1000
}

/// "670.696090" or "0.014" → integer units of the last digit (µs for both of perf's formats).
fn fixed(s: &str) -> Option<i64> {
    let (int, frac) = s.split_once('.')?;
    let scale = 10i64.pow(frac.len() as u32);
    let v = int.parse::<i64>().ok()? * scale + frac.parse::<i64>().ok()?;
    // Seconds with 6 decimals and msec with 3 decimals are both µs.
    Some(v)
}

/// `comm[tid]`, `comm[tid/pid]` or `<idle>` → tid.
fn tid_of(name: &str) -> Option<i32> {
    if name == "<idle>" {
        return Some(0);
    }
    let open = name.rfind('[')?;
    let inner = name[open + 1..].strip_suffix(']')?;
    inner.split('/').next()?.parse().ok()
}

/// One line of the plain `perf sched timehist` listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub time_us: i64,
    pub cpu: i32,
    pub tid: i32,
    pub wait_us: i64,
    pub delay_us: i64,
    pub run_us: i64,
}

/// A `lost N events on cpu C` line of the listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostLine {
    pub time_us: i64,
    pub count: u64,
    pub cpu: i32,
}

pub fn listing(name: &str) -> (Vec<Line>, Vec<LostLine>) {
    listing_of(&std::fs::read_to_string(fixture(name)).unwrap())
}

/// The lines of a `perf sched timehist` listing's text.
pub fn listing_of(text: &str) -> (Vec<Line>, Vec<LostLine>) {
    let (mut lines, mut lost) = (Vec::new(), Vec::new());
    for l in text.lines().skip(3) {
        let tok: Vec<&str> = l.split_whitespace().collect();
        if tok.get(1) == Some(&"lost") {
            lost.push(LostLine {
                time_us: fixed(tok[0]).unwrap(),
                count: tok[2].parse().unwrap(),
                cpu: tok[6].parse().unwrap(),
            });
            continue;
        }
        assert!(tok.len() >= 6, "unexpected timehist line {l:?}");
        let n = tok.len();
        let task = tok[2..n - 3].join(" ");
        lines.push(Line {
            time_us: fixed(tok[0]).unwrap(),
            cpu: tok[1].trim_matches(['[', ']']).parse().unwrap(),
            tid: tid_of(&task).unwrap_or_else(|| panic!("no tid in {task:?}")),
            wait_us: fixed(tok[n - 3]).unwrap(),
            delay_us: fixed(tok[n - 2]).unwrap(),
            run_us: fixed(tok[n - 1]).unwrap(),
        });
    }
    (lines, lost)
}

/// A thread's figures in `perf sched timehist -M -s`, summed over perf's rows for that tid
/// (perf splits a thread into several rows when a FORK record replaces its thread object).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub count: i64,
    pub run_us: i64,
    pub max_run_us: i64,
    pub migrations: i64,
}

/// Per tid (perf's `-1` included), and idle per CPU: `Some(µs)`, or `None` for perf's
/// "idle entire time window" (no idle slice).
pub fn summary(name: &str) -> (BTreeMap<i32, Summary>, BTreeMap<i32, Option<i64>>) {
    summary_of(&std::fs::read_to_string(fixture(name)).unwrap())
}

/// The threads and idle CPUs of a `perf sched timehist -M -s` summary's text.
pub fn summary_of(text: &str) -> (BTreeMap<i32, Summary>, BTreeMap<i32, Option<i64>>) {
    let (mut threads, mut idle) = (BTreeMap::new(), BTreeMap::new());
    let mut in_rows = false;
    for l in text.lines() {
        let t = l.trim();
        if t.starts_with("----") {
            in_rows = true;
            continue;
        }
        if t.starts_with("Idle stats") {
            in_rows = false;
        }
        if let Some(rest) = t.strip_prefix("CPU ") {
            let tok: Vec<&str> = rest.split_whitespace().collect();
            let cpu: i32 = tok[0].parse().unwrap();
            idle.insert(
                cpu,
                (tok[1..4] == ["idle", "for", tok[3]]).then(|| fixed(tok[3]).unwrap()),
            );
            continue;
        }
        let tok: Vec<&str> = t.split_whitespace().collect();
        if !in_rows || tok.len() < 9 {
            continue;
        }
        let n = tok.len();
        let name = tok[..n - 8].join(" ");
        let Some(tid) = tid_of(&name) else { continue };
        let s: &mut Summary = threads.entry(tid).or_default();
        s.count += tok[n - 7].parse::<i64>().unwrap();
        s.run_us += fixed(tok[n - 6]).unwrap();
        s.max_run_us = s.max_run_us.max(fixed(tok[n - 3]).unwrap());
        s.migrations += tok[n - 1].parse::<i64>().unwrap();
    }
    (threads, idle)
}

pub use schedlab_testkit::{skip, unavailable};

/// Whether `program` is on the PATH.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
}

/// Why `perf sched record -a` cannot run here, if it cannot.
pub fn cannot_trace() -> Option<String> {
    if !on_path("perf") {
        return Some("perf is not installed".into());
    }
    let root = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("Uid:"))?.to_owned();
            Some(line.split_whitespace().nth(2)? == "0")
        })
        .unwrap_or(false);
    let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(2);
    if !root && paranoid > -1 {
        return Some(format!(
            "not root and kernel.perf_event_paranoid is {paranoid} (tracing every CPU needs -1)"
        ));
    }
    let tracefs = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];
    (!tracefs
        .iter()
        .any(|t| Path::new(t).join("events/sched").exists()))
    .then(|| "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)".into())
}
