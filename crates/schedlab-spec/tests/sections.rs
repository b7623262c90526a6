//! The stage sections and run identities of every shipped pipeline, byte for byte. A section's
//! JSON is digested into its stage's fingerprint, and a run identity's digest prefixes the run's
//! id: a change in how the plan serializes (a renamed field, a duration written another way, a
//! new field without `skip_serializing_if`) would collect every existing run again. A deliberate
//! change is recorded with `SCHEDLAB_BLESS=1 cargo test --test sections`.

use std::path::{Path, PathBuf};

use schedlab_spec::{CompileOptions, Plan, compile, compile_for_import, variant_text};

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
    .chain(
        (plan.runs.iter().filter(|run| run.repetition == 1)).map(|run| {
            format!(
                "identity {} {}\n",
                variant_text(&run.variant),
                run.identity()
            )
        }),
    )
    .collect()
}

/// A machine of three core classes, as `schedlab topology` would describe a small hybrid one.
static HYBRID: std::sync::LazyLock<Vec<(String, Vec<u32>)>> = std::sync::LazyLock::new(|| {
    vec![
        ("P".into(), vec![0, 1]),
        ("E".into(), vec![2, 3, 4, 5]),
        ("LPE".into(), vec![6, 7]),
    ]
});

/// Every shipped pipeline is compiled for this machine, in its full form.
fn options(short: bool) -> CompileOptions<'static> {
    CompileOptions {
        parsers: PARSERS,
        nproc: 8,
        classes: &HYBRID,
        short,
        name_part: |_| Ok(()),
        repeat: None,
    }
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
    let bless = std::env::var_os("SCHEDLAB_BLESS").is_some();
    let mut differing = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).unwrap();
        let plan = compile(&file.display().to_string(), &source, &options(false))
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

/// How often and in which order runs are collected is not what a run does: `repeat` (in the file
/// or from the command line), `cooldown` and `shuffle` leave every identity as it was, while a
/// workload's argument changes it.
#[test]
fn identities_ignore_repeat_cooldown_and_shuffle() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let source =
        std::fs::read_to_string(root.join("../../pipelines/scaling-workers.yaml")).unwrap();
    let identities = |source: &str, repeat: Option<u32>| {
        let options = CompileOptions {
            repeat,
            ..options(false)
        };
        let plan = compile("p.yaml", source, &options).unwrap();
        (plan.runs.iter())
            .map(|run| (variant_text(&run.variant), run.identity().to_string()))
            .collect::<std::collections::BTreeSet<_>>()
    };
    let before = identities(&source, None);
    assert!(before.len() >= 2, "{before:?}");
    assert_eq!(identities(&source, Some(7)), before);
    let edited = (source.replace("repeat: 3", "repeat: 5\nshuffle: 42"))
        .replace("cooldown: 10s", "cooldown: 9s");
    assert!(
        edited.contains("cooldown: 9s") && edited.contains("shuffle"),
        "the edit did not apply"
    );
    assert_eq!(identities(&edited, None), before);
    let other_work = source.replace("seconds: 30,", "seconds: 31,");
    assert_ne!(other_work, source);
    let changed = identities(&other_work, None);
    assert!(changed.is_disjoint(&before), "{changed:?}");
}

#[test]
fn an_imports_command_line_workloads_count_as_the_pipelines() {
    let bare = "name: bare\naggregate:\n  - cpu_time: { workload: app }\nexpect:\n  - cpu_time: { workload: app, seconds: \">= 1s\" }\n";
    let refused = compile("p.yaml", bare, &options(false)).unwrap_err();
    let messages: Vec<&str> = refused.iter().map(|e| e.message.as_str()).collect();
    assert!(
        messages.contains(&"`app` names no workload of this pipeline"),
        "{messages:?}"
    );
    assert!(
        messages.contains(&"the pipeline has neither a `collect` nor an `import` section"),
        "{messages:?}"
    );

    let named = ["app=comm:app".parse().unwrap()];
    let plan = compile_for_import("p.yaml", bare, &options(false), &named).unwrap();
    assert_eq!(plan.import, named);
    assert!(plan.runs.is_empty());
    assert_eq!(plan.summarize.expect.len(), 1);

    // A selector on the command line replaces the pipeline's of the same name, keeps the others.
    let with_import = "name: p\nimport:\n  workloads: { app: \"comm:old\", bg: \"pid:7\" }\n";
    let plan = compile_for_import("p.yaml", with_import, &options(false), &named).unwrap();
    let selectors: Vec<String> = plan
        .import
        .iter()
        .map(|w| format!("{}={}", w.workload, w.select))
        .collect();
    assert_eq!(selectors, ["bg=pid:7", "app=comm:app"]);
    // Still an error: a workload neither names.
    let other = bare.replace("workload: app }\nexpect", "workload: nope }\nexpect");
    assert!(compile_for_import("p.yaml", &other, &options(false), &named).is_err());
}
