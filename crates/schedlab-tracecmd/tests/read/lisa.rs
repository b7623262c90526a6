//! Two v6 traces of a 6-CPU Arm big.LITTLE board (Juno; LISA's repository), read from the shared
//! fixtures and checked against `trace-cmd report` on them, with their cpu_frequency and
//! cpu_idle events in `cpu_freq_idle`.

use crate::agreement::agrees_with_report;
use crate::report::{Fields, of, report};

#[test]
fn the_arm_rt_app_trace_agrees_with_trace_cmd_report() {
    let dir = schedlab_testkit::shared_fixtures_or_skip!("trace-dat");
    let t = agrees_with_report(&dir.join("arm-juno-rtapp-v6.dat"), &[]);
    assert_eq!(
        t.sched.sched_slices.len(),
        1552,
        "SOURCES.md counts 1,552 sched_switch"
    );
    let trace = t.sched.trace.as_ref().unwrap();
    assert_eq!(trace.file_format.as_deref(), Some("trace.dat v6"));
    assert_eq!(trace.nr_cpus_online, Some(6));
}

/// The frequency of each span is the one the CPU's last cpu_frequency event set, and the idle
/// state the one its last cpu_idle event entered; spans end at the next change or at the
/// trace's last event. Checked by replaying the report's events per CPU.
#[test]
fn the_arm_sched_load_trace_agrees_and_its_power_events_make_the_spans() {
    let dir = schedlab_testkit::shared_fixtures_or_skip!("trace-dat");
    let path = dir.join("arm-sched-load-v6.dat");
    let t = agrees_with_report(&path, &[]);
    assert_eq!(
        t.sched.migrations.len(),
        28,
        "SOURCES.md counts 28 migrations"
    );
    let raw = report(&path, Fields::Raw, &[]);
    let end = raw.iter().map(|l| l.time_ns).max().unwrap();
    // Per CPU, time in each (frequency, idle state) from the report's events.
    let mut state: std::collections::BTreeMap<i64, (i64, Option<i64>, Option<i64>)> =
        Default::default();
    let mut want: std::collections::BTreeMap<(i64, Option<i64>, Option<i64>), i64> =
        Default::default();
    let power: Vec<_> = raw
        .iter()
        .filter(|l| l.event == "cpu_frequency" || l.event == "cpu_idle")
        .collect();
    assert!(of(&raw, "cpu_idle").len() > 400 && of(&raw, "cpu_frequency").len() > 10);
    for l in &power {
        let cpu = l.int("cpu_id");
        let value = l.int("state");
        let value = if l.event == "cpu_idle" && value == u32::MAX as i64 {
            -1
        } else {
            value
        };
        let (since, freq, idle) = state.get(&cpu).copied().unwrap_or((l.time_ns, None, None));
        *want.entry((cpu, freq, idle)).or_default() += l.time_ns - since;
        let next = if l.event == "cpu_idle" {
            (l.time_ns, freq, Some(value))
        } else {
            (l.time_ns, Some(value), idle)
        };
        state.insert(cpu, next);
    }
    for (cpu, (since, freq, idle)) in state {
        *want.entry((cpu, freq, idle)).or_default() += end - since;
    }
    want.retain(|_, ns| *ns > 0);
    let mut got: std::collections::BTreeMap<(i64, Option<i64>, Option<i64>), i64> =
        Default::default();
    for s in &t.cpu_freq_idle {
        assert!(s.end_ns > s.start_ns, "{s:?}");
        let key = (s.cpu as i64, s.freq_khz, s.idle_state.map(i64::from));
        *got.entry(key).or_default() += s.end_ns - s.start_ns;
    }
    assert_eq!(got, want);
}
