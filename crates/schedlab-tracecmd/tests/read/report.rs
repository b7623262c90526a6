//! `trace-cmd report`'s text, the independent reference the reader is checked against.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// One event line of `trace-cmd report -t` (times in full nanoseconds).
#[derive(Debug, Clone)]
pub struct Line {
    /// The instance the event is from (`None`: the top buffer).
    pub buffer: Option<String>,
    /// The task that was running (`common_pid`).
    pub pid: i32,
    pub cpu: i32,
    pub time_ns: i64,
    pub event: String,
    /// The text after the event's name.
    pub rest: String,
}

impl Line {
    /// The value of `key=` in the fields of a `-R` (raw) line; `keys` are the event's keys in
    /// the order printed, so that a command name with spaces is read whole.
    pub fn field(&self, key: &str) -> String {
        let keys = keys(&self.event);
        let i = keys
            .iter()
            .position(|k| *k == key)
            .unwrap_or_else(|| panic!("no key {key} for {}", self.event));
        let mut at = 0;
        let mut starts = Vec::new();
        for k in keys {
            let needle = format!("{k}=");
            let found = self.rest[at..]
                .find(&needle)
                .unwrap_or_else(|| panic!("no {k}= in {:?}", self.rest));
            starts.push((at + found, at + found + needle.len()));
            at += found + needle.len();
        }
        let start = starts[i].1;
        let end = starts.get(i + 1).map_or(self.rest.len(), |s| s.0);
        self.rest[start..end].trim().to_string()
    }

    pub fn int(&self, key: &str) -> i64 {
        let v = self.field(key);
        v.parse()
            .unwrap_or_else(|_| panic!("{key}={v:?} is not a number"))
    }
}

/// The keys of an event's raw fields, in the order trace-cmd prints them.
fn keys(event: &str) -> &'static [&'static str] {
    match event {
        "sched_switch" => &[
            "prev_comm",
            "prev_pid",
            "prev_prio",
            "prev_state",
            "next_comm",
            "next_pid",
            "next_prio",
        ],
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => {
            &["comm", "pid", "prio", "target_cpu"]
        }
        "sched_migrate_task" => &["comm", "pid", "prio", "orig_cpu", "dest_cpu"],
        "cpu_idle" | "cpu_frequency" => &["state", "cpu_id"],
        "sched_stat_runtime" => &["comm", "pid", "runtime"],
        other => panic!("no keys known for {other}"),
    }
}

/// How `trace-cmd report` prints the fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fields {
    /// `-R`: every field as a number.
    Raw,
    /// `-N`: by each event's own print format, without trace-cmd's plugins (whose sched_switch
    /// plugin names the state bits of kernels before 4.14, whatever the file's kernel).
    Printed,
}

/// Every event of `file` as `trace-cmd report -t` prints it; `buffers` are the instances the
/// file holds, whose lines start with their name.
pub fn report(file: &Path, fields: Fields, buffers: &[&str]) -> Vec<Line> {
    let mut cmd = Command::new("trace-cmd");
    cmd.args([
        "report",
        "-t",
        if fields == Fields::Raw { "-R" } else { "-N" },
    ]);
    let out = cmd
        .arg("-i")
        .arg(file)
        .output()
        .expect("trace-cmd report runs");
    assert!(
        out.status.success(),
        "trace-cmd report: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<Line> = text.lines().filter_map(|l| parse(l, buffers)).collect();
    // What trace-cmd said, where it printed no event this parser reads.
    assert!(
        !lines.is_empty(),
        "trace-cmd report -i {}: no event line in {} bytes of output, which begins {:?}; stderr: {}",
        file.display(),
        text.len(),
        text.chars().take(2000).collect::<String>(),
        String::from_utf8_lossy(&out.stderr)
    );
    lines
}

/// `[buffer:] comm-pid [cpu] secs.nanos: event: rest`.
fn parse(line: &str, buffers: &[&str]) -> Option<Line> {
    let mut text = line.trim_start();
    let mut buffer = None;
    for b in buffers {
        if let Some(rest) = text.strip_prefix(&format!("{b}:")) {
            buffer = Some(b.to_string());
            text = rest.trim_start();
        }
    }
    // The CPU: the first `[ddd]`.
    let open = (0..text.len()).find(|&i| {
        text[i..].starts_with('[')
            && text[i + 1..].find(']').is_some_and(|n| {
                n > 0 && text[i + 1..i + 1 + n].bytes().all(|b| b.is_ascii_digit())
            })
    })?;
    let close = open + text[open..].find(']')?;
    let cpu = text[open + 1..close].parse().ok()?;
    let task = text[..open].trim_end();
    let pid = task[task.rfind('-')? + 1..].parse().ok()?;
    let after = text[close + 1..].trim_start();
    let colon = after.find(": ")?;
    let (secs, nanos) = after[..colon].split_once('.')?;
    assert_eq!(nanos.len(), 9, "report -t prints nanoseconds: {line:?}");
    let time_ns = secs.parse::<i64>().ok()? * 1_000_000_000 + nanos.parse::<i64>().ok()?;
    let after = after[colon + 2..].trim_start();
    let colon = after.find(':')?;
    Some(Line {
        buffer,
        pid,
        cpu,
        time_ns,
        event: after[..colon].to_string(),
        rest: after[colon + 1..].trim().to_string(),
    })
}

/// The lines of `event`.
pub fn of<'a>(lines: &'a [Line], event: &str) -> Vec<&'a Line> {
    lines.iter().filter(|l| l.event == event).collect()
}

/// Per thread, its run time from the report's sched_switch lines: on each CPU, the time from
/// one switch to the next is the run of the task the later one switches out (the first switch
/// of a CPU starts nothing). The idle task is 0 on every CPU.
pub fn run_times(lines: &[Line]) -> BTreeMap<i32, i64> {
    let mut last: BTreeMap<i32, i64> = BTreeMap::new();
    let mut runs = BTreeMap::new();
    for l in of(lines, "sched_switch") {
        let start = last.insert(l.cpu, l.time_ns);
        *runs.entry(l.int("prev_pid") as i32).or_default() += start.map_or(0, |s| l.time_ns - s);
    }
    runs
}

/// The `prev_state` letters of each sched_switch line of a [`Fields::Printed`] report
/// (`… prev_state=R+ ==> next_comm=…`), in report order.
pub fn switch_states(lines: &[Line]) -> Vec<String> {
    of(lines, "sched_switch")
        .iter()
        .map(|l| {
            let at = l
                .rest
                .find(" prev_state=")
                .expect("prev_state in a sched_switch line");
            let value = &l.rest[at + " prev_state=".len()..];
            value[..value.find(" ==>").expect("==> after prev_state")].to_string()
        })
        .collect()
}
