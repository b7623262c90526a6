//! What a workload thread's placement cost it: time on a slower class while a faster CPU it
//! may use was idle, or ran lower-priority work (seed page 8: openssl on E and LP E cores while
//! nice-19 workers held the P-cores), and time it waited while an allowed CPU sat idle (the
//! per-thread form of SchedViz's "idle while overloaded").
//!
//! Each figure is a union of time spans, so a thread on a slower CPU while two faster CPUs
//! idle counts that time once; the rows list which CPUs took part.

use std::collections::{BTreeMap, BTreeSet};

use schedlab_tables::PlacementCostRow;
use schedlab_topology::{format_cpu_list, parse_cpu_list};

use crate::RunTables;
use crate::by_thread::ThreadSlices;
use crate::headline::ThreadTime;
use crate::timeline::{Cursor, Timeline, union_ns};

/// The CPUs a thread of process `pid` of `workload` may use, and how that is known: its
/// process's binding, or that of every instance of the workload when the thread belongs to a
/// child process (children inherit the binding). Without a process row, or in an imported run
/// (whose bindings nobody recorded): every CPU, `unknown`.
fn allowed_cpus(run: &RunTables<'_>, workload: &str, pid: i32) -> (BTreeSet<i32>, &'static str) {
    let every_cpu = || run.classes.cpus().collect::<BTreeSet<i32>>();
    if run.imported {
        return (every_cpu(), "unknown");
    }
    let own: Vec<_> = match run.processes.iter().find(|p| p.pid == pid) {
        Some(p) => vec![*p],
        None => (run.processes.iter())
            .filter(|p| p.workload == workload)
            .copied()
            .collect(),
    };
    let bindings: BTreeSet<Option<&str>> = own.iter().map(|p| p.affinity.as_deref()).collect();
    match bindings.into_iter().collect::<Vec<_>>()[..] {
        [None] => (every_cpu(), "unbound"),
        [Some(list)] => match parse_cpu_list(list) {
            Ok(cpus) => (cpus.into_iter().map(|c| c as i32).collect(), "affinity"),
            Err(_) => (every_cpu(), "unknown"),
        },
        _ => (every_cpu(), "unknown"),
    }
}

/// A workload thread of a run: its slices in time order and the CPUs it may use, resolved once
/// for both "why here" aggregates.
pub struct WorkloadThread<'a> {
    pub slices: ThreadSlices<'a>,
    pub workload: &'a str,
    pub allowed: BTreeSet<i32>,
    /// How `allowed` is known (see [`PlacementCostRow::allowed_source`]).
    pub allowed_source: &'static str,
    /// Its CPU time by its slices and by its headline figure, which its run times are scaled
    /// to (see [`crate::headline`]).
    pub time: Option<ThreadTime>,
}

/// The run's workload threads, by tid.
pub fn workload_threads<'r>(run: &'r RunTables<'_>) -> Vec<WorkloadThread<'r>> {
    let headlines = run.headlines();
    (run.threads.threads())
        .map(|(tid, slices)| {
            let first = slices.get(0);
            let workload: &'r str = first.workload().unwrap_or_default();
            let (allowed, allowed_source) = allowed_cpus(run, workload, first.pid());
            WorkloadThread {
                slices,
                workload,
                allowed,
                allowed_source,
                time: headlines.get(tid).cloned(),
            }
        })
        .collect()
}

/// The priority a thread ran at most of the time (by slices), if the trace says.
pub(crate) fn usual_prio(slices: ThreadSlices<'_>) -> Option<i32> {
    let mut counts: BTreeMap<i32, usize> = BTreeMap::new();
    for prio in slices.iter().filter_map(|s| s.prio()) {
        *counts.entry(prio).or_default() += 1;
    }
    (counts.into_iter())
        .max_by_key(|&(prio, n)| (n, std::cmp::Reverse(prio)))
        .map(|(p, _)| p)
}

