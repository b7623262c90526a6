//! Scheduling delay per thread and per workload: the distribution of the wakeup delays
//! (`sched_delay_ns`) and, apart from them, of the waits after a preemption (`preempt_wait_ns`).
//!
//! Percentiles are nearest rank (the smallest value that at least p % of the values do not
//! exceed; numpy's `method="inverted_cdf"`), so every figure is a delay that happened, in whole
//! nanoseconds. A workload's figures come from all its threads' delays together, not from its
//! threads' rows.

use std::collections::BTreeMap;

use schedlab_tables::{SchedDelayCdfRow, SchedDelayRow, SchedDelayWorkloadRow};

use crate::by_thread::ThreadSlices;
use crate::slices::Slice;

use crate::thread::ThreadKey;

/// Values in sorted runs, read in the order of all of them without merging the runs into one:
/// a thread's delays are one run, a workload's are its threads' runs. A workload's figures
/// then cost no copy and no sort of its delays beside its threads'.
#[derive(Clone, Copy)]
struct Sorted<'a> {
    runs: &'a [Vec<i64>],
}

impl<'a> Sorted<'a> {
    /// `runs`, each sorted.
    fn of(runs: &'a [Vec<i64>]) -> Sorted<'a> {
        debug_assert!(runs.iter().all(|run| run.is_sorted()));
        Sorted { runs }
    }

    fn len(self) -> usize {
        self.runs.iter().map(Vec::len).sum()
    }

    fn sum(self) -> i64 {
        self.runs.iter().flatten().sum()
    }

    fn min(self) -> Option<i64> {
        self.runs
            .iter()
            .filter_map(|run| run.first())
            .min()
            .copied()
    }

    fn max(self) -> Option<i64> {
        self.runs.iter().filter_map(|run| run.last()).max().copied()
    }

    /// How many of the values are at most `value`.
    fn at_most(self, value: i64) -> usize {
        (self.runs.iter())
            .map(|run| run.partition_point(|&v| v <= value))
            .sum()
    }

    /// The `rank`th smallest value (from 1; at most `len`): the smallest value that `rank` of
    /// the values do not exceed, found by halving the span of the values.
    fn ranked(self, rank: usize) -> Option<i64> {
        let (mut low, mut high) = (self.min()?, self.max()?);
        while low < high {
            let middle = ((i128::from(low) + i128::from(high)) >> 1) as i64;
            match self.at_most(middle) >= rank {
                true => high = middle,
                false => low = middle + 1,
            }
        }
        Some(low)
    }
}

/// The nearest-rank `p`-th percentile (`p` in 1..=100) of `sorted`; `None` when it is empty.
fn percentile(sorted: Sorted<'_>, p: usize) -> Option<i64> {
    nearest_rank(sorted, p, 100)
}

/// The nearest-rank value at the share `parts / whole` of `sorted` (the smallest value at 0);
/// `None` when it is empty. Integer ranks, so 99.9 % is exactly 999 of 1000.
fn nearest_rank(sorted: Sorted<'_>, parts: usize, whole: usize) -> Option<i64> {
    let rank = (parts * sorted.len()).div_ceil(whole).max(1);
    sorted.ranked(rank)
}

/// The CDF's points in thousandths of the wakeups: every percent, and 99.9 %.
fn cdf_per_mille() -> impl Iterator<Item = usize> {
    (0..=1000).filter(|k| k % 10 == 0 || *k == 999)
}

/// The `sched_delay_cdf` rows of a workload's `sorted` wakeup delays (none without any).
fn cdf_rows(run_id: &str, workload: &str, sorted: Sorted<'_>) -> Vec<SchedDelayCdfRow> {
    let wakeups = sorted.len() as i64;
    cdf_per_mille()
        .filter_map(|k| {
            Some(SchedDelayCdfRow {
                run_id: run_id.to_owned(),
                workload: workload.to_owned(),
                share: k as f64 / 1000.0,
                delay_ns: nearest_rank(sorted, k, 1000)?,
                wakeups,
            })
        })
        .collect()
}

/// Count, mean, p50/p90/p99 and maximum of some durations.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Spread {
    count: i64,
    mean: Option<f64>,
    p50: Option<i64>,
    p90: Option<i64>,
    p99: Option<i64>,
    max: Option<i64>,
}

