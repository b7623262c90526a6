//! `schedlab check` on real runs of the built-in periodic workload, pinned to a declared P-core
//! or E-core: an expectation that holds exits 0, one that fails exits 1 and says the figure, the
//! value and the bound, one the runs cannot judge exits 2 (125 with `--bisect`); `git bisect
//! run` over a small repository finds the commit whose pipeline variable broke an expectation;
//! and a file recorded with the configuration (`collect.record`) that changes between two labels
//! is what `schedlab compare` says differs.

use std::path::Path;
use std::process::Command;

use crate::util::{Need, Sandbox, can_run};
use schedlab_tables::{
    ExpectationRow, Judgement, PlacementRow, ProcessRow, QualityRow, RunRow, WorkloadMetricRow,
    read_rows, read_table,
};

/// A periodic thread (a quarter of each 20 ms period busy, for 1 s) pinned to `${pin}` of a
/// declared P-core (CPU 0) and E-core (CPU 1), its CPU sampled every 50 ms. It spins for wall
/// time, so on a busy machine it gets a fraction of its 250 ms: the CPU time expected of it is a
/// bound any machine meets.
const PIPELINE: &str = "\
name: pinned
description: one periodic thread pinned to a declared class
vars: { pin: P }
topology: { P: [0], E: [1] }
collect:
  monitors:
    where: { placement: { interval: 50ms } }
  workloads:
    spin:
      periodic: { threads: 1, period: 20ms, busy: 5ms, duration: 1s }
      cpus: [\"${pin}\"]
aggregate:
  - residency: { workload: spin }
  - cpu_time: { workload: spin }
expect:
  - residency: { workload: spin, class: P, share: \">= 0.95\" }
  - cpu_time: { workload: spin, seconds: \">= 10ms\" }
";

fn expectations(sandbox: &Sandbox) -> Vec<ExpectationRow> {
    read_rows(&sandbox.data("pinned", "report/expectations.parquet")).unwrap()
}

/// The one run the last check judged.
fn judged_run(sandbox: &Sandbox) -> String {
    let rows = expectations(sandbox);
    let runs: Vec<&str> = rows.iter().filter_map(|r| r.run_id.as_deref()).collect();
    assert!(runs.windows(2).all(|w| w[0] == w[1]), "{runs:?}");
    runs[0].to_owned()
}

#[test]
fn check_exits_0_when_expectations_hold_1_when_one_fails_and_2_when_it_cannot_judge() {
    let sandbox = Sandbox::new();
    let file = sandbox.write("pinned.yaml", PIPELINE);
    let file = file.to_str().unwrap();

    let held = sandbox.schedlab(&["check", file]);
    assert_eq!(held.code, 0, "{}{}", held.stdout, held.stderr);
    assert!(
        held.stderr.contains("check: pass for label (no label)"),
        "{}",
        held.stderr
    );
    let rows = expectations(&sandbox);
    let deciding: Vec<&ExpectationRow> = rows.iter().filter(|r| r.scope == "runs").collect();
    assert_eq!(deciding.len(), 2, "{rows:?}");
    assert!(deciding.iter().all(|r| r.judgement == Judgement::Pass));
    // The share on P is 1 because every placement sample found the thread on CPU 0, the CPU
    // its affinity allowed: /proc's own word, not the aggregate's.
    let run = &judged_run(&sandbox);
    let samples: Vec<PlacementRow> = read_table(&sandbox.data("pinned", "tables")).unwrap();
    let spinning: Vec<&PlacementRow> = (samples.iter())
        .filter(|s| s.run_id == *run && s.cpu_time_ns > 0)
        .collect();
    assert!(!spinning.is_empty() && spinning.iter().all(|s| s.cpu == 0));
    let processes: Vec<ProcessRow> = read_table(&sandbox.data("pinned", "tables")).unwrap();
    assert_eq!(processes[0].affinity.as_deref(), Some("0"));
    assert_eq!(deciding[0].value, Some(1.0));
    // The CPU time it was judged by is /proc's, in 10 ms ticks; the worker's own clock
    // (CLOCK_THREAD_CPUTIME_ID, its `cpu_time` figure) says the same to a few ticks.
    let own: Vec<WorkloadMetricRow> = read_table(&sandbox.data("pinned", "tables")).unwrap();
    let own_ns: f64 = (own.iter())
        .filter(|m| m.tool == "periodic" && m.metric == "cpu_time")
        .map(|m| m.value)
        .sum();
    let judged = deciding[1].value.unwrap();
    assert!(
        (judged - own_ns).abs() <= 60e6,
        "judged {judged} ns, the worker measured {own_ns} ns"
    );
    assert!(
        held.stdout.contains("| 1 | residency_rollup.share of spin"),
        "{}",
        held.stdout
    );

    // Pinned to the E-core, the share on P is 0: the check fails and says so.
    let moved = sandbox.write("pinned.yaml", &PIPELINE.replace("pin: P", "pin: E"));
    let failed = sandbox.schedlab(&["check", moved.to_str().unwrap()]);
    assert_eq!(failed.code, 1, "{}{}", failed.stdout, failed.stderr);
    let run = judged_run(&sandbox);
    let said = format!(
        "schedlab: check: expectation 1 fails: residency_rollup.share of spin (scope workload, \
         class P) >= 0.95: 1 of 1 runs: {run}: 0.000, not >= 0.95"
    );
    assert!(failed.stderr.contains(&said), "{}", failed.stderr);
    let rows = expectations(&sandbox);
    let second = rows
        .iter()
        .find(|r| r.scope == "runs" && r.expectation == 2);
    assert_eq!(second.map(|r| r.judgement), Some(Judgement::Pass));

    // A figure no run has: turbostat's, which this pipeline does not record. The same runs;
    // the check cannot judge.
    let unjudged = PIPELINE.replace(
        "  - cpu_time: { workload: spin }\n",
        "  - cpu_time: { workload: spin }\n  - cpu_activity: {}\n",
    ) + "  - cpu_activity: { pkg_watt: \"< 100W\" }\n";
    let unjudged = sandbox.write("pinned.yaml", &unjudged);
    let unjudged = unjudged.to_str().unwrap();
    let cannot = sandbox.schedlab(&["check", unjudged]);
    assert_eq!(cannot.code, 2, "{}{}", cannot.stdout, cannot.stderr);
    assert!(
        cannot.stderr.contains(&format!(
            "schedlab: check: expectation 3 cannot be judged: cpu_activity.pkg_watt over run \
             (scope all) < 100W: 1 of 1 runs: {}: no cpu_activity rows of run in this run",
            judged_run(&sandbox)
        )),
        "{}",
        cannot.stderr
    );
    let skipped = sandbox.schedlab(&["check", unjudged, "--bisect"]);
    assert_eq!(skipped.code, 125, "{}", skipped.stderr);
    // A pipeline without expectations is nothing to check, and an invalid one no commit to
    // judge.
    let none = sandbox.write("none.yaml", &PIPELINE.replace("expect:", "unused:"));
    let invalid = sandbox.schedlab(&["check", none.to_str().unwrap(), "--bisect"]);
    assert_eq!(invalid.code, 125, "{}", invalid.stderr);
    let nothing = sandbox.schedlab(&["check", none.to_str().unwrap()]);
    assert_eq!(nothing.code, 2, "{}", nothing.stderr);
    let bare = sandbox.write(
        "bare.yaml",
        &PIPELINE[..PIPELINE.find("expect:").unwrap()].replace("name: pinned", "name: bare"),
    );
    let bare = sandbox.schedlab(&["check", bare.to_str().unwrap()]);
    assert_eq!(bare.code, 2);
    assert!(
        bare.stderr.contains("has no expectations to check"),
        "{}",
        bare.stderr
    );
}

/// `git` in `dir`, which must succeed; its standard output.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn git_bisect_run_names_the_commit_whose_variable_broke_an_expectation() {
    let test = "git_bisect_run_names_the_commit_whose_variable_broke_an_expectation";
    if !can_run(test, &[Need::Program("git")]) {
        return;
    }
    let sandbox = Sandbox::new();
    let repo = sandbox.path("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let commit = |text: &str, message: &str| {
        std::fs::write(repo.join("pinned.yaml"), text).unwrap();
        git(&repo, &["add", "pinned.yaml"]);
        git(&repo, &["commit", "-q", "-m", message]);
        git(&repo, &["rev-parse", "HEAD"]).trim().to_owned()
    };
    // Good, good (a description only: the same runs), bad (the pin), bad (a comment).
    let good = commit(PIPELINE, "pin the thread to the P-core");
    let _ = commit(
        &PIPELINE.replace("a declared class", "the declared P-core"),
        "say where",
    );
    let culprit = commit(
        &PIPELINE
            .replace("a declared class", "the declared P-core")
            .replace("pin: P", "pin: E"),
        "pin it to the E-core",
    );
    let bad = commit(
        &(PIPELINE
            .replace("a declared class", "the declared P-core")
            .replace("pin: P", "pin: E")
            + "# the end\n"),
        "a comment",
    );
    git(&repo, &["bisect", "start", &bad, &good]);
    // The data directory lives outside the repository, so that every step shares its runs.
    let mut run = Command::new("git");
    run.current_dir(&repo)
        .env("SCHEDLAB_DATA", sandbox.path("data"))
        .args(["bisect", "run"])
        .arg(env!("CARGO_BIN_EXE_schedlab"))
        .args(["check", "pinned.yaml", "--bisect"]);
    let bisect = crate::util::finished(run.output().expect("git bisect run"));
    assert_eq!(bisect.code, 0, "{}{}", bisect.stdout, bisect.stderr);
    assert!(
        bisect
            .stdout
            .contains(&format!("{culprit} is the first bad commit")),
        "{}{}",
        bisect.stdout,
        bisect.stderr
    );
    // Each commit it checked had its own runs: the P-core's and the E-core's.
    assert_eq!(
        sandbox.runs("pinned").len(),
        2,
        "{:?}",
        sandbox.runs("pinned")
    );
    git(&repo, &["bisect", "reset"]);
}

#[test]
fn a_recorded_file_that_changes_between_labels_is_a_configuration_difference() {
    let sandbox = Sandbox::new();
    let tunable = sandbox.write("llc_aggr_tolerance", "512\n");
    let tunable = tunable.display().to_string();
    let missing = sandbox.path("not_there").display().to_string();
    let pipeline = PIPELINE.replace(
        "collect:\n",
        &format!("collect:\n  record: [\"{tunable}\", \"{missing}\"]\n"),
    );
    let file = sandbox.write("pinned.yaml", &pipeline);
    let file = file.to_str().unwrap();
    for (label, value) in [("a", "512\n"), ("b", "1024\n")] {
        std::fs::write(&tunable, value).unwrap();
        let run = sandbox.schedlab(&["run", file, "--label", label]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let compare = sandbox.schedlab(&["compare", file]);
    assert_eq!(compare.code, 0, "{}{}", compare.stdout, compare.stderr);
    let opening: Vec<&str> = (compare.stdout.lines())
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(
        opening,
        [
            format!("b vs a: record.{tunable} 1024 (a: 512)"),
            format!(
                "warning: b vs a also differ in record.{tunable}: settings that move scheduler \
                 figures besides what the label names"
            )
        ],
        "{}",
        compare.stdout
    );
    // Each run's configuration has the file, and says the missing one is unknown, why in a
    // quality row.
    let runs: Vec<RunRow> = read_table(&sandbox.data("pinned", "tables")).unwrap();
    for run in &runs {
        let config = run.sched_config.as_deref().unwrap();
        let value = if run.label.as_deref() == Some("a") {
            "512"
        } else {
            "1024"
        };
        assert!(
            config
                .lines()
                .any(|l| l == format!("record.{tunable}={value}")),
            "{config}"
        );
        assert!(
            config
                .lines()
                .any(|l| l == format!("record.{missing}=unknown")),
            "{config}"
        );
    }
    let quality: Vec<QualityRow> = read_table(&sandbox.data("pinned", "tables")).unwrap();
    let said: Vec<&QualityRow> = quality.iter().filter(|q| q.source == "record").collect();
    assert_eq!(said.len(), 2, "{quality:?}");
    assert!(said.iter().all(|q| q.message
        == format!("{missing}: No such file or directory (os error 2) (recorded as unknown)")));
    // What a run records is part of what it is: the pipeline without `record:` names other
    // runs.
    let ids = sandbox.runs("pinned");
    let plain = sandbox.write("plain.yaml", PIPELINE);
    let dry = sandbox.schedlab(&["run", plain.to_str().unwrap(), "--dry-run", "--label", "a"]);
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(
        !ids.iter().any(|id| dry.stdout.contains(id.as_str())),
        "{ids:?} {}",
        dry.stdout
    );
}
