//! `schedlab compare` on real runs: stress-ng doing a fixed amount of work per variant, and
//! runs collected under two labels, whose configurations it diffs.

mod util;

use schedlab_tables::{ComparisonRow, RunRow, Verdict, read_rows, read_table};
use serde_json::{Value, json};
use util::{Need, Sandbox, can_run, read_json};

/// stress-ng stops after a fixed number of bogo operations, so the second variant does three
/// times the work of the first: a difference no noise on a busy CI machine can hide.
const OPS: &str = "\
name: ops
matrix: { ops: [500, 1500] }
repeat: 3
collect:
  monitors:
    where: { placement: { interval: 50ms } }
  workloads:
    spin:
      run: [stress-ng, --cpu, \"1\", --cpu-method, int64, --cpu-ops, \"${ops}\", --metrics-brief]
      parse: stress-ng
aggregate:
  - cpu_share: {}
";

/// The row of `metric` for `group`: its own, or that of the figure equal to it in every run that
/// stands for it.
fn row<'a>(rows: &'a [ComparisonRow], metric: &str, group: &str) -> &'a ComparisonRow {
    let names = |r: &&ComparisonRow| {
        r.metric == metric
            || (r.stands_for.iter()).any(|others| others.split(',').any(|m| m == metric))
    };
    (rows.iter())
        .filter(|r| r.group == group)
        .find(names)
        .unwrap_or_else(|| panic!("no {metric} row for {group}: {rows:#?}"))
}

