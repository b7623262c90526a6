//! Which parser reads a file, told from its content: a recording made by hand comes without a
//! pipeline saying what each file is (`schedlab parse auto FILE…`).
//!
//! Each kind is recognised by what its tool always prints: perf.data's and trace.dat's magic, a
//! Perfetto trace's packet records (the first must decode as a TracePacket), the column header
//! of `perf sched timehist` (or its runtime summary), turbostat's column names, GNU time's
//! labels or the shell's `real`/`user`/`sys`, perf stat's banner or its `-x,` interval rows,
//! openssl speed's banner and result lines, stress-ng's `stress-ng:` prefix. Rules are tried in
//! that order, most specific first: an openssl run logged by a wrapper can mention stress-ng, but
//! no stress-ng log carries openssl's result header. Only the first [`HEAD_BYTES`] are read.

use std::path::{Path, PathBuf};

use crate::ParserKind;

/// How much of a file the rules look at: every tool prints its header within its first lines,
/// and GNU time's labels follow the program's own output, which can be long.
pub const HEAD_BYTES: usize = 256 * 1024;

/// A file's kind and the evidence for it, in words (`perf.data magic`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detected {
    pub kind: ParserKind,
    pub evidence: &'static str,
}

/// The kind of the file whose first bytes are `head` (at most [`HEAD_BYTES`] are used), or
/// `None` when no rule matches.
pub fn detect(head: &[u8]) -> Option<Detected> {
    let found = |kind, evidence| Some(Detected { kind, evidence });
    if head.starts_with(b"PERFILE2") {
        return found(ParserKind::PerfSched, "perf.data magic PERFILE2");
    }
    if head.starts_with(schedlab_tracecmd::MAGIC) {
        return found(ParserKind::TraceCmd, "trace.dat magic \\x17\\x08Dtracing");
    }
    if schedlab_perfetto::looks_like_trace(head) {
        return found(
            ParserKind::Perfetto,
            "Perfetto TracePacket records (the first decodes)",
        );
    }
    let text = String::from_utf8_lossy(&head[..head.len().min(HEAD_BYTES)]);
    let lines = || text.lines().map(str::trim);
    let has = |needle: &str| text.contains(needle);
    let words_of = |line: &str| {
        line.split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };

    if lines().any(|l| l.contains("task name") && l.contains("wait time"))
        || (has("Runtime summary") && has("sched-in"))
    {
        return found(ParserKind::Timehist, "perf sched timehist's column header");
    }
    if lines().any(|l| {
        let words = words_of(l);
        let has_word = |w: &str| words.iter().any(|x| x == w);
        (has_word("Busy%") || has_word("%Busy")) && (has_word("Bzy_MHz") || has_word("Avg_MHz"))
    }) {
        return found(ParserKind::Turbostat, "turbostat's Busy% and MHz columns");
    }
    if has("Command being timed:") || has("Elapsed (wall clock) time") {
        return found(ParserKind::Time, "GNU time -v's labels");
    }
    let shell_time = ["real", "user", "sys"].iter().all(|label| {
        lines().any(|l| {
            l.strip_prefix(label)
                .is_some_and(|rest| rest.starts_with([' ', '\t']) && rest.trim().ends_with('s'))
        })
    });
    if shell_time {
        return found(ParserKind::Time, "the shell's real/user/sys lines");
    }
    if has("Performance counter stats for") {
        return found(ParserKind::PerfStat, "perf stat's banner");
    }
    if lines().any(is_perf_stat_csv) {
        return found(ParserKind::PerfStat, "perf stat -x, interval rows");
    }
    if lines().any(|l| l.starts_with('#') && l.contains(" time ") && l.contains(" counts ")) {
        return found(ParserKind::PerfStat, "perf stat -I's column header");
    }
    if has("The 'numbers' are in 1000s of bytes per second processed")
        || lines().any(|l| l.starts_with("+DT:") || l.starts_with("+H:"))
        || lines().any(|l| l.starts_with("Doing ") && l.contains(" for ") && l.contains("s on "))
        || lines().any(|l| l.contains("sign/s") || l.contains("keygens/s"))
        || (lines().any(|l| l.starts_with("built on:"))
            && lines().any(|l| l.starts_with("options:")))
    {
        return found(ParserKind::Openssl, "openssl speed's results");
    }
    if lines().any(|l| l.starts_with("stress-ng: ") || l.contains(" stress-ng: ")) {
        return found(ParserKind::StressNg, "stress-ng's `stress-ng:` lines");
    }
    None
}

/// The kind of the file at `path`, from its first [`HEAD_BYTES`].
pub fn detect_file(path: &Path) -> std::io::Result<Option<Detected>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(HEAD_BYTES);
    std::fs::File::open(path)?
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut head)?;
    Ok(detect(&head))
}

/// Why [`detect_kind`] found no one kind for its files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DetectError {
    #[error("{}: cannot read it", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{}: not recognisably the output of any parser's tool; hint: name its parser instead of \
         `auto` ({})",
        path.display(),
        ParserKind::ALL.map(ParserKind::name).join(", ")
    )]
    Unrecognised { path: PathBuf },
    #[error(
        "the files are of different kinds ({}): parse each kind into its own --out",
        kinds.iter().map(|k| k.name()).collect::<Vec<_>>().join(", ")
    )]
    Mixed { kinds: Vec<ParserKind> },
    #[error("no files to tell the kind of")]
    NoFiles,
}

