//! A rename the trace records (task_rename, as Perfetto's recorder writes it with
//! `task/task_rename` on) names its thread from then on, though the thread may still be running
//! when the trace ends and no switch-out names it.

use schedlab_perfetto::read_sched;

use crate::writer::{options, recorded};

/// The first rename perf recorded during the trace (a PERF_RECORD_COMM after time 0) to a name
/// no sched event before it carries, by its line index in the `perf script` text, with the
/// thread and its new name.
fn first_rename(text: &str) -> Option<(usize, i32, String)> {
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some((_, record)) = line.split_once("PERF_RECORD_COMM") else {
            continue;
        };
        if line.contains(" 0.000000000:") {
            continue;
        }
        let (_, named) = record.split_once(": ")?;
        let (name, ids) = named.rsplit_once(':')?;
        let tid: i32 = ids.split('/').nth(1)?.parse().ok()?;
        // Every comm field (`comm=`, `prev_comm=`, `child_comm=`…) is followed by a space.
        let field = format!("comm={name} ");
        let carried = (lines[..i].iter()).any(|l| l.contains(" sched:") && l.contains(&field));
        if !carried {
            return Some((i, tid, name.to_string()));
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