/// Time spans, and the CPUs they came from.
#[derive(Default)]
struct Spans {
    spans: Vec<(i64, i64)>,
    cpus: BTreeSet<u32>,
    /// The CPU of the last span: most spans come from the CPU the one before came from, which
    /// is then not looked up in `cpus` again.
    last_cpu: Option<i32>,
}

impl Spans {
    fn add(&mut self, cpu: i32, (start, end): (i64, i64)) {
        if end > start {
            self.spans.push((start, end));
            if self.last_cpu != Some(cpu) {
                self.cpus.insert(cpu as u32);
                self.last_cpu = Some(cpu);
            }
        }
    }

    fn total(self) -> (i64, String) {
        let cpus: Vec<u32> = self.cpus.into_iter().collect();
        (union_ns(self.spans), format_cpu_list(&cpus))
    }
}

fn share(part: i64, whole: i64) -> f64 {
    if whole > 0 {
        part as f64 / whole as f64
    } else {
        0.0
    }
}

/// Idle time of a CPU while a workload thread that may run there waited, runnable, on a CPU of
/// the same class or a slower one: per CPU, the spans and the workload (what the CPU timeline
/// marks).
pub type IdleWhileWaiting<'a> = BTreeMap<i32, Vec<((i64, i64), &'a str)>>;

/// One row per workload thread of `run` that ran in the trace, and the idle time beside their
/// waits.
pub fn placement_cost<'a>(
    run: &RunTables<'_>,
    timeline: &Timeline<'_>,
    threads: &[WorkloadThread<'a>],
) -> (Vec<PlacementCostRow>, IdleWhileWaiting<'a>) {
    let mut marks = IdleWhileWaiting::new();
    let rows = (threads.iter())
        .map(|thread| thread_cost(run, &mut timeline.cursor(), thread, &mut marks))
        .collect();
    (rows, marks)
}

