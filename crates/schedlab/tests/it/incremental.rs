//! Collect once, analyse forever: run ids that `repeat` and labels do not change, per-run
//! partitions that adding or deleting a run leaves alone, `analyze --runs`, and data directories
//! of the first layout brought over once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::util::Sandbox;
use schedlab_tables::{ProcessRow, RunRow, read_table};

/// About a second per run: one periodic thread sampled from /proc (no root, no perf).
const SMALL: &str = "\
name: small
repeat: 2
collect:
  monitors:
    where: { placement: { interval: 50ms } }
  workloads:
    tick:
      start_after: 50ms
      periodic: { threads: 1, period: 50ms, busy: 10ms, duration: 500ms }
aggregate:
  - residency: {}
  - cpu_time: {}
";

/// Every file under `dir`, with its bytes and mtime.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let modified = entry.metadata().unwrap().modified().unwrap();
                files.insert(path.clone(), (std::fs::read(&path).unwrap(), modified));
            }
        }
    }
    files
}

/// The files of `run`'s partitions among `files`.
fn of_run<'a>(
    files: &'a BTreeMap<PathBuf, (Vec<u8>, SystemTime)>,
    run: &str,
) -> BTreeMap<&'a PathBuf, &'a (Vec<u8>, SystemTime)> {
    let key = format!("/run_id={run}/");
    (files.iter())
        .filter(|(path, _)| path.to_string_lossy().contains(&key))
        .collect()
}

fn stage_line<'a>(stderr: &'a str, stage: &str) -> &'a str {
    let prefix = format!("{stage}: ");
    (stderr.lines().find(|l| l.starts_with(&prefix)))
        .unwrap_or_else(|| panic!("no {stage} line in {stderr}"))
}

#[test]
fn more_repetitions_and_a_continued_label_collect_only_the_missing_runs() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write("small.yaml", SMALL);
    let pipeline = pipeline.to_str().unwrap();
    let first = sandbox.schedlab(&["run", pipeline]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let two = sandbox.runs("small");
    assert_eq!(two.len(), 2, "{two:?}");
    assert!(
        two[0].ends_with("-r1") && two[1].ends_with("-r2"),
        "{two:?}"
    );

    // `repeat: 3` in the file: the two runs stay, one is collected.
    sandbox.write("small.yaml", &SMALL.replace("repeat: 2", "repeat: 3"));
    let third = sandbox.schedlab(&["run", pipeline]);
    assert_eq!(third.code, 0, "{}", third.stderr);
    assert!(
        third
            .stderr
            .contains("collect: 2 runs collected already, 1 collected now"),
        "{}",
        third.stderr
    );
    let three = sandbox.runs("small");
    assert_eq!(three.len(), 3, "{three:?}");
    assert!(two.iter().all(|r| three.contains(r)), "{three:?}");

    // A label, then the same label continued by a later command with more repetitions.
    let labelled = sandbox.schedlab(&["run", pipeline, "--label", "b", "--repeat", "1"]);
    assert_eq!(labelled.code, 0, "{}", labelled.stderr);
    let continued = sandbox.schedlab(&["run", pipeline, "--label", "b", "--repeat", "2"]);
    assert_eq!(continued.code, 0, "{}", continued.stderr);
    assert!(
        continued
            .stderr
            .contains("collect: 1 runs collected already, 1 collected now"),
        "{}",
        continued.stderr
    );
    let all = sandbox.runs("small");
    let b: Vec<&String> = all.iter().filter(|r| r.contains("-b-")).collect();
    assert_eq!(b.len(), 2, "{all:?}");
    // The analysis covers every label's runs.
    let runs: Vec<RunRow> = read_table(&sandbox.data("small", "tables")).unwrap();
    let ids: Vec<&str> = runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(ids, all.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(
        runs.iter()
            .filter(|r| r.label.as_deref() == Some("b"))
            .count(),
        2
    );
    let again = sandbox.schedlab(&["run", pipeline, "--label", "b", "--repeat", "2"]);
    assert!(
        again
            .stderr
            .contains("collect: all 2 runs collected already, nothing to collect"),
        "{}",
        again.stderr
    );
}

#[test]
fn matrix_values_of_any_text_go_through_every_stage() {
    let sandbox = Sandbox::new();
    // Each value reaches a workload's command line, which prints it back.
    let yaml = (SMALL.replace(
        "repeat: 2\n",
        "matrix: { t: [0.5, \"a/b\", \"with space\"] }\n",
    ))
    .replace(
        "  workloads:\n",
        "  workloads:\n    echo:\n      run: [echo, \"${t}\"]\n",
    ) + "  - cpu_share: {}\n";
    let pipeline = sandbox.write("matrix.yaml", &yaml.replace("name: small", "name: grid"));
    let done = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let dirs = sandbox.runs("grid");
    assert_eq!(dirs.len(), 3, "{dirs:?}");
    for dir in &dirs {
        assert!(
            dir.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c)),
            "{dir}"
        );
    }
    let runs: Vec<RunRow> = read_table(&sandbox.data("grid", "tables")).unwrap();
    let mut variants: Vec<&str> = runs.iter().map(|r| r.variant.as_str()).collect();
    variants.sort();
    assert_eq!(variants, ["t=0.5", "t=a/b", "t=with space"]);
    // The value reached the workload as written, and every stage ran for every run.
    for dir in &dirs {
        let manifest =
            crate::util::read_json(&sandbox.data("grid", &format!("runs/{dir}/manifest.json")));
        let value = manifest["variant"]["t"].as_str().unwrap().to_owned();
        let echo = manifest["processes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["workload"] == "echo")
            .unwrap();
        let stdout = sandbox.data(
            "grid",
            &format!("runs/{dir}/{}", echo["stdout"].as_str().unwrap()),
        );
        assert_eq!(std::fs::read_to_string(stdout).unwrap().trim(), value);
        for aggregate in ["residency", "cpu_time", "cpu_share"] {
            let partition = format!("aggregates/{aggregate}/run_id={dir}/part-0.parquet");
            assert!(sandbox.data("grid", &partition).exists(), "{partition}");
        }
    }
    let processes: Vec<ProcessRow> = read_table(&sandbox.data("grid", "tables")).unwrap();
    assert_eq!(processes.iter().filter(|p| p.workload == "echo").count(), 3);
}

