//! Aggregates from a perf trace: exact run time per CPU, every migration, every wakeup delay.

use std::collections::BTreeMap;

use rayon::prelude::*;
use schedlab_spec::Window;
use schedlab_tables::{LossRow, PlacementRow};

use crate::by_thread::{ByThread, ThreadSlices};
use crate::headline::{Headline, Headlines, proc_check};
use crate::migration_classes::migration_classes;
use crate::sched_delay::{Delays, ThreadDelays};
use crate::slices::Slices;
use crate::thread::{ThreadKey, ThreadUsage, Traced};
use crate::{Aggregates, RunTables};

/// Events lost in spans that overlap `[first_ns, last_ns]`, on any CPU (the thread could have
/// run on, or migrated to, the CPU whose events are missing). A loss without a known span
/// counts everywhere.
pub(crate) fn lost_between(losses: &[&LossRow], first_ns: i64, last_ns: i64) -> i64 {
    (losses.iter())
        .filter(|l| {
            let since = l.since_ns.unwrap_or(i64::MIN);
            let until = l.until_ns.unwrap_or(i64::MAX);
            since <= last_ns && until >= first_ns
        })
        .map(|l| l.events)
        .sum()
}

/// Aggregates one run's trace; with `window`, only what happened inside the run's trace window.
pub fn aggregate(run: &RunTables<'_>, startup_ns: i64, window: Option<Window>) -> Aggregates {
    let span = window.and(run.trace_window);
    let clipped: Option<Slices> =
        span.map(|span| run.all_slices.clipped(run.threads.slices(), span));
    let clipped = clipped.as_ref().map(ByThread::workloads);
    let threads = clipped.as_ref().unwrap_or(&run.threads);
    let inside = |t: i64| span.is_none_or(|(start, end)| start <= t && t <= end);
    let mut sampled: BTreeMap<i32, Vec<&PlacementRow>> = BTreeMap::new();
    for &p in &run.placement {
        sampled.entry(p.tid).or_default().push(p);
    }
    // Decided over the whole run, whatever the window: a thread's figures inside it are the
    // same kind as outside.
    let headlines = run.headlines();
    let mut migrations: BTreeMap<i32, Vec<i64>> = BTreeMap::new();
    for m in run.migrations.iter().filter(|m| inside(m.time_ns)) {
        migrations.entry(m.tid).or_default().push(m.time_ns);
    }
    let per_thread = PerThread {
        run,
        startup_ns,
        span,
        headlines,
        migrations: &migrations,
        sampled: &sampled,
    };
    // Each thread's figures on rayon's threads, gathered in tid order: the tables' order.
    let threads: Vec<(i32, ThreadSlices<'_>)> = threads.threads().collect();
    let figures: Vec<ThreadFigures<'_>> = (threads.into_par_iter())
        .map(|(tid, slices)| per_thread.figures(tid, slices))
        .collect();
    let mut out = Aggregates::default();
    let mut delays = Delays::default();
    // Each thread's workload and lost events, for the migrations by class.
    let mut counted: BTreeMap<i32, (&str, i64)> = BTreeMap::new();
    for thread in figures {
        out.sched_delay.push(delays.thread(thread.delays));
        counted.insert(thread.tid, (thread.workload, thread.lost_events));
        out.extend(thread.usage);
    }
    (out.sched_delay_workloads, out.sched_delay_cdf) = delays.workload_rows(run.run_id);
    // Every slice of each thread, also outside the window: its state at a migration inside the
    // window may date from before it.
    out.migration_classes = migration_classes(run, &counted, &run.threads, inside);
    out
}

/// What every thread's figures read of their run.
struct PerThread<'r, 'a> {
    run: &'r RunTables<'a>,
    startup_ns: i64,
    /// The window, if the figures are of it.
    span: Option<(i64, i64)>,
    headlines: &'r Headlines,
    /// Each thread's migrations (inside the window).
    migrations: &'r BTreeMap<i32, Vec<i64>>,
    /// Each thread's /proc samples.
    sampled: &'r BTreeMap<i32, Vec<&'a PlacementRow>>,
}

/// One thread's figures, before they join its run's tables.
struct ThreadFigures<'s> {
    tid: i32,
    workload: &'s str,
    lost_events: i64,
    delays: ThreadDelays,
    /// Its residency, CPU-time and migration rows.
    usage: Aggregates,
}

