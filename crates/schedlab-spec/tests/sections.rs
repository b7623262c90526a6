//! The stage sections of every shipped pipeline, byte for byte. Their JSON is digested into each
//! stage's fingerprint, and the collect digest prefixes every run id: a change in how the plan
//! serializes (a renamed field, a duration written another way) would collect every existing run
//! again. A deliberate change is recorded with `SCHEDLAB_BLESS=1 cargo test --test sections`.

use std::path::{Path, PathBuf};

use schedlab_spec::{CompileOptions, Plan, compile};

const PARSERS: &[&str] = &["perf-sched", "stress-ng", "openssl", "time"];

/// The sections as the runner digests them (`Value::to_string`), one per line.
fn sections(plan: &Plan) -> String {
    [
        ("collect", plan.collect_section()),
        ("parse", plan.parse_section()),
        ("aggregate", plan.aggregate_section()),
        ("summarize", plan.summarize_section()),
    ]
    .iter()
    .map(|(name, json)| format!("{name} {json}\n"))
    .collect()
}

fn pipelines(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

#[test]
fn sections_serialize_as_recorded() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let expected_dir = root.join("tests/sections");
    let mut files = pipelines(&root.join("../../pipelines"));
    assert!(files.len() >= 8, "shipped pipelines missing: {files:?}");
    files.extend(pipelines(&expected_dir));
    let options = CompileOptions {
        parsers: PARSERS,
        nproc: 8,
        name_part: |_| Ok(()),
    };
    let bless = std::env::var_os("SCHEDLAB_BLESS").is_some();
    let mut differing = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).unwrap();
        let plan = compile(&file.display().to_string(), &source, &options)
            .unwrap_or_else(|errors| panic!("{}: {errors:?}", file.display()));
        let stem = file.file_stem().unwrap().to_string_lossy();
        let expected_file = expected_dir.join(format!("{stem}.sections"));
        let actual = sections(&plan);
        if bless {
            std::fs::write(&expected_file, &actual).unwrap();
        } else if std::fs::read_to_string(&expected_file).ok().as_ref() != Some(&actual) {
            differing.push(expected_file.display().to_string());
        }
    }
    assert!(
        differing.is_empty(),
        "sections differ from {differing:?}: every run would be collected again; \
         if that is meant, record them with SCHEDLAB_BLESS=1"
    );
}
