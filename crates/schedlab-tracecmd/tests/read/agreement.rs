//! Recordings made here, read by schedlab and by `trace-cmd report`: every sched_switch,
//! wakeup and migration with its time, the `prev_state` letters and each thread's run time
//! agree; the same recording converted to v6 and to uncompressed v7 gives the same tables.

use std::collections::BTreeMap;
use std::path::Path;

use schedlab_perf::{SchedOptions, Severity};
use schedlab_tracecmd::{TraceCmdTables, read_sched};

use crate::record::{Buffer, convert, record};
use crate::recording_or_skip;
use crate::report::{Fields, Line, of, report, run_times, switch_states};

pub fn read(path: &Path) -> TraceCmdTables {
    let opts = SchedOptions {
        run_id: "test".into(),
        workloads: vec!["stress=comm:stress-ng*".parse().unwrap()],
        ..Default::default()
    };
    read_sched(path, &opts).unwrap_or_else(|e| panic!("{e}"))
}

/// Checks the tables of `path` against `trace-cmd report` on it; `instances` are the buffers
/// the file holds besides the top one. Returns the tables.
pub fn agrees_with_report(path: &Path, instances: &[&str]) -> TraceCmdTables {
    let t = read(path);
    let raw = report(path, Fields::Raw, instances);
    let printed = report(path, Fields::Printed, instances);

    // Every sched_switch is a slice ending at its time, on its CPU, of the task it switched out.
    let switches = of(&raw, "sched_switch");
    assert!(switches.len() > 100, "{} switches only", switches.len());
    let mut want: Vec<(i64, i32, i32, String, String)> = (switches.iter())
        .zip(switch_states(&printed))
        .map(|(l, state)| {
            (
                l.time_ns,
                l.cpu,
                l.int("prev_pid") as i32,
                l.field("prev_comm"),
                state,
            )
        })
        .collect();
    let mut got: Vec<(i64, i32, i32, String, String)> = (t.sched.sched_slices.iter())
        .map(|s| {
            (
                s.end_ns,
                s.cpu,
                s.tid,
                s.comm.to_string(),
                s.prev_state.to_string(),
            )
        })
        .collect();
    want.sort();
    got.sort();
    assert_eq!(got.len(), want.len(), "one slice per sched_switch");
    for (g, w) in got.iter().zip(&want) {
        // trace-cmd cuts a command name at the first space of its field's text only when it
        // prints raw; compare names up to there.
        assert_eq!(
            (g.0, g.1, g.2, &g.4),
            (w.0, w.1, w.2, &w.4),
            "slice {g:?} against switch {w:?}"
        );
        assert!(
            g.3.starts_with(w.3.as_str()) || w.3.starts_with(g.3.as_str()),
            "{g:?} / {w:?}"
        );
    }

    // Every sched_waking, sched_wakeup and sched_wakeup_new is a wakeup of its kind, by the
    // task that was running.
    type Wakeup = (i64, i32, i32, String, Option<i32>);
    let mut want: Vec<Wakeup> = Vec::new();
    for (event, kind) in [
        ("sched_waking", "waking"),
        ("sched_wakeup", "wakeup"),
        ("sched_wakeup_new", "wakeup_new"),
    ] {
        want.extend(of(&raw, event).iter().map(|l| {
            let (pid, cpu) = (l.int("pid") as i32, l.int("target_cpu") as i32);
            (l.time_ns, pid, cpu, kind.to_string(), Some(l.pid))
        }));
    }
    let mut got: Vec<Wakeup> = (t.sched.wakeups.iter())
        .map(|w| {
            (
                w.time_ns,
                w.tid,
                w.target_cpu,
                w.kind.to_string(),
                w.waker_tid,
            )
        })
        .collect();
    want.sort();
    got.sort();
    assert_eq!(got, want, "wakeups");

    let mut want: Vec<(i64, i32, i32, i32)> = (of(&raw, "sched_migrate_task").iter())
        .map(|l| {
            (
                l.time_ns,
                l.int("pid") as i32,
                l.int("orig_cpu") as i32,
                l.int("dest_cpu") as i32,
            )
        })
        .collect();
    let mut got: Vec<(i64, i32, i32, i32)> = (t.sched.migrations.iter())
        .map(|m| (m.time_ns, m.tid, m.from_cpu, m.to_cpu))
        .collect();
    want.sort();
    got.sort();
    assert_eq!(got, want, "migrations");

    // Each thread's run time: the report's switches summed per task switched out.
    let mut runs: BTreeMap<i32, i64> = BTreeMap::new();
    for s in &t.sched.sched_slices {
        *runs.entry(s.tid).or_default() += s.run_ns;
    }
    assert_eq!(runs, run_times(&raw), "run time per thread");

    // The kernel's accounting: every sched_stat_runtime summed per thread.
    let mut want: BTreeMap<i32, i64> = BTreeMap::new();
    for l in of(&raw, "sched_stat_runtime") {
        *want.entry(l.int("pid") as i32).or_default() += l.int("runtime");
    }
    let mut got: BTreeMap<i32, i64> = BTreeMap::new();
    for r in &t.sched.sched_runtime {
        *got.entry(r.tid).or_default() += r.runtime_ns;
    }
    assert_eq!(got, want, "the kernel's run time per thread");
    let trace = t.sched.trace.as_ref().unwrap();
    assert_eq!(trace.kernel_runtime, !want.is_empty());
    t
}

