//! A rename the trace records (task_rename, as Perfetto's recorder writes it with
//! `task/task_rename` on) names its thread from then on, though the thread may still be running
//! when the trace ends and no switch-out names it.

use std::collections::HashMap;

use schedlab_perfetto::read_sched;

use crate::writer::{options, recorded};

/// The fields a sched event names a thread by: its comm, then its pid.
const FIELDS: [(&str, &str); 5] = [
    ("comm=", " pid="),
    ("prev_comm=", " prev_pid="),
    ("next_comm=", " next_pid="),
    ("parent_comm=", " parent_pid="),
    ("child_comm=", " child_pid="),
];

/// The thread and name of an event's field: a name may hold spaces, so it ends where its pid
/// field begins.
fn field<'a>(payload: &'a str, comm: &str, pid: &str) -> Option<(i32, &'a str)> {
    let at = (payload.match_indices(comm))
        .find(|&(i, _)| i == 0 || payload.as_bytes()[i - 1] == b' ')?
        .0;
    let from = at + comm.len();
    let to = from + payload[from..].find(pid)?;
    let tid = payload[to + pid.len()..].split(' ').next()?.parse().ok()?;
    Some((tid, &payload[from..to]))
}

/// The first rename perf recorded during the trace (a PERF_RECORD_COMM after time 0) to a name
/// no event before it gave the thread, by its line index in the `perf script` text, with the
/// thread and its new name.
fn first_rename(text: &str) -> Option<(usize, i32, String)> {
    let mut names: HashMap<i32, Vec<&str>> = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if let Some((_, record)) = line.split_once("PERF_RECORD_COMM") {
            let at_start = line.contains(" 0.000000000:");
            let (_, named) = record.split_once(": ")?;
            let (name, ids) = named.rsplit_once(':')?;
            let tid: i32 = ids.split('/').nth(1)?.parse().ok()?;
            if !at_start && !names.get(&tid).is_some_and(|n| n.contains(&name)) {
                return Some((i, tid, name.to_string()));
            }
            names.entry(tid).or_default().push(name);
            continue;
        }
        let Some((_, payload)) = line.split_once(" sched:") else {
            continue;
        };
        for (comm, pid) in FIELDS {
            if let Some((tid, name)) = field(payload, comm, pid) {
                names.entry(tid).or_default().push(name);
            }
        }
    }
    None
}

#[test]
fn a_thread_renamed_while_it_runs_is_named_by_its_rename_at_the_traces_end() {
    let Some(recording) = recorded() else {
        return;
    };
    let text = std::fs::read_to_string(recording.path("perf-script.txt")).unwrap();
    let (cut, tid, name) = first_rename(&text)
        .expect("the workload renames a thread during the trace (its exec, stress-ng's workers)");
    let script = recording.path("cut-at-rename.txt");
    let kept: String = text.split_inclusive('\n').take(cut + 1).collect();
    std::fs::write(&script, kept).unwrap();
    let pftrace = recording.write_from(&script, "cut-at-rename.pftrace", &["--runtime", "generic"]);
    let read = read_sched(&pftrace, &options()).unwrap().sched;

    let thread = (read.threads.iter()).find(|t| t.tid == tid);
    let thread = thread.unwrap_or_else(|| panic!("thread {tid} is in the threads table"));
    assert_eq!(
        *thread.comm, *name,
        "thread {tid}'s last name is its rename's"
    );
    for row in read.sched_runtime.iter().filter(|r| r.tid == tid) {
        assert_eq!(
            row.comm, name,
            "thread {tid}'s runtime rows are named by its rename"
        );
    }
}
