//! The one place the tests touch the parser API.

use std::path::PathBuf;

use schedlab_parse::{ParseContext, ParseError, Parsed, ParserKind};

/// Real outputs of other machines, published by others (`<dir>/` of the shared fixtures beside
/// the repository). A test that reads them starts with `shared_fixtures_or_skip!`.
pub fn real_dir(dir: &str) -> PathBuf {
    schedlab_testkit::shared_fixtures_root().join(dir)
}

/// Outputs recorded on the development machine (`tests/fixtures/`).
pub fn local_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The context every test parses with: run `r1`, the producing process started at 1 s.
pub fn ctx() -> ParseContext {
    ParseContext {
        run_id: "r1".into(),
        workload: Some("w".into()),
        start_ns: Some(START_NS),
        ..ParseContext::default()
    }
}

pub const START_NS: i64 = 1_000_000_000;

/// Parses `<dir>/<file>` of the shared fixtures (or `tests/fixtures/<file>` when `dir` is
/// `local`) with parser `kind`.
pub fn try_parse(kind: ParserKind, dir: &str, file: &str) -> Result<Parsed, ParseError> {
    let path = if dir == "local" {
        local_dir().join(file)
    } else {
        real_dir(dir).join(file)
    };
    let bytes = std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    schedlab_parse::parse(kind, file, &bytes, &ctx())
}

pub fn parse(kind: ParserKind, dir: &str, file: &str) -> Parsed {
    try_parse(kind, dir, file).unwrap_or_else(|err| panic!("{err}"))
}

/// The value of the one workload metric named `metric` (panics if absent or repeated).
pub fn metric(parsed: &Parsed, metric: &str) -> (f64, String) {
    let found: Vec<_> = parsed
        .workload_metrics
        .iter()
        .filter(|m| m.metric == metric)
        .collect();
    assert_eq!(found.len(), 1, "metric {metric}: {found:?}");
    (found[0].value, found[0].unit.clone())
}

/// `a` equals `b` to 1e-9 relative.
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// Asserts each (metric, value, unit).
pub fn check_metrics(parsed: &Parsed, expected: &[(&str, f64, &str)]) {
    for (name, value, unit) in expected {
        let (got, got_unit) = metric(parsed, name);
        assert!(close(got, *value), "{name}: got {got}, expected {value}");
        assert_eq!(got_unit, *unit, "{name}");
    }
}

/// Quality messages, `severity: message`.
pub fn quality(parsed: &Parsed) -> Vec<String> {
    parsed
        .quality
        .iter()
        .map(|q| format!("{}: {}", q.severity, q.message))
        .collect()
}

/// Asserts that every file in `dir` (real fixtures), and every local file starting with one of
/// `local_prefixes`, is named as a string literal in `source`: the text of the test module,
/// passed with `include_str!`. A fixture added without a test that reads it fails here.
pub fn all_tested(dir: &str, local_prefixes: &[&str], source: &str) {
    let names = |dir: PathBuf| -> Vec<String> {
        std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect()
    };
    let mut files = names(real_dir(dir));
    assert!(!files.is_empty(), "no fixtures in {dir}");
    files.extend(
        names(local_dir())
            .into_iter()
            .filter(|name| local_prefixes.iter().any(|p| name.starts_with(p))),
    );
    let untested: Vec<&String> = files
        .iter()
        .filter(|f| !source.contains(&format!("\"{f}\"")))
        .collect();
    assert!(untested.is_empty(), "fixtures no test reads: {untested:?}");
}
