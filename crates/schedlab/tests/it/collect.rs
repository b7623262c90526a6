//! Collection on this machine: timing, real monitors, matrix runs, labels, the data lock.

use std::time::Duration;

use crate::util::{Need, Sandbox, can_run, perf_event_paranoid, read_json, skip, wait_for};
use schedlab_tables::{ProcessRow, QualityRow, RunRow, read_table};

fn manifest(sandbox: &Sandbox, pipeline: &str, run: &str) -> serde_json::Value {
    read_json(&sandbox.data(pipeline, &format!("runs/{run}/manifest.json")))
}

#[test]
fn start_after_is_honoured() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "late.yaml",
        "name: late\ncollect:\n  workloads:\n    a: { run: [\"true\"], start_after: 300ms }\n    b: { run: [\"true\"], start_after: 50ms }\n",
    );
    assert_eq!(
        sandbox.schedlab(&["run", pipeline.to_str().unwrap()]).code,
        0
    );
    let m = manifest(&sandbox, "late", &sandbox.runs("late")[0]);
    let zero = m["zero_ns"].as_i64().unwrap();
    for process in m["processes"].as_array().unwrap() {
        let expected = if process["workload"] == "a" { 300 } else { 50 };
        let late_ms = (process["start_ns"].as_i64().unwrap() - zero) as f64 / 1e6 - expected as f64;
        // Never early; late by a few ms when idle, by more on a busy machine, but not by the
        // 250 ms between the two starts.
        assert!(
            (0.0..250.0).contains(&late_ms),
            "{} started {late_ms:.1} ms late",
            process["workload"]
        );
    }
}

const TRACED: &str = "name: traced\ncollect:\n  monitors:\n    sched: { perf-sched: {} }\n  workloads:\n    \
    spin: { periodic: { threads: 1, period: 20ms, busy: 5ms, duration: 500ms }, start_after: 100ms }\n\
    aggregate:\n  - residency: {}\n  - cpu_time: { window: trace }\n  - migrations: {}\n  - sched_delay: {}\n";

#[test]
fn perf_sched_without_the_right_to_trace_every_cpu_is_refused_with_a_hint() {
    let test = "perf_sched_without_the_right_to_trace_every_cpu_is_refused_with_a_hint";
    if !can_run(test, &[Need::Program("perf")]) {
        return;
    }
    if rustix::process::geteuid().is_root() || perf_event_paranoid() <= -1 {
        skip(test, "this user has the right to trace every CPU");
        return;
    }
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write("traced.yaml", TRACED);
    let done = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(done.code, 2);
    assert!(
        done.stderr
            .contains("needs root or kernel.perf_event_paranoid"),
        "{}",
        done.stderr
    );
}

