//! Kind detection on every real output in the repository: each file is recognised as the kind
//! its folder holds, and the outputs no parser reads (`perf sched latency`, `perf sched map`)
//! are recognised as nothing.

use std::path::Path;

use schedlab_parse::ParserKind;
use schedlab_parse::detect::detect;

use crate::util::{local_dir, real_dir};

fn kind_of(path: &Path) -> Option<ParserKind> {
    let bytes = std::fs::read(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    detect(&bytes).map(|d| d.kind)
}

fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = (std::fs::read_dir(dir).expect("fixture folder"))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_real_output_is_recognised_as_its_tool() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let folders = [
        ("openssl-speed", Some(ParserKind::Openssl)),
        ("perf-stat", Some(ParserKind::PerfStat)),
        ("stress-ng", Some(ParserKind::StressNg)),
        ("time-v", Some(ParserKind::Time)),
        ("turbostat", Some(ParserKind::Turbostat)),
        ("perf-data", Some(ParserKind::PerfSched)),
        ("trace-dat", Some(ParserKind::TraceCmd)),
    ];
    let mut checked = 0;
    for (folder, kind) in folders {
        for path in files(&real_dir(folder)) {
            assert_eq!(kind_of(&path), kind, "{}", path.display());
            checked += 1;
        }
    }
    for path in files(&real_dir("perf-sched")) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let kind = name.starts_with("timehist").then_some(ParserKind::Timehist);
        assert_eq!(kind_of(&path), kind, "{name}");
        checked += 1;
    }
    assert!(checked > 40, "{checked} files");
}

#[test]
fn every_output_recorded_here_is_recognised_as_its_tool() {
    for path in files(&local_dir()) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let kind = [
            ("bash-time", ParserKind::Time),
            ("time-v", ParserKind::Time),
            ("openssl", ParserKind::Openssl),
            ("perf-sched-timehist", ParserKind::Timehist),
            ("perf-stat", ParserKind::PerfStat),
            ("stress-ng", ParserKind::StressNg),
        ]
        .into_iter()
        .find(|(prefix, _)| name.starts_with(prefix))
        .map(|(_, kind)| kind);
        assert!(kind.is_some(), "{name}: a fixture this test does not know");
        assert_eq!(kind_of(&path), kind, "{name}");
    }
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schedlab-perf/tests/fixtures");
    for path in files(&traces)
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "data"))
    {
        assert_eq!(
            kind_of(path),
            Some(ParserKind::PerfSched),
            "{}",
            path.display()
        );
    }
}