impl Spread {
    fn of(values: Sorted<'_>) -> Spread {
        let count = values.len();
        Spread {
            count: count as i64,
            mean: (count > 0).then(|| values.sum() as f64 / count as f64),
            p50: percentile(values, 50),
            p90: percentile(values, 90),
            p99: percentile(values, 99),
            max: values.max(),
        }
    }
}

/// One thread's wakeup delays and waits after a preemption (each > 0), from its slices.
fn delays_of(slices: ThreadSlices<'_>) -> (Vec<i64>, Vec<i64>) {
    let positive = |value: fn(Slice<'_>) -> i64| {
        (slices.iter())
            .map(value)
            .filter(|d| *d > 0)
            .collect::<Vec<i64>>()
    };
    (
        positive(|s| s.sched_delay_ns()),
        positive(|s| s.preempt_wait_ns()),
    )
}

/// A workload's delays gathered over its threads.
#[derive(Default)]
struct Gathered {
    threads: i64,
    /// Each thread's, sorted.
    delays: Vec<Vec<i64>>,
    waits: Vec<Vec<i64>>,
    lost_events: i64,
}

/// The `sched_delay` rows of one run's threads, and the `sched_delay_workloads` rows of their
/// workloads.
#[derive(Default)]
pub(crate) struct Delays {
    workloads: BTreeMap<String, Gathered>,
}

/// One thread's `sched_delay` row, and its delays for its workload's row (see [`Delays`]).
pub(crate) struct ThreadDelays {
    row: SchedDelayRow,
    delays: Vec<i64>,
    waits: Vec<i64>,
}

impl ThreadDelays {
    /// The figures of thread `key`'s wakeup delays and waits after preemption over `slices`.
    pub(crate) fn of(
        run_id: &str,
        key: &ThreadKey,
        slices: ThreadSlices<'_>,
        lost_events: i64,
    ) -> ThreadDelays {
        let (mut delays, mut waits) = delays_of(slices);
        delays.sort_unstable();
        waits.sort_unstable();
        let one = |run: &Vec<i64>| Spread::of(Sorted::of(std::slice::from_ref(run)));
        let (d, w) = (one(&delays), one(&waits));
        let row = SchedDelayRow {
            run_id: run_id.to_owned(),
            workload: key.workload.clone(),
            pid: key.pid,
            tid: key.tid,
            comm: key.comm.clone(),
            wakeups: d.count,
            mean_ns: d.mean,
            max_ns: d.max,
            lost_events: Some(lost_events),
            p50_ns: d.p50,
            p90_ns: d.p90,
            p99_ns: d.p99,
            preemptions: w.count,
            preempt_wait_mean_ns: w.mean,
            preempt_wait_p50_ns: w.p50,
            preempt_wait_p90_ns: w.p90,
            preempt_wait_p99_ns: w.p99,
            preempt_wait_max_ns: w.max,
        };
        ThreadDelays { row, delays, waits }
    }
}

impl Delays {
    /// The thread's `sched_delay` row; its delays are kept for its workload's row. Threads
    /// are added in the order their rows go in.
    pub(crate) fn thread(&mut self, thread: ThreadDelays) -> SchedDelayRow {
        let row = thread.row;
        let gathered = self.workloads.entry(row.workload.clone()).or_default();
        gathered.threads += 1;
        gathered.delays.push(thread.delays);
        gathered.waits.push(thread.waits);
        gathered.lost_events += row.lost_events.unwrap_or(0);
        row
    }

