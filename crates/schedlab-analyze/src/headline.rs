//! Which CPU time heads a traced thread's figures: its slices, the kernel's accounting or /proc's.
//!
//! A trace says a thread's CPU time twice: its slices (`sched_slices`, perf sched timehist's run
//! times) and the kernel's own accounting (sched_stat_runtime, `sched_runtime`). They agree
//! where the trace saw every switch. Where it did not, on a CPU whose idle context is not traced
//! (`traces.idle_blind_cpus`), each slice runs on from the last switch the trace saw there and
//! takes in the idle time before it: the slices are too long, the kernel is right. So the figure
//! every headline shows (`cpu_time`, `residency`, `cpu_share`, the "why here" run times, and
//! through them the summary, the plots and `compare`) is, per thread:
//!
//! - its slices, where it ran on no idle-blind CPU, the kernel (where recorded) agrees with them
//!   to [`AGREEMENT`] and /proc does not contradict them (`trace_exceeds_proc`);
//! - otherwise the kernel's accounting, where the trace recorded it for the thread;
//! - otherwise /proc's (utime + stime, from the placement monitor), where it sampled the thread;
//! - otherwise its slices still, with the idle-blind CPUs they ran on said beside them.
//!
//! The kernel's sums have no time in them. A figure over part of a run (a phase, the trace
//! window) takes the thread's slices in that part, each CPU's scaled by the headline's ratio to
//! the slices on that CPU: the correction is spread over the slices it corrects.

use std::collections::BTreeMap;

use rayon::prelude::*;

use schedlab_tables::PlacementRow;

use crate::RunTables;
use crate::by_thread::ThreadSlices;

/// How far the kernel's accounting and the slices may differ (of the kernel's) before the kernel
/// heads: beyond it the trace missed something.
pub const AGREEMENT: f64 = 0.05;

/// Which figure heads a thread's CPU time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Headline {
    /// The trace's slices.
    Slices,
    /// The kernel's accounting in the trace (sched_stat_runtime).
    Kernel,
    /// /proc's utime + stime, from the placement monitor.
    Proc,
}

impl Headline {
    /// The word in the tables' `headline` columns and beside a figure in the summary.
    pub fn as_str(self) -> &'static str {
        match self {
            Headline::Slices => "slices",
            Headline::Kernel => "kernel",
            Headline::Proc => "proc",
        }
    }
}

/// One traced thread's CPU time, per CPU, as its slices, the kernel and its headline say.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadTime {
    pub headline: Headline,
    /// The headline's figure per CPU.
    pub per_cpu: BTreeMap<i32, i64>,
    /// The slices' run time per CPU.
    pub slices: BTreeMap<i32, i64>,
    /// The kernel's per CPU, where the trace recorded it for the thread.
    pub kernel: Option<BTreeMap<i32, i64>>,
    /// The CPUs it had slices on whose idle went untraced.
    pub idle_blind: Vec<i32>,
}

impl ThreadTime {
    /// The headline's part of the thread's slices on `cpu`, to apply to each of many slices
    /// there without looking the CPU up again. Time the headline has on a CPU where the thread
    /// had no slice (a few kernel updates are recorded by another CPU) counts in its totals
    /// only.
    pub fn scale(&self, cpu: i32) -> Scale {
        match (self.headline, self.slices.get(&cpu)) {
            (Headline::Slices, _) => Scale::WHOLE,
            (_, Some(&sliced)) if sliced > 0 => Scale {
                part: self.per_cpu.get(&cpu).copied().unwrap_or(0),
                whole: sliced,
            },
            _ => Scale::NONE,
        }
    }

