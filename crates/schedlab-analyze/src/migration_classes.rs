//! Migrations by core-class transition (P→E, E→P, …), and by what the thread was doing when it
//! moved, from its own slices: waking (the kernel chose a CPU for it as it woke), waiting
//! runnable after a switch-out (load balancing pulled it), or inside a slice (on a CPU).

use std::collections::BTreeMap;

use schedlab_tables::MigrationClassRow;

use crate::RunTables;
use crate::by_thread::{ByThread, ThreadSlices};
use crate::events::Migration;

/// What a thread was doing when it migrated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Waking,
    Runnable,
    Running,
}

/// The thread's state at `time_ns`, from its slices sorted by start: inside a slice it ran;
/// after a switch-out in a runnable state (`R`, `R+`) it waited for a CPU; after any other
/// switch-out, or before its first slice, it was asleep or new, so it moved as it woke.
fn state_at(slices: ThreadSlices<'_>, time_ns: i64) -> State {
    let started = slices.started_before(time_ns);
    let Some(last) = started.checked_sub(1).map(|i| slices.get(i)) else {
        return State::Waking;
    };
    if time_ns < last.end_ns() {
        State::Running
    } else if last.switched_out_runnable() {
        State::Runnable
    } else {
        State::Waking
    }
}

/// Counts of one workload's migrations between two classes.
#[derive(Default)]
struct Counts {
    migrations: i64,
    at_wakeup: i64,
    runnable: i64,
    running: i64,
}

/// The `migration_classes` rows of one run: for every workload among `threads`, a row per
/// pair of the run's classes, 0 where it did not migrate that way (a run without migrations
/// has its figures too, so that a mean over runs counts it), and a row for any other pair it
/// did migrate across (a CPU the `cpus` table lacks is `?`). `threads` are the threads to
/// count, each with its workload and `lost_events`, and `slices` all of each thread's slices
/// (whole, also outside the window, since a thread's state at a migration may date from before
/// it). Only the migrations for which `inside` holds are counted.
pub(crate) fn migration_classes(
    run: &RunTables<'_>,
    threads: &BTreeMap<i32, (&str, i64)>,
    slices: &ByThread<'_>,
    inside: impl Fn(i64) -> bool,
) -> Vec<MigrationClassRow> {
    let mut moves: BTreeMap<i32, Vec<&Migration>> = BTreeMap::new();
    for m in run.migrations.iter().filter(|m| inside(m.time_ns)) {
        if threads.contains_key(&m.tid) {
            moves.entry(m.tid).or_default().push(m);
        }
    }
    let mut lost: BTreeMap<&str, i64> = BTreeMap::new();
    for &(workload, lost_events) in threads.values() {
        *lost.entry(workload).or_default() += lost_events;
    }
    let mut classes: Vec<String> = run.class_of_cpu.values().map(|c| (*c).to_owned()).collect();
    classes.sort();
    classes.dedup();
    let mut counts: BTreeMap<(&str, String, String), Counts> = BTreeMap::new();
    for &workload in lost.keys() {
        for from in &classes {
            for to in &classes {
                counts.insert((workload, from.clone(), to.clone()), Counts::default());
            }
        }
    }
    for (tid, moves) in &moves {
        let (workload, _) = threads[tid];
        let own = slices.thread(*tid);
        for m in moves {
            let pair = (workload, run.class(m.from_cpu), run.class(m.to_cpu));
            let c = counts.entry(pair).or_default();
            c.migrations += 1;
            match state_at(own, m.time_ns) {
                State::Waking => c.at_wakeup += 1,
                State::Runnable => c.runnable += 1,
                State::Running => c.running += 1,
            }
        }
    }
    (counts.into_iter())
        .map(|((workload, from_class, to_class), c)| MigrationClassRow {
            run_id: run.run_id.to_owned(),
            workload: workload.to_owned(),
            from_class,
            to_class,
            migrations: c.migrations,
            at_wakeup: c.at_wakeup,
            runnable: c.runnable,
            running: c.running,
            source: "sched".to_owned(),
            lost_events: Some(lost[workload]),
        })
        .collect()
}

