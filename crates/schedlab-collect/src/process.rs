//! Starting and stopping the processes of a run: argv without a shell (duct), nice and CPU
//! affinity applied in the child before exec, each child in its own process group.
//!
//! Own process groups matter twice: a terminal's Ctrl-C reaches schedlab only, so schedlab decides
//! how each child stops (perf gets SIGINT so it flushes its buffers), and a stop signal sent to the
//! group reaches every worker a workload forked (stress-ng's workers), leaving no strays.

use std::fs::File;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group, setpgid, setpriority_process};
use rustix::thread::{CpuSet, sched_setaffinity};

/// How a child is to be started.
#[derive(Debug, Clone, Default)]
pub struct SpawnOptions<'a> {
    pub nice: i32,
    pub cpus: Option<&'a [u32]>,
    pub stdout: Option<&'a Path>,
    pub stderr: Option<&'a Path>,
}

/// A running child of the run.
pub struct Child {
    handle: duct::Handle,
    pub pid: i32,
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    /// Exit code, or `128 + signal` when a signal ended it (as shells report it).
    pub code: i32,
}

pub fn spawn(argv: &[String], options: &SpawnOptions<'_>) -> io::Result<Child> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| io::Error::other("empty argv"))?;
    let mut expression = duct::cmd(program, args).unchecked().stdin_null();
    expression = match options.stdout {
        Some(path) => expression.stdout_file(File::create(path)?),
        None => expression.stdout_null(),
    };
    expression = match options.stderr {
        Some(path) => expression.stderr_file(File::create(path)?),
        None => expression.stderr_null(),
    };
    let nice = options.nice;
    // Built before fork: nothing allocates between fork and exec.
    let cpuset = options.cpus.map(|cpus| {
        let mut set = CpuSet::new();
        cpus.iter().for_each(|&cpu| set.set(cpu as usize));
        set
    });
    let expression = expression.before_spawn(move |command| {
        // SAFETY: the closure only makes async-signal-safe system calls.
        unsafe {
            command.pre_exec(move || {
                setpgid(None, None)?;
                rustix::process::set_parent_process_death_signal(Some(Signal::TERM))?;
                if nice != 0 {
                    setpriority_process(None, nice)?;
                }
                if let Some(set) = &cpuset {
                    sched_setaffinity(None, set)?;
                }
                Ok(())
            });
        }
        Ok(())
    });
    let handle = expression.start()?;
    let pid = handle.pids().first().copied().unwrap_or(0) as i32;
    Ok(Child { handle, pid })
}

impl Child {
    /// The exit status if the child has ended, without blocking.
    pub fn try_exit(&self) -> io::Result<Option<Exit>> {
        Ok(self
            .handle
            .try_wait()?
            .map(|output| exit_of(&output.status)))
    }

    /// Sends `signal` to the child's whole process group.
    pub fn signal(&self, signal: Signal) {
        if let Some(pid) = Pid::from_raw(self.pid) {
            // The group may be gone already; that is what we want.
            let _ = kill_process_group(pid, signal);
        }
    }

    /// Signals the group, waits up to `grace`, then kills it; returns how it ended.
    pub fn stop(&self, signal: Signal, grace: Duration) -> io::Result<Exit> {
        self.signal(signal);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Some(exit) = self.try_exit()? {
                self.signal(Signal::KILL); // workers the leader left behind
                return Ok(exit);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.signal(Signal::KILL);
        Ok(exit_of(&self.handle.wait()?.status))
    }
}

fn exit_of(status: &std::process::ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    Exit {
        code: status
            .code()
            .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
    }
}

/// Finds `program` the way exec will: a path as given, or a name on PATH.
pub fn find_program(program: &str) -> Option<std::path::PathBuf> {
    if program.contains('/') {
        return Path::new(program).is_file().then(|| program.into());
    }
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| Path::new(dir).join(program))
        .find(|candidate| candidate.is_file())
}

/// The last `lines` lines of a text file, for error messages.
pub fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
