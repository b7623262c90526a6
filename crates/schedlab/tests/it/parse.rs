//! `schedlab parse perf-sched FILE… --out DIR`: tables streamed to Parquet equal the reader's.

use std::path::{Path, PathBuf};

use crate::util::Sandbox;
use schedlab_perf::{SchedOptions, SchedTables, read_sched};
use schedlab_tables::{
    LossRow, MigrationRow, QualityRow, SchedRuntimeRow, SchedSliceRow, ThreadRow, TraceRow,
    WakeupRow, read_rows,
};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../schedlab-perf/tests/fixtures")
        .join(name)
}

#[test]
fn streamed_perf_sched_tables_equal_read_sched_on_every_file() {
    let sandbox = Sandbox::new();
    let files = [fixture("contended.data"), fixture("lossy.data")];
    let out = sandbox.path("tables");
    let mut args = vec!["parse", "perf-sched"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    args.extend(["--out", out.to_str().unwrap(), "--run-id", "r7"]);
    let done = sandbox.schedlab(&args);
    assert_eq!(done.code, 0, "{}", done.stderr);

    let table = |name: &str| out.join(format!("{name}.parquet"));
    let names = [
        "sched_slices",
        "migrations",
        "wakeups",
        "threads",
        "traces",
        "losses",
        "sched_runtime",
        "quality",
    ];
    let printed: Vec<PathBuf> = done.stdout.lines().map(PathBuf::from).collect();
    assert_eq!(printed, names.map(table));
    let mut in_dir: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    in_dir.sort();
    let mut expected_files = names.map(table);
    expected_files.sort();
    assert_eq!(in_dir, expected_files, "no temporary file left behind");

    let opts = SchedOptions {
        run_id: "r7".into(),
        workloads: Vec::new(),
        ..Default::default()
    };
    let mut expected = SchedTables::default();
    let mut traces = Vec::new();
    let mut losses = Vec::new();
    let mut runtime = Vec::new();
    for file in &files {
        let one = read_sched(file, &opts).unwrap();
        expected.sched_slices.extend(one.sched_slices);
        expected.migrations.extend(one.migrations);
        expected.wakeups.extend(one.wakeups);
        expected.threads.extend(one.threads);
        expected.quality.extend(one.quality);
        traces.extend(one.trace);
        losses.extend(one.losses);
        runtime.extend(one.sched_runtime);
    }
    assert!(expected.sched_slices.len() > 10_000 && !expected.quality.is_empty());
    let slices = read_rows::<SchedSliceRow>(&table("sched_slices")).unwrap();
    assert!(slices == expected.sched_slices, "sched_slices differ");
    let migrations = read_rows::<MigrationRow>(&table("migrations")).unwrap();
    assert!(migrations == expected.migrations, "migrations differ");
    let wakeups = read_rows::<WakeupRow>(&table("wakeups")).unwrap();
    assert!(wakeups == expected.wakeups, "wakeups differ");
    let threads = read_rows::<ThreadRow>(&table("threads")).unwrap();
    assert_eq!(threads, expected.threads);
    let quality = read_rows::<QualityRow>(&table("quality")).unwrap();
    assert_eq!(quality, expected.quality);
    let trace_rows = read_rows::<TraceRow>(&table("traces")).unwrap();
    assert_eq!(trace_rows, traces);
    assert_eq!(trace_rows.len(), files.len(), "one row per file");
    let loss_rows = read_rows::<LossRow>(&table("losses")).unwrap();
    assert_eq!(loss_rows, losses);
    assert!(!loss_rows.is_empty(), "lossy.data lost events");
    let runtime_rows = read_rows::<SchedRuntimeRow>(&table("sched_runtime")).unwrap();
    assert_eq!(runtime_rows, runtime);
    assert!(
        !runtime_rows.is_empty(),
        "perf sched record records sched_stat_runtime"
    );

    // Files are parsed in parallel, but the tables do not depend on which finished first.
    let again = sandbox.path("again");
    args.truncate(args.len() - 4);
    args.extend(["--out", again.to_str().unwrap(), "--run-id", "r7"]);
    assert_eq!(sandbox.schedlab(&args).code, 0);
    for name in names {
        let file = format!("{name}.parquet");
        let same =
            std::fs::read(out.join(&file)).unwrap() == std::fs::read(again.join(&file)).unwrap();
        assert!(same, "{file} differs between two runs on the same files");
    }
}

#[test]
fn a_perf_sched_error_names_the_file_and_writes_no_table() {
    let sandbox = Sandbox::new();
    let bad = sandbox.write("not-perf.data", "this is not a perf.data file, just text\n");
    let out = sandbox.path("tables");
    let good = fixture("contended.data");
    let done = sandbox.schedlab(&[
        "parse",
        "perf-sched",
        good.to_str().unwrap(),
        bad.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(done.code, 2, "{}", done.stderr);
    assert!(done.stderr.contains("not-perf.data"), "{}", done.stderr);
    let left = std::fs::read_dir(&out).map_or(0, |d| d.count());
    assert_eq!(left, 0, "files left in {}", out.display());
}

#[test]
fn timehist_text_files_give_the_rows_of_the_text_parser_in_file_order() {
    let sandbox = Sandbox::new();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schedlab-parse/tests/fixtures");
    let files = [
        fixtures.join("perf-sched-timehist-M-V-w-stress-ng-cpu1-load20-head150.txt"),
        fixtures.join("perf-sched-timehist-default-stress-ng-cpu1-load20-head60.txt"),
    ];
    let out = sandbox.path("tables");
    let mut args = vec!["parse", "timehist"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    args.extend(["--out", out.to_str().unwrap(), "--run-id", "t1"]);
    let done = sandbox.schedlab(&args);
    assert_eq!(done.code, 0, "{}", done.stderr);

    let ctx = schedlab_parse::ParseContext {
        run_id: "t1".into(),
        ..Default::default()
    };
    let (mut slices, mut migrations, mut wakeups) = (Vec::new(), Vec::new(), Vec::new());
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let parsed = schedlab_parse::timehist::parse(&text, "f", &ctx).unwrap();
        slices.extend(parsed.sched_slices);
        migrations.extend(parsed.migrations);
        wakeups.extend(parsed.wakeups);
    }
    assert!(!slices.is_empty() && !migrations.is_empty() && !wakeups.is_empty());
    let table = |name: &str| out.join(format!("{name}.parquet"));
    assert_eq!(
        read_rows::<SchedSliceRow>(&table("sched_slices")).unwrap(),
        slices
    );
    assert_eq!(
        read_rows::<MigrationRow>(&table("migrations")).unwrap(),
        migrations
    );
    assert_eq!(read_rows::<WakeupRow>(&table("wakeups")).unwrap(), wakeups);
    assert!(table("timehist_summary").exists() && table("threads").exists());
}

/// A fixture the parse crate's tests read (`crates/schedlab-parse/tests/fixtures/`).
fn text_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../schedlab-parse/tests/fixtures")
        .join(name)
}

#[test]
fn parse_auto_tells_each_file_from_its_content_and_refuses_a_mix_or_an_unknown() {
    let sandbox = Sandbox::new();
    let out = sandbox.path("tables");
    let trace = fixture("contended.data");
    let (trace, out_arg) = (trace.to_str().unwrap(), out.to_str().unwrap());
    let done = sandbox.schedlab(&["parse", "auto", trace, "--out", out_arg]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    assert!(
        done.stderr
            .contains(&format!("{trace}: perf-sched (perf.data magic PERFILE2)")),
        "{}",
        done.stderr
    );
    let slices: Vec<SchedSliceRow> = read_rows(&out.join("sched_slices.parquet")).unwrap();
    assert!(!slices.is_empty());

    let stress = text_fixture("stress-ng-cpu1-load20-t2-metrics-brief.txt");
    let stress = stress.to_str().unwrap();
    let mixed = sandbox.schedlab(&["parse", "auto", trace, stress, "--out", out_arg]);
    assert_eq!(mixed.code, 2, "{}", mixed.stderr);
    assert!(
        mixed
            .stderr
            .contains("the files are of different kinds (perf-sched, stress-ng)"),
        "{}",
        mixed.stderr
    );

    let garbage = sandbox.write("notes.txt", "nothing any tool printed\n");
    let garbage = garbage.to_str().unwrap();
    let unknown = sandbox.schedlab(&["parse", "auto", garbage, "--out", out_arg]);
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    assert!(
        unknown
            .stderr
            .contains(&format!("{garbage}: not recognisably the output")),
        "{}",
        unknown.stderr
    );
}

/// A recording cut short (here among the feature sections after its records, so that the
/// tracepoint formats survive and the test needs no tracefs) is refused with a hint naming
/// `--salvage`, and read with it: every slice, and a quality warning saying what was lost.
#[test]
fn parse_perf_sched_salvages_a_cut_recording_only_when_asked() {
    let sandbox = Sandbox::new();
    let full = fixture("bursty.data");
    let bytes = std::fs::read(&full).unwrap();
    let cut = sandbox.path("cut.data");
    std::fs::write(&cut, &bytes[..bytes.len() - 100]).unwrap();
    let out = sandbox.path("tables");
    let args = ["parse", "perf-sched", cut.to_str().unwrap(), "--out"];

    let refused = sandbox.schedlab(&[&args[..], &[out.to_str().unwrap()]].concat());
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("cut.data")
            && refused
                .stderr
                .contains("`--salvage` reads it up to the last complete record"),
        "{}",
        refused.stderr
    );
    assert_eq!(std::fs::read_dir(&out).map_or(0, |d| d.count()), 0);

    let salvaged = sandbox.schedlab(&[&args[..], &[out.to_str().unwrap(), "--salvage"]].concat());
    assert_eq!(salvaged.code, 0, "{}", salvaged.stderr);
    let slices = read_rows::<SchedSliceRow>(&out.join("sched_slices.parquet")).unwrap();
    let opts = SchedOptions {
        run_id: "standalone".into(),
        ..SchedOptions::default()
    };
    let complete = read_sched(&full, &opts).unwrap();
    assert!(
        slices == complete.sched_slices,
        "the salvaged slices are all of them"
    );
    let quality = read_rows::<QualityRow>(&out.join("quality.parquet")).unwrap();
    let note = (quality.iter())
        .find(|q| {
            q.message
                .starts_with(&format!("{}: salvaged: ", cut.display()))
        })
        .unwrap_or_else(|| panic!("no salvage note in {quality:#?}"));
    assert_eq!(note.severity, schedlab_perf::Severity::Warning);
    assert!(
        note.message.contains("every record was read"),
        "{}",
        note.message
    );
}
