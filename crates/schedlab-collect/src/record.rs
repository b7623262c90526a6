//! The files a pipeline names under `collect.record`, read with the configuration in force at a
//! run's start: a tunable the fixed list of `sched_config` does not know (seed 002's cache-aware
//! scheduling `llc_aggr_tolerance`), so that runs under another value do not look the same.
//!
//! Each pattern is a glob. A file that cannot be read, and a pattern that matches none, is an
//! info note saying why (a file named exactly is then recorded as `unknown`, so that a kernel
//! without it differs from one with it); the run goes on.

use std::collections::BTreeMap;
use std::path::Path;

use schedlab_tables::Severity;
use schedlab_tables::manifest::Note;
use schedlab_tables::sched_config::UNKNOWN;

/// A recorded file's text longer than this is recorded as its size and digest: the `runs`
/// table holds every setting in one cell per run, and a diff only needs to see that it changed.
const LONGEST_TEXT: usize = 1024;

/// Reads every file `patterns` match (directories are left out: `sched/*` also matches
/// `sched/domains/`), by path, and a note for each one that could not be read.
pub fn read(patterns: &[String]) -> (BTreeMap<String, String>, Vec<Note>) {
    let mut recorded = BTreeMap::new();
    let mut notes = Vec::new();
    let mut note = |message: String| {
        notes.push(Note {
            source: "record".into(),
            severity: Severity::Info,
            message,
        });
    };
    for pattern in patterns {
        // A path without wildcards is recorded whether or not it is there: its absence is a
        // setting too.
        if !pattern.contains(['*', '?', '[']) {
            let value = match read_file(Path::new(pattern)) {
                Ok(value) => value,
                Err(why) => {
                    note(format!("{pattern}: {why} (recorded as {UNKNOWN})"));
                    UNKNOWN.to_owned()
                }
            };
            recorded.insert(pattern.clone(), value);
            continue;
        }
        let paths = match glob::glob(pattern) {
            Ok(paths) => paths,
            Err(err) => {
                note(format!("{pattern}: not a glob pattern: {}", err.msg));
                continue;
            }
        };
        let mut matched = 0;
        for entry in paths {
            let path = match entry {
                Ok(path) => path,
                Err(err) => {
                    note(format!("{pattern}: {err}"));
                    continue;
                }
            };
            if path.is_dir() {
                continue;
            }
            matched += 1;
            let name = path.display().to_string();
            let value = match read_file(&path) {
                Ok(value) => value,
                Err(why) => {
                    note(format!("{name}: {why} (recorded as {UNKNOWN})"));
                    UNKNOWN.to_owned()
                }
            };
            recorded.insert(name, value);
        }
        if matched == 0 {
            note(format!("{pattern}: matches no file"));
        }
    }
    (recorded, notes)
}

/// A file's text, trimmed; a long one as its size and BLAKE3 digest.
fn read_file(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim();
    if text.len() <= LONGEST_TEXT {
        return Ok(text.to_owned());
    }
    let digest = blake3::hash(&bytes).to_hex();
    Ok(format!("{} bytes, blake3 {}", bytes.len(), &digest[..16]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_read_by_pattern_and_what_cannot_be_read_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name).display().to_string();
        std::fs::write(at("a_ns"), "3000000\n").unwrap();
        std::fs::write(at("b_ns"), "7\n").unwrap();
        std::fs::write(at("long"), "x".repeat(LONGEST_TEXT + 1)).unwrap();
        std::fs::create_dir(at("domains")).unwrap();
        let patterns = [at("*_ns"), at("long"), at("missing"), at("none*"), at("*")];
        let (recorded, notes) = read(&patterns);
        assert_eq!(recorded[&at("a_ns")], "3000000");
        assert_eq!(recorded[&at("b_ns")], "7");
        assert_eq!(
            recorded[&at("long")],
            format!(
                "1025 bytes, blake3 {}",
                &blake3::hash("x".repeat(1025).as_bytes()).to_hex()[..16]
            )
        );
        assert_eq!(recorded[&at("missing")], UNKNOWN);
        assert!(!recorded.contains_key(&at("domains")), "{recorded:?}");
        let messages: Vec<&str> = notes.iter().map(|n| n.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                format!(
                    "{}: No such file or directory (os error 2) (recorded as unknown)",
                    at("missing")
                ),
                format!("{}: matches no file", at("none*")),
            ]
        );
        assert!(notes.iter().all(|n| n.severity == Severity::Info));
    }
}