    /// One row per workload of the threads seen so far, and the points of each workload's
    /// wakeup-delay CDF.
    pub(crate) fn workload_rows(
        self,
        run_id: &str,
    ) -> (Vec<SchedDelayWorkloadRow>, Vec<SchedDelayCdfRow>) {
        let mut cdf = Vec::new();
        let rows = (self.workloads.into_iter())
            .map(|(workload, g)| {
                let (delays, waits) = (Sorted::of(&g.delays), Sorted::of(&g.waits));
                let (d, w) = (Spread::of(delays), Spread::of(waits));
                cdf.extend(cdf_rows(run_id, &workload, delays));
                SchedDelayWorkloadRow {
                    run_id: run_id.to_owned(),
                    workload,
                    threads: g.threads,
                    wakeups: d.count,
                    mean_ns: d.mean,
                    p50_ns: d.p50,
                    p90_ns: d.p90,
                    p99_ns: d.p99,
                    max_ns: d.max,
                    preemptions: w.count,
                    preempt_wait_mean_ns: w.mean,
                    preempt_wait_p50_ns: w.p50,
                    preempt_wait_p90_ns: w.p90,
                    preempt_wait_p99_ns: w.p99,
                    preempt_wait_max_ns: w.max,
                    source: "sched".to_owned(),
                    lost_events: Some(g.lost_events),
                }
            })
            .collect();
        (rows, cdf)
    }
}

#[cfg(test)]
mod tests {
    use schedlab_spec::Window;

    use schedlab_tables::SchedSliceRow;

    use super::*;
    use crate::RunTables;
    use crate::from_sched::aggregate;
    use crate::from_sched::tests::slice;

    /// Percentiles against numpy 2.4.6, an independent implementation of the same definition:
    /// `np.percentile(x, [50, 90, 99], method="inverted_cdf")` printed the expected values
    /// (its default, linear interpolation, gives 176400 and 194040 for the fourth case).
    #[test]
    fn percentiles_agree_with_numpys_inverted_cdf() {
        let check = |values: Vec<i64>, expected: [i64; 3]| {
            let mut sorted = values.clone();
            sorted.sort_unstable();
            let got = [50, 90, 99].map(|p| percentile(Sorted::of(&[sorted.clone()]), p).unwrap());
            assert_eq!(got, expected, "{values:?}");
        };
        check(vec![7], [7, 7, 7]);
        check(vec![5, 1], [1, 5, 5]);
        check((1..=10).map(|i| i * 10).collect(), [50, 90, 100]);
        // x = [(28 - i) * 7000 for i in range(29)]
        check(
            (0..29).map(|i| (28 - i) * 7000).collect(),
            [98000, 182000, 196000],
        );
        // x = [i * i % 1009 for i in range(1000)]
        check((0..1000).map(|i| i * i % 1009).collect(), [506, 922, 1003]);
        assert_eq!(percentile(Sorted::of(&[]), 50), None);
    }