/// The one kind of `inputs`, told from their content; `said` hears each file and what it was
/// found to be, in order, before any later file's error. Files of different kinds would replace
/// each other's tables in one output directory, so they are an error, as is a file no rule
/// recognises.
pub fn detect_kind(
    inputs: &[PathBuf],
    said: &mut dyn FnMut(&Path, &Detected),
) -> Result<ParserKind, DetectError> {
    let mut kinds = Vec::new();
    for input in inputs {
        let detected = detect_file(input).map_err(|source| DetectError::Read {
            path: input.clone(),
            source,
        })?;
        let detected = detected.ok_or_else(|| DetectError::Unrecognised {
            path: input.clone(),
        })?;
        said(input, &detected);
        kinds.push(detected.kind);
    }
    kinds.sort();
    kinds.dedup();
    match kinds[..] {
        [kind] => Ok(kind),
        [] => Err(DetectError::NoFiles),
        _ => Err(DetectError::Mixed { kinds }),
    }
}

/// A row of `perf stat -x ,`: a count (or `<not counted>`), a unit, an event name, …; with
/// `-I` a time before them, with `-A` or `--per-core` a CPU or core (`CPU3`, `S0-D0-C1`):
/// `1.000659830,CPU0,4100064372,,cpu-cycles,…`.
fn is_perf_stat_csv(line: &str) -> bool {
    let fields: Vec<&str> = line.split(',').collect();
    let number = |f: &str| f.parse::<f64>().is_ok();
    let place = |f: &str| {
        f.starts_with("CPU")
            || (f.starts_with('S') && f[1..].starts_with(|c: char| c.is_ascii_digit()))
    };
    let mut rest = &fields[..];
    if rest.len() > 3
        && number(rest[0])
        && (number(rest[1]) || rest[1].starts_with('<') || place(rest[1]))
    {
        rest = &rest[1..]; // the time
    }
    if rest.first().is_some_and(|f| place(f)) {
        rest = &rest[1..];
    }
    rest.len() >= 3
        && (number(rest[0]) || rest[0].starts_with('<'))
        && rest[2]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shells_time_needs_all_three_lines() {
        let shell = "building\nreal\t0m1.503s\nuser\t0m2.001s\nsys\t0m0.100s\n";
        assert_eq!(
            detect(shell.as_bytes()).map(|d| d.kind),
            Some(ParserKind::Time)
        );
        let partial = "real\t0m1.503s\nuser\t0m2.001s\n";
        assert_eq!(detect(partial.as_bytes()), None);
        assert_eq!(detect(b"nothing a tool printed\n"), None);
        assert_eq!(detect(b""), None);
    }

    /// Writes each `(name, content)` into a fresh directory and tells their one kind, with the
    /// files said along the way.
    fn kind_of(files: &[(&str, &[u8])]) -> (Result<ParserKind, DetectError>, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let paths: Vec<PathBuf> = (files.iter())
            .map(|(name, content)| {
                let path = dir.path().join(name);
                std::fs::write(&path, content).unwrap();
                path
            })
            .collect();
        let mut said = Vec::new();
        let mut say = |path: &Path, found: &Detected| {
            let name = path.file_name().unwrap().to_string_lossy();
            said.push(format!("{name}: {} ({})", found.kind, found.evidence));
        };
        (detect_kind(&paths, &mut say), said)
    }

    #[test]
    fn files_of_one_kind_give_it_and_each_is_said() {
        let (kind, said) = kind_of(&[("a.data", b"PERFILE2...."), ("b.data", b"PERFILE2")]);
        assert_eq!(kind.unwrap(), ParserKind::PerfSched);
        assert_eq!(
            said,
            [
                "a.data: perf-sched (perf.data magic PERFILE2)",
                "b.data: perf-sched (perf.data magic PERFILE2)"
            ]
        );
    }

    #[test]
    fn mixed_unrecognised_and_missing_files_are_errors_naming_them() {
        let time = b"real\t0m1.5s\nuser\t0m1.0s\nsys\t0m0.1s\n";
        let (kind, said) = kind_of(&[("perf.data", b"PERFILE2"), ("t.txt", time)]);
        assert_eq!(
            kind.unwrap_err().to_string(),
            "the files are of different kinds (perf-sched, time): parse each kind into its own \
             --out"
        );
        assert_eq!(said.len(), 2);

        let (kind, said) = kind_of(&[("perf.data", b"PERFILE2"), ("notes.txt", b"hello\n")]);
        let message = kind.unwrap_err().to_string();
        assert!(
            message.ends_with(
                "notes.txt: not recognisably the output of any parser's tool; hint: name its \
                 parser instead of `auto` (perf-sched, trace-cmd, perfetto, timehist, \
                 turbostat, stress-ng, openssl, time, perf-stat)"
            ),
            "{message}"
        );
        assert_eq!(said, ["perf.data: perf-sched (perf.data magic PERFILE2)"]);

        let missing = detect_kind(&[PathBuf::from("/nonexistent/perf.data")], &mut |_, _| {});
        assert!(matches!(missing, Err(DetectError::Read { .. })));
        assert!(matches!(
            detect_kind(&[], &mut |_, _| {}),
            Err(DetectError::NoFiles)
        ));
    }
}
