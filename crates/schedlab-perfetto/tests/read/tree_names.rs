//! The process tree's name of a thread against the names its events carry: the tree's stands
//! until an event renames the thread, as perf keeps the name its records of existing tasks
//! give and trace processor ranks the tree's over ftrace's.

use std::collections::{BTreeMap, BTreeSet};

use schedlab_perf::SchedTables;
use schedlab_perfetto::read_sched;

use crate::writer::{options, recorded};

/// The names each thread's slices, wakeups and migrations carry.
fn event_names(tables: &SchedTables) -> BTreeMap<i32, BTreeSet<String>> {
    let mut names: BTreeMap<i32, BTreeSet<String>> = BTreeMap::new();
    let slices = (tables.sched_slices.iter()).map(|s| (s.tid, &s.comm));
    let wakeups = (tables.wakeups.iter()).map(|w| (w.tid, &w.comm));
    let migrations = (tables.migrations.iter()).map(|m| (m.tid, &m.comm));
    for (tid, comm) in slices.chain(wakeups).chain(migrations) {
        names.entry(tid).or_default().insert(comm.to_string());
    }
    names
}

/// Each thread's last name in the `threads` table.
fn thread_names(tables: &SchedTables) -> BTreeMap<i32, String> {
    (tables.threads.iter())
        .map(|t| (t.tid, t.comm.to_string()))
        .collect()
}

#[test]
fn a_thread_keeps_the_process_trees_name_until_an_event_renames_it() {
    let Some(recording) = recorded() else {
        return;
    };
    let plain = read_sched(&recording.path("trace.pftrace"), &options()).unwrap();
    let names = event_names(&plain.sched);
    let mut runs: BTreeMap<i32, usize> = BTreeMap::new();
    for s in &plain.sched.sched_slices {
        *runs.entry(s.tid).or_default() += 1;
    }
    // The thread that existed before the trace and ran most under one name, and one its
    // events name twice (stress-ng's workers rename themselves after their fork).
    let existed: BTreeSet<i32> = (plain.sched.threads.iter())
        .filter(|t| t.start_ns.is_none())
        .map(|t| t.tid)
        .collect();
    let steady = (names.iter())
        .filter(|(tid, n)| existed.contains(tid) && n.len() == 1 && runs.contains_key(tid))
        .max_by_key(|(tid, _)| runs[tid])
        .map(|(tid, _)| *tid)
        .expect("a thread that ran under one name");
    let renamed = (names.iter())
        .find(|(tid, n)| **tid > 0 && n.len() > 1)
        .map(|(tid, _)| *tid)
        .unwrap_or_else(|| panic!("a thread whose events carry two names: {names:?}"));

    let steady_flag = format!("{steady}=tree-steady");
    let renamed_flag = format!("{renamed}=tree-renamed");
    let named = recording.write(
        "tree-names.pftrace",
        &["--tree-name", &steady_flag, "--tree-name", &renamed_flag],
    );
    let read = read_sched(&named, &options()).unwrap();
    let (before, after) = (thread_names(&plain.sched), thread_names(&read.sched));
    assert_eq!(
        after[&steady], "tree-steady",
        "thread {steady}, which its events name {:?} only",
        names[&steady]
    );
    assert_eq!(
        after[&renamed], before[&renamed],
        "thread {renamed}, which its events name {:?}",
        names[&renamed]
    );
    assert_eq!(
        event_names(&read.sched),
        names,
        "the events keep their own names"
    );
    let others = |m: &BTreeMap<i32, String>| -> Vec<(i32, String)> {
        (m.iter())
            .filter(|(tid, _)| ![steady, renamed].contains(tid))
            .map(|(tid, n)| (*tid, n.clone()))
            .collect()
    };
    assert_eq!(others(&after), others(&before), "the other threads");
}