    /// Per CPU, the part of `figure` (the headline's, or the kernel's) that falls in a part of
    /// the run in which the thread's slices ran `part` per CPU: each CPU's in proportion to its
    /// slices, and on a CPU without slices in proportion to all of them.
    pub fn within(
        &self,
        figure: &BTreeMap<i32, i64>,
        part: &BTreeMap<i32, i64>,
    ) -> BTreeMap<i32, i64> {
        let (part_total, sliced_total): (i64, i64) =
            (part.values().sum(), self.slices.values().sum());
        (figure.iter())
            .map(|(&cpu, &ns)| {
                let sliced = self.slices.get(&cpu).copied().unwrap_or(0);
                let inside = match sliced {
                    0 => ratio(ns, part_total, sliced_total),
                    _ => ratio(ns, part.get(&cpu).copied().unwrap_or(0), sliced),
                };
                (cpu, inside)
            })
            .collect()
    }
}

/// A fraction `part / whole` of a thread's slices on a CPU: its headline's share of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scale {
    part: i64,
    whole: i64,
}

impl Scale {
    /// All of it: the slices are the headline.
    pub const WHOLE: Scale = Scale { part: 1, whole: 1 };
    /// None of it: the thread had no slice time on the CPU.
    const NONE: Scale = Scale { part: 0, whole: 1 };

    /// The part of `ns`, rounded toward zero. All of it is `ns` itself, without the wide
    /// multiplication: most threads' slices are their headline, and this runs per slice.
    pub fn of(self, ns: i64) -> i64 {
        if self == Scale::WHOLE {
            return ns;
        }
        ratio(ns, self.part, self.whole)
    }
}

/// `ns * part / whole`, without overflow (0 for an empty whole).
fn ratio(ns: i64, part: i64, whole: i64) -> i64 {
    if whole <= 0 {
        return 0;
    }
    (ns as i128 * part as i128 / whole as i128) as i64
}

/// Whether a trace's run time is well above the thread's own CPU time by /proc over the same
/// span: by a quarter, and by more than /proc's granularity (10 ms ticks, over two samples).
pub(crate) fn trace_exceeds_proc(trace_ns: i64, proc_ns: i64) -> bool {
    const SLACK_NS: i64 = 50_000_000;
    trace_ns > proc_ns + proc_ns / 4 && trace_ns - proc_ns > SLACK_NS
}

/// The thread's CPU time by /proc between its first and last placement sample (`samples`, in
/// any order), and its run time in `slices` over the same span; `None` without two samples.
pub(crate) fn proc_check(
    samples: &[&PlacementRow],
    slices: ThreadSlices<'_>,
) -> Option<(i64, i64)> {
    // The earliest (the first of equals) and the latest (the last of equals).
    let first = samples.iter().min_by_key(|s| s.time_ns)?;
    let last = samples.iter().max_by_key(|s| s.time_ns)?;
    if last.time_ns <= first.time_ns {
        return None;
    }
    let span = (first.time_ns, last.time_ns);
    let traced = slices.iter().map(|s| s.overlap_ns(span)).sum();
    Some((last.cpu_time_ns - first.cpu_time_ns, traced))
}

/// /proc's CPU time of a thread per CPU: what it gained between two samples, booked on the CPU
/// of the later one (its first sample books what it had run by then).
pub(crate) fn proc_per_cpu<'a>(
    samples: impl IntoIterator<Item = &'a PlacementRow>,
) -> BTreeMap<i32, i64> {
    let mut per_cpu = BTreeMap::new();
    for gain in schedlab_tables::placement::gains(samples) {
        *per_cpu.entry(gain.sample.cpu).or_default() += gain.gained_ns;
    }
    per_cpu
}

/// The CPU time of every workload thread of a run's trace, by tid.
#[derive(Debug, Default)]
pub struct Headlines(BTreeMap<i32, ThreadTime>);