#[test]
fn perf_sched_records_a_real_trace() {
    if !can_run("perf_sched_records_a_real_trace", &[Need::TraceAllCpus]) {
        return;
    }
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write("traced.yaml", TRACED);
    let done = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let run = &sandbox.runs("traced")[0];
    let m = manifest(&sandbox, "traced", run);
    let monitor = &m["monitors"][0];
    assert_eq!(monitor["status"], "ran");
    let argv: Vec<&str> = monitor["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        argv[..6],
        ["perf", "sched", "record", "-a", "-k", "CLOCK_MONOTONIC"]
    );
    let size =
        std::fs::metadata(sandbox.data("traced", &format!("runs/{run}/raw/sched.perf.data")))
            .unwrap()
            .len();
    assert!(size > 10_000, "perf.data has {size} bytes");
    // The trace is parsed: the periodic thread's slices are attributed to its workload.
    let slices: Vec<schedlab_tables::SchedSliceRow> =
        read_table(&sandbox.data("traced", "tables")).unwrap();
    let own: Vec<_> = slices
        .iter()
        .filter(|s| s.workload.as_deref() == Some("spin"))
        .collect();
    assert!(
        own.len() >= 25,
        "{} slices of the workload (25 periods)",
        own.len()
    );

    // The file's own facts: recorded on the run clock, by the command the manifest shows.
    let traces: Vec<schedlab_tables::TraceRow> =
        read_table(&sandbox.data("traced", "tables")).unwrap();
    assert_eq!(traces.len(), 1);
    assert_eq!(traces[0].clock, "CLOCK_MONOTONIC");
    let cmdline = traces[0].cmdline.as_deref().unwrap();
    assert!(cmdline.contains(&argv[1..].join(" ")), "{cmdline}");

    // cpu_time over the trace window only: never more than over the whole trace (residency).
    let aggregates = sandbox.data("traced", "aggregates");
    let tid = own[0].tid;
    let whole: i64 = read_table::<schedlab_tables::ResidencyRow>(&aggregates)
        .unwrap()
        .iter()
        .filter(|r| r.tid == tid)
        .map(|r| r.run_ns)
        .sum();
    let cpu_time = read_table::<schedlab_tables::CpuTimeRow>(&aggregates).unwrap();
    let windowed = cpu_time.iter().find(|c| c.tid == tid).unwrap();
    assert!(windowed.cpu_time_ns <= whole && windowed.cpu_time_ns > 0);
    assert_eq!(windowed.source, "sched");
    assert!(windowed.lost_events.is_some());

    // The per-workload tables beside `sched_delay` and `migrations` cover the same threads.
    let spin = |w: &str| w == "spin";
    let per_thread = read_table::<schedlab_tables::MigrationSummaryRow>(&aggregates).unwrap();
    let by_class = read_table::<schedlab_tables::MigrationClassRow>(&aggregates).unwrap();
    let migrations: i64 = (per_thread.iter().filter(|r| spin(&r.workload)))
        .map(|r| r.migrations)
        .sum();
    assert_eq!(
        (by_class.iter().filter(|r| spin(&r.workload)))
            .map(|r| (r.migrations, r.at_wakeup + r.runnable + r.running))
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1)),
        (migrations, migrations),
        "migrations by class and state against migrations per thread"
    );
    let delays = read_table::<schedlab_tables::SchedDelayRow>(&aggregates).unwrap();
    let delays: Vec<_> = delays.iter().filter(|r| spin(&r.workload)).collect();
    let workloads = read_table::<schedlab_tables::SchedDelayWorkloadRow>(&aggregates).unwrap();
    let w = workloads.iter().find(|r| spin(&r.workload)).unwrap();
    let sum = |f: fn(&schedlab_tables::SchedDelayRow) -> i64| delays.iter().map(|r| f(r)).sum();
    assert_eq!(
        (w.threads, w.wakeups, w.preemptions),
        (
            delays.len() as i64,
            sum(|r| r.wakeups),
            sum(|r| r.preemptions)
        )
    );
    let max = |f: fn(&schedlab_tables::SchedDelayRow) -> Option<i64>| {
        delays.iter().filter_map(|r| f(r)).max()
    };
    assert_eq!(
        (w.max_ns, w.preempt_wait_max_ns),
        (max(|r| r.max_ns), max(|r| r.preempt_wait_max_ns))
    );
}

#[test]
fn optional_turbostat_runs_or_is_skipped_with_its_own_reason() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "power.yaml",
        "name: power\ncollect:\n  monitors:\n    power: { turbostat: { interval: 200ms }, optional: true }\n  workloads:\n    \
         w: { run: [sleep, \"0.5\"] }\n",
    );
    let done = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let m = manifest(&sandbox, "power", &sandbox.runs("power")[0]);
    let monitor = &m["monitors"][0];
    let quality: Vec<QualityRow> = read_table(&sandbox.data("power", "tables")).unwrap();
    if monitor["status"] == "skipped" {
        let reason = monitor["reason"].as_str().unwrap();
        assert!(!reason.is_empty());
        assert!(
            quality.iter().any(|q| q.source == "power"
                && q.message.contains("optional monitor turbostat skipped")
                && q.message.contains(reason)),
            "{quality:?}"
        );
    } else {
        assert_eq!(monitor["status"], "ran");
        assert!(
            sandbox
                .data(
                    "power",
                    &format!("runs/{}/raw/power.turbostat.txt", sandbox.runs("power")[0])
                )
                .exists()
        );
    }
}

