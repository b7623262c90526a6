//! Monitors: started before the workloads, stopped after them, raw output kept under raw/.
//!
//! Each kind checks what it needs before starting (tool installed, privileges, tracefs) and
//! returns [`Unavailable`] with the fix when it cannot run; the collector then fails the run or,
//! for an `optional` monitor, skips it and records the reason.

mod cpu;
mod perf_control;
mod placement;

use std::path::Path;
use std::time::Duration;

use rustix::process::Signal;
use schedlab_spec::duration::format_duration;
use schedlab_spec::{MonitorKind, MonitorPlan, PerfSchedOptions, TurbostatOptions};
use schedlab_tables::manifest::{MonitorRecord, raw_file};

use crate::process::{self, Child, SpawnOptions};
use perf_control::PerfControl;
pub use placement::{Sampler, Tracked};

/// Why a monitor cannot run on this machine, with the fix.
#[derive(Debug, Clone)]
pub struct Unavailable(pub String);

/// What a monitor reports when it stops cleanly.
#[derive(Debug, Default)]
pub struct Stopped {
    /// CPU time of a built-in sampler's thread.
    pub self_cpu_ns: Option<i64>,
    /// What it could not record on this machine, said once per missing source.
    pub notes: Vec<String>,
}

pub enum Running {
    Tool {
        child: Box<Child>,
        stderr: std::path::PathBuf,
        /// perf's control FIFOs when it starts disabled, to be enabled at its window's start.
        control: Option<PerfControl>,
    },
    Placement(Sampler),
    Cpu(cpu::Sampler),
}

/// Everything a monitor start needs from the run.
pub struct MonitorContext<'a> {
    pub run_id: &'a str,
    pub run_dir: &'a Path,
    pub tracked: &'a Tracked,
}

/// Starts one monitor; `record` is filled with its command line and files.
pub fn start(
    plan: &MonitorPlan,
    ctx: &MonitorContext<'_>,
    record: &mut MonitorRecord,
) -> Result<Running, Unavailable> {
    let raw = |suffix: &str| raw_file(&format!("{}.{suffix}", plan.name));
    match &plan.kind {
        MonitorKind::Placement(options) => {
            let file = raw("placement.parquet");
            record.files.push(file.clone());
            Ok(Running::Placement(Sampler::start(
                ctx.run_id.to_owned(),
                options.interval,
                ctx.tracked.clone(),
                ctx.run_dir.join(file),
            )))
        }
        MonitorKind::PerfSched(options) => {
            check_perf_sched()?;
            let file = raw("perf.data");
            let control = (enable_after(plan).is_some())
                .then(PerfControl::open)
                .transpose()
                .map_err(|err| Unavailable(format!("cannot create perf's control FIFOs: {err}")))?;
            let control_options = control.as_ref().map(PerfControl::options);
            let argv = perf_sched_argv(options, &ctx.run_dir.join(&file), control_options);
            record.files.push(file.clone());
            record.parse = Some("perf-sched".into());
            let running = start_tool(plan, ctx, record, argv, None, control)?;
            // perf writes its header at once; wait for it so the workloads start under tracing.
            if let Err(why) =
                wait_for_file(&ctx.run_dir.join(&file), &running, PERF_HEADER_DEADLINE)
            {
                let _ = running.stop(); // not left tracing every CPU behind the run
                return Err(why);
            }
            Ok(running)
        }
        MonitorKind::Turbostat(options) => {
            process::find_program("turbostat").ok_or_else(|| {
                Unavailable(
                    "turbostat is not installed (hint: apt-get install linux-cpupower)".into(),
                )
            })?;
            let argv = turbostat_argv(options);
            record.parse = Some("turbostat".into());
            let running = start_tool(plan, ctx, record, argv, Some(raw("turbostat.txt")), None)?;
            // turbostat fails within milliseconds where it cannot read MSRs; catch that now.
            std::thread::sleep(Duration::from_millis(300));
            exited_early(&running)?;
            Ok(running)
        }
        MonitorKind::Cpu(options) => {
            let file = raw("cpu_samples.parquet");
            record.files.push(file.clone());
            Ok(Running::Cpu(cpu::Sampler::start(
                ctx.run_id.to_owned(),
                options.interval,
                ctx.run_dir.join(file),
            )))
        }
        MonitorKind::Command { argv, parse } => {
            if process::find_program(&argv[0]).is_none() {
                return Err(Unavailable(format!(
                    "`{}` is not installed or not on PATH",
                    argv[0]
                )));
            }
            record.parse = parse.clone();
            start_tool(
                plan,
                ctx,
                record,
                argv.clone(),
                Some(raw("stdout.txt")),
                None,
            )
        }
    }
}