#[test]
fn adding_a_run_computes_that_run_only_and_deleting_one_removes_its_partitions() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write("small.yaml", SMALL);
    let pipeline = pipeline.to_str().unwrap();
    assert_eq!(sandbox.schedlab(&["run", pipeline]).code, 0);
    let before = sandbox.runs("small");
    let root = sandbox.path("data/small");
    let (tables, aggregates) = (root.join("tables"), root.join("aggregates"));
    let old = (snapshot(&tables), snapshot(&aggregates));
    for run in &before {
        assert!(!of_run(&old.0, run).is_empty() && !of_run(&old.1, run).is_empty());
    }

    // A third repetition, collected alone: status names it stale before it is analysed.
    let collected = sandbox.schedlab(&["run", pipeline, "--repeat", "3", "--only", "collect"]);
    assert_eq!(collected.code, 0, "{}", collected.stderr);
    let after = sandbox.runs("small");
    let new_run = after.iter().find(|r| !before.contains(r)).unwrap().clone();
    let status = sandbox.schedlab(&["status", pipeline, "--repeat", "3"]);
    assert!(
        status
            .stdout
            .contains("parse      stale: 1 of 3 runs stale"),
        "{}",
        status.stdout
    );
    let run_line = (status.stdout.lines())
        .position(|l| l.trim_start().starts_with(&new_run))
        .unwrap();
    assert_eq!(
        status.stdout.lines().nth(run_line + 1).unwrap().trim(),
        "parse stale: never computed",
        "{}",
        status.stdout
    );

    let analyzed = sandbox.schedlab(&["analyze", pipeline]);
    assert_eq!(analyzed.code, 0, "{}", analyzed.stderr);
    assert_eq!(
        stage_line(&analyzed.stderr, "parse"),
        format!("parse: 1 of 3 runs to compute: {new_run} (never computed)")
    );
    assert_eq!(
        stage_line(&analyzed.stderr, "aggregate"),
        format!("aggregate: 1 of 3 runs to compute: {new_run} (never computed)")
    );
    assert!(stage_line(&analyzed.stderr, "summarize").contains(&format!("new run {new_run}")));
    let new = (snapshot(&tables), snapshot(&aggregates));
    for run in &before {
        // Byte for byte and never rewritten (the same mtime).
        assert_eq!(of_run(&new.0, run), of_run(&old.0, run), "tables of {run}");
        assert_eq!(
            of_run(&new.1, run),
            of_run(&old.1, run),
            "aggregates of {run}"
        );
    }
    assert!(!of_run(&new.0, &new_run).is_empty());
    let runs: Vec<RunRow> = read_table(&tables).unwrap();
    assert_eq!(runs.len(), 3);

    // A run deleted from runs/ takes its partitions with it at the next analysis.
    std::fs::remove_dir_all(sandbox.data("small", &format!("runs/{}", before[0]))).unwrap();
    let pruned = sandbox.schedlab(&["analyze", pipeline]);
    assert_eq!(pruned.code, 0, "{}", pruned.stderr);
    assert!(
        (pruned.stderr).contains(&format!(
            "run {}: its tables and aggregates were removed (it is no longer in runs/)",
            before[0]
        )),
        "{}",
        pruned.stderr
    );
    let left = (snapshot(&tables), snapshot(&aggregates));
    assert!(of_run(&left.0, &before[0]).is_empty() && of_run(&left.1, &before[0]).is_empty());
    assert_eq!(of_run(&left.0, &before[1]), of_run(&old.0, &before[1]));
    let runs: Vec<RunRow> = read_table(&tables).unwrap();
    assert_eq!(runs.len(), 2);
    assert!(
        !sandbox
            .data("small", &format!("state/parse/{}.json", before[0]))
            .exists()
    );
}