#[test]
fn matrix_runs_are_interleaved_and_labels_keep_runs_apart() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "grid.yaml",
        "name: grid\nmatrix: { n: [1, 2] }\nrepeat: 2\ncollect:\n  workloads:\n    w: { run: [echo, \"${n}\"] }\n",
    );
    let pipeline = pipeline.to_str().unwrap();
    assert_eq!(sandbox.schedlab(&["run", pipeline]).code, 0);
    let runs: Vec<RunRow> = read_table(&sandbox.data("grid", "tables")).unwrap();
    assert_eq!(runs.len(), 4);
    let mut collected: Vec<(i64, String, u32)> = sandbox
        .runs("grid")
        .iter()
        .map(|r| {
            let m = manifest(&sandbox, "grid", r);
            (
                m["start_ns"].as_i64().unwrap(),
                m["variant"]["n"].as_str().unwrap().to_owned(),
                m["repetition"].as_u64().unwrap() as u32,
            )
        })
        .collect();
    collected.sort();
    let order: Vec<(String, u32)> = collected.into_iter().map(|(_, n, rep)| (n, rep)).collect();
    assert_eq!(
        order,
        [
            ("1".into(), 1),
            ("2".into(), 1),
            ("1".into(), 2),
            ("2".into(), 2)
        ]
    );
    let out = std::fs::read_to_string(sandbox.data(
        "grid",
        &format!("runs/{}/raw/w.0.stdout.txt", sandbox.runs("grid")[0]),
    ))
    .unwrap();
    assert!(out == "1\n" || out == "2\n", "${{n}} substituted: {out:?}");

    let labelled = sandbox.schedlab(&["run", pipeline, "--label", "kernelA"]);
    assert_eq!(labelled.code, 0, "{}", labelled.stderr);
    assert_eq!(
        sandbox
            .runs("grid")
            .iter()
            .filter(|r| r.contains("-kernelA-"))
            .count(),
        4
    );
    let runs: Vec<RunRow> = read_table(&sandbox.data("grid", "tables")).unwrap();
    assert_eq!(
        runs.len(),
        8,
        "labelled and unlabelled runs of one collect section are analysed together"
    );
    assert_eq!(
        runs.iter()
            .filter(|r| r.label.as_deref() == Some("kernelA"))
            .count(),
        4
    );
}

#[test]
fn repeat_until_monitors_restarts_a_short_workload() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "again.yaml",
        "name: again\ncollect:\n  duration: 1s\n  workloads:\n    w: { run: [sleep, \"0.1\"], repeat_until: monitors }\n",
    );
    assert_eq!(
        sandbox.schedlab(&["run", pipeline.to_str().unwrap()]).code,
        0
    );
    let processes: Vec<ProcessRow> = read_table(&sandbox.data("again", "tables")).unwrap();
    // At most 10 (each lasts 0.1 s); fewer when starting a process is slow on a busy machine,
    // but more than one: it was restarted.
    assert!(
        (3..=10).contains(&processes.len()),
        "{} starts of a 0.1 s workload in 1 s",
        processes.len()
    );
    assert!(
        processes
            .windows(2)
            .all(|w| w[1].start_ns >= w[0].end_ns.unwrap()),
        "one at a time"
    );
}

#[test]
fn a_second_run_on_the_same_data_says_who_holds_it() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "hold.yaml",
        "name: hold\ncollect:\n  workloads:\n    w: { run: [sleep, \"3\"] }\n",
    );
    let pipeline = pipeline.to_str().unwrap();
    let mut first = sandbox
        .command(&["run", pipeline])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The holder writes who it is into the lock file once it holds the lock.
    let holder = format!("pid {} (schedlab run)", first.id());
    let lock = sandbox.data("hold", ".lock");
    assert!(
        wait_for(Duration::from_secs(30), || {
            std::fs::read_to_string(&lock).is_ok_and(|text| text.contains(&holder))
        }),
        "the first run never took the lock"
    );
    let second = sandbox.schedlab(&["run", pipeline]);
    assert_eq!(second.code, 2, "{}", second.stderr);
    assert!(
        second.stderr.contains("hold/.lock is in use: pid"),
        "{}",
        second.stderr
    );
    assert!(
        second
            .stderr
            .contains(&format!("pid {} (schedlab run)", first.id())),
        "{}",
        second.stderr
    );
    assert!(first.wait().unwrap().success());
    assert_eq!(
        sandbox.schedlab(&["run", pipeline]).code,
        0,
        "the lock is released when the holder ends"
    );
}

