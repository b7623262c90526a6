//! One run's timeline: start the monitors, start each workload at its `start_after`, stop what
//! outlives its timeout or the collection, stop the monitors, and say how it went.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustix::process::Signal;

use schedlab_spec::{MonitorPlan, Program, RunPlan, WorkloadPlan};

use crate::clock::{monotonic_ns, ns};
use schedlab_tables::Severity;
use schedlab_tables::manifest::{
    Ending, HostFacts, Manifest, MonitorRecord, MonitorStatus, Note, ProcessRecord, RAW_DIR,
    RunStatus, StopReason, raw_file,
};

use crate::monitor::{self, MonitorContext, Running, Tracked};
use crate::process::{self, Child, SpawnOptions};
use crate::{CollectError, host};

/// Grace period between asking a workload to stop (SIGTERM) and killing it.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// What to collect, and where.
pub struct RunRequest<'a> {
    pub run_id: &'a str,
    pub pipeline: &'a str,
    pub label: Option<&'a str>,
    pub plan: &'a RunPlan,
    /// The run's directory; raw files go to `raw/` inside it.
    pub run_dir: &'a Path,
    /// The schedlab binary, which runs the built-in periodic workload as a child.
    pub self_exe: &'a Path,
    /// Set by the Ctrl-C / SIGTERM handler.
    pub interrupt: &'a AtomicBool,
    /// Called every tick with the time since workloads' `start_after` counts from, for a
    /// progress display (its length is [`schedlab_spec::CollectPlan::expected_length`]).
    pub on_tick: &'a dyn Fn(Duration),
}

struct Active<'p> {
    index: usize,
    child: Child,
    deadline: Option<i64>,
    /// When its timeout sent SIGTERM; SIGKILL follows `STOP_GRACE` later. The loop does not
    /// wait in between, so other workloads and monitor windows keep their times.
    terminated_at: Option<i64>,
    workload: &'p WorkloadPlan,
    instance: u32,
}

/// The run's monitors in plan order, each with what the manifest keeps of it and, while it
/// runs, its handle (`None` once stopped, or for an optional monitor that was skipped).
type Monitors = Vec<(MonitorRecord, Option<Running>)>;

/// Collects one run and returns its manifest (raw file digests are left to the caller).
pub fn collect(request: &RunRequest<'_>) -> Result<Manifest, CollectError> {
    let raw_dir = request.run_dir.join(RAW_DIR);
    std::fs::create_dir_all(&raw_dir).map_err(|source| CollectError::Io {
        path: raw_dir,
        source,
    })?;
    check_programs(&request.plan.collect.workloads)?;
    let started_at = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
    let mut host = host::facts();
    let (recorded, record_notes) = crate::record::read(&request.plan.collect.record);
    if let Some(config) = host.sched_config.as_mut() {
        config.recorded = recorded;
    }
    let start_ns = monotonic_ns();
    let tracked: Tracked = Arc::new(Mutex::new(Vec::new()));
    let mut notes: Vec<Note> = unread_config_note(&host).into_iter().collect();
    notes.extend(record_notes);
    let mut monitors = start_monitors(request, &tracked, &mut notes)?;
    let zero = monotonic_ns();
    let ran = run_workloads(request, &tracked, zero, &mut monitors, &mut notes);
    // Stopped whatever happened: a workload that could not start must not leave perf tracing.
    stop_monitors(&mut monitors, &mut notes);
    let ran = ran?;
    let status = run_status(request.run_dir, &ran, &monitors, &mut notes);
    Ok(Manifest {
        run_id: request.run_id.to_owned(),
        pipeline: request.pipeline.to_owned(),
        label: request.label.map(str::to_owned),
        key: request.plan.key.clone(),
        variant: request.plan.variant.clone(),
        repetition: request.plan.repetition,
        status,
        started_at,
        start_ns,
        zero_ns: zero,
        end_ns: monotonic_ns(),
        host,
        monitors: monitors.into_iter().map(|(record, _)| record).collect(),
        processes: ran.processes,
        notes,
        raw_files: Vec::new(),
        plan: serde_json::to_value(request.plan).unwrap_or_default(),
        schedlab_version: env!("CARGO_PKG_VERSION").to_owned(),
        imported: None,
    })
}

