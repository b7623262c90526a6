//! Ctrl-C during collection: every started process stops, the run is kept and marked
//! interrupted, and the next `run` collects the missing run.

mod util;

use std::time::{Duration, Instant};

use util::{Sandbox, finished, read_json};

#[test]
fn sigint_stops_workers_keeps_the_run_and_a_rerun_completes_it() {
    let sandbox = Sandbox::new();
    // stress-ng-like shape without stress-ng: a workload whose leader forks a worker.
    let pipeline = sandbox.write(
        "long.yaml",
        "name: long\ncollect:\n  monitors:\n    where: { placement: { interval: 100ms } }\n  workloads:\n    \
         sleepers:\n      run: [sh, -c, \"sleep 30 & sleep 30; wait\"]\n      instances: 2\n",
    );
    let child = sandbox
        .command(&["run", pipeline.to_str().unwrap()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let started = Instant::now();
    let done = finished(child.wait_with_output().unwrap());
    assert_eq!(done.code, 130, "{}", done.stderr);
    assert!(
        started.elapsed() < Duration::from_secs(10),
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
    // No stray `sleep 30` from those process groups. They were SIGKILLed as schedlab exited;
    // on a loaded machine dying can take a few milliseconds more, so allow a moment (a worker
    // that was never signalled would still be there in 30 s).
    let strays = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read_to_string(e.path().join("cmdline")).ok())
            .filter(|cmd| cmd == "sleep\x0030\x00")
            .count()
    };
    let settle = Instant::now();
    while strays() > 0 && settle.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(strays(), 0, "stray sleep workers left running");
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
    sandbox.write(
        "long.yaml",
        "name: long\ncollect:\n  monitors:\n    where: { placement: { interval: 100ms } }\n  workloads:\n    \
         sleepers:\n      run: [sh, -c, \"sleep 30 & sleep 30; wait\"]\n      instances: 2\n      timeout: 300ms\n",
    );
    let rerun = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(rerun.code, 0, "{}", rerun.stderr);
    assert_eq!(sandbox.runs("long").len(), 2);
}