/// A v7 file (zstd, trace-cmd 3.1's default) of the top buffer on the `mono` clock.
#[test]
fn a_v7_recording_of_the_top_buffer_agrees_with_trace_cmd_report() {
    recording_or_skip!();
    // The switchers' rate is bounded so that the second fits the ring buffer on any machine:
    // an overrun loses the oldest events, the forks among them, and with them the process
    // tree the run time below is summed over (unbounded yield workers overran 32 MiB a CPU
    // on a faster machine).
    let rec = record(Buffer::Top, "mono", &["cpu", "switch --switch-freq 2000"]);
    let t = agrees_with_report(&rec.path, &[]);
    assert_eq!(t.sched.losses, vec![], "the recording lost no events");
    let trace = t.sched.trace.as_ref().unwrap();
    assert_eq!(trace.file_format.as_deref(), Some("trace.dat v7 (zstd)"));
    assert_eq!(
        (trace.clock.as_str(), trace.trace_clock.as_deref()),
        ("CLOCK_MONOTONIC", Some("mono"))
    );
    let cpus = std::thread::available_parallelism().unwrap().get() as i32;
    assert_eq!(trace.nr_cpus_online, Some(cpus));
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(trace.os_release.as_deref(), Some(release.trim()));
    assert!(
        !t.sched
            .quality
            .iter()
            .any(|q| q.message.contains("trace clock")),
        "no clock warning on mono: {:?}",
        t.sched.quality
    );
    assert!(
        !t.sched
            .quality
            .iter()
            .any(|q| q.severity == Severity::Error),
        "{:?}",
        t.sched.quality
    );
    // stress-ng's workers are found by their command name (this test's, and any other
    // stress-ng running on the machine meanwhile).
    let stress: Vec<_> = (t.sched.threads.iter())
        .filter(|th| th.workload.as_deref() == Some("stress"))
        .collect();
    assert!(
        stress.len() >= 5,
        "stress-ng, 2 cpu and 2 switch workers with their children: {stress:?}"
    );
    assert!(
        stress.iter().all(|th| th.comm.starts_with("stress-ng")),
        "{stress:?}"
    );
    // The shell that turned tracing off renamed itself just before, while it ran: only its
    // task_rename names it so.
    let ender = (t.sched.threads.iter()).find(|th| th.tid == rec.ender_pid);
    assert_eq!(
        ender.map(|th| &*th.comm),
        Some(crate::record::ENDER),
        "the thread that renamed itself and stopped the trace (pid {})",
        rec.ender_pid
    );
    // The workers' time on a CPU in the trace is the CPU time /usr/bin/time measured of
    // stress-ng, within a tenth (and the 10 ms of a clock tick): the parent's own few
    // milliseconds and stress-ng's start-up and exit lie partly outside the recording. The
    // parent is left out: it sleeps, and this VM does not trace cpu 1's idle-context events,
    // so a slice after idle there holds the idle time before it; the workers are always
    // runnable and rarely follow idle.
    // This test's stress-ng: `time`'s process tree (`tree:` follows sched_process_fork).
    let opts = SchedOptions {
        run_id: "test".into(),
        workloads: vec![format!("mine=tree:{}", rec.root_pid).parse().unwrap()],
        ..Default::default()
    };
    let mine = read_sched(&rec.path, &opts).unwrap();
    let worker_ns: i64 = (mine.sched.sched_slices.iter())
        .filter(|s| s.workload.as_deref() == Some("mine") && s.comm.starts_with("stress-ng-"))
        .map(|s| s.run_ns)
        .sum();
    let measured = rec.stress_cpu_ns;
    let slack = measured / 10 + 10_000_000;
    assert!(
        (worker_ns - measured).abs() <= slack,
        "stress-ng ran {worker_ns} ns in the trace, {measured} ns by /usr/bin/time"
    );
    // And the kernel's own accounting of the same workers says the same, idle-blind CPU or not.
    let workers: std::collections::BTreeSet<i32> = (mine.sched.threads.iter())
        .filter(|th| th.workload.as_deref() == Some("mine") && th.comm.starts_with("stress-ng-"))
        .map(|th| th.tid)
        .collect();
    let kernel_ns: i64 = (mine.sched.sched_runtime.iter())
        .filter(|r| workers.contains(&r.tid))
        .map(|r| r.runtime_ns)
        .sum();
    assert!(
        (kernel_ns - measured).abs() <= slack,
        "the kernel accounts {kernel_ns} ns to stress-ng's workers, {measured} ns by /usr/bin/time"
    );
}