/// What of the scheduler configuration could not be read, and why, as one note: a comparison
/// cannot check those settings between runs.
fn unread_config_note(host: &HostFacts) -> Option<Note> {
    let unreadable = &host.sched_config.as_ref()?.unreadable;
    (!unreadable.is_empty()).then(|| Note {
        source: "sched_config".into(),
        severity: Severity::Info,
        message: format!(
            "not recorded in the configuration: {}",
            (unreadable.iter())
                .map(|(source, why)| format!("{source} ({why})"))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    })
}

/// Starts every monitor of the plan in order. An optional monitor that cannot run is skipped
/// with a note; a required one stops those already started and fails the run.
fn start_monitors(
    request: &RunRequest<'_>,
    tracked: &Tracked,
    notes: &mut Vec<Note>,
) -> Result<Monitors, CollectError> {
    let ctx = MonitorContext {
        run_id: request.run_id,
        run_dir: request.run_dir,
        tracked,
    };
    let mut monitors: Monitors = Vec::new();
    for monitor_plan in &request.plan.collect.monitors {
        let mut record = MonitorRecord {
            name: monitor_plan.name.clone(),
            kind: monitor_plan.kind.name().into(),
            argv: Vec::new(),
            status: MonitorStatus::Ran,
            reason: None,
            files: Vec::new(),
            parse: None,
            start_ns: Some(monotonic_ns()),
            end_ns: None,
            self_cpu_ns: None,
        };
        match monitor::start(monitor_plan, &ctx, &mut record) {
            Ok(running) => monitors.push((record, Some(running))),
            Err(monitor::Unavailable(reason)) if monitor_plan.optional => {
                notes.push(Note {
                    source: monitor_plan.name.clone(),
                    severity: Severity::Warning,
                    message: format!(
                        "optional monitor {} skipped: {reason}",
                        monitor_plan.kind.name()
                    ),
                });
                record.status = MonitorStatus::Skipped;
                record.reason = Some(reason);
                record.start_ns = None;
                monitors.push((record, None));
            }
            Err(monitor::Unavailable(reason)) => {
                stop_monitors(&mut monitors, notes);
                return Err(CollectError::MonitorUnavailable {
                    monitor: monitor_plan.name.clone(),
                    reason,
                });
            }
        }
    }
    Ok(monitors)
}

/// What the workloads did.
struct Ran {
    processes: Vec<ProcessRecord>,
    /// Ctrl-C or SIGTERM ended the collection.
    interrupted: bool,
}

/// Runs the workloads from `zero` (when the monitors were all running) to the end of the
/// collection: each starts at its `start_after`, is stopped past its timeout, and is started
/// again under `repeat_until: monitors`; the monitors' recording windows open and close on the
/// way. Every workload still running at the end, or at an error, is stopped.
fn run_workloads(
    request: &RunRequest<'_>,
    tracked: &Tracked,
    zero: i64,
    monitors: &mut Monitors,
    notes: &mut Vec<Note>,
) -> Result<Ran, CollectError> {
    let plan = &request.plan.collect;
    let mut windows = Windows::new(&plan.monitors, monitors, zero);
    let mut schedule: Vec<(i64, &WorkloadPlan, u32)> = plan
        .workloads
        .iter()
        .flat_map(|w| (0..w.instances).map(move |i| (zero + ns(w.start_after), w, i)))
        .collect();
    schedule.sort_by_key(|(at, _, _)| std::cmp::Reverse(*at));
    let end_at = plan.duration.map(|d| zero + ns(d));

    let mut processes: Vec<ProcessRecord> = Vec::new();
    let mut active: Vec<Active> = Vec::new();
    let mut interrupted = false;
    loop {
        let now = monotonic_ns();
        if request.interrupt.load(Ordering::SeqCst) {
            interrupted = true;
            stop_all(&mut active, &mut processes, StopReason::Interrupted);
            break;
        }
        while schedule.last().is_some_and(|(at, _, _)| *at <= now) {
            let (_, workload, instance) = schedule.pop().expect("checked");
            let (record, child) = match start_workload(request, workload, instance) {
                Ok(started) => started,
                Err(err) => {
                    stop_all(&mut active, &mut processes, StopReason::RunFailed);
                    return Err(err);
                }
            };
            tracked
                .lock()
                .expect("tracked list")
                .push((child.pid, workload.name.clone()));
            let deadline = workload.timeout.map(|t| record.start_ns + ns(t));
            processes.push(record);
            active.push(Active {
                index: processes.len() - 1,
                child,
                deadline,
                terminated_at: None,
                workload,
                instance,
            });
        }
        for (workload, instance) in reap(&mut active, &mut processes, now) {
            // `repeat_until: monitors`: the schedule is popped from the end, earliest first.
            if end_at.is_some_and(|end| now < end) {
                schedule.push((now, workload, instance));
            }
        }
        windows.pass(now, monitors, notes);
        if end_at.is_some_and(|end| now >= end) {
            stop_all(&mut active, &mut processes, StopReason::EndOfCollection);
            break;
        }
        if end_at.is_none() && schedule.is_empty() && active.is_empty() {
            break;
        }
        (request.on_tick)(Duration::from_nanos((now - zero).max(0) as u64));
        // Wake for the next workload start or monitor window edge, and every 5 ms at most.
        let next = (schedule.last().map(|(at, _, _)| at).into_iter())
            .chain(windows.edges())
            .map(|at| at - now)
            .min()
            .unwrap_or(i64::MAX);
        std::thread::sleep(Duration::from_nanos(next.clamp(0, 5_000_000) as u64));
    }
    windows.note_never_opened(monitors, notes);
    Ok(Ran {
        processes,
        interrupted,
    })
}

/// The monitors' recording windows (perf-sched's `enable_after` / `stop_after`): when each
/// started monitor is to be enabled and asked to stop, by index in [`Monitors`]. An edge is
/// `None` for a monitor without one, for a skipped monitor, and once it has passed.
struct Windows {
    starts: Vec<Option<i64>>,
    stops: Vec<Option<i64>>,
}

impl Windows {
    fn new(plans: &[MonitorPlan], monitors: &Monitors, zero: i64) -> Windows {
        let at = |after: fn(&MonitorPlan) -> Option<Duration>| -> Vec<Option<i64>> {
            (plans.iter().zip(monitors))
                .map(|(m, (_, running))| running.as_ref().and(after(m)).map(|d| zero + ns(d)))
                .collect()
        };
        Windows {
            starts: at(monitor::enable_after),
            stops: at(monitor::stop_after),
        }
    }

    /// Acts on the edges that `now` has reached.
    fn pass(&mut self, now: i64, monitors: &mut Monitors, notes: &mut Vec<Note>) {
        for ((record, running), start) in monitors.iter_mut().zip(&mut self.starts) {
            // A recording window begins: enable the monitor, which waited since its start.
            if let Some(running) = running
                && start.is_some_and(|at| now >= at)
            {
                *start = None;
                if let Err(reason) = running.enable() {
                    notes.push(Note {
                        source: record.name.clone(),
                        severity: Severity::Error,
                        message: format!("could not start recording its window: {reason}"),
                    });
                    record.status = MonitorStatus::Failed;
                    record.reason = Some(reason);
                }
            }
        }
        for ((_, running), stop) in monitors.iter().zip(&mut self.stops) {
            // A recording window ends: ask once, reap with the others at the end.
            if let Some(running) = running
                && stop.is_some_and(|at| now >= at)
            {
                running.request_stop();
                *stop = None;
            }
        }
    }

    /// The edges still to come.
    fn edges(&self) -> impl Iterator<Item = &i64> {
        self.starts.iter().chain(&self.stops).flatten()
    }

    /// Notes each monitor whose window the run ended before: it recorded nothing.
    fn note_never_opened(&self, monitors: &Monitors, notes: &mut Vec<Note>) {
        for ((record, _), start) in monitors.iter().zip(&self.starts) {
            if start.is_some() {
                notes.push(Note {
                    source: record.name.clone(),
                    severity: Severity::Warning,
                    message: "the run ended before the monitor's recording window began: it \
                              recorded nothing"
                        .into(),
                });
            }
        }
    }
}

/// How the run went: interrupted; failed (a workload exited with a non-zero code or was killed
/// by a signal schedlab did not send, or a monitor failed); workload-stopped (schedlab stopped a
/// workload at the collection's end and the pipeline did not say that is expected); or
/// completed. Every workload that did not end as planned gets a note naming how it ended and
/// its stderr's last line (a timeout's stop a warning that leaves the status as it is: the
/// pipeline asked for it).
fn run_status(run_dir: &Path, ran: &Ran, monitors: &Monitors, notes: &mut Vec<Note>) -> RunStatus {
    let mut failed = (monitors.iter()).any(|(m, _)| m.status == MonitorStatus::Failed);
    let mut stopped = false;
    for record in &ran.processes {
        let (severity, how) = match record.ending() {
            Ending::AsPlanned => continue,
            Ending::Failed(how) => {
                failed = true;
                (Severity::Error, how)
            }
            Ending::Stopped(how) => {
                stopped = true;
                (Severity::Warning, how)
            }
            Ending::TimedOut(how) => (Severity::Warning, how),
        };
        let stderr = match process::last_line(&run_dir.join(&record.stderr)) {
            Some(line) => format!("its stderr's last line: {line:?}"),
            None => "its stderr is empty".to_owned(),
        };
        let longer = match record.stopped {
            Some(StopReason::EndOfCollection) => Some("`collect.duration`"),
            Some(StopReason::Timeout) => Some("`timeout`"),
            _ => None,
        };
        let hint = longer.map_or_else(String::new, |longer| {
            format!(
                " (hint: a longer {longer} lets it finish; `stop: expected` on the workload \
                 says the stop is part of the experiment)"
            )
        });
        notes.push(Note {
            source: record.workload.clone(),
            severity,
            message: format!(
                "workload {} (instance {}) {how}; {stderr}{hint}",
                record.workload, record.instance
            ),
        });
    }
    if ran.interrupted {
        RunStatus::Interrupted
    } else if failed {
        RunStatus::Failed
    } else if stopped {
        RunStatus::WorkloadStopped
    } else {
        RunStatus::Completed
    }
}

/// Refuses to start a run whose programs are missing, before any monitor runs.
fn check_programs(workloads: &[WorkloadPlan]) -> Result<(), CollectError> {
    for workload in workloads {
        if let Program::External { argv } = &workload.program
            && process::find_program(&argv[0]).is_none()
        {
            return Err(CollectError::MissingProgram {
                workload: workload.name.clone(),
                program: argv[0].clone(),
            });
        }
    }
    Ok(())
}

fn start_workload(
    request: &RunRequest<'_>,
    workload: &WorkloadPlan,
    instance: u32,
) -> Result<(ProcessRecord, Child), CollectError> {
    let stem = raw_file(&format!("{}.{instance}", workload.name));
    let (argv, report) = workload_argv(request.self_exe, request.run_dir, workload, instance);
    let stdout = format!("{stem}.stdout.txt");
    let stderr = format!("{stem}.stderr.txt");
    let options = SpawnOptions {
        nice: workload.nice,
        cpus: workload.cpus.as_deref(),
        stdout: Some(&request.run_dir.join(&stdout)),
        stderr: Some(&request.run_dir.join(&stderr)),
    };
    let start_ns = monotonic_ns();
    let child = process::spawn(&argv, &options).map_err(|source| CollectError::Spawn {
        workload: workload.name.clone(),
        argv: argv.join(" "),
        source,
    })?;
    tracing::info!(workload = %workload.name, instance, pid = child.pid, "started");
    let record = ProcessRecord {
        workload: workload.name.clone(),
        instance,
        pid: child.pid,
        argv,
        nice: workload.nice,
        cpus: workload.cpus.clone(),
        start_ns,
        end_ns: None,
        exit_code: None,
        stopped: None,
        signal: None,
        stop_expected: workload.stop_expected,
        stdout,
        stderr,
        report,
        parse: workload.parse.clone(),
    };
    Ok((record, child))
}

/// The command line of one workload instance, and the periodic report file it will write.
fn workload_argv(
    self_exe: &Path,
    run_dir: &Path,
    workload: &WorkloadPlan,
    instance: u32,
) -> (Vec<String>, Option<String>) {
    let Program::Periodic(options) = &workload.program else {
        let Program::External { argv } = &workload.program else {
            unreachable!()
        };
        return (argv.clone(), None);
    };
    let report = raw_file(&format!("{}.{instance}.periodic.json", workload.name));
    let busy = (options.busy)
        .unwrap_or_else(|| options.period.mul_f64(options.duty.unwrap_or(0.0) / 100.0));
    let argv = vec![
        self_exe.display().to_string(),
        "periodic-worker".into(),
        "--threads".into(),
        options.threads.to_string(),
        "--period-ns".into(),
        ns(options.period).to_string(),
        "--busy-ns".into(),
        ns(busy).to_string(),
        "--duration-ns".into(),
        ns(options.duration).to_string(),
        "--report".into(),
        run_dir.join(&report).display().to_string(),
    ];
    (argv, Some(report))
}

/// What collecting `plan` into `run_dir` would do, one line per event in time order, for
/// `--dry-run`. Nothing is started.
pub fn timeline(plan: &RunPlan, run_dir: &Path, self_exe: &Path) -> Vec<String> {
    let collect = &plan.collect;
    let mut lines: Vec<(std::time::Duration, String)> = collect
        .monitors
        .iter()
        .map(|m| (std::time::Duration::ZERO, monitor::describe(m, run_dir)))
        .collect();
    for workload in &collect.workloads {
        for instance in 0..workload.instances {
            let (argv, _) = workload_argv(self_exe, run_dir, workload, instance);
            let cpus = workload.cpus.as_deref().map_or("any CPU".into(), |c| {
                format!("CPUs {}", schedlab_topology::format_cpu_list(c))
            });
            let mut line = format!(
                "workload {}#{instance}: {} (nice {}, {cpus}",
                workload.name,
                argv.join(" "),
                workload.nice
            );
            if let Some(timeout) = workload.timeout {
                line.push_str(&format!(", stopped after {timeout:?}"));
            }
            if workload.repeat_until_end {
                line.push_str(", restarted until the collection ends");
            }
            if workload.stop_expected {
                line.push_str(", its stop expected");
            }
            line.push(')');
            lines.push((workload.start_after, line));
        }
    }
    lines.sort_by_key(|(at, _)| *at);
    let mut lines: Vec<String> = lines
        .into_iter()
        .map(|(at, what)| format!("{:>9.3}s  {what}", at.as_secs_f64()))
        .collect();
    lines.push(match (collect.duration, collect.last_workload_end()) {
        (Some(d), _) => format!(
            "{:>9.3}s  end of collection: stop workloads still running, then monitors",
            d.as_secs_f64()
        ),
        (None, Some(end)) => format!(
            "{:>9.3}s  end of collection (the last workload ends); monitors stop",
            end.as_secs_f64()
        ),
        (None, None) => {
            "        …  end of collection when the last workload ends; monitors stop".to_owned()
        }
    });
    lines
}

/// Records workloads that ended and stops those past their timeout; returns the ones to start
/// again (`repeat_until: monitors`, ended successfully).
fn reap<'p>(
    active: &mut Vec<Active<'p>>,
    processes: &mut [ProcessRecord],
    now: i64,
) -> Vec<(&'p WorkloadPlan, u32)> {
    let mut restart = Vec::new();
    active.retain_mut(|proc| {
        let record = &mut processes[proc.index];
        match proc.child.try_exit() {
            Ok(Some(exit)) => {
                ended(&proc.child, record, Some(exit));
                if proc.terminated_at.is_some() {
                    record.stopped = Some(StopReason::Timeout);
                } else if exit.code == 0 && proc.workload.repeat_until_end {
                    restart.push((proc.workload, proc.instance));
                }
                false
            }
            _ => {
                match proc.terminated_at {
                    None if proc.deadline.is_some_and(|d| now >= d) => {
                        proc.child.signal(Signal::TERM);
                        proc.terminated_at = Some(now);
                    }
                    Some(at) if now - at >= ns(STOP_GRACE) => proc.child.signal(Signal::KILL),
                    _ => {}
                }
                true
            }
        }
    });
    restart
}