#[test]
fn dry_run_prints_the_timeline_and_starts_nothing() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "plan.yaml",
        "name: plan\ncollect:\n  duration: 70s\n  monitors:\n    sched: { perf-sched: { buffer: 64M } }\n  workloads:\n    \
         burst: { run: [stress-ng, --cpu, \"1\"], start_after: 2s, nice: 19, cpus: [0] }\n",
    );
    let done = sandbox.schedlab(&["run", pipeline.to_str().unwrap(), "--dry-run"]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let lines: Vec<&str> = done.stdout.lines().collect();
    assert!(
        lines[0].starts_with("run ") && lines[0].ends_with("-r1:"),
        "{lines:?}"
    );
    assert!(
        lines[1]
            .contains("0.000s  monitor sched: perf sched record -a -k CLOCK_MONOTONIC -m 64M -o "),
        "{lines:?}"
    );
    assert!(
        lines[2].contains("2.000s  workload burst#0: stress-ng --cpu 1 (nice 19, CPUs 0)"),
        "{lines:?}"
    );
    assert!(lines[3].contains("70.000s  end of collection"), "{lines:?}");
    assert!(!sandbox.path("data").exists(), "nothing written");
}

#[test]
fn perf_sched_window_records_only_part_of_the_run() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "window.yaml",
        "name: window\ncollect:\n  monitors:\n    sched: { perf-sched: { window: { start: 500ms, duration: 600ms } } }\n  workloads:\n    \
         spin: { periodic: { threads: 1, period: 20ms, busy: 5ms, duration: 1800ms } }\n",
    );
    let plan = sandbox.schedlab(&["run", pipeline.to_str().unwrap(), "--dry-run"]);
    let monitor = plan.stdout.lines().nth(1).unwrap_or_default();
    assert!(
        monitor.contains(" -D -1 --control fifo:")
            && monitor.ends_with(", enabled at 0.500s, stopped at 1.100s"),
        "{monitor}"
    );
    if !can_run(
        "perf_sched_window_records_only_part_of_the_run",
        &[Need::TraceAllCpus],
    ) {
        return;
    }
    let done = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let m = manifest(&sandbox, "window", &sandbox.runs("window")[0]);
    let zero = m["zero_ns"].as_i64().unwrap();
    let slices: Vec<schedlab_tables::SchedSliceRow> =
        read_table(&sandbox.data("window", "tables")).unwrap();
    let own: Vec<i64> = slices
        .iter()
        .filter(|s| s.workload.is_some())
        .map(|s| (s.end_ns - zero) / 1_000_000)
        .collect();
    assert!(!own.is_empty());
    let (first, last) = (own.iter().min().unwrap(), own.iter().max().unwrap());
    // perf is enabled at 500 ms through its control FIFO (not `--delay`, which counts from
    // perf's own start, before the run's zero); the workload switches every 20 ms, so the first
    // switch follows soon after, later on a busy machine.
    assert!(
        (500..=900).contains(first),
        "first traced switch {first} ms after the start: the window starts at 500 ms"
    );
    // perf is asked to stop at 1.1 s. The workload switches every 20 ms until 1.8 s: a trace of
    // the whole run would reach ~1800 ms.
    assert!(
        *last <= 1500,
        "last traced switch {last} ms after the start: recording stopped"
    );
}

/// A skipped optional monitor has no window to open: the collector sleeps between its events
/// instead of polling (it once spun a whole CPU from the skipped window's start to the end).
#[test]
fn a_skipped_windowed_monitor_leaves_the_collector_idle() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "skipped.yaml",
        "name: skipped\ncollect:\n  duration: 2s\n  monitors:\n    \
         sched: { perf-sched: { window: { start: 200ms, duration: 500ms } }, optional: true }\n  \
         workloads:\n    nap: { run: [sleep, \"1\"] }\n",
    );
    // Without perf on PATH the monitor is skipped; `sleep` is run by its full path.
    let sleep = schedlab_collect::process::find_program("sleep").expect("sleep installed");
    let text = std::fs::read_to_string(&pipeline)
        .unwrap()
        .replace("[sleep,", &format!("[{},", sleep.display()));
    std::fs::write(&pipeline, text).unwrap();
    #[expect(
        clippy::zombie_processes,
        reason = "reaped below by wait4, for its rusage"
    )]
    let child = sandbox
        .command(&["run", pipeline.to_str().unwrap(), "--only", "collect"])
        .env("PATH", "/nonexistent")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("schedlab runs");
    let (mut status, mut usage) = (0, std::mem::MaybeUninit::<libc::rusage>::zeroed());
    // SAFETY: wait4 on our own child, with pointers to a status word and an rusage it fills.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, usage.as_mut_ptr()) };
    assert_eq!(pid, child.id() as i32);
    // SAFETY: wait4 succeeded, so it wrote the rusage.
    let usage = unsafe { usage.assume_init() };
    let cpu = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let cpu_s = cpu(usage.ru_utime) + cpu(usage.ru_stime);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{status}"
    );
    let m = manifest(&sandbox, "skipped", &sandbox.runs("skipped")[0]);
    assert_eq!(m["monitors"][0]["status"], "skipped", "{m}");
    // Polling for 1.8 s would cost about that much CPU; sleeping costs a few hundredths.
    assert!(
        cpu_s < 0.8,
        "the collector used {cpu_s:.2} s of CPU in a 2 s run"
    );
}

