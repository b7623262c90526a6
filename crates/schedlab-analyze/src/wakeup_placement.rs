//! Where wakeups put a workload thread: back on its CPU, on another CPU of the same class, or
//! on another class, and whether onto a busy CPU while an idle one of an equal or faster class
//! was allowed.
//!
//! A wakeup is a slice that began with a scheduling delay (as `sched_delay` counts them); the
//! wakeup happened `sched_delay_ns` before the slice, and the slice's CPU is where the thread
//! was placed. That is the CPU the kernel chose at the wakeup unless a load balance moved the
//! thread before it ran: `perf sched record` on current kernels records `sched_waking`, whose
//! `target_cpu` is the CPU the thread left, not the one chosen.

use schedlab_tables::{NO_EARLIER_RUN, WakeupPlacementRow};

use crate::UNKNOWN_CLASS;
use crate::cpu_numbers::CpuNumbers;

use crate::RunTables;
use crate::placement_cost::WorkloadThread;
use crate::slices::Slice;
use crate::timeline::Timeline;

#[derive(Default, Clone, Copy)]
struct Counts {
    wakeups: i64,
    same_cpu: i64,
    onto_busy: i64,
    onto_busy_while_idle: i64,
}

/// One row per workload thread and pair of classes: from each of the run's classes (or
/// [`NO_EARLIER_RUN`]) to each, 0 where no wakeup went that way, so that a run whose thread was
/// never woken onto another class still has the figure; and any other pair its wakeups went
/// between (a CPU the `cpus` table lacks is `?`).
pub fn wakeup_placement(
    run: &RunTables<'_>,
    timeline: &Timeline<'_>,
    threads: &[WorkloadThread<'_>],
) -> Vec<WakeupPlacementRow> {
    let mut classes: Vec<&str> = run.class_of_cpu.values().copied().collect();
    classes.sort();
    classes.dedup();
    // Every name a pair can hold, in order: a wakeup's pair is counted by the names' indexes,
    // not looked up by its two texts, and the rows come out in the order of the pairs' texts.
    let mut names: Vec<&str> = (classes.iter().copied())
        .chain([NO_EARLIER_RUN, UNKNOWN_CLASS])
        .collect();
    names.sort();
    names.dedup();
    let index_of = |name: &str| names.binary_search(&name).expect("a listed name");
    let always: Vec<bool> = (0..names.len() * names.len())
        .map(|pair| {
            let (from, to) = (names[pair / names.len()], names[pair % names.len()]);
            (from == NO_EARLIER_RUN || classes.contains(&from)) && classes.contains(&to)
        })
        .collect();
    // By each CPU of the `cpus` table, its name's index; any other CPU's class is `?`.
    let known = CpuNumbers::of(run.class_of_cpu.keys().copied());
    let name_of_known: Vec<usize> = (known.cpus().iter())
        .map(|&cpu| index_of(run.class_name(cpu)))
        .collect();
    let class_of = |cpu: i32| match known.find(cpu) {
        Some(at) => name_of_known[at],
        None => index_of(UNKNOWN_CLASS),
    };
    let mut rows = Vec::new();
    for WorkloadThread {
        slices,
        workload,
        allowed,
        ..
    } in threads
    {
        let first = slices.get(0);
        let mut pairs = vec![Counts::default(); names.len() * names.len()];
        let mut previous: Option<i32> = None;
        let mut timeline = timeline.cursor();
        for s in slices.iter() {
            if s.sched_delay_ns() > 0 {
                let woken = s.start_ns() - s.sched_delay_ns();
                let from = match previous {
                    Some(cpu) => class_of(cpu),
                    None => index_of(NO_EARLIER_RUN),
                };
                let to = class_of(s.cpu());
                let counts = &mut pairs[from * names.len() + to];
                counts.wakeups += 1;
                counts.same_cpu += i64::from(previous == Some(s.cpu()));
                let busy = timeline
                    .at(s.cpu(), woken)
                    .is_some_and(|other| !other.is_idle() && other.tid() != s.tid());
                if busy {
                    counts.onto_busy += 1;
                    let idle_elsewhere = allowed.iter().any(|&cpu| {
                        cpu != s.cpu()
                            && run.classes.as_fast(cpu, s.cpu())
                            && timeline.at(cpu, woken).is_some_and(Slice::is_idle)
                    });
                    counts.onto_busy_while_idle += i64::from(idle_elsewhere);
                }
            }
            previous = Some(s.cpu());
        }
        // A thread never woken has shares of 0, not 0/0.
        let total = pairs.iter().map(|c| c.wakeups).sum::<i64>().max(1);
        let kept = (pairs.iter().enumerate()).filter(|&(pair, c)| always[pair] || c.wakeups > 0);
        rows.extend(kept.map(|(pair, c)| {
            let (from_class, to_class) = (names[pair / names.len()], names[pair % names.len()]);
            WakeupPlacementRow {
                run_id: run.run_id.to_owned(),
                workload: (*workload).to_owned(),
                pid: first.pid(),
                tid: first.tid(),
                comm: first.comm().to_string(),
                from_class: from_class.to_owned(),
                to_class: to_class.to_owned(),
                wakeups: c.wakeups,
                share: c.wakeups as f64 / total as f64,
                same_cpu: c.same_cpu,
                other_cpu: c.wakeups - c.same_cpu,
                onto_busy: c.onto_busy,
                onto_busy_while_idle: c.onto_busy_while_idle,
                same_cpu_share: c.same_cpu as f64 / total as f64,
                other_cpu_share: (c.wakeups - c.same_cpu) as f64 / total as f64,
            }
        }));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement_cost::workload_threads;
    use crate::timeline::tests::slice;
    use schedlab_tables::SchedSliceRow;

    fn woken(cpu: i32, span: (i64, i64), delay: i64) -> SchedSliceRow {
        let mut s = slice(cpu, 9, span, 120, Some("w"));
        s.sched_delay_ns = delay;
        s
    }

    #[test]
    fn wakeups_are_counted_per_class_pair_with_busy_targets_beside_idle_cpus() {
        // The thread (tid 9) runs on E (cpu 1) first; woken at 85 onto P while cpu 0 runs
        // task 8 (no equal or faster CPU idle); woken at 180 onto E while task 7 holds it and
        // P idles; woken at 255 back onto its idle E CPU.
        let slices = [
            slice(0, 8, (70, 100), 120, None),
            woken(0, (100, 150), 15),
            slice(0, 0, (150, 200), 0, None),
            woken(1, (0, 80), 0),
            slice(1, 0, (80, 100), 0, None),
            slice(1, 7, (100, 200), 120, None),
            woken(1, (200, 250), 20),
            slice(1, 0, (250, 260), 0, None),
            woken(1, (260, 270), 5),
        ];
        let run = RunTables::for_tests(&slices);
        let timeline = Timeline::new(run.all_slices);
        let placed = wakeup_placement(&run, &timeline, &workload_threads(&run));
        let rows: Vec<(&str, &str, i64, i64, i64, i64, i64)> = (placed.iter())
            .map(|r| {
                let (from, to) = (r.from_class.as_str(), r.to_class.as_str());
                let counts = (r.wakeups, r.same_cpu, r.other_cpu);
                (
                    from,
                    to,
                    counts.0,
                    counts.1,
                    counts.2,
                    r.onto_busy,
                    r.onto_busy_while_idle,
                )
            })
            .collect();
        let shares: Vec<(f64, f64, f64)> = (placed.iter())
            .map(|r| (r.share, r.same_cpu_share, r.other_cpu_share))
            .collect();
        let third = 1.0 / 3.0;
        assert_eq!(
            shares,
            [
                (third, third, 0.0),
                (third, 0.0, third),
                (third, 0.0, third),
                (0.0, 0.0, 0.0),
                (0.0, 0.0, 0.0),
                (0.0, 0.0, 0.0)
            ]
        );
        // Every pair of the run's classes has a row, and the pairs from no earlier run too.
        assert_eq!(
            rows,
            [
                ("E", "E", 1, 1, 0, 0, 0),
                ("E", "P", 1, 0, 1, 1, 0),
                ("P", "E", 1, 0, 1, 1, 1),
                ("P", "P", 0, 0, 0, 0, 0),
                ("none", "E", 0, 0, 0, 0, 0),
                ("none", "P", 0, 0, 0, 0, 0),
            ]
        );
    }

    #[test]
    fn a_wakeup_onto_a_cpu_of_no_class_has_a_row_among_the_pairs_in_order() {
        // cpu 2 is not in the `cpus` table: its class is `?`.
        let slices = [woken(0, (0, 80), 0), woken(2, (100, 150), 10)];
        let run = RunTables::for_tests(&slices);
        let timeline = Timeline::new(run.all_slices);
        let placed = wakeup_placement(&run, &timeline, &workload_threads(&run));
        let pairs: Vec<(&str, &str, i64)> = (placed.iter())
            .map(|r| (r.from_class.as_str(), r.to_class.as_str(), r.wakeups))
            .collect();
        assert_eq!(
            pairs,
            [
                ("E", "E", 0),
                ("E", "P", 0),
                ("P", "?", 1),
                ("P", "E", 0),
                ("P", "P", 0),
                ("none", "E", 0),
                ("none", "P", 0),
            ]
        );
    }

    #[test]
    fn a_thread_never_woken_has_zero_rows_not_none() {
        let slices = [woken(0, (0, 80), 0), woken(0, (90, 100), 0)];
        let run = RunTables::for_tests(&slices);
        let timeline = Timeline::new(run.all_slices);
        let placed = wakeup_placement(&run, &timeline, &workload_threads(&run));
        assert_eq!(placed.len(), 6);
        assert!(
            (placed.iter()).all(|r| r.wakeups == 0 && r.share == 0.0 && r.same_cpu_share == 0.0),
            "{placed:#?}"
        );
    }
}