#[test]
fn analyze_runs_computes_only_the_named_runs_and_leaves_the_summary_to_a_full_analyze() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write("small.yaml", SMALL);
    let pipeline = pipeline.to_str().unwrap();
    let collected = sandbox.schedlab(&["run", pipeline, "--only", "collect"]);
    assert_eq!(collected.code, 0, "{}", collected.stderr);
    let runs = sandbox.runs("small");

    let one = sandbox.schedlab(&["analyze", pipeline, "--runs", &runs[1]]);
    assert_eq!(one.code, 0, "{}", one.stderr);
    assert_eq!(
        stage_line(&one.stderr, "parse"),
        format!(
            "parse: 1 of 1 runs to compute: {} (never computed)",
            runs[1]
        )
    );
    assert!(stage_line(&one.stderr, "summarize").contains("not with --runs"));
    assert!(!sandbox.data("small", "report/summary.md").exists());
    assert!(
        !sandbox
            .data("small", &format!("tables/runs/run_id={}", runs[0]))
            .exists()
    );

    let unknown = sandbox.schedlab(&["analyze", pipeline, "--runs", "nope-r1"]);
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    assert!(
        unknown.stderr.contains("no collected run nope-r1"),
        "{}",
        unknown.stderr
    );

    let rest = sandbox.schedlab(&["analyze", pipeline]);
    assert_eq!(rest.code, 0, "{}", rest.stderr);
    assert_eq!(
        stage_line(&rest.stderr, "parse"),
        format!(
            "parse: 1 of 2 runs to compute: {} (never computed)",
            runs[0]
        )
    );
    assert!(sandbox.data("small", "report/summary.md").exists());

    // Two jobs at once, one run each (as a batch system starts them): neither refuses the other,
    // and a last analyze finds both runs computed.
    let jobs: Vec<std::process::Child> = (runs.iter())
        .map(|run| {
            let mut job = sandbox.command(&["analyze", pipeline, "--force", "--runs", run]);
            job.stdout(std::process::Stdio::piped());
            job.stderr(std::process::Stdio::piped()).spawn().unwrap()
        })
        .collect();
    for job in jobs {
        let done = crate::util::finished(job.wait_with_output().unwrap());
        assert_eq!(done.code, 0, "{}", done.stderr);
    }
    let last = sandbox.schedlab(&["analyze", pipeline]);
    assert_eq!(
        stage_line(&last.stderr, "parse"),
        "parse: all 2 runs fresh, nothing to do"
    );
}

#[test]
fn runs_of_the_first_layout_are_renamed_once_and_their_tables_recomputed() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write("small.yaml", SMALL);
    let pipeline = pipeline.to_str().unwrap();
    assert_eq!(sandbox.schedlab(&["run", pipeline]).code, 0);
    let runs = sandbox.runs("small");

    // Make the data directory what the first versions left: runs named by the digest of the
    // whole collect section (`repeat` included), one file per table, one state.json.
    let options = schedlab_spec::CompileOptions {
        parsers: &["stress-ng"],
        nproc: 2,
        name_part: schedlab_runner::layout::check_name_part,
        repeat: None,
        classes: &[],
        short: false,
    };
    let plan = schedlab_spec::compile("small.yaml", SMALL, &options).unwrap();
    let legacy = &schedlab_runner::digest::of_json(&plan.collect_section())[..8];
    let root = sandbox.path("data/small");
    for run in &runs {
        let repetition = run.rsplit('-').next().unwrap();
        let old_id = format!("{legacy}-{repetition}");
        let manifest = root.join(format!("runs/{run}/manifest.json"));
        let text = std::fs::read_to_string(&manifest).unwrap();
        std::fs::write(&manifest, text.replace(run.as_str(), &old_id)).unwrap();
        std::fs::rename(
            root.join(format!("runs/{run}")),
            root.join(format!("runs/{old_id}")),
        )
        .unwrap();
    }
    std::fs::remove_dir_all(root.join("tables")).unwrap();
    std::fs::remove_dir_all(root.join("state")).unwrap();
    std::fs::create_dir_all(root.join("tables")).unwrap();
    std::fs::write(
        root.join("tables/runs.parquet"),
        "a table of the old layout",
    )
    .unwrap();
    std::fs::write(root.join("state.json"), "{}").unwrap();

    let migrated = sandbox.schedlab(&["run", pipeline]);
    assert_eq!(migrated.code, 0, "{}", migrated.stderr);
    assert!(
        migrated.stderr.contains("migrated 2 runs"),
        "{}",
        migrated.stderr
    );
    assert!(
        migrated
            .stderr
            .contains("collect: all 2 runs collected already"),
        "nothing collected again: {}",
        migrated.stderr
    );
    assert_eq!(sandbox.runs("small"), runs);
    assert!(!root.join("tables/runs.parquet").exists() && !root.join("state.json").exists());
    let rows: Vec<RunRow> = read_table(&root.join("tables")).unwrap();
    assert_eq!(
        rows.iter().map(|r| r.run_id.as_str()).collect::<Vec<_>>(),
        runs.iter().map(String::as_str).collect::<Vec<_>>()
    );
    let again = sandbox.schedlab(&["run", pipeline]);
    assert!(!again.stderr.contains("migrated"), "{}", again.stderr);
}
