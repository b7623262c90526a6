//! Ring-buffer overruns: a recording into a buffer far too small for it. trace-cmd report
//! prints the losses the pages flag (`CPU:0 [624411 EVENTS DROPPED]`) and `--stat` the
//! kernel's per-CPU overrun counts; the loss rows and `traces.lost_events` say the same.

use std::collections::BTreeMap;
use std::process::Command;

use crate::agreement::{agrees_with_report, read};
use crate::record::{Buffer, record_with};
use crate::recording_or_skip;

#[test]
fn overruns_become_loss_and_quality_rows_as_trace_cmd_reports_them() {
    recording_or_skip!();
    let rec = record_with(Buffer::Instance, "mono", &["switch"], "64");
    let instance = rec.instance.clone().unwrap();
    // The events kept still agree with the report.
    agrees_with_report(&rec.path, &[instance.as_str()]);
    let t = read(&rec.path);
    let run = |args: &[&str]| {
        let out = Command::new("trace-cmd")
            .args(args)
            .arg("-i")
            .arg(&rec.path)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // `CPU:N [COUNT EVENTS DROPPED]` (or without a count) per page that flags a loss.
    let report = run(&["report"]);
    let dropped: Vec<(i32, Option<i64>)> = (report.lines())
        .filter_map(|l| {
            let at = l.find("CPU:")?;
            let rest = &l[at + 4..];
            let (cpu, after) = rest.split_once(" [")?;
            let count = after
                .strip_suffix(" EVENTS DROPPED]")
                .map(|n| n.parse().ok());
            let count = count.or_else(|| (after == "EVENTS DROPPED]").then_some(None))?;
            Some((cpu.parse().ok()?, count))
        })
        .collect();
    assert!(
        !dropped.is_empty(),
        "a 64 KB buffer overran: {report:.2000}"
    );
    // The instance's overrun per CPU from `report --stat`.
    let stat = run(&["report", "--stat"]);
    let instance_stats = &stat[stat
        .find(&format!("Buffer: {instance}"))
        .expect("the instance's stats")..];
    let mut overrun: BTreeMap<i32, i64> = BTreeMap::new();
    let mut cpu = -1;
    for l in instance_stats.lines() {
        if let Some(c) = l.strip_prefix("CPU: ") {
            cpu = c.trim().parse().unwrap();
        } else if let Some(n) = l.strip_prefix("overrun: ") {
            overrun.insert(cpu, n.trim().parse().unwrap());
        }
    }
    // Every page-flagged loss is a loss row of its CPU with the count trace-cmd prints; where it
    // prints none, the kernel's overrun count completes it.
    let mut rows: BTreeMap<i32, Vec<i64>> = BTreeMap::new();
    for l in &t.sched.losses {
        rows.entry(l.cpu).or_default().push(l.events);
        assert!(l.until_ns.is_some(), "{l:?}");
    }
    for (cpu, count) in &dropped {
        let got = rows
            .get(cpu)
            .unwrap_or_else(|| panic!("cpu {cpu}: {:?}", t.sched.losses));
        let want = count.unwrap_or(overrun[cpu]);
        assert!(got.contains(&want), "cpu {cpu}: {got:?} against {want}");
    }
    let total: i64 = overrun.values().sum();
    let trace = t.sched.trace.as_ref().unwrap();
    assert_eq!(
        trace.lost_events, total,
        "the overruns, counted once: {:?}",
        t.sched.losses
    );
    let warnings = (t.sched.quality.iter())
        .filter(|q| q.message.contains("lost") && q.cpu.is_some())
        .count();
    assert_eq!(warnings, t.sched.losses.len(), "a warning per loss");
}