#[test]
fn three_times_the_work_is_higher_and_the_rate_is_compared_too() {
    if !can_run(
        "three_times_the_work_is_higher_and_the_rate_is_compared_too",
        &[Need::Program("stress-ng")],
    ) {
        return;
    }
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write("ops.yaml", OPS);
    let pipeline = pipeline.to_str().unwrap();
    let run = sandbox.schedlab(&["run", pipeline]);
    assert_eq!(run.code, 0, "{}", run.stderr);

    let compare = sandbox.schedlab(&["compare", pipeline, "--by", "ops"]);
    assert_eq!(compare.code, 0, "{}", compare.stderr);
    assert!(
        compare
            .stderr
            .contains("parse: all 6 runs fresh, nothing to do"),
        "the analysis is brought up to date first: {}",
        compare.stderr
    );
    let rows: Vec<ComparisonRow> =
        read_rows(&sandbox.data("ops", "compare/by-ops.parquet")).unwrap();

    // stress-ng's own count of the work it did: exactly what each variant asked for.
    let (small, large) = (
        row(&rows, "stress-ng/cpu/bogo_ops", "ops=500"),
        row(&rows, "stress-ng/cpu/bogo_ops", "ops=1500"),
    );
    assert_eq!(
        (small.runs, small.mean, small.stddev),
        (3, 500.0, Some(0.0))
    );
    assert_eq!((large.mean, large.diff_pct), (1500.0, Some(200.0)));
    assert_eq!(large.verdict, Verdict::Higher);
    assert_eq!(small.verdict, Verdict::Baseline);
    assert_eq!(small.baseline, "ops=500", "the matrix's first value");

    // The runner's wall time of the process, from its own clock: three times the work takes
    // much longer. (Its verdict is not asserted: with three runs a side, one run slowed by a
    // busy machine can widen the interval past zero.)
    let wall = row(&rows, "runner/wall_s", "ops=1500");
    assert!(wall.diff_pct.unwrap() > 50.0, "{wall:#?}");
    // ...and it agrees with stress-ng's own run time, to stress-ng's start-up and rounding.
    let own = row(&rows, "stress-ng/cpu/real_time_s", "ops=1500");
    assert!(
        (wall.mean - own.mean).abs() < 0.1 + 0.2 * own.mean,
        "runner {} s vs stress-ng {} s",
        wall.mean,
        own.mean
    );

    // The CPUs the workload received (from /proc samples): one stress-ng worker has at most one.
    let cpus = row(&rows, "cpu_share/run", "ops=1500");
    assert_eq!((cpus.runs, cpus.unit.as_str()), (3, "CPUs"));
    assert!(cpus.mean > 0.0 && cpus.mean <= 1.2, "{cpus:#?}");

    // The terminal shows the same rows as the Markdown file, filtered by --metric.
    let shown = sandbox.schedlab(&["compare", pipeline, "--by", "ops", "--metric", "bogo_ops"]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    let lines: Vec<&str> = shown
        .stdout
        .lines()
        .filter(|l| l.starts_with("| spin"))
        .collect();
    assert!(
        lines.iter().all(|l| l.contains("bogo_ops")) && lines.len() == 6,
        "{}",
        shown.stdout
    );
    let markdown = std::fs::read_to_string(sandbox.data("ops", "compare/by-ops.md")).unwrap();
    assert!(lines.iter().all(|l| markdown.contains(l)), "{markdown}");

    // The page beside it: the same table, and a chart per figure with each group's mean.
    let html = std::fs::read_to_string(sandbox.data("ops", "compare/by-ops.html")).unwrap();
    let mut figures: Vec<&str> = rows.iter().map(|r| r.metric.as_str()).collect();
    figures.dedup();
    assert_eq!(html.matches("<svg").count(), figures.len(), "{figures:?}");
    let chart = (html.split("<svg"))
        .find(|c| c.contains("\nspin: stress-ng/cpu/bogo_ops\n"))
        .expect(&html);
    assert!(
        chart.contains("ops=500 (3 runs): baseline")
            && chart.contains("ops=1500 (3 runs): higher +200.00 %"),
        "{chart}"
    );
}

#[test]
fn labels_are_compared_with_the_first_label_collected_and_bad_choices_are_explained() {
    if !can_run(
        "labels_are_compared_with_the_first_label_collected_and_bad_choices_are_explained",
        &[Need::Program("stress-ng")],
    ) {
        return;
    }
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "lab.yaml",
        "name: lab\nrepeat: 2\ncollect:\n  workloads:\n    spin:\n      \
         run: [stress-ng, --cpu, \"1\", --cpu-ops, \"50\", --metrics-brief]\n      \
         parse: stress-ng\n",
    );
    let pipeline = pipeline.to_str().unwrap();
    for label in ["before", "after"] {
        let run = sandbox.schedlab(&["run", pipeline, "--label", label]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let compare = sandbox.schedlab(&["compare", pipeline]);
    assert_eq!(compare.code, 0, "{}", compare.stderr);
    let rows: Vec<ComparisonRow> =
        read_rows(&sandbox.data("lab", "compare/by-label.parquet")).unwrap();
    let wall: Vec<(&str, i64, &str)> = (rows.iter())
        .filter(|r| r.metric == "runner/wall_s")
        .map(|r| (r.group.as_str(), r.runs, r.baseline.as_str()))
        .collect();
    assert_eq!(wall, [("before", 2, "before"), ("after", 2, "before")]);
    let after = row(&rows, "runner/wall_s", "after");
    assert_eq!(after.run_ids.split(',').count(), 2);
    assert!(after.run_ids.split(',').all(|id| id.contains("-after-")));

    let unknown = sandbox.schedlab(&["compare", pipeline, "--by", "workers"]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains(
            "no run has the matrix variable `workers` (hint: group by `label`, `variant`)"
        ),
        "{}",
        unknown.stderr
    );
    let baseline = sandbox.schedlab(&["compare", pipeline, "--baseline", "kernel-6.1"]);
    assert_eq!(baseline.code, 2);
    assert!(
        baseline
            .stderr
            .contains("no group `kernel-6.1` to use as the baseline (groups: before, after)"),
        "{}",
        baseline.stderr
    );
}

/// Edits the manifest of every run of `pipeline` whose id contains `-<label>-`.
fn edit_manifests(sandbox: &Sandbox, pipeline: &str, label: &str, edit: impl Fn(&mut Value)) {
    let ids = sandbox.runs(pipeline);
    let ids: Vec<&String> = ids
        .iter()
        .filter(|id| id.contains(&format!("-{label}-")))
        .collect();
    assert!(!ids.is_empty(), "no run of {label}");
    for id in ids {
        let path = sandbox.data(pipeline, &format!("runs/{id}/manifest.json"));
        let mut manifest = read_json(&path);
        edit(&mut manifest);
        std::fs::write(&path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    }
}

/// Sets a manifest's kernel config option and the governor of one core class `P` for every CPU
/// (replacing what the machine had, so the expected lines hold on any machine).
fn set_config(option: &'static str, governor: &'static str) -> impl Fn(&mut Value) {
    move |manifest: &mut Value| {
        let config = &mut manifest["host"]["sched_config"];
        assert!(
            config.is_object(),
            "the collector records the configuration"
        );
        if config["kernel_config"].is_null() {
            config["kernel_config"] = json!({ "source": "the test", "blake3": "", "options": {} });
        }
        config["kernel_config"]["options"]["CONFIG_SCHED_CACHE"] = json!(option);
        config["cpufreq"] = json!({
            "P": { "governor": { governor: "0-1" }, "energy_performance_preference": {} }
        });
    }
}

#[test]
fn compare_opens_with_what_differs_between_the_labels_configurations() {
    let test = "compare_opens_with_what_differs_between_the_labels_configurations";
    if !can_run(test, &[Need::Program("stress-ng")]) {
        return;
    }
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "cfg.yaml",
        "name: cfg\nrepeat: 2\ncollect:\n  workloads:\n    spin:\n      \
         run: [stress-ng, --cpu, \"1\", --cpu-ops, \"50\", --metrics-brief]\n      \
         parse: stress-ng\n",
    );
    let pipeline = pipeline.to_str().unwrap();
    for label in ["before", "after"] {
        let run = sandbox.schedlab(&["run", pipeline, "--label", label]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    // Collected on one machine a moment apart: the same configuration.
    let same = sandbox.schedlab(&["compare", pipeline]);
    assert_eq!(same.code, 0, "{}", same.stderr);
    let first = same.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("configuration: the same in every run ("),
        "{}",
        same.stdout
    );

    // As if `after` ran a kernel with CONFIG_SCHED_CACHE, and under another governor.
    edit_manifests(
        &sandbox,
        "cfg",
        "before",
        set_config("not set", "powersave"),
    );
    edit_manifests(&sandbox, "cfg", "after", set_config("y", "performance"));
    let compare = sandbox.schedlab(&["compare", pipeline]);
    assert_eq!(compare.code, 0, "{}", compare.stderr);
    let opening: Vec<&str> = compare
        .stdout
        .lines()
        .take_while(|l| !l.is_empty())
        .collect();
    let expected = [
        "after vs before: CONFIG_SCHED_CACHE y (before: not set)",
        "after vs before: governor.P performance (before: powersave)",
        "warning: after vs before also differ in governor.P: settings that move scheduler \
         figures besides what the label names",
    ];
    assert_eq!(opening, expected, "{}", compare.stdout);
    let markdown = std::fs::read_to_string(sandbox.data("cfg", "compare/by-label.md")).unwrap();
    assert!(
        markdown.starts_with(&format!(
            "# cfg: compared by label\n\nConfiguration in force:\n\n```text\n{}\n```\n\n| ",
            expected.join("\n")
        )),
        "{markdown}"
    );

    // The runs table holds what the comparison read, a line per setting.
    let runs: Vec<RunRow> = read_table(&sandbox.data("cfg", "tables")).unwrap();
    let uname_v = std::process::Command::new("uname")
        .arg("-v")
        .output()
        .unwrap();
    let uname_v = String::from_utf8(uname_v.stdout).unwrap();
    for run in &runs {
        assert_eq!(run.kernel_build.as_deref(), Some(uname_v.trim()));
        let config = run.sched_config.as_deref().unwrap();
        let governor = if run.label.as_deref() == Some("after") {
            "governor.P=performance"
        } else {
            "governor.P=powersave"
        };
        assert!(config.lines().any(|l| l == governor), "{config}");
        assert!(config.lines().any(|l| l.starts_with("smt=")), "{config}");
    }

    // A run collected before schedlab recorded the configuration still loads, and is named.
    let old = sandbox
        .runs("cfg")
        .into_iter()
        .find(|id| id.contains("-before-"))
        .unwrap();
    let path = sandbox.data("cfg", &format!("runs/{old}/manifest.json"));
    let mut manifest = read_json(&path);
    manifest["host"]
        .as_object_mut()
        .unwrap()
        .remove("sched_config");
    std::fs::write(&path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    let compare = sandbox.schedlab(&["compare", pipeline]);
    assert_eq!(compare.code, 0, "{}", compare.stderr);
    assert_eq!(
        compare.stdout.lines().next(),
        Some(
            format!(
                "configuration: not recorded for {old} (collected before schedlab recorded it), \
                 left out"
            )
            .as_str()
        ),
        "{}",
        compare.stdout
    );
    let runs: Vec<RunRow> = read_table(&sandbox.data("cfg", "tables")).unwrap();
    let old_row = runs.iter().find(|r| r.run_id == old).unwrap();
    assert_eq!(
        (&old_row.kernel_build, &old_row.sched_config),
        (&None, &None)
    );
}

/// Three repetitions under each of two labels: `--by repetition` puts the n-th runs side by
/// side (per label), and `plan` turns the spread of the labels' runs into the runs a 5 %
/// difference needs.
#[test]
fn repetitions_are_compared_and_plan_says_how_many_runs_a_difference_needs() {
    if !can_run(
        "repetitions_are_compared_and_plan_says_how_many_runs_a_difference_needs",
        &[Need::Program("stress-ng")],
    ) {
        return;
    }
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "reps.yaml",
        "name: reps\nrepeat: 3\ncollect:\n  cooldown: 1s\n  workloads:\n    spin:\n      \
         run: [stress-ng, --cpu, \"1\", --cpu-method, int64, --cpu-ops, \"200\", \
         --metrics-brief]\n      parse: stress-ng\n",
    );
    let pipeline = pipeline.to_str().unwrap();
    for label in ["a", "b"] {
        let run = sandbox.schedlab(&["run", pipeline, "--label", label]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }

    let compare = sandbox.schedlab(&["compare", pipeline, "--by", "repetition"]);
    assert_eq!(compare.code, 0, "{}", compare.stderr);
    let rows: Vec<ComparisonRow> =
        read_rows(&sandbox.data("reps", "compare/by-repetition.parquet")).unwrap();
    let bogo: Vec<(&str, &str, i64, Verdict)> = (rows.iter())
        .filter(|r| r.metric == "stress-ng/cpu/bogo_ops")
        .map(|r| (r.context.as_str(), r.group.as_str(), r.runs, r.verdict))
        .collect();
    assert_eq!(
        bogo,
        [
            ("label=a", "repetition=1", 1, Verdict::Baseline),
            ("label=a", "repetition=2", 1, Verdict::TooFewRuns),
            ("label=a", "repetition=3", 1, Verdict::TooFewRuns),
            ("label=b", "repetition=1", 1, Verdict::Baseline),
            ("label=b", "repetition=2", 1, Verdict::TooFewRuns),
            ("label=b", "repetition=3", 1, Verdict::TooFewRuns),
        ]
    );
    assert!(
        (compare.stdout.lines()).any(|l| l.starts_with(
            "| label=b | spin | stress-ng/cpu/bogo_ops | repetition=2 | 1 | 200.0 ops | +0.00 % | – | too few runs |"
        )),
        "{}",
        compare.stdout
    );

    let plan = sandbox.schedlab(&["plan", pipeline, "--by", "label", "--detect", "5%"]);
    assert_eq!(plan.code, 0, "{}", plan.stderr);
    let lines: Vec<&str> = plan.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "Runs per group to find a difference of 5 % of the baseline's mean with 80 % power \
         (two-sided Welch, alpha 0.05):"
    );
    // stress-ng did exactly 200 operations every time: no spread, so two runs a group suffice.
    assert!(
        lines.contains(
            &"| spin | stress-ng/cpu/bogo_ops | b vs a | 3 + 3 | 0.00 % | 2 | 0 runs, 0 s |"
        ),
        "{}",
        plan.stdout
    );
    // The wall time is noisy: whatever it needs, the runs to collect are what the two groups
    // lack, 2 × (needed - 3).
    let wall = (lines.iter())
        .find(|l| l.starts_with("| spin | runner/wall_s | b vs a | 3 + 3 |"))
        .unwrap_or_else(|| panic!("{}", plan.stdout));
    let cells: Vec<&str> = wall.split('|').map(str::trim).collect();
    let needed: usize = cells[6].parse().unwrap();
    let missing: usize = cells[7].split(' ').next().unwrap().parse().unwrap();
    assert_eq!(missing, 2 * needed.saturating_sub(3), "{wall}");

    let zero = sandbox.schedlab(&["plan", pipeline, "--detect", "0%"]);
    assert_eq!(zero.code, 2);
    assert!(
        zero.stderr
            .contains("`0%` is not a positive percentage (e.g. `2%`)"),
        "{}",
        zero.stderr
    );
}

/// Seed 003's comparison across pipelines: a workload's figures against another pipeline's
/// runs of the same work (here three times the operations), matched by `--map`.
#[test]
fn another_pipelines_runs_are_the_baseline_with_workloads_matched_by_map() {
    if !can_run(
        "another_pipelines_runs_are_the_baseline_with_workloads_matched_by_map",
        &[Need::Program("stress-ng")],
    ) {
        return;
    }
    let sandbox = Sandbox::new();
    let spin = |name: &str, workload: &str, ops: &str| {
        format!(
            "name: {name}\nrepeat: 3\ncollect:\n  workloads:\n    {workload}:\n      \
             run: [stress-ng, --cpu, \"1\", --cpu-method, int64, --cpu-ops, \"{ops}\", \
             --metrics-brief]\n      parse: stress-ng\n"
        )
    };
    let busy = sandbox.write("busy.yaml", &spin("busy", "spin", "200"));
    let alone = sandbox.write("alone.yaml", &spin("alone", "solo", "600"));
    let (busy, alone) = (busy.to_str().unwrap(), alone.to_str().unwrap());
    for pipeline in [busy, alone] {
        let run = sandbox.schedlab(&["run", pipeline]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }

    let compared = sandbox.schedlab(&["compare", busy, "--against", alone, "--map", "spin=solo"]);
    assert_eq!(compared.code, 0, "{}", compared.stderr);
    let rows: Vec<ComparisonRow> =
        read_rows(&sandbox.data("busy", "compare/by-label-against-alone.parquet")).unwrap();
    let bogo: Vec<&ComparisonRow> = (rows.iter())
        .filter(|r| r.metric == "stress-ng/cpu/bogo_ops")
        .collect();
    // 200 operations against 600: two thirds fewer, every run exactly.
    assert_eq!(bogo.len(), 2, "{rows:#?}");
    let [baseline, compared] = [bogo[0], bogo[1]];
    assert_eq!(
        (
            baseline.workload.as_str(),
            baseline.group.as_str(),
            baseline.baseline.as_str()
        ),
        ("spin", "alone", "alone")
    );
    assert_eq!((baseline.runs, baseline.verdict), (3, Verdict::Baseline));
    assert_eq!(
        (compared.group.as_str(), compared.runs, compared.verdict),
        ("(no label)", 3, Verdict::Lower)
    );
    let diff = compared.diff_pct.expect("a difference");
    assert!((diff + 66.666).abs() < 0.01, "{diff}");

    let typo = sandbox.schedlab(&["compare", busy, "--against", alone, "--map", "spin=sol"]);
    assert_eq!(typo.code, 2, "{}", typo.stderr);
    assert!(
        typo.stderr.contains("--map spin=sol: alone has no workload `sol` with figures (workloads here: spin; in alone: solo)"),
        "{}",
        typo.stderr
    );
}
