//! The built-in `placement` monitor: every interval, the CPU each thread of each workload is on
//! (field `processor` of /proc/PID/task/TID/stat), like seed 004's 0.2 s sampling. Needs no
//! privileges and no perf, so placement is known on any machine.
//!
//! Threads are found by walking `/proc/PID/task/TID/children` down from the processes the runner
//! started, not by scanning all of /proc: the cost grows with the workload, not with the machine.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use procfs::process::Process;
use schedlab_tables::PlacementRow;

use crate::clock::{monotonic_ns, timespec};

/// Root processes to follow, as (pid, workload); the collector adds each workload process as it
/// starts.
pub type Tracked = Arc<Mutex<Vec<(i32, String)>>>;

pub struct Sampler {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<(Vec<PlacementRow>, i64)>,
    pub output: PathBuf,
}

impl Sampler {
    pub fn start(run_id: String, interval: Duration, tracked: Tracked, output: PathBuf) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let interval = crate::clock::ns(interval).max(1_000_000);
            let mut rows = Vec::new();
            let mut next = monotonic_ns();
            let mut cpu_spent = 0;
            while !flag.load(Ordering::Relaxed) {
                let before = crate::clock::thread_cpu_ns();
                let roots = tracked.lock().map(|t| t.clone()).unwrap_or_default();
                sample(&run_id, &roots, &mut rows);
                cpu_spent += crate::clock::thread_cpu_ns() - before;
                next += interval;
                let ts = timespec(next);
                let _ = rustix::thread::clock_nanosleep_absolute(
                    rustix::thread::ClockId::Monotonic,
                    &ts,
                );
            }
            (rows, cpu_spent)
        });
        Sampler {
            stop,
            thread,
            output,
        }
    }

    /// Stops sampling and writes the samples; returns the sampler's own CPU time in ns.
    pub fn stop(self) -> Result<i64, String> {
        self.stop.store(true, Ordering::Relaxed);
        let (rows, cpu_spent) = self
            .thread
            .join()
            .map_err(|_| "placement sampler panicked".to_owned())?;
        schedlab_tables::write_rows(&self.output, &rows).map_err(|err| err.to_string())?;
        Ok(cpu_spent)
    }
}

/// One sample of every thread below `roots`. Threads that exit mid-walk are skipped.
fn sample(run_id: &str, roots: &[(i32, String)], rows: &mut Vec<PlacementRow>) {
    let time_ns = monotonic_ns();
    let ticks = procfs::ticks_per_second() as i64;
    let mut seen = HashSet::new();
    let mut stack: Vec<(i32, &str)> = roots.iter().map(|(pid, w)| (*pid, w.as_str())).collect();
    while let Some((pid, workload)) = stack.pop() {
        if !seen.insert(pid) {
            continue;
        }
        let Ok(process) = Process::new(pid) else {
            continue;
        };
        let Ok(tasks) = process.tasks() else { continue };
        for task in tasks.flatten() {
            if let Ok(children) = task.children() {
                stack.extend(children.into_iter().map(|child| (child as i32, workload)));
            }
            let Ok(stat) = task.stat() else { continue };
            let Some(cpu) = stat.processor else { continue };
            rows.push(PlacementRow {
                run_id: run_id.to_owned(),
                time_ns,
                pid,
                tid: task.tid,
                comm: stat.comm,
                cpu,
                cpu_time_ns: (stat.utime + stat.stime) as i64 * 1_000_000_000 / ticks,
                workload: Some(workload.to_owned()),
            });
        }
    }
}
