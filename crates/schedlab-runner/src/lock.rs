//! One writer per pipeline data directory: an exclusive `flock` on `data/<pipeline>/.lock`, held
//! for the life of the command. The kernel drops it when the process dies, so a crash never
//! leaves a stale lock; the file's text only says who holds it.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::Path;

use rustix::fs::{FlockOperation, flock};

use crate::RunnerError;

pub struct Lock {
    _file: File,
}

pub fn acquire(path: &Path, command: &str) -> Result<Lock, RunnerError> {
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
    if flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
        let mut holder = String::new();
        let _ = file.read_to_string(&mut holder);
        return Err(RunnerError::Locked {
            path: path.to_owned(),
            holder: holder.trim().to_owned(),
        });
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
