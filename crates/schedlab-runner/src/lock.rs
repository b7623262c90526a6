//! One writer per pipeline data directory: an exclusive `flock` on `data/<pipeline>/.lock`, held
//! for the life of the command. `analyze --runs` takes it shared instead, with an exclusive lock
//! on each run it computes, so that a batch system can analyse runs in parallel jobs while
//! nothing else writes. The kernel drops a lock when the process dies, so a crash never leaves a
//! stale one; the file's text only says who holds it.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::Path;

use rustix::fs::{FlockOperation, flock};

use crate::RunnerError;

pub struct Lock {
    _file: File,
}

/// Whether a lock excludes every other holder or only exclusive ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Exclusive,
    Shared,
}

/// The exclusive lock on `path`, for the life of the returned value.
pub fn acquire(path: &Path, command: &str) -> Result<Lock, RunnerError> {
    acquire_as(path, command, Mode::Exclusive)
}

/// The lock on `path` in `mode`; fails at once (never waits) when another command holds it.
pub fn acquire_as(path: &Path, command: &str, mode: Mode) -> Result<Lock, RunnerError> {
    let io = |source| RunnerError::Io {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut file = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io)?;
    let operation = match mode {
        Mode::Exclusive => FlockOperation::NonBlockingLockExclusive,
        Mode::Shared => FlockOperation::NonBlockingLockShared,
    };
    if flock(&file, operation).is_err() {
        let mut holder = String::new();
        let _ = file.read_to_string(&mut holder);
        return Err(RunnerError::Locked {
            path: path.to_owned(),
            holder: holder.trim().to_owned(),
        });
    }
    if mode == Mode::Shared {
        // Other holders share the file: its text stays the first one's.
        return Ok(Lock { _file: file });
    }
    file.set_len(0).map_err(io)?;
    file.rewind().map_err(io)?;
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    writeln!(
        file,
        "pid {} ({command}) since unix time {since}",
        std::process::id()
    )
    .map_err(io)?;
    Ok(Lock { _file: file })
}
