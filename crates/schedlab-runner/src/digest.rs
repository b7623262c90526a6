//! File digests that stay cheap on gigabytes: a file whose size, mtime and inode match the last
//! time it was hashed keeps its recorded BLAKE3 digest; only a changed file is read again.

use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::MetadataExt;
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
    /// True when `path` is still the file this stamp was taken of, judged by stat alone.
    pub fn describes(&self, path: &Path) -> bool {
        std::fs::metadata(path).is_ok_and(|meta| self.same_file(&meta))
    }

    fn same_file(&self, meta: &std::fs::Metadata) -> bool {
        self.size == meta.len() && self.mtime_ns == mtime_ns(meta) && self.inode == meta.ino()
    }
}

fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.mtime() * 1_000_000_000 + meta.mtime_nsec()
}

/// Hashes `path`, read through a small buffer so that memory stays flat on a large trace (a
/// memory map made every page of the file resident in the process: hashing a 120 MiB trace
/// counted 120 MiB in the parse stage's peak RSS). The bytes read advance `bar`, if any.
pub fn stamp(path: &Path, bar: Option<&ProgressBar>) -> io::Result<Stamp> {
    let meta = std::fs::metadata(path)?;
    let file = std::fs::File::open(path)?;
    let mut hasher = blake3::Hasher::new();
    match bar {
        Some(bar) => hasher.update_reader(bar.wrap_read(file))?,
        None => hasher.update_reader(file)?,
    };
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
        crate::write_json(path, self)
    }

    /// The digest of `path`, known as `key`; `None` when the file does not exist.
    pub fn digest(&mut self, key: &str, path: &Path) -> io::Result<Option<String>> {
        let meta = match std::fs::metadata(path) {
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
        match (self.0.get(key), std::fs::metadata(path)) {
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