    proptest::proptest! {
        /// Every rank of the values of several sorted runs is that rank of all of them sorted
        /// together, whatever the values.
        #[test]
        fn a_rank_of_sorted_runs_is_that_of_their_values_merged(
            runs in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::prop_oneof![0i64..20, proptest::num::i64::ANY],
                    0..20,
                ),
                0..6,
            ),
        ) {
            let runs: Vec<Vec<i64>> = (runs.into_iter())
                .map(|mut run| {
                    run.sort_unstable();
                    run
                })
                .collect();
            let mut all = runs.concat();
            all.sort_unstable();
            let sorted = Sorted::of(&runs);
            proptest::prop_assert_eq!(sorted.len(), all.len());
            for rank in 1..=all.len() {
                proptest::prop_assert_eq!(sorted.ranked(rank), Some(all[rank - 1]));
            }
            proptest::prop_assert_eq!(sorted.max(), all.last().copied());
        }
    }

    /// A slice of `tid` with a wakeup delay and a wait after a preemption.
    fn waited(tid: i32, start_ns: i64, delay: i64, preempt_wait: i64) -> SchedSliceRow {
        let mut s = slice(tid, 0, start_ns, start_ns + 10);
        (s.sched_delay_ns, s.preempt_wait_ns) = (delay, preempt_wait);
        s
    }

    #[test]
    fn threads_and_their_workload_get_the_distribution_of_both_waits() {
        // Thread 1: delays 10, 20, 30, 40 and one wait after a preemption, 7 (its slice had no
        // wakeup). Thread 2: delay 100, and waits 1 and 3.
        let slices = [
            waited(1, 100, 10, 0),
            waited(1, 200, 20, 0),
            waited(1, 300, 30, 0),
            waited(1, 400, 40, 0),
            waited(1, 500, 0, 7),
            waited(2, 150, 100, 0),
            waited(2, 250, 0, 1),
            waited(2, 350, 0, 3),
        ];
        let run = RunTables {
            trace_window: Some((305, 1000)),
            ..RunTables::for_tests(&slices)
        };
        let out = aggregate(&run, 0, None);
        let t1 = &out.sched_delay[0];
        assert_eq!(
            (
                t1.wakeups, t1.mean_ns, t1.p50_ns, t1.p90_ns, t1.p99_ns, t1.max_ns
            ),
            (4, Some(25.0), Some(20), Some(40), Some(40), Some(40))
        );
        assert_eq!(
            (
                t1.preemptions,
                t1.preempt_wait_mean_ns,
                t1.preempt_wait_p50_ns
            ),
            (1, Some(7.0), Some(7))
        );
        let t2 = &out.sched_delay[1];
        assert_eq!(
            (
                t2.preemptions,
                t2.preempt_wait_p50_ns,
                t2.preempt_wait_max_ns
            ),
            (2, Some(1), Some(3))
        );

        // The workload: delays 10, 20, 30, 40, 100 and waits 1, 3, 7 together.
        let [w] = &out.sched_delay_workloads[..] else {
            panic!("one workload: {:?}", out.sched_delay_workloads)
        };
        assert_eq!((w.workload.as_str(), w.threads, w.wakeups), ("w", 2, 5));
        assert_eq!(
            (w.mean_ns, w.p50_ns, w.p90_ns, w.p99_ns, w.max_ns),
            (Some(40.0), Some(30), Some(100), Some(100), Some(100))
        );
        assert_eq!(
            (w.preemptions, w.preempt_wait_mean_ns),
            (3, Some(11.0 / 3.0))
        );
        // Its CDF: 102 points from the smallest delay to the largest, 99.9 % among them.
        let cdf = &out.sched_delay_cdf;
        let at = |share: f64| {
            let point = cdf.iter().find(|p| p.share == share).unwrap();
            (point.delay_ns, point.wakeups)
        };
        assert_eq!(cdf.len(), 102);
        assert_eq!(
            [at(0.0), at(0.2), at(0.21), at(0.5), at(0.999), at(1.0)],
            [(10, 5), (10, 5), (20, 5), (30, 5), (100, 5), (100, 5)]
        );
        assert_eq!(
            (
                w.preempt_wait_p50_ns,
                w.preempt_wait_p90_ns,
                w.preempt_wait_max_ns
            ),
            (Some(3), Some(7), Some(7))
        );

        // In the window from 305, the slice 300..310 is cut and loses both its waits, the
        // slices before it are outside: thread 1 keeps its delay 40 and its wait 7, thread 2
        // its wait 3.
        let inside = aggregate(&run, 0, Some(Window::Trace));
        let t1 = &inside.sched_delay[0];
        assert_eq!((t1.wakeups, t1.p50_ns, t1.preemptions), (1, Some(40), 1));
        let w = &inside.sched_delay_workloads[0];
        assert_eq!(
            (w.wakeups, w.max_ns, w.preemptions, w.preempt_wait_p50_ns),
            (1, Some(40), 2, Some(3))
        );
        let t2 = &inside.sched_delay[1];
        assert_eq!((t2.wakeups, t2.p50_ns, t2.p99_ns), (0, None, None));
    }
}