/// The same recording as v6 (`trace-cmd convert --file-version 6`) and as uncompressed v7:
/// the same tables, and each agrees with trace-cmd report on itself.
#[test]
fn converted_to_v6_and_to_uncompressed_v7_the_tables_are_the_same() {
    recording_or_skip!();
    // The yield workers switch however idle the rest of the machine is.
    let rec = record(Buffer::Top, "mono", &["cpu", "yield"]);
    let v7 = read(&rec.path);
    for (name, version, compression, format) in [
        ("v6.dat", 6, "none", "trace.dat v6"),
        ("v7-none.dat", 7, "none", "trace.dat v7"),
    ] {
        let path = convert(&rec.path, name, version, compression);
        let t = agrees_with_report(&path, &[]);
        assert_eq!(t.sched.sched_slices, v7.sched.sched_slices, "{name}");
        assert_eq!(t.sched.wakeups, v7.sched.wakeups, "{name}");
        assert_eq!(t.sched.migrations, v7.sched.migrations, "{name}");
        assert_eq!(t.sched.threads, v7.sched.threads, "{name}");
        assert_eq!(t.sched.losses, v7.sched.losses, "{name}");
        assert_eq!(t.sched.window, v7.sched.window, "{name}");
        let (a, b) = (
            t.sched.trace.clone().unwrap(),
            v7.sched.trace.clone().unwrap(),
        );
        assert_eq!(a.file_format.as_deref(), Some(format));
        assert_eq!(
            (&a.clock, &a.trace_clock, a.first_ns, a.last_ns),
            (&b.clock, &b.trace_clock, b.first_ns, b.last_ns),
            "{name}"
        );
    }
}

/// An instance of its own, on the default `local` clock: read like the top buffer, and its
/// clock flagged, since sched_clock is not CLOCK_MONOTONIC.
#[test]
fn an_instance_is_read_and_a_local_clock_is_flagged() {
    recording_or_skip!();
    // The yield workers switch however idle the rest of the machine is.
    let rec = record(Buffer::Instance, "local", &["cpu", "yield"]);
    let instance = rec.instance.clone().unwrap();
    let t = agrees_with_report(&rec.path, &[instance.as_str()]);
    let lines = report(&rec.path, Fields::Raw, &[instance.as_str()]);
    // The recording is the instance's. `trace-cmd extract -B` also writes the top buffer's
    // data, and that can hold a stray sched_switch of the workload (1 of 594262 lines in a
    // full test run) though no test enables an event at the top while an instance records:
    // one line in a thousand lets that through and still fails a recording of the top.
    let foreign: Vec<&Line> = (lines.iter())
        .filter(|l| l.buffer.as_deref() != Some(instance.as_str()))
        .collect();
    assert!(
        foreign.len() * 1000 <= lines.len(),
        "the events are the instance's: {} of {} lines are not, the first {:?}",
        foreign.len(),
        lines.len(),
        foreign.first()
    );
    let trace = t.sched.trace.as_ref().unwrap();
    assert_eq!(
        (trace.clock.as_str(), trace.trace_clock.as_deref()),
        ("local", Some("local"))
    );
    let warning = (t.sched.quality.iter())
        .find(|q| q.message.contains("`local` trace clock"))
        .expect("a warning about the clock");
    assert_eq!(warning.severity, Severity::Warning);
    assert!(
        warning.message.contains("not CLOCK_MONOTONIC"),
        "{}",
        warning.message
    );
}