/// A workload's process ended: the workers its leader forked must not outlive it, and its
/// record gets its end, exit code and the signal that ended it.
fn ended(child: &Child, record: &mut ProcessRecord, exit: Option<process::Exit>) {
    child.signal(Signal::KILL);
    record.end_ns = Some(monotonic_ns());
    record.exit_code = exit.map(|e| e.code);
    record.signal = exit.and_then(|e| e.signal_name());
}

/// Stops every active workload: SIGTERM to all, one grace period shared by all, then SIGKILL to
/// what is left (sixteen workers that ignore SIGTERM take 3 s to stop, not 48). Each process's
/// end is stamped when it is seen to end, not when its turn in the list comes. One that ended
/// by itself since the last look is recorded so, not as stopped.
fn stop_all(active: &mut Vec<Active<'_>>, processes: &mut [ProcessRecord], why: StopReason) {
    active.retain(|proc| match proc.child.try_exit() {
        Ok(Some(exit)) => {
            ended(&proc.child, &mut processes[proc.index], Some(exit));
            false
        }
        _ => true,
    });
    for proc in active.iter() {
        proc.child.signal(Signal::TERM);
    }
    let deadline = monotonic_ns() + ns(STOP_GRACE);
    let mut stopped = |proc: &Active<'_>, exit: Option<process::Exit>| {
        let record = &mut processes[proc.index];
        ended(&proc.child, record, exit);
        record.stopped = Some(why);
        // What `repeat_until: monitors` means: the instance running at the end is stopped.
        record.stop_expected |=
            why == StopReason::EndOfCollection && proc.workload.repeat_until_end;
    };
    let mut left = std::mem::take(active);
    while !left.is_empty() && monotonic_ns() < deadline {
        left.retain(|proc| match proc.child.try_exit() {
            Ok(None) => true,
            exit => {
                stopped(proc, exit.ok().flatten());
                false
            }
        });
        std::thread::sleep(Duration::from_millis(10));
    }
    for proc in left {
        let exit = proc.child.stop(Signal::KILL, Duration::ZERO).ok();
        stopped(&proc, exit);
    }
}

/// Stops the running monitors, last started first, and stamps their ends.
fn stop_monitors(monitors: &mut Monitors, notes: &mut Vec<Note>) {
    for (record, running) in monitors.iter_mut().rev() {
        let Some(running) = running.take() else {
            continue;
        };
        match running.stop() {
            Ok(stopped) => {
                record.self_cpu_ns = stopped.self_cpu_ns;
                notes.extend(stopped.notes.into_iter().map(|message| Note {
                    source: record.name.clone(),
                    severity: Severity::Info,
                    message,
                }));
            }
            Err(reason) => {
                notes.push(Note {
                    source: record.name.clone(),
                    severity: Severity::Error,
                    message: reason.clone(),
                });
                record.status = MonitorStatus::Failed;
                record.reason = Some(reason);
            }
        }
        record.end_ns = Some(monotonic_ns());
    }
}