fn thread_cost<'a>(
    run: &RunTables<'_>,
    timeline: &mut Cursor<'_, '_>,
    thread: &WorkloadThread<'a>,
    marks: &mut IdleWhileWaiting<'a>,
) -> PlacementCostRow {
    let WorkloadThread {
        slices,
        workload,
        allowed,
        allowed_source,
        time,
    } = thread;
    let (first, workload) = (slices.get(0), *workload);
    let prio = usual_prio(*slices);
    let rank = |cpu: i32| run.classes.rank(cpu);
    let fastest_allowed = allowed.iter().filter_map(|&c| rank(c)).min();
    // Walked for every wait and slice, so as a list; and the marks of each allowed CPU, by its
    // place in it, handed to `marks` once the thread is done.
    let allowed: Vec<i32> = allowed.iter().copied().collect();
    let mut own_marks: Vec<Vec<((i64, i64), &'a str)>> = vec![Vec::new(); allowed.len()];
    let mut wait_ns = 0;
    // Its run time per CPU by its slices, and by its headline figure (see `crate::headline`).
    let sliced = slices.run_ns_by_cpu();
    let (mut idle, mut lower_prio, mut wait_idle) =
        (Spans::default(), Spans::default(), Spans::default());
    for s in slices.iter() {
        let waits =
            [s.sched_delay_ns(), s.preempt_wait_ns()].map(|w| (s.start_ns() - w, s.start_ns()));
        for wait in waits.into_iter().filter(|(a, b)| b > a) {
            wait_ns += wait.1 - wait.0;
            for (place, &cpu) in allowed.iter().enumerate().filter(|&(_, &c)| c != s.cpu()) {
                for (other, part) in timeline.during(cpu, wait) {
                    if other.is_idle() {
                        wait_idle.add(cpu, part);
                        if run.classes.as_fast(cpu, s.cpu()) {
                            own_marks[place].push((part, workload));
                        }
                    }
                }
            }
        }
        let (Some(own), Some(fastest)) = (rank(s.cpu()), fastest_allowed) else {
            continue;
        };
        if own <= fastest {
            continue;
        }
        let span = (s.start_ns(), s.end_ns());
        for &cpu in allowed
            .iter()
            .filter(|&&c| rank(c).is_some_and(|r| r < own))
        {
            for (other, part) in timeline.during(cpu, span) {
                if other.is_idle() {
                    idle.add(cpu, part);
                } else if let (Some(theirs), Some(mine)) = (other.prio(), prio)
                    && theirs > mine
                {
                    lower_prio.add(cpu, part);
                }
            }
        }
    }
    for (cpu, own) in allowed.iter().zip(own_marks) {
        if !own.is_empty() {
            marks.entry(*cpu).or_default().extend(own);
        }
    }
    let ran = time.as_ref().map_or(&sliced, |t| &t.per_cpu);
    let slower =
        |cpu: &i32| matches!((rank(*cpu), fastest_allowed), (Some(own), Some(f)) if own > f);
    let run_ns: i64 = ran.values().sum();
    let slower_run_ns: i64 = ran
        .iter()
        .filter(|(c, _)| slower(c))
        .map(|(_, ns)| ns)
        .sum();
    let slower_sliced_ns: i64 = sliced
        .iter()
        .filter(|(c, _)| slower(c))
        .map(|(_, ns)| ns)
        .sum();
    // Spans beside its slower slices, to the measure of its headline's run time there.
    let to_headline = |ns: i64| match slower_sliced_ns {
        0 => ns,
        sliced => (ns as i128 * slower_run_ns as i128 / sliced as i128) as i64,
    };
    let (faster_idle_ns, faster_idle_cpus) = idle.total();
    let (lower_prio_ns, faster_lower_prio_cpus) = lower_prio.total();
    let (faster_idle_ns, lower_prio_ns) = (to_headline(faster_idle_ns), to_headline(lower_prio_ns));
    let (wait_idle_ns, wait_idle_cpus) = wait_idle.total();
    let allowed_list: Vec<u32> = allowed.iter().map(|&c| c as u32).collect();
    PlacementCostRow {
        run_id: run.run_id.to_owned(),
        workload: workload.to_owned(),
        pid: first.pid(),
        tid: first.tid(),
        comm: first.comm().to_string(),
        prio,
        allowed_cpus: format_cpu_list(&allowed_list),
        allowed_source: (*allowed_source).to_owned(),
        run_ns,
        slower_run_ns,
        faster_idle_ns,
        faster_idle_share: share(faster_idle_ns, run_ns),
        faster_idle_cpus,
        faster_lower_prio_ns: prio.map(|_| lower_prio_ns),
        faster_lower_prio_share: prio.map(|_| share(lower_prio_ns, run_ns)),
        faster_lower_prio_cpus,
        wait_ns,
        wait_idle_ns,
        wait_idle_share: share(wait_idle_ns, wait_ns),
        wait_idle_cpus,
        lost_events: Some(crate::from_sched::lost_between(
            &run.losses,
            first.start_ns(),
            slices
                .iter()
                .map(|s| s.end_ns())
                .max()
                .unwrap_or(first.end_ns()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use schedlab_tables::{ProcessRow, SchedSliceRow};

    use super::*;
    use crate::timeline::tests::slice;

    /// cpu 0 (P): idle 0..30, a nice-19 task 30..70, a prio-100 task 70..100, the workload
    /// thread 100..150 after waiting 15 ns. cpu 1 (E): the workload thread 0..80, idle 80..100.
    fn slices() -> Vec<SchedSliceRow> {
        let mut woken = slice(0, 9, (100, 150), 120, Some("w"));
        woken.sched_delay_ns = 15;
        vec![
            slice(0, 0, (0, 30), 0, None),
            slice(0, 7, (30, 70), 139, None),
            slice(0, 8, (70, 100), 100, None),
            woken,
            slice(1, 9, (0, 80), 120, Some("w")),
            slice(1, 0, (80, 100), 0, None),
        ]
    }

    fn process(affinity: Option<&str>) -> ProcessRow {
        ProcessRow {
            run_id: "r".into(),
            workload: "w".into(),
            instance: 0,
            pid: 9,
            start_ns: 0,
            end_ns: Some(150),
            exit_code: Some(0),
            nice: 0,
            affinity: affinity.map(str::to_owned),
            argv: vec![],
        }
    }

    #[test]
    fn time_on_the_slower_class_is_split_by_what_the_faster_cpu_did() {
        let slices = slices();
        let run = RunTables::for_tests(&slices);
        let timeline = Timeline::new(run.all_slices);
        let (rows, marks) = placement_cost(&run, &timeline, &workload_threads(&run));
        let [row] = &rows[..] else {
            panic!("one workload thread");
        };
        assert_eq!(
            (row.allowed_cpus.as_str(), row.allowed_source.as_str()),
            ("0-1", "unknown")
        );
        assert_eq!((row.run_ns, row.slower_run_ns), (130, 80));
        // cpu 0 idled 0..30 and ran nice-19 work 30..70 while the thread ran on the E CPU; the
        // prio-100 task at 70..80 had precedence.
        assert_eq!(
            (row.faster_idle_ns, row.faster_idle_cpus.as_str()),
            (30, "0")
        );
        assert_eq!(row.faster_lower_prio_ns, Some(40));
        assert_eq!(row.faster_idle_share, 30.0 / 130.0);
        // It waited 85..100 for cpu 0 while cpu 1 sat idle.
        assert_eq!(
            (row.wait_ns, row.wait_idle_ns, row.wait_idle_cpus.as_str()),
            (15, 15, "1")
        );
        // cpu 1 is slower than the P CPU the thread waited for: its idle time is not marked.
        assert!(marks.is_empty(), "{marks:?}");
    }

    #[test]
    fn idle_time_of_an_equal_or_faster_cpu_beside_a_wait_is_marked() {
        // The thread waits 20..40 to run on the E CPU while the P CPU idles 0..30.
        let mut woken = slice(1, 9, (40, 60), 120, Some("w"));
        woken.sched_delay_ns = 20;
        let slices = [
            slice(0, 0, (0, 30), 0, None),
            slice(0, 7, (30, 60), 120, None),
            woken,
        ];
        let run = RunTables::for_tests(&slices);
        let (rows, marks) = placement_cost(
            &run,
            &Timeline::new(run.all_slices),
            &workload_threads(&run),
        );
        assert_eq!((rows[0].wait_ns, rows[0].wait_idle_ns), (20, 10));
        assert_eq!(marks, IdleWhileWaiting::from([(0, vec![((20, 30), "w")])]));
    }

    #[test]
    fn a_thread_bound_to_the_slower_class_loses_nothing_to_it() {
        let slices = slices();
        let processes = [process(Some("1"))];
        let run = RunTables {
            processes: processes.iter().collect(),
            ..RunTables::for_tests(&slices)
        };
        let timeline = Timeline::new(run.all_slices);
        let row = &placement_cost(&run, &timeline, &workload_threads(&run)).0[0];
        assert_eq!(
            (row.allowed_cpus.as_str(), row.allowed_source.as_str()),
            ("1", "affinity")
        );
        assert_eq!((row.slower_run_ns, row.faster_idle_ns), (0, 0));
        assert_eq!(row.faster_lower_prio_ns, Some(0));

        let unbound = [process(None)];
        let run = RunTables {
            processes: unbound.iter().collect(),
            ..RunTables::for_tests(&slices)
        };
        let row = &placement_cost(&run, &timeline, &workload_threads(&run)).0[0];
        assert_eq!(
            (row.allowed_source.as_str(), row.faster_idle_ns),
            ("unbound", 30)
        );
    }
}