#[cfg(test)]
mod tests {

    use schedlab_spec::Window;

    use super::*;
    use crate::from_sched::aggregate;
    use crate::from_sched::tests::slice;

    fn migration(tid: i32, time_ns: i64, from_cpu: i32, to_cpu: i32) -> crate::events::Migration {
        crate::events::Migration {
            time_ns,
            tid,
            from_cpu,
            to_cpu,
        }
    }

    /// (from, to, migrations, at_wakeup, runnable, running) per row.
    fn rows(out: &[MigrationClassRow]) -> Vec<(&str, &str, i64, i64, i64, i64)> {
        (out.iter())
            .map(|r| {
                let c = (r.migrations, r.at_wakeup, r.runnable, r.running);
                (&*r.from_class, &*r.to_class, c.0, c.1, c.2, c.3)
            })
            .collect()
    }

    #[test]
    fn each_migration_is_classed_by_the_threads_state_from_its_slices() {
        // cpu 0 is P, cpu 1 is E. Thread 1 runs 100..200 on P and is preempted (R+), runs
        // 300..400 on E and sleeps, runs 500..600 on P.
        let mut preempted = slice(1, 0, 100, 200);
        preempted.prev_state = "R+".into();
        let slices = [preempted, slice(1, 1, 300, 400), slice(1, 0, 500, 600)];
        let migrations = [
            migration(1, 50, 0, 1),  // before its first slice: woken (new)
            migration(1, 200, 0, 1), // at its switch-out, runnable: load balancing
            migration(1, 250, 0, 1), // waiting runnable
            migration(1, 450, 1, 0), // asleep since 400: at wakeup
            migration(1, 550, 0, 1), // inside 500..600: running
            migration(9, 550, 0, 1), // a thread without slices is not counted, as in `migrations`
        ];
        let run = RunTables {
            migrations: &migrations,
            trace_window: Some((250, 520)),
            ..RunTables::for_tests(&slices)
        };
        let whole = aggregate(&run, 0, None);
        assert_eq!(
            rows(&whole.migration_classes),
            [
                ("E", "E", 0, 0, 0, 0),
                ("E", "P", 1, 1, 0, 0),
                ("P", "E", 4, 1, 2, 1),
                ("P", "P", 0, 0, 0, 0)
            ]
        );
        let per_thread: i64 = whole.migrations.iter().map(|m| m.migrations).sum();
        let per_class: i64 = whole.migration_classes.iter().map(|m| m.migrations).sum();
        assert_eq!(per_thread, per_class);

        // In the window 250..520 only the migrations at 250 and 450 count; the one at 250 is
        // still `runnable`, from the slice that ended before the window.
        let inside = aggregate(&run, 0, Some(Window::Trace));
        assert_eq!(
            rows(&inside.migration_classes),
            [
                ("E", "E", 0, 0, 0, 0),
                ("E", "P", 1, 1, 0, 0),
                ("P", "E", 1, 0, 1, 0),
                ("P", "P", 0, 0, 0, 0)
            ]
        );
        assert_eq!(inside.migrations[0].migrations, 2);
    }

    #[test]
    fn a_workload_that_never_migrated_has_a_zero_row_per_class_pair() {
        let slices = [slice(1, 0, 100, 200), slice(1, 0, 300, 400)];
        let run = RunTables::for_tests(&slices);
        let out = aggregate(&run, 0, None);
        assert_eq!(
            rows(&out.migration_classes),
            [
                ("E", "E", 0, 0, 0, 0),
                ("E", "P", 0, 0, 0, 0),
                ("P", "E", 0, 0, 0, 0),
                ("P", "P", 0, 0, 0, 0)
            ]
        );
        assert!(
            (out.migration_classes.iter()).all(|r| r.workload == "w" && r.lost_events == Some(0))
        );
    }
}