/// A workload that ignores SIGTERM at its timeout is killed `STOP_GRACE` (3 s) later, and the
/// run's other starts keep their times meanwhile (the loop once waited out the grace).
#[test]
fn a_stubborn_timeout_does_not_delay_the_timeline() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "stubborn.yaml",
        "name: stubborn\ncollect:\n  workloads:\n    \
         stubborn: { run: [sh, -c, \"trap '' TERM; sleep 10\"], timeout: 200ms }\n    \
         late: { run: [\"true\"], start_after: 600ms }\n",
    );
    let done = sandbox.schedlab(&["run", pipeline.to_str().unwrap(), "--only", "collect"]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let m = manifest(&sandbox, "stubborn", &sandbox.runs("stubborn")[0]);
    let zero = m["zero_ns"].as_i64().unwrap();
    let processes = m["processes"].as_array().unwrap();
    let of = |name: &str| processes.iter().find(|p| p["workload"] == name).unwrap();
    let ms = |ns: &serde_json::Value| (ns.as_i64().unwrap() - zero) as f64 / 1e6;
    // On time, give or take a busy machine; waiting out the grace would make it 3.2 s.
    let late = ms(&of("late")["start_ns"]);
    assert!(
        (600.0..1500.0).contains(&late),
        "late started at {late:.1} ms"
    );
    let stubborn = of("stubborn");
    assert_eq!(stubborn["stopped"], "timeout", "{stubborn}");
    // Killed at 200 ms + 3 s, never before the grace is over.
    let ended = ms(&stubborn["end_ns"]);
    assert!(
        (3150.0..5000.0).contains(&ended),
        "stubborn ended at {ended:.1} ms"
    );
}

/// At the end of a collection every workload gets SIGTERM and one shared grace period: three
/// workloads that ignore SIGTERM are killed together about 3 s later, not one after another, and
/// one that obeys at once is stamped as ending at once, not after the others' grace.
#[test]
fn workloads_that_ignore_sigterm_share_one_grace_period_at_the_end() {
    let sandbox = Sandbox::new();
    // `sleep 41`, not the `sleep 30.<pid>` that interrupt.rs looks for in /proc. Stopping them
    // is what the test is about, so the pipeline says it is expected.
    let stubborn = "{ run: [sh, -c, \"trap '' TERM; sleep 41\"], stop: expected }";
    let pipeline = sandbox.write(
        "ends.yaml",
        &format!(
            "name: ends\ncollect:\n  duration: 300ms\n  workloads:\n    \
             a: {stubborn}\n    b: {stubborn}\n    c: {stubborn}\n    \
             d: {{ run: [sleep, \"41\"], stop: expected }}\n"
        ),
    );
    let done = sandbox.schedlab(&["run", pipeline.to_str().unwrap(), "--only", "collect"]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let m = manifest(&sandbox, "ends", &sandbox.runs("ends")[0]);
    let zero = m["zero_ns"].as_i64().unwrap();
    for p in m["processes"].as_array().unwrap() {
        let ended = (p["end_ns"].as_i64().unwrap() - zero) as f64 / 1e6;
        // 300 ms of collection and 3 s of grace, more on a busy machine; one after another,
        // the second would end at 6.3 s and the last at 9.3 s.
        let expected = if p["workload"] == "d" {
            250.0..2500.0
        } else {
            3250.0..6000.0
        };
        assert!(
            expected.contains(&ended),
            "{} ended at {ended:.0} ms",
            p["workload"]
        );
    }
}