/// `control`: the options that start perf disabled under a control FIFO, for a window that
/// starts later than the run (see [`perf_control`]).
fn perf_sched_argv(
    options: &PerfSchedOptions,
    output: &Path,
    control: Option<Vec<String>>,
) -> Vec<String> {
    let mut argv: Vec<String> = ["perf", "sched", "record", "-a", "-k", "CLOCK_MONOTONIC"]
        .map(String::from)
        .into();
    if let Some(buffer) = &options.buffer {
        argv.extend(["-m".into(), buffer.clone()]);
    }
    argv.extend(control.into_iter().flatten());
    argv.extend(["-o".into(), output.display().to_string()]);
    argv
}

fn turbostat_argv(options: &TurbostatOptions) -> Vec<String> {
    let mut argv: Vec<String> = ["turbostat", "--quiet", "--interval"]
        .map(String::from)
        .into();
    argv.push(format!("{}", options.interval.as_secs_f64()));
    if !options.show.is_empty() {
        argv.extend(["--show".into(), options.show.join(",")]);
    }
    argv
}

/// How long after the run's start a monitor must be enabled, when its window starts later.
pub fn enable_after(plan: &MonitorPlan) -> Option<Duration> {
    let MonitorKind::PerfSched(options) = &plan.kind else {
        return None;
    };
    options.window.as_ref()?.start
}

/// How long after the run's start a monitor must be stopped, when it records a window only.
pub fn stop_after(plan: &MonitorPlan) -> Option<Duration> {
    let MonitorKind::PerfSched(options) = &plan.kind else {
        return None;
    };
    let window = options.window.as_ref()?;
    Some(window.start.unwrap_or_default() + window.duration?)
}

/// What starting this monitor would do, as `--dry-run` prints it.
pub fn describe(plan: &MonitorPlan, run_dir: &Path) -> String {
    let optional = if plan.optional { " (optional)" } else { "" };
    let what = match &plan.kind {
        MonitorKind::PerfSched(options) => {
            let (ctl, ack) = perf_control::placeholder_paths();
            let control = enable_after(plan).map(|_| perf_control::options_for(&ctl, &ack));
            let output = run_dir.join(raw_file(&format!("{}.perf.data", plan.name)));
            perf_sched_argv(options, &output, control).join(" ")
        }
        MonitorKind::Turbostat(options) => turbostat_argv(options).join(" "),
        MonitorKind::Placement(options) => {
            format!(
                "placement samples every {}",
                format_duration(options.interval)
            )
        }
        MonitorKind::Cpu(options) => {
            format!(
                "per-CPU samples every {}",
                format_duration(options.interval)
            )
        }
        MonitorKind::Command { argv, .. } => argv.join(" "),
    };
    let from = enable_after(plan)
        .map(|d| format!(", enabled at {:.3}s", d.as_secs_f64()))
        .unwrap_or_default();
    let until = stop_after(plan)
        .map(|d| format!(", stopped at {:.3}s", d.as_secs_f64()))
        .unwrap_or_default();
    format!("monitor {}{optional}: {what}{from}{until}", plan.name)
}

fn start_tool(
    plan: &MonitorPlan,
    ctx: &MonitorContext<'_>,
    record: &mut MonitorRecord,
    argv: Vec<String>,
    stdout: Option<String>,
    control: Option<PerfControl>,
) -> Result<Running, Unavailable> {
    let stderr = raw_file(&format!("{}.stderr.txt", plan.name));
    let stdout_path = stdout.as_ref().map(|f| ctx.run_dir.join(f));
    let stderr_path = ctx.run_dir.join(&stderr);
    let options = SpawnOptions {
        stdout: stdout_path.as_deref(),
        stderr: Some(&stderr_path),
        ..Default::default()
    };
    let child = process::spawn(&argv, &options)
        .map_err(|err| Unavailable(format!("cannot start `{}`: {err}", argv.join(" "))))?;
    record.argv = argv;
    record.files.extend(stdout);
    record.files.push(stderr);
    Ok(Running::Tool {
        child: Box::new(child),
        stderr: stderr_path,
        control,
    })
}

fn exited_early(running: &Running) -> Result<(), Unavailable> {
    match exit_message(running) {
        Some(how) => Err(Unavailable(format!("exited at once {how}"))),
        None => Ok(()),
    }
}

