//! No pipeline panics compile, whatever it says: the shipped pipelines with lines deleted,
//! repeated or swapped, numbers replaced by huge, negative, zero or fractional ones, keys and
//! stray characters inserted, or the text cut short. Every error has a position in the file.

use std::path::PathBuf;
use std::sync::OnceLock;

use proptest::prelude::*;
use schedlab_spec::{CompileOptions, compile};

/// The shipped pipelines' texts, loaded once.
fn corpus() -> &'static [String] {
    static CORPUS: OnceLock<Vec<String>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../pipelines");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no pipelines in {}", dir.display());
        files
            .iter()
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect()
    })
}

/// What replaces a number: the values that broke or could break a check.
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "-0",
    "0.5",
    "1e400",
    "4294967295",
    "4294967296",
    "18446744073709551616",
    "99999999999999999999",
    "9223372036854775807",
    ".5",
    "1.",
    "nan",
    "inf",
];

/// Keys a pipeline knows, and some it does not, for inserted lines.
const KEYS: &[&str] = &[
    "threads",
    "instances",
    "repeat",
    "cpus",
    "nice",
    "duration",
    "period",
    "busy",
    "duty",
    "interval",
    "window",
    "matrix",
    "workloads",
    "monitors",
    "run",
    "periodic",
    "when",
    "name",
    "<<",
    "x",
    "start_afer",
    "short",
    "topology",
];

/// Stray text: YAML's own punctuation, anchors, tags, unicode.
const JUNK: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "- ",
    "\"",
    "'",
    "&a ",
    "*a",
    "!!str ",
    "|",
    ">",
    "#",
    "%",
    "@",
    "`",
    "\t",
    "ü",
    "${nproc}",
    "${nproc_P}",
    "${nproc_except_LPE}",
    "P:1",
    "E:0",
    "LPE:99999999999",
    "${",
    "0-4294967295",
    "\u{feff}",
    "? ",
    "---\n",
    "...\n",
];

#[derive(Debug, Clone)]
enum Mutation {
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    ReplaceNumber(usize, &'static str),
    InsertKey {
        line: usize,
        indent: usize,
        key: &'static str,
        value: &'static str,
    },
    InsertText(usize, &'static str),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let value = prop::sample::select(
        NUMBERS
            .iter()
            .chain(["10ms", "99999999999999999999h", "[]", "{}", "\"\"", "on"].iter())
            .copied()
            .collect::<Vec<_>>(),
    );
    prop_oneof![
        1 => any::<usize>().prop_map(Mutation::DeleteLine),
        1 => any::<usize>().prop_map(Mutation::DuplicateLine),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        3 => (any::<usize>(), prop::sample::select(NUMBERS))
            .prop_map(|(n, with)| Mutation::ReplaceNumber(n, with)),
        2 => (any::<usize>(), 0..8_usize, prop::sample::select(KEYS), value).prop_map(
            |(line, indent, key, value)| Mutation::InsertKey { line, indent, key, value }
        ),
        1 => (any::<usize>(), prop::sample::select(JUNK))
            .prop_map(|(at, text)| Mutation::InsertText(at, text)),
        1 => any::<usize>().prop_map(Mutation::Truncate),
    ]
}

/// The char boundary at or before `at % (len + 1)`.
fn boundary(text: &str, at: usize) -> usize {
    let mut at = at % (text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn apply(text: &str, mutations: &[Mutation]) -> String {
    let mut out = text.to_owned();
    for m in mutations {
        let mut lines: Vec<String> = out.split_inclusive('\n').map(str::to_owned).collect();
        let n = lines.len().max(1);
        match m {
            Mutation::DeleteLine(i) if !lines.is_empty() => {
                lines.remove(i % n);
            }
            Mutation::DuplicateLine(i) if !lines.is_empty() => {
                lines.insert(i % n, lines[i % n].clone());
            }
            Mutation::SwapLines(a, b) if !lines.is_empty() => lines.swap(a % n, b % n),
            Mutation::InsertKey {
                line,
                indent,
                key,
                value,
            } => {
                let text = format!("{}{key}: {value}\n", " ".repeat(*indent));
                lines.insert(line % (lines.len() + 1), text);
            }
            Mutation::ReplaceNumber(k, with) => {
                let numbers: Vec<(usize, usize)> = number_spans(&out);
                if !numbers.is_empty() {
                    let (start, end) = numbers[k % numbers.len()];
                    out.replace_range(start..end, with);
                }
                continue;
            }
            Mutation::InsertText(at, text) => {
                out.insert_str(boundary(&out, *at), text);
                continue;
            }
            Mutation::Truncate(at) => {
                out.truncate(boundary(&out, *at));
                continue;
            }
            _ => {}
        }
        out = lines.concat();
    }
    out
}

/// Byte ranges of the digit runs (with a fraction) in `text`.
fn number_spans(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
                i += 1;
            }
            spans.push((start, i));
        } else {
            i += 1;
        }
    }
    spans
}

/// A machine of three core classes, as `schedlab topology` would describe a small hybrid one.
static HYBRID: std::sync::LazyLock<Vec<(String, Vec<u32>)>> = std::sync::LazyLock::new(|| {
    vec![
        ("P".into(), vec![0, 1]),
        ("E".into(), vec![2, 3, 4, 5]),
        ("LPE".into(), vec![6, 7]),
    ]
});

/// The runner's rule is not reachable from here; this one refuses what it refuses most often.
fn name_part(text: &str) -> Result<(), String> {
    if text.is_empty() || text.contains(['.', '/', '$']) {
        Err("no dots, slashes or dollars".into())
    } else {
        Ok(())
    }
}

/// Compiles `source`; panics propagate, and every error must point into the file.
fn check(source: &str) {
    let options = CompileOptions {
        parsers: &["perf-sched", "stress-ng", "openssl", "time", "turbostat"],
        nproc: 8,
        classes: &HYBRID,
        short: false,
        name_part,
        repeat: None,
    };
    let Err(errors) = compile("fuzz.yaml", source, &options) else {
        return;
    };
    assert!(!errors.is_empty());
    let lines = source.lines().count() as u64 + 1;
    for error in errors {
        assert!(
            (1..=lines).contains(&error.line) && error.column >= 1,
            "no position: {error}\n--- source:\n{source}"
        );
    }
}

// 256 cases by default; `just fuzz` runs thousands (`PROPTEST_CASES=100000` for a longer hunt).
proptest! {
    #[test]
    fn mutated_pipelines_never_panic(
        file in any::<usize>(),
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        let corpus = corpus();
        check(&apply(&corpus[file % corpus.len()], &mutations));
    }
}

/// Each number of each pipeline, in turn, replaced by each edge value.
#[test]
fn every_number_replaced_by_an_edge_value_is_an_error_with_a_position_or_fine() {
    for source in corpus() {
        for (start, end) in number_spans(source) {
            for number in NUMBERS {
                let mut text = source.clone();
                text.replace_range(start..end, number);
                check(&text);
            }
        }
    }
}
