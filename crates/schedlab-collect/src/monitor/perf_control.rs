//! perf's control FIFOs, so that a recording window starts when the run says.
//!
//! `perf record --delay N` counts from perf's own start, which comes before the run's zero (the
//! collector waits for perf's file before it starts the workloads): a window asked to start
//! at 500 ms began earlier by perf's start-up time. Instead perf starts with its events
//! disabled (`-D -1`) and the collector writes `enable` to perf's control FIFO at the window's
//! start, then waits for perf's `ack` (`perf record --control fifo:CTL,ACK`, perf 5.10 on).

use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::{FileType, Mode, mknodat};

/// How long perf may take to acknowledge a command: it polls its control FIFO along with its
/// ring buffers, so it answers within milliseconds unless the machine is saturated.
const ACK_WAIT: Duration = Duration::from_secs(2);

/// The two FIFOs of one perf process, in a private temporary directory removed on drop (kept
/// out of the run directory: reading a FIFO left there by a killed run would block forever).
pub struct PerfControl {
    dir: tempfile::TempDir,
    /// Our ends, opened read-write and non-blocking before perf starts (on Linux such an open
    /// never waits for the other side, whichever way perf opens its ends).
    ctl: File,
    ack: File,
}

impl PerfControl {
    /// Makes the FIFOs and opens our ends; call before starting perf.
    pub fn open() -> io::Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("schedlab-perf-control-")
            .tempdir()?;
        for path in [dir.path().join("ctl"), dir.path().join("ack")] {
            mknodat(
                rustix::fs::CWD,
                &path,
                FileType::Fifo,
                Mode::from_raw_mode(0o600),
                0,
            )?;
        }
        let open = |name: &str| {
            OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
                .open(dir.path().join(name))
        };
        let (ctl, ack) = (open("ctl")?, open("ack")?);
        Ok(PerfControl { dir, ctl, ack })
    }

    /// The perf options that start it disabled and listening on these FIFOs.
    pub fn options(&self) -> Vec<String> {
        options_for(&self.dir.path().join("ctl"), &self.dir.path().join("ack"))
    }

    /// Enables perf's events and waits for its acknowledgement.
    pub fn enable(&mut self) -> Result<(), String> {
        let (ctl, ack) = (&mut self.ctl, &mut self.ack);
        ctl.write_all(b"enable\n")
            .map_err(|err| format!("cannot write to perf's control FIFO: {err}"))?;
        let deadline = Instant::now() + ACK_WAIT;
        let mut reply = Vec::new();
        let mut buf = [0u8; 16];
        // perf answers `ack\n` followed by a NUL byte; the line is what counts.
        while !reply.contains(&b'\n') {
            match ack.read(&mut buf) {
                Ok(n) => reply.extend_from_slice(&buf[..n]),
                Err(err) if err.kind() == ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        return Err(format!(
                            "perf did not acknowledge `enable` within {ACK_WAIT:?}"
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(err) => return Err(format!("cannot read perf's acknowledgement: {err}")),
            }
        }
        let line = reply.split(|&b| b == b'\n').next().unwrap_or_default();
        match line.trim_ascii() {
            b"ack" => Ok(()),
            other => Err(format!(
                "perf answered `enable` with {:?}",
                String::from_utf8_lossy(other)
            )),
        }
    }
}

/// `-D -1 --control fifo:CTL,ACK`: events disabled until `enable` arrives on CTL.
pub fn options_for(ctl: &Path, ack: &Path) -> Vec<String> {
    vec![
        "-D".into(),
        "-1".into(),
        "--control".into(),
        format!("fifo:{},{}", ctl.display(), ack.display()),
    ]
}

/// Where [`PerfControl::open`] puts the FIFOs, for `--dry-run` (the real name is random).
pub fn placeholder_paths() -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join("schedlab-perf-control-XXXXXX");
    (dir.join("ctl"), dir.join("ack"))
}