/// `with code N: <last lines of its stderr>` when an external tool has ended.
fn exit_message(running: &Running) -> Option<String> {
    let Running::Tool { child, stderr, .. } = running else {
        return None;
    };
    let exit = child.try_exit().ok().flatten()?;
    Some(format!(
        "with code {}: {}",
        exit.code,
        process::tail(stderr, 3).trim()
    ))
}

/// How long a running perf may take to write its header. A perf that cannot trace exits, and
/// the wait notices that at once; one still starting on a busy machine is only slow.
const PERF_HEADER_DEADLINE: Duration = Duration::from_secs(30);

fn wait_for_file(path: &Path, running: &Running, limit: Duration) -> Result<(), Unavailable> {
    let deadline = std::time::Instant::now() + limit;
    while std::time::Instant::now() < deadline {
        exited_early(running)?;
        if std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(Unavailable(format!(
        "{} did not appear within {limit:?}",
        path.display()
    )))
}

/// perf sched record needs perf, the sched tracepoints (tracefs) and the right to trace all CPUs.
fn check_perf_sched() -> Result<(), Unavailable> {
    process::find_program("perf").ok_or_else(|| {
        Unavailable("perf is not installed (hint: apt-get install linux-perf)".into())
    })?;
    let root = rustix::process::geteuid().is_root();
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|t| t.trim().parse::<i32>().ok())
        .unwrap_or(2);
    if !root && paranoid > -1 {
        return Err(Unavailable(format!(
            "tracing every CPU needs root or kernel.perf_event_paranoid <= -1 (it is {paranoid}); \
             hint: run as root, or `sysctl kernel.perf_event_paranoid=-1`"
        )));
    }
    let events = [
        "/sys/kernel/tracing/events/sched",
        "/sys/kernel/debug/tracing/events/sched",
    ];
    if events.iter().any(|p| Path::new(p).exists()) {
        return Ok(());
    }
    if !root {
        return Err(Unavailable(
            "tracefs is not mounted; hint: mount -t tracefs nodev /sys/kernel/tracing".into(),
        ));
    }
    let status = std::process::Command::new("mount")
        .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
        .status()
        .map_err(|err| Unavailable(format!("cannot run mount for tracefs: {err}")))?;
    if !status.success() || !Path::new(events[0]).exists() {
        return Err(Unavailable(
            "mounting tracefs on /sys/kernel/tracing failed; the kernel may lack sched tracepoints"
                .into(),
        ));
    }
    tracing::info!("mounted tracefs on /sys/kernel/tracing");
    Ok(())
}

impl Running {
    /// Starts recording a monitor that waits for its window (perf under a control FIFO); other
    /// monitors record from their start and have nothing to do.
    pub fn enable(&mut self) -> Result<(), String> {
        // A perf that is gone would never answer: say why it went instead of waiting.
        if let Some(how) = exit_message(self) {
            return Err(format!("perf exited before its window {how}"));
        }
        match self {
            Running::Tool {
                control: Some(control),
                ..
            } => control.enable(),
            _ => Ok(()),
        }
    }

    /// Asks an external tool to stop (SIGINT) without waiting for it: perf takes a second or
    /// more to flush, and the run's timeline must not stall meanwhile. [`Running::stop`] reaps it.
    pub fn request_stop(&self) {
        if let Running::Tool { child, .. } = self {
            child.signal(Signal::INT);
        }
    }

    /// Stops the monitor: SIGINT so tools flush what they buffered, then wait.
    pub fn stop(self) -> Result<Stopped, String> {
        match self {
            Running::Placement(sampler) => Ok(Stopped {
                self_cpu_ns: Some(sampler.stop()?),
                notes: Vec::new(),
            }),
            Running::Cpu(sampler) => {
                let (cpu_ns, notes) = sampler.stop()?;
                Ok(Stopped {
                    self_cpu_ns: Some(cpu_ns),
                    notes,
                })
            }
            Running::Tool { child, stderr, .. } => {
                let exit = child
                    .stop(Signal::INT, Duration::from_secs(30))
                    .map_err(|err| err.to_string())?;
                // SIGINT is the requested way to end these tools: 130 or 0 are both clean.
                if matches!(exit.code, 0 | 130) {
                    Ok(Stopped::default())
                } else {
                    Err(format!(
                        "exited with code {}: {}",
                        exit.code,
                        process::tail(&stderr, 3).trim()
                    ))
                }
            }
        }
    }
}
