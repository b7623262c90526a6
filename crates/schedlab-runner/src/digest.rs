//! File digests that stay cheap on gigabytes: a file whose size, mtime and inode match the last
//! time it was hashed keeps its recorded BLAKE3 digest; only a changed file is read again.

use std::collections::BTreeMap;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

/// What a file looked like when it was hashed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: i64,
    pub inode: u64,
    pub blake3: String,
}

impl Stamp {
    /// True when `path` is still the file this stamp was taken of, judged by stat alone (a
    /// symlink put in its place is not).
    pub fn describes(&self, path: &Path) -> bool {
        std::fs::symlink_metadata(path).is_ok_and(|meta| self.same_file(&meta))
    }

    fn same_file(&self, meta: &std::fs::Metadata) -> bool {
        self.size == meta.len() && self.mtime_ns == mtime_ns(meta) && self.inode == meta.ino()
    }
}

fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.mtime() * 1_000_000_000 + meta.mtime_nsec()
}

/// Opens `path` for reading only when it is itself a regular file. A symlink (to whatever),
/// a device, a FIFO or a socket is refused: a run directory may come from a machine or share
/// others write to, and a planted `raw/x -> /etc/shadow` must not make schedlab read, hash or
/// copy a file outside the run. The check is made on the opened file, so nothing can be
/// swapped in between a look and the open; a FIFO is opened without blocking, then refused.
pub fn open_regular(path: &Path) -> io::Result<(File, Metadata)> {
    let refused = |what: &str| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what}, not a regular file: refused, so that nothing outside the run is read"),
        )
    };
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|err| match err.raw_os_error() {
            Some(libc::ELOOP) => refused("a symbolic link"),
            _ => err,
        })?;
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok((file, meta));
    }
    Err(refused(if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "a device"
    }))
}

/// Bytes hashed at a time: enough for BLAKE3 to share each among rayon's threads, few enough that
/// memory stays flat on a large trace (a memory map made every page of the file resident in the
/// process). Below the allocator's own mappings (`huge_pages` in the schedlab binary), so the
/// buffer comes from the heap's freed memory: a stage stamps each table it wrote, and a fresh
/// mapping per file cost a huge page faulted in and zeroed for a table of a few kilobytes.
const CHUNK: u64 = 1 << 20;

/// Hashes `path` (a regular file: [`open_regular`]) a chunk at a time on rayon's threads. The
/// bytes read advance `bar`, if any.
pub fn stamp(path: &Path, bar: Option<&ProgressBar>) -> io::Result<Stamp> {
    let (file, meta) = open_regular(path)?;
    let mut hasher = blake3::Hasher::new();
    let mut chunk = Vec::with_capacity(CHUNK.min(meta.len()) as usize);
    loop {
        chunk.clear();
        let read = (&file).take(CHUNK).read_to_end(&mut chunk)?;
        if read == 0 {
            break;
        }
        hasher.update_rayon(&chunk);
        if let Some(bar) = bar {
            bar.inc(read as u64);
        }
    }
    Ok(Stamp {
        size: meta.len(),
        mtime_ns: mtime_ns(&meta),
        inode: meta.ino(),
        blake3: hasher.finalize().to_hex().to_string(),
    })
}

/// Known digests by path; [`Digests::digest`] re-hashes only files that changed on disk.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Digests(pub BTreeMap<String, Stamp>);

impl Digests {
    /// The cache kept in `path`; empty when there is none or it cannot be read (a lost cache
    /// costs hashing again, never a wrong answer).
    pub fn load(path: &Path) -> Digests {
        std::fs::read(path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Writes the cache to `path` atomically. Parallel `analyze --runs` jobs each write theirs;
    /// the last one wins, and the others' entries are hashed again when next needed.
    pub fn save(&self, path: &Path) -> Result<(), crate::RunnerError> {
        crate::files::write_json(path, self)
    }

    /// The digest of `path`, known as `key`; `None` when the file does not exist.
    pub fn digest(&mut self, key: &str, path: &Path) -> io::Result<Option<String>> {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(err),
        };
        if let Some(known) = self.0.get(key)
            && known.same_file(&meta)
        {
            return Ok(Some(known.blake3.clone()));
        }
        let fresh = stamp(path, None)?;
        let hash = fresh.blake3.clone();
        self.0.insert(key.to_owned(), fresh);
        Ok(Some(hash))
    }

    /// True when `path` is exactly as recorded under `key`, judged by stat alone.
    pub fn unchanged(&self, key: &str, path: &Path) -> bool {
        match (self.0.get(key), std::fs::symlink_metadata(path)) {
            (Some(known), Ok(meta)) => known.same_file(&meta),
            _ => false,
        }
    }
}

/// A stable digest of a JSON value (object keys are sorted by serde_json's map).
pub fn of_json(value: &serde_json::Value) -> String {
    blake3::hash(value.to_string().as_bytes())
        .to_hex()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_regular_file_itself_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("raw.bin");
        std::fs::write(&file, b"bytes").unwrap();
        assert_eq!(open_regular(&file).unwrap().1.len(), 5);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let fifo = dir.path().join("fifo");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        // The FIFO has no writer: a blocking open would hang here.
        for (path, what) in [
            (&link, "a symbolic link"),
            (&fifo, "a FIFO"),
            (&dir.path().to_owned(), "a directory"),
        ] {
            let err = open_regular(path).unwrap_err();
            assert!(
                err.to_string().starts_with(what),
                "{}: {err}",
                path.display()
            );
        }
        assert!(stamp(&link, None).is_err());
        assert!(Digests::default().digest("link", &link).is_err());
    }

    #[test]
    fn unchanged_files_are_not_read_again_and_changed_ones_are() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("raw.bin");
        std::fs::write(&path, b"first").unwrap();
        let mut digests = Digests::default();
        let first = digests.digest("raw.bin", &path).unwrap().unwrap();
        // Poison the recorded hash: a digest served from the stamp proves no re-read happened.
        digests.0.get_mut("raw.bin").unwrap().blake3 = "recorded".into();
        assert_eq!(
            digests.digest("raw.bin", &path).unwrap().unwrap(),
            "recorded"
        );
        std::fs::write(&path, b"second, longer").unwrap();
        let second = digests.digest("raw.bin", &path).unwrap().unwrap();
        assert_ne!(second, first);
        assert_ne!(second, "recorded");
        assert_eq!(
            digests
                .digest("missing", &dir.path().join("missing"))
                .unwrap(),
            None
        );
    }

    #[test]
    fn a_file_read_in_pieces_has_the_digest_of_its_bytes() {
        // Larger than any read buffer, so the digest is built from many pieces; it must be the
        // one-shot digest that manifests and `gather` compare against.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("raw.bin");
        let bytes: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let stamp = stamp(&path, None).unwrap();
        assert_eq!(stamp.blake3, blake3::hash(&bytes).to_hex().as_str());
        assert_eq!(stamp.size, 3_000_000);
    }
}
