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
    /// The number of the signal that ended it, if one did: `exit 137` and SIGKILL share a
    /// code, not this.
    pub signal: Option<i32>,
}

impl Exit {
    /// The name of the signal that ended the child (`SIGKILL`), as `kill -l` prints it, or
    /// `signal N` for one without a name (a real-time signal).
    pub fn signal_name(&self) -> Option<String> {
        self.signal.map(signal_name)
    }
}

/// `SIGKILL` for SIGKILL's number: the name a reader knows, whatever the architecture numbers it.
fn signal_name(raw: i32) -> String {
    const NAMES: [(Signal, &str); 29] = [
        (Signal::HUP, "SIGHUP"),
        (Signal::INT, "SIGINT"),
        (Signal::QUIT, "SIGQUIT"),
        (Signal::ILL, "SIGILL"),
        (Signal::TRAP, "SIGTRAP"),
        (Signal::ABORT, "SIGABRT"),
        (Signal::BUS, "SIGBUS"),
        (Signal::FPE, "SIGFPE"),
        (Signal::KILL, "SIGKILL"),
        (Signal::USR1, "SIGUSR1"),
        (Signal::SEGV, "SIGSEGV"),
        (Signal::USR2, "SIGUSR2"),
        (Signal::PIPE, "SIGPIPE"),
        (Signal::ALARM, "SIGALRM"),
        (Signal::TERM, "SIGTERM"),
        (Signal::CHILD, "SIGCHLD"),
        (Signal::CONT, "SIGCONT"),
        (Signal::STOP, "SIGSTOP"),
        (Signal::TSTP, "SIGTSTP"),
        (Signal::TTIN, "SIGTTIN"),
        (Signal::TTOU, "SIGTTOU"),
        (Signal::URG, "SIGURG"),
        (Signal::XCPU, "SIGXCPU"),
        (Signal::XFSZ, "SIGXFSZ"),
        (Signal::VTALARM, "SIGVTALRM"),
        (Signal::PROF, "SIGPROF"),
        (Signal::WINCH, "SIGWINCH"),
        (Signal::IO, "SIGIO"),
        (Signal::SYS, "SIGSYS"),
    ];
    (NAMES.iter())
        .find(|(known, _)| known.as_raw() == raw)
        .map_or_else(|| format!("signal {raw}"), |(_, name)| (*name).to_owned())
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
        signal: status.signal(),
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

/// The last line of a text file with anything on it, trimmed and cut to 200 characters (a
/// line of a quality note); `None` when the file is empty or unreadable.
pub fn last_line(path: &Path) -> Option<String> {
    let text = String::from_utf8_lossy(&std::fs::read(path).ok()?).into_owned();
    let line = text.lines().rev().map(str::trim).find(|l| !l.is_empty())?;
    let mut shown: String = line.chars().take(200).collect();
    if shown.len() < line.len() {
        shown.push('…');
    }
    Some(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How `sh -c script` ends, polled for up to 30 s (a busy machine starts shells slowly).
    fn exit_of_shell(script: &str) -> Exit {
        let argv = ["sh", "-c", script].map(str::to_owned);
        let child = spawn(&argv, &SpawnOptions::default()).expect("sh starts");
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Some(exit) = child.try_exit().expect("wait") {
                return exit;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("`sh -c {script}` did not end");
    }

    #[test]
    fn a_signal_is_told_from_an_exit_code_of_the_same_number() {
        let killed = exit_of_shell("kill -9 $$");
        assert_eq!(
            (killed.code, killed.signal_name().as_deref()),
            (137, Some("SIGKILL"))
        );
        let exited = exit_of_shell("exit 137");
        assert_eq!((exited.code, exited.signal_name()), (137, None));
        let terminated = exit_of_shell("kill -TERM $$");
        assert_eq!(terminated.signal_name().as_deref(), Some("SIGTERM"));
        // A real-time signal has no name in the table: its number is kept.
        let rt = exit_of_shell("kill -s RTMIN+3 $$");
        assert!(
            rt.signal_name().is_some_and(|n| n.starts_with("signal ")),
            "{rt:?}"
        );
    }
}