impl Headlines {
    /// Decides every traced workload thread's headline over the whole run (see the module
    /// documentation).
    pub fn of(run: &RunTables<'_>) -> Headlines {
        let mut kernel: BTreeMap<i32, BTreeMap<i32, i64>> = BTreeMap::new();
        for r in run.sched_runtime.iter().filter(|r| r.events > 0) {
            *kernel.entry(r.tid).or_default().entry(r.cpu).or_default() += r.runtime_ns;
        }
        let mut samples: BTreeMap<i32, Vec<&PlacementRow>> = BTreeMap::new();
        for &p in &run.placement {
            samples.entry(p.tid).or_default().push(p);
        }
        let threads: Vec<_> = (run.threads.threads())
            .map(|(tid, slices)| (tid, slices, kernel.remove(&tid)))
            .collect();
        let threads = (threads.into_par_iter())
            .map(|(tid, slices, kernel)| {
                let samples = samples.get(&tid).map_or(&[][..], Vec::as_slice);
                (tid, thread_time(run, slices, kernel, samples))
            })
            .collect();
        Headlines(threads)
    }

    pub fn get(&self, tid: i32) -> Option<&ThreadTime> {
        self.0.get(&tid)
    }
}

fn thread_time(
    run: &RunTables<'_>,
    slices: ThreadSlices<'_>,
    kernel: Option<BTreeMap<i32, i64>>,
    samples: &[&PlacementRow],
) -> ThreadTime {
    let sliced = slices.run_ns_by_cpu();
    let idle_blind: Vec<i32> = (sliced.iter())
        .filter(|&(cpu, &ns)| ns > 0 && run.idle_blind_cpus.contains(cpu))
        .map(|(&cpu, _)| cpu)
        .collect();
    let sliced_total: i64 = sliced.values().sum();
    let disagrees = kernel.as_ref().is_some_and(|k| {
        let kernel_total: i64 = k.values().sum();
        (sliced_total - kernel_total).abs() as f64 > AGREEMENT * kernel_total as f64
    });
    let contradicted = proc_check(samples, slices)
        .is_some_and(|(proc_ns, trace_ns)| trace_exceeds_proc(trace_ns, proc_ns));
    let trusted = idle_blind.is_empty() && !disagrees && !contradicted;
    let (headline, per_cpu) = match (&kernel, samples) {
        _ if trusted => (Headline::Slices, sliced.clone()),
        (Some(k), _) => (Headline::Kernel, k.clone()),
        (None, [_, ..]) => (Headline::Proc, proc_per_cpu(samples.iter().copied())),
        (None, []) => (Headline::Slices, sliced.clone()),
    };
    ThreadTime {
        headline,
        per_cpu,
        slices: sliced,
        kernel,
        idle_blind,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use schedlab_tables::SchedSliceRow;

    use crate::events::Runtime as SchedRuntimeRow;

    use super::*;
    use crate::from_sched::tests::slice;

    fn runtime(tid: i32, cpu: i32, runtime_ns: i64) -> SchedRuntimeRow {
        crate::events::Runtime {
            cpu,
            tid,
            runtime_ns,
            events: 1,
        }
    }

    fn sample(tid: i32, time_ns: i64, cpu: i32, cpu_time_ns: i64) -> PlacementRow {
        PlacementRow {
            run_id: "r".into(),
            time_ns,
            pid: tid,
            tid,
            comm: "w".into(),
            cpu,
            cpu_time_ns,
            workload: Some("w".into()),
        }
    }

    /// A thread's tid, headline, figure per CPU and idle-blind CPUs.
    type Seen = (i32, &'static str, Vec<(i32, i64)>, Vec<i32>);

    /// Each thread's headline and its figure per CPU, on a run whose cpu 1 is idle-blind when
    /// `blind`.
    fn headlines(
        slices: &[SchedSliceRow],
        runtime: &[crate::events::Runtime],
        samples: &[PlacementRow],
        blind: bool,
    ) -> Vec<Seen> {
        let run = RunTables {
            sched_runtime: runtime,
            placement: samples.iter().collect(),
            idle_blind_cpus: if blind {
                BTreeSet::from([1])
            } else {
                BTreeSet::new()
            },
            ..RunTables::for_tests(slices)
        };
        let headlines = Headlines::of(&run);
        (headlines.0.iter())
            .map(|(&tid, t)| {
                let per_cpu = t.per_cpu.iter().map(|(&c, &ns)| (c, ns)).collect();
                (tid, t.headline.as_str(), per_cpu, t.idle_blind.clone())
            })
            .collect()
    }

    #[test]
    fn the_kernel_heads_where_a_cpu_is_idle_blind_or_the_two_disagree() {
        // Thread 1 on cpu 0 (100 ns, the kernel 97: within 5 %), thread 2 on idle-blind cpu 1
        // (100 ns, the kernel 40), thread 3 on cpu 0 (100 ns, the kernel 90: 11 % off).
        let slices = [
            slice(1, 0, 0, 100),
            slice(2, 1, 0, 100),
            slice(3, 0, 100, 200),
        ];
        let runtime = [
            runtime(1, 0, 97),
            runtime(2, 1, 30),
            runtime(2, 0, 10),
            runtime(3, 0, 90),
        ];
        assert_eq!(
            headlines(&slices, &runtime, &[], true),
            [
                (1, "slices", vec![(0, 100)], vec![]),
                (2, "kernel", vec![(0, 10), (1, 30)], vec![1]),
                (3, "kernel", vec![(0, 90)], vec![]),
            ]
        );
        // The same on a machine whose idle is traced: thread 2's 60 % is still a disagreement.
        assert_eq!(headlines(&slices, &runtime, &[], false)[1].1, "kernel");
    }

    #[test]
    fn without_the_kernels_accounting_proc_heads_else_the_slices_marked() {
        // Thread 2 on idle-blind cpu 1, no sched_stat_runtime in the trace; /proc sampled it at
        // 50 ns (10 ns of CPU so far, on cpu 1) and at 100 ns (35 ns, on cpu 1).
        let slices = [slice(1, 0, 0, 100), slice(2, 1, 0, 100)];
        let samples = [sample(2, 100, 1, 35), sample(2, 50, 1, 10)];
        assert_eq!(
            headlines(&slices, &[], &samples, true),
            [
                (1, "slices", vec![(0, 100)], vec![]),
                (2, "proc", vec![(1, 35)], vec![1]),
            ]
        );
        assert_eq!(
            headlines(&slices, &[], &[], true)[1],
            (2, "slices", vec![(1, 100)], vec![1])
        );
    }

    #[test]
    fn proc_heads_where_it_contradicts_the_slices() {
        // Thread 1 ran 0..400 ms by its slices; /proc saw it gain 100 ms between 100 and 300 ms.
        const MS: i64 = 1_000_000;
        let slices = [slice(1, 0, 0, 400 * MS)];
        let samples = [
            sample(1, 100 * MS, 0, 50 * MS),
            sample(1, 300 * MS, 0, 150 * MS),
        ];
        assert_eq!(
            headlines(&slices, &[], &samples, false),
            [(1, "proc", vec![(0, 150 * MS)], vec![])]
        );
    }

    #[test]
    fn a_trace_exceeds_proc_by_a_quarter_and_by_more_than_procs_ticks() {
        assert!(trace_exceeds_proc(2_321_000_000, 770_000_000));
        assert!(
            !trace_exceeds_proc(800_000_000, 770_000_000),
            "within a quarter"
        );
        assert!(
            !trace_exceeds_proc(40_000_000, 10_000_000),
            "within /proc's ticks"
        );
    }

    #[test]
    fn a_part_of_the_run_gets_the_headline_in_proportion_to_its_slices() {
        let time = ThreadTime {
            headline: Headline::Kernel,
            per_cpu: BTreeMap::from([(0, 30), (1, 50), (2, 4)]),
            slices: BTreeMap::from([(0, 60), (1, 200)]),
            kernel: None,
            idle_blind: vec![1],
        };
        // Half of its slices on cpu 0 and half of those on cpu 1 fall in the part (130 of 260
        // ns in all), so half of cpu 2's too, where it had no slice.
        let part = BTreeMap::from([(0, 30), (1, 100)]);
        assert_eq!(
            time.within(&time.per_cpu, &part),
            BTreeMap::from([(0, 15), (1, 25), (2, 2)])
        );
        assert_eq!((time.scale(1).of(100), time.scale(2).of(100)), (25, 0));
    }
}
