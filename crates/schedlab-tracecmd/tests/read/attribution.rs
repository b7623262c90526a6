//! Workload selectors on a trace.dat: `tree:` follows sched_process_fork from the process it
//! names, `comm:` matches command names, as on a perf.data; `pid:` finds the process's main
//! thread only, since a trace.dat names threads but not their processes.

use std::collections::BTreeSet;

use schedlab_perf::SchedOptions;
use schedlab_tracecmd::read_sched;

use crate::record::{Buffer, record};
use crate::recording_or_skip;

#[test]
fn tree_comm_and_pid_selectors_find_their_threads() {
    recording_or_skip!();
    let rec = record(Buffer::Instance, "mono", &["cpu"]);
    let root = rec.root_pid;
    let opts = SchedOptions {
        run_id: "test".into(),
        workloads: vec![
            format!("timed=tree:{root}").parse().unwrap(),
            "stress=comm:stress-ng*".parse().unwrap(),
            format!("main=pid:{root}").parse().unwrap(),
        ],
        ..Default::default()
    };
    let t = read_sched(&rec.path, &opts).unwrap();
    let tids = |w: &str| -> BTreeSet<i32> {
        (t.sched.threads.iter())
            .filter(|th| th.workload.as_deref() == Some(w))
            .map(|th| th.tid)
            .collect()
    };
    // `time` forks stress-ng, which forks its two workers (sched_process_fork says so).
    let timed = tids("timed");
    assert!(timed.contains(&root) && timed.len() >= 4, "{timed:?}");
    let forked: BTreeSet<i32> = (t.sched.threads.iter())
        .filter(|th| th.tid != root && th.parent_tid.is_some_and(|p| timed.contains(&p)))
        .map(|th| th.tid)
        .collect();
    assert!(
        forked.iter().all(|tid| timed.contains(tid)),
        "every descendant: {forked:?}"
    );
    // The first selector that finds a thread names it: stress-ng's threads are `timed`'s, and
    // `comm:` finds only other stress-ng processes running on the machine meanwhile.
    let stress = tids("stress");
    assert!(stress.is_disjoint(&timed), "{stress:?} / {timed:?}");
    assert!(tids("main").is_empty(), "tree: came first for {root}");
    let by_comm = SchedOptions {
        workloads: vec![
            "stress=comm:stress-ng*".parse().unwrap(),
            format!("main=pid:{root}").parse().unwrap(),
        ],
        ..opts
    };
    let t = read_sched(&rec.path, &by_comm).unwrap();
    let of = |w: &str| -> BTreeSet<i32> {
        (t.sched.threads.iter())
            .filter(|th| th.workload.as_deref() == Some(w))
            .map(|th| th.tid)
            .collect()
    };
    let mut mine = timed.clone();
    mine.remove(&root);
    // stress-ng forks as `time` and execs: its sched_switch names it stress-ng afterwards,
    // which renames it and lets comm: find it, as perf's COMM record would.
    assert!(
        of("stress").is_superset(&mine),
        "comm: finds stress-ng and its workers: {:?} / {mine:?}",
        of("stress")
    );
    assert!(!of("stress").contains(&root), "not `time`");
    assert_eq!(
        of("main"),
        BTreeSet::from([root]),
        "pid: finds the process's own thread"
    );
}