impl PerThread<'_, '_> {
    /// The figures of thread `tid`, of `slices`.
    fn figures<'s>(&self, tid: i32, slices: ThreadSlices<'s>) -> ThreadFigures<'s> {
        let (run, span) = (self.run, self.span);
        let first = slices.get(0);
        let key = ThreadKey {
            workload: first.workload().unwrap_or_default().to_owned(),
            pid: first.pid(),
            tid,
            comm: first.comm().to_string(),
        };
        let sliced = slices.run_ns_by_cpu();
        let time = self.headlines.get(tid);
        // Inside the window, the headline's share of the slices there.
        let within = |figure: &BTreeMap<i32, i64>| match (time, span) {
            (Some(time), Some(_)) => time.within(figure, &sliced),
            _ => figure.clone(),
        };
        let (headline, per_cpu) = match time {
            Some(t) if t.headline != Headline::Slices => (t.headline, within(&t.per_cpu)),
            _ => (Headline::Slices, sliced.clone()),
        };
        let traced = Traced {
            kernel: time.and_then(|t| t.kernel.as_ref()).map(within),
            idle_blind: time.map(|t| t.idle_blind.clone()).unwrap_or_default(),
            slices: sliced,
        };
        let first_ns = slices.iter().map(|s| s.start_ns()).min().unwrap_or(0);
        let last_ns = slices.iter().map(|s| s.end_ns()).max().unwrap_or(0);
        let lost = lost_between(&run.losses, first_ns, last_ns);
        let delays = ThreadDelays::of(run.run_id, &key, slices, lost);
        let samples = self.sampled.get(&tid).map_or(&[][..], Vec::as_slice);
        let mut usage = Aggregates::default();
        ThreadUsage {
            key: &key,
            per_cpu,
            headline,
            traced: Some(traced),
            first_ns,
            last_ns,
            migrations: self.migrations.get(&tid).cloned().unwrap_or_default(),
            source: "sched",
            lost_events: Some(lost),
            proc_check: proc_check(samples, slices),
        }
        .push_into(run, self.startup_ns, &mut usage);
        ThreadFigures {
            tid,
            workload: first.workload().unwrap_or_default(),
            lost_events: lost,
            delays,
            usage,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use schedlab_tables::{PlacementRow, SchedSliceRow};

    use super::*;

    /// A slice of thread `tid` (workload `w`) after a 5 ns wakeup delay, switched out asleep.
    pub(crate) fn slice(tid: i32, cpu: i32, start_ns: i64, end_ns: i64) -> SchedSliceRow {
        SchedSliceRow {
            run_id: "r".into(),
            cpu,
            pid: tid,
            tid,
            comm: "w".into(),
            start_ns,
            end_ns,
            run_ns: end_ns - start_ns,
            wait_ns: 0,
            sched_delay_ns: 5,
            preempt_wait_ns: 0,
            prev_state: "S".into(),
            workload: Some(Arc::from("w")),
            prio: Some(120),
        }
    }

    fn loss(cpu: i32, since_ns: Option<i64>, until_ns: Option<i64>, events: i64) -> LossRow {
        LossRow {
            run_id: "r".into(),
            cpu,
            since_ns,
            until_ns,
            events,
        }
    }

    fn lost_per_thread(slices: &[SchedSliceRow], losses: &[LossRow]) -> Vec<(i32, Option<i64>)> {
        let run = RunTables {
            losses: losses.iter().collect(),
            ..RunTables::for_tests(slices)
        };
        let out = aggregate(&run, 0, None);
        for r in &out.residency {
            let cpu_time = out.cpu_time.iter().find(|c| c.tid == r.tid).unwrap();
            assert_eq!(
                r.lost_events, cpu_time.lost_events,
                "every row of a thread agrees"
            );
        }
        out.sched_delay
            .iter()
            .map(|d| (d.tid, d.lost_events))
            .collect()
    }

    #[test]
    fn the_trace_window_cuts_slices_and_drops_what_lies_outside() {
        // Thread 1: 0..50 (before the window), 60..100 (across its start), 120..150 (inside);
        // thread 2: 280..340 (across its end). Window: 80..300.
        let slices = [
            slice(1, 0, 0, 50),
            slice(1, 0, 60, 100),
            slice(1, 1, 120, 150),
            slice(2, 1, 280, 340),
        ];
        let migration = |time_ns: i64| crate::events::Migration {
            time_ns,
            tid: 1,
            from_cpu: 0,
            to_cpu: 1,
        };
        let migrations = [migration(55), migration(110)];
        let run = RunTables {
            migrations: &migrations,
            trace_window: Some((80, 300)),
            ..RunTables::for_tests(&slices)
        };
        let run_ns = |out: &Aggregates, tid: i32| {
            (out.cpu_time.iter())
                .find(|c| c.tid == tid)
                .map(|c| c.cpu_time_ns)
        };
        let whole = aggregate(&run, 0, None);
        assert_eq!(
            (run_ns(&whole, 1), run_ns(&whole, 2)),
            (Some(120), Some(60))
        );
        assert_eq!(whole.migrations[0].migrations, 2);

        let inside = aggregate(&run, 0, Some(Window::Trace));
        assert_eq!(
            (run_ns(&inside, 1), run_ns(&inside, 2)),
            (Some(20 + 30), Some(20))
        );
        assert_eq!(
            inside.migrations[0].migrations, 1,
            "the migration at 55 is outside"
        );
        let delays = (inside.sched_delay.iter()).find(|d| d.tid == 1).unwrap();
        assert_eq!(delays.wakeups, 1, "the slice cut at 80 lost its delay");
        let shares: Vec<(i32, i64)> = (inside.residency.iter())
            .filter(|r| r.tid == 1)
            .map(|r| (r.cpu, r.run_ns))
            .collect();
        assert_eq!(shares, [(0, 20), (1, 30)]);
    }

    #[test]
    fn the_trace_is_checked_against_proc_over_the_span_of_the_samples() {
        // Thread 1 runs 0..50, 60..100 and 150..400 in the trace; /proc saw it at 40 (5 ns of
        // CPU so far) and at 200 (35 ns): 30 ns by /proc, 10 + 40 + 50 = 100 ns in the trace.
        let slices = [
            slice(1, 0, 0, 50),
            slice(1, 0, 60, 100),
            slice(1, 1, 150, 400),
        ];
        let sample = |time_ns: i64, cpu_time_ns: i64| PlacementRow {
            run_id: "r".into(),
            time_ns,
            pid: 1,
            tid: 1,
            comm: "w".into(),
            cpu: 0,
            cpu_time_ns,
            workload: Some("w".into()),
        };
        let samples = [sample(200, 35), sample(40, 5)];
        let mut run = RunTables {
            placement: samples.iter().collect(),
            ..RunTables::for_tests(&slices)
        };
        let out = aggregate(&run, 0, None);
        let row = &out.cpu_time[0];
        assert_eq!(
            (row.proc_check_ns, row.trace_check_ns),
            (Some(30), Some(100))
        );
        assert_eq!(
            row.cpu_time_ns, 340,
            "the figure itself is the whole trace's"
        );

        run.placement.truncate(1);
        // The headlines were decided from both samples.
        run.headlines.take();
        let out = aggregate(&run, 0, None);
        assert_eq!(
            out.cpu_time[0].proc_check_ns, None,
            "one sample spans nothing"
        );
    }

    #[test]
    fn on_an_idle_blind_cpu_the_kernels_accounting_heads_in_and_out_of_the_window() {
        // Thread 1's slices on cpu 1 (idle-blind) run 0..100 and 120..200; the kernel says it
        // ran 90 ns there. Window: 80..300, which holds 100 of its 180 ns of slices.
        let slices = [slice(1, 1, 0, 100), slice(1, 1, 120, 200)];
        let runtime = [crate::events::Runtime {
            cpu: 1,
            tid: 1,
            runtime_ns: 90,
            events: 4,
        }];
        let run = RunTables {
            sched_runtime: &runtime,
            idle_blind_cpus: [1].into(),
            trace_window: Some((80, 300)),
            ..RunTables::for_tests(&slices)
        };
        let seen = |out: &Aggregates| {
            let c = &out.cpu_time[0];
            let r = &out.residency[0];
            (
                (c.cpu_time_ns, c.slice_ns, c.kernel_ns),
                format!("{} {}", c.headline, c.idle_blind_cpus),
                (r.cpu, r.run_ns, r.slice_ns, r.kernel_ns, r.idle_blind),
            )
        };
        assert_eq!(
            seen(&aggregate(&run, 0, None)),
            (
                (90, Some(180), Some(90)),
                "kernel 1".to_owned(),
                (1, 90, Some(180), Some(90), true)
            )
        );
        assert_eq!(
            seen(&aggregate(&run, 0, Some(Window::Trace))),
            (
                (50, Some(100), Some(50)),
                "kernel 1".to_owned(),
                (1, 50, Some(100), Some(50), true)
            )
        );
    }

    #[test]
    fn a_loss_flags_the_threads_seen_across_it_and_only_those() {
        // Thread 1 runs 0..100 on cpu 0, thread 2 runs 200..300 on cpu 1.
        let slices = [
            slice(1, 0, 0, 50),
            slice(1, 0, 60, 100),
            slice(2, 1, 200, 300),
        ];
        // cpu 1 lost 7 events between 120 and 150: neither thread was seen then.
        assert_eq!(
            lost_per_thread(&slices, &[loss(1, Some(120), Some(150), 7)]),
            [(1, Some(0)), (2, Some(0))]
        );
        // cpu 1 lost 7 events between 80 and 150: thread 1 was running (on the other CPU, but
        // it could have moved), thread 2 was not yet seen.
        assert_eq!(
            lost_per_thread(&slices, &[loss(1, Some(80), Some(150), 7)]),
            [(1, Some(7)), (2, Some(0))]
        );
        // A loss whose span is unknown could be anywhere.
        assert_eq!(
            lost_per_thread(
                &slices,
                &[loss(0, None, None, 3), loss(0, Some(250), Some(260), 2)]
            ),
            [(1, Some(3)), (2, Some(5))]
        );
    }
}
