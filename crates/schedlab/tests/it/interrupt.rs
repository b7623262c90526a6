//! Ctrl-C during collection: every started process stops, the run is kept and marked
//! interrupted, and the next `run` collects the missing run.

use std::time::{Duration, Instant};

use crate::util::{Sandbox, finished, read_json, wait_for};

/// The workers' `sleep` processes: `sleep 30.<this test's pid>`, found by that exact command line
/// in /proc, so that no other test's sleeps (another test binary may run at the same time) are
/// counted.
fn sleepers(seconds: &str) -> usize {
    let cmdline = format!("sleep\0{seconds}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("cmdline")).ok())
        .filter(|cmd| *cmd == cmdline)
        .count()
}

/// The pipeline: two instances of a workload whose leader forks a worker (stress-ng's shape
/// without stress-ng), each sleeping `seconds`; `extra` is appended to the workload.
fn long(seconds: &str, extra: &str) -> String {
    format!(
        "name: long\ncollect:\n  monitors:\n    where: {{ placement: {{ interval: 100ms }} }}\n  workloads:\n    \
         sleepers:\n      run: [sh, -c, \"sleep {seconds} & sleep {seconds}; wait\"]\n      instances: 2\n{extra}"
    )
}

#[test]
fn sigint_stops_workers_keeps_the_run_and_a_rerun_completes_it() {
    let sandbox = Sandbox::new();
    let seconds = format!("30.{}", std::process::id());
    let pipeline = sandbox.write("long.yaml", &long(&seconds, ""));
    let child = sandbox
        .command(&["run", pipeline.to_str().unwrap()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once both instances and their forked workers are running.
    assert!(
        wait_for(Duration::from_secs(20), || sleepers(&seconds) == 4),
        "{} of the 4 sleeps started",
        sleepers(&seconds)
    );
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let started = Instant::now();
    let done = finished(child.wait_with_output().unwrap());
    assert_eq!(done.code, 130, "{}", done.stderr);
    // Well before the 30 s sleeps would have ended by themselves.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "stopped promptly"
    );

    let kept: Vec<String> = sandbox
        .runs("long")
        .into_iter()
        .filter(|n| n.contains(".interrupted-"))
        .collect();
    assert_eq!(kept.len(), 1, "{:?}", sandbox.runs("long"));
    let manifest = read_json(&sandbox.data("long", &format!("runs/{}/manifest.json", kept[0])));
    assert_eq!(manifest["status"], "interrupted");
    let processes = manifest["processes"].as_array().unwrap();
    assert_eq!(processes.len(), 2);
    for process in processes {
        assert_eq!(process["stopped"], "interrupted");
        let pid = process["pid"].as_i64().unwrap();
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "workload {pid} still running"
        );
    }
    // No stray sleep from those process groups. They were SIGKILLed as schedlab exited; on a
    // loaded machine dying can take a moment more, so allow some (a worker that was never
    // signalled would still be there in 30 s).
    assert!(
        wait_for(Duration::from_secs(10), || sleepers(&seconds) == 0),
        "{} stray sleep workers left running",
        sleepers(&seconds)
    );
    // Samples taken before the interrupt are kept.
    assert!(
        sandbox
            .data(
                "long",
                &format!("runs/{}/raw/where.placement.parquet", kept[0])
            )
            .exists()
    );

    // Rerun with a short workload: the missing run is collected, the interrupted one stays.
    sandbox.write("long.yaml", &long(&seconds, "      timeout: 300ms\n"));
    let rerun = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(rerun.code, 0, "{}", rerun.stderr);
    assert_eq!(sandbox.runs("long").len(), 2);
}
