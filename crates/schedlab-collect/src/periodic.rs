//! The built-in `periodic` workload, in the spirit of rt-app: N threads, each waking at the
//! start of every period, spinning for its busy time, then sleeping until the next period.
//!
//! It runs as its own process (`schedlab periodic-worker …`, started by the collector like any
//! other workload) so that nice, affinity, process-tree attribution and perf traces treat it
//! exactly like an external program. Each thread records how late every period started against
//! its deadline; the process writes a JSON [`Report`] (a format of the contract crate,
//! `schedlab_tables::periodic_report`) the parse stage turns into `workload_metrics` rows.

use std::time::Duration;

use schedlab_tables::periodic_report::{Report, ThreadReport};

use crate::clock::{monotonic_ns, thread_cpu_ns, timespec};

/// What one periodic process is asked to do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeriodicConfig {
    pub threads: u32,
    pub period: Duration,
    pub busy: Duration,
    pub duration: Duration,
}

/// Runs the workload in this process and returns what each thread achieved.
pub fn run(config: PeriodicConfig) -> Report {
    let start = monotonic_ns() + 1_000_000; // a common first deadline for all threads
    let threads: Vec<ThreadReport> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..config.threads)
            .map(|_| scope.spawn(move || run_thread(config, start)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("periodic thread panicked"))
            .collect()
    });
    Report {
        period_ns: crate::clock::ns(config.period),
        busy_ns: crate::clock::ns(config.busy),
        threads,
    }
}

fn run_thread(config: PeriodicConfig, start: i64) -> ThreadReport {
    let period = crate::clock::ns(config.period).max(1);
    let busy = crate::clock::ns(config.busy);
    let end = start + crate::clock::ns(config.duration);
    let cpu_start = thread_cpu_ns();
    let mut lateness = Vec::new();
    let mut missed = 0;
    let mut deadline = start;
    while deadline < end {
        // An interrupted sleep just sleeps again: the deadline is absolute.
        while rustix::thread::clock_nanosleep_absolute(
            rustix::thread::ClockId::Monotonic,
            &timespec(deadline),
        )
        .is_err()
        {}
        let woke = monotonic_ns();
        lateness.push(woke - deadline);
        while monotonic_ns() < woke + busy {
            std::hint::spin_loop();
        }
        let mut next = deadline + period;
        while next <= monotonic_ns() {
            missed += 1;
            next += period;
        }
        deadline = next;
    }
    let wall_ns = monotonic_ns().min(end) - start;
    lateness.sort_unstable();
    let count = lateness.len();
    ThreadReport {
        tid: rustix::thread::gettid().as_raw_nonzero().get(),
        periods: count as u64,
        missed,
        lateness_mean_ns: if count == 0 {
            0.0
        } else {
            lateness.iter().sum::<i64>() as f64 / count as f64
        },
        lateness_p99_ns: lateness
            .get((count * 99 / 100).min(count.saturating_sub(1)))
            .copied()
            .unwrap_or(0),
        lateness_max_ns: lateness.last().copied().unwrap_or(0),
        cpu_ns: thread_cpu_ns() - cpu_start,
        wall_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_threads_reach_their_duty_cycle_and_count_periods() {
        let config = PeriodicConfig {
            threads: 2,
            period: Duration::from_millis(20),
            busy: Duration::from_millis(5),
            duration: Duration::from_millis(400),
        };
        let report = run(config);
        assert_eq!(report.threads.len(), 2);
        for thread in &report.threads {
            assert_eq!(thread.periods + thread.missed, 20, "{thread:?}");
            // 5 ms busy of 20 ms: 25 %, with wide slack: other load on a 2-CPU machine preempts the spin.
            assert!((5.0..40.0).contains(&thread.duty_pct()), "{thread:?}");
            assert!(thread.lateness_max_ns >= thread.lateness_p99_ns);
        }
        assert_ne!(report.threads[0].tid, report.threads[1].tid);
    }
}
