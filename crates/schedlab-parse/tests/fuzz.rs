//! No parser panics, whatever it is given: random bytes, and real fixtures truncated, with
//! bytes flipped, lines dropped or repeated, or lines of another tool's output spliced in.
//! Every error names a line that exists.

use std::path::PathBuf;
use std::sync::OnceLock;

use proptest::prelude::*;
use schedlab_parse::{ParseContext, ParseError, ParserKind};

/// Each text parser and the fixture directories that feed it.
const PARSERS: [(ParserKind, &str); 6] = [
    (ParserKind::Turbostat, "turbostat"),
    (ParserKind::StressNg, "stress-ng"),
    (ParserKind::Openssl, "openssl-speed"),
    (ParserKind::Time, "time-v"),
    (ParserKind::PerfStat, "perf-stat"),
    (ParserKind::Timehist, "perf-sched"),
];

/// Fixture inputs are cut to this size so a case stays fast in debug builds.
const MAX_INPUT: usize = 24 * 1024;

/// Every fixture's bytes (the ones recorded here, and the real outputs of other machines where the
/// shared fixtures are beside the repository), loaded once.
fn corpus() -> &'static [Vec<u8>] {
    static CORPUS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let mut dirs = vec![root.join("tests/fixtures")];
        let test = "the fuzz tests' real outputs of other machines (those recorded here still run)";
        if let Some(real) = schedlab_testkit::shared_fixtures(test, "") {
            dirs.extend(PARSERS.iter().map(|(_, dir)| real.join(dir)));
        }
        let mut files: Vec<PathBuf> = dirs
            .iter()
            .flat_map(|d| std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()))
            .collect();
        files.sort();
        files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "txt"))
            .map(|p| {
                let mut bytes = std::fs::read(p).unwrap();
                bytes.truncate(MAX_INPUT);
                bytes
            })
            .collect()
    })
}

/// A way to damage a fixture.
#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    FlipBytes(Vec<(usize, u8)>),
    DropLine(usize),
    RepeatLine(usize),
    SpliceFrom {
        other: usize,
        line: usize,
        at: usize,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        prop::collection::vec((any::<usize>(), any::<u8>()), 1..8).prop_map(Mutation::FlipBytes),
        any::<usize>().prop_map(Mutation::DropLine),
        any::<usize>().prop_map(Mutation::RepeatLine),
        (any::<usize>(), any::<usize>(), any::<usize>())
            .prop_map(|(other, line, at)| Mutation::SpliceFrom { other, line, at }),
    ]
}

fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.split_inclusive(|b| *b == b'\n').collect()
}

fn apply(bytes: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for m in mutations {
        match m {
            Mutation::Truncate(at) => out.truncate(at % (out.len() + 1)),
            Mutation::FlipBytes(flips) => {
                for (at, byte) in flips {
                    if !out.is_empty() {
                        let i = at % out.len();
                        out[i] = *byte;
                    }
                }
            }
            Mutation::DropLine(n) | Mutation::RepeatLine(n) => {
                let mut ls: Vec<Vec<u8>> = lines(&out).into_iter().map(<[u8]>::to_vec).collect();
                if !ls.is_empty() {
                    let i = n % ls.len();
                    if matches!(m, Mutation::DropLine(_)) {
                        ls.remove(i);
                    } else {
                        ls.insert(i, ls[i].clone());
                    }
                }
                out = ls.concat();
            }
            Mutation::SpliceFrom { other, line, at } => {
                let corpus = corpus();
                let donor = lines(&corpus[other % corpus.len()]);
                let mut ls: Vec<&[u8]> = lines(&out);
                let piece: Vec<u8> = donor
                    .get(line % donor.len().max(1))
                    .map(|l| l.to_vec())
                    .unwrap_or_default();
                let i = at % (ls.len() + 1);
                ls.insert(i, &piece);
                out = ls.concat();
            }
        }
    }
    out
}

/// Parses with every text parser; panics propagate, and an error must name a real line.
fn parse_all(bytes: &[u8]) {
    let ctx = ParseContext {
        run_id: "fuzz".into(),
        start_ns: Some(i64::MAX - 5),
        ..ParseContext::default()
    };
    let line_count = bytes.split(|b| *b == b'\n').count().max(1);
    for (kind, _) in PARSERS {
        match schedlab_parse::parse(kind, "fuzz.txt", bytes, &ctx) {
            Ok(parsed) => {
                for batch in &parsed.turbostat {
                    assert!(batch.num_columns() >= 8);
                }
            }
            Err(ParseError::Text { line, .. }) => assert!(
                (1..=line_count).contains(&line),
                "{kind}: line {line} of {line_count}"
            ),
            Err(other) => panic!("{kind}: unexpected error kind {other}"),
        }
    }
}

// 256 cases per property by default; `PROPTEST_CASES=100000` for a longer hunt.
proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        parse_all(&bytes);
    }

    #[test]
    fn random_text_of_tool_words_never_panics(
        words in prop::collection::vec(
            prop::sample::select(vec![
                "CPU", "Core", "Busy%", "-", "0", "1.5", "sec", "\t", " ", "\n", "[0001]", "stress-ng:", "metrc:",
                "[12]", "stressor", "bogo ops", "Doing", "for", "1s", "on", "16", "size blocks:", "type", "bytes",
                "12.5k", "awakened:", "migrated:", "cpu", "=>", "task name", "wait time", "Runtime summary",
                "comm[1/2]", "User time (seconds):", "real", "0m1.5s", "msec", "task-clock", ",", "CPU0",
                "99999999999999999999", "-9223372036854.775808", "\u{a0}", "ü", "%", "(", ")", "#",
            ]),
            0..200,
        )
    ) {
        parse_all(words.concat().as_bytes());
    }

    #[test]
    fn mutated_fixtures_never_panic(file in any::<usize>(), mutations in prop::collection::vec(mutation(), 1..4)) {
        let corpus = corpus();
        let bytes = apply(&corpus[file % corpus.len()], &mutations);
        parse_all(&bytes);
    }
}

#[test]
fn every_fixture_parses_with_every_parser_without_panicking() {
    for bytes in corpus() {
        parse_all(bytes);
    }
}
