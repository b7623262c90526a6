//! `schedlab compare` on real runs: stress-ng doing a fixed amount of work per variant, and
//! runs collected under two labels, whose configurations it diffs.

use crate::util::{Need, Sandbox, can_run, read_json};
use schedlab_tables::{ComparisonRow, RunRow, Verdict, read_rows, read_table};
use serde_json::{Value, json};

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

/// The built-in periodic workload: one thread spinning `busy` of every 20 ms for `seconds`, its
/// CPU sampled from /proc, and with `traced`, recorded by perf where perf and root allow: the
/// figures of every aggregate a comparison reads.
fn periodic(name: &str, busy: &str, seconds: f64, traced: bool) -> String {
    periodic_at(name, busy, seconds, traced, 0)
}

/// [`periodic`] at a nice level.
fn periodic_at(name: &str, busy: &str, seconds: f64, traced: bool, nice: i32) -> String {
    let perf = if traced {
        "sched: { perf-sched: {}, optional: true }\n    "
    } else {
        ""
    };
    format!(
        "name: {name}\n\
         collect:\n  monitors:\n    {perf}\
         where: {{ placement: {{ interval: 100ms }} }}\n  \
         workloads:\n    periodic:\n      start_after: 200ms\n      nice: {nice}\n      \
         periodic: {{ threads: 1, period: 20ms, busy: {busy}, duration: {ms}ms }}\n\
         aggregate:\n  - residency: {{ workload: periodic }}\n  - migrations: {{}}\n  \
         - sched_delay: {{}}\n  - cpu_time: {{}}\n  - cpu_share: {{}}\n  \
         - placement_cost: {{ workload: periodic }}\n  - wakeup_placement: {{ workload: periodic }}\n",
        ms = (seconds * 1000.0) as u64,
    )
}

/// Held while a test collects periodic runs: the workload spins for wall time, so the CPU time
/// it gets is what other tests' workloads leave it; one such test at a time.
static MACHINE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Collects `runs` runs of each of `pipelines` (with `--label`, where one is given), one of each
/// in turn, so that whatever drifts on the machine meanwhile touches all of them alike.
fn interleaved(sandbox: &Sandbox, pipelines: &[(&str, Option<&str>)], runs: u32) {
    let _machine = MACHINE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    for repeat in 1..=runs {
        for (pipeline, label) in pipelines {
            let repeat = repeat.to_string();
            let mut args = vec!["run", pipeline, "--repeat", &repeat];
            if let Some(label) = label {
                args.extend(["--label", label]);
            }
            let run = sandbox.schedlab(&args);
            assert_eq!(run.code, 0, "{}", run.stderr);
        }
    }
}

/// One unlabelled run, then three runs each under the labels `a` and `b`.
fn a_lone_run_beside_two_labels(sandbox: &Sandbox) -> String {
    let pipeline = sandbox.write("lone.yaml", &periodic("lone", "4ms", 0.5, false));
    let pipeline = pipeline.to_str().unwrap().to_owned();
    interleaved(sandbox, &[(&pipeline, None)], 1);
    interleaved(
        sandbox,
        &[(&pipeline, Some("a")), (&pipeline, Some("b"))],
        3,
    );
    pipeline
}

#[test]
fn a_lone_unlabelled_run_is_not_the_default_baseline() {
    let sandbox = Sandbox::new();
    let pipeline = a_lone_run_beside_two_labels(&sandbox);
    let compare = sandbox.schedlab(&["compare", &pipeline]);
    assert_eq!(compare.code, 0, "{}", compare.stderr);
    let rows: Vec<ComparisonRow> =
        read_rows(&sandbox.data("lone", "compare/by-label.parquet")).unwrap();
    assert!(rows.iter().all(|r| r.baseline == "a"), "{rows:#?}");
    // Three runs against three: every figure of b that both labels have in two runs or more
    // has an interval and a verdict.
    let b: Vec<&ComparisonRow> = rows.iter().filter(|r| r.group == "b").collect();
    let a_runs = |metric: &str| row(&rows, metric, "a").runs;
    assert!(b.iter().filter(|r| r.runs == 3).count() >= 5, "{b:#?}");
    assert!(
        (b.iter())
            .filter(|r| r.runs >= 2 && a_runs(&r.metric) >= 2)
            .all(|r| r.verdict != Verdict::TooFewRuns),
        "{b:#?}"
    );
    let lone: Vec<&ComparisonRow> = rows.iter().filter(|r| r.group == "(no label)").collect();
    assert!(
        lone.iter().all(|r| r.verdict == Verdict::TooFewRuns),
        "{lone:#?}"
    );

    // --groups keeps only the labels named; --baseline picks among them.
    let limited = sandbox.schedlab(&["compare", &pipeline, "--groups", "b,a", "--baseline", "b"]);
    assert_eq!(limited.code, 0, "{}", limited.stderr);
    let rows: Vec<ComparisonRow> =
        read_rows(&sandbox.data("lone", "compare/by-label.parquet")).unwrap();
    let groups: std::collections::BTreeSet<(&str, &str)> = (rows.iter())
        .map(|r| (r.group.as_str(), r.baseline.as_str()))
        .collect();
    assert_eq!(groups, [("a", "b"), ("b", "b")].into_iter().collect());
    let typo = sandbox.schedlab(&["compare", &pipeline, "--groups", "a,c"]);
    assert_eq!(typo.code, 2, "{}", typo.stderr);
    assert!(
        typo.stderr
            .contains("--groups names no group `c` (groups: (no label), a, b)"),
        "{}",
        typo.stderr
    );
}

/// Every figure's runs per group from `schedlab plan --json`, for every difference from 0.5 % to
/// 100 %: never more for a larger difference, and SciPy's noncentral-t search over the same
/// runs (scripts/power_reference.py, from the values `compare` wrote) to one run.
#[test]
fn plan_agrees_with_scipy_for_every_figure_and_difference() {
    let test = "plan_agrees_with_scipy_for_every_figure_and_difference";
    let Some(python) = schedlab_testkit::scipy_python(test) else {
        return;
    };
    let sandbox = Sandbox::new();
    let pipeline = a_lone_run_beside_two_labels(&sandbox);
    let compare = sandbox.schedlab(&["compare", &pipeline, "--groups", "a,b"]);
    assert_eq!(compare.code, 0, "{}", compare.stderr);
    let observations: Vec<schedlab_tables::ObservationRow> =
        read_rows(&sandbox.data("lone", "compare/by-label.observations.parquet")).unwrap();
    let values = |metric: &str, group: &str| -> Vec<f64> {
        let mut runs: Vec<&schedlab_tables::ObservationRow> = (observations.iter())
            .filter(|o| o.metric == metric && o.group == group)
            .collect();
        runs.sort_by(|a, b| a.run_id.cmp(&b.run_id));
        runs.iter().map(|o| o.value).collect()
    };

    let sizes = [0.5, 1.0, 2.0, 5.0, 6.0, 10.0, 20.0, 50.0, 100.0];
    // (metric, size) -> runs per group, None beyond the cap.
    let mut ours: Vec<(String, f64, Option<u64>)> = Vec::new();
    for size in sizes {
        let detect = format!("{size}%");
        let plan = sandbox.schedlab(&[
            "plan", &pipeline, "--groups", "a,b", "--detect", &detect, "--json",
        ]);
        assert_eq!(plan.code, 0, "{}", plan.stderr);
        let rows: Vec<Value> = serde_json::from_str(&plan.stdout).expect(&plan.stdout);
        for row in rows {
            let needed = &row["needed"];
            let count = match (needed["runs"].as_u64(), needed["more_than"].as_u64()) {
                (Some(n), _) => Some(n),
                (None, Some(_)) => None,
                // No spread in a group or a baseline mean of 0: nothing to compare.
                _ => continue,
            };
            ours.push((row["metric"].as_str().unwrap().to_owned(), size, count));
        }
    }
    let figures: std::collections::BTreeSet<&str> = ours.iter().map(|o| o.0.as_str()).collect();
    assert!(
        figures.contains("periodic/cpu_time") && figures.len() >= 5,
        "{figures:?}"
    );

    let cap = 100_000;
    let input: Vec<Value> = (ours.iter())
        .map(|(metric, size, _)| {
            json!({ "group": values(metric, "b"), "baseline": values(metric, "a"),
                    "detect_pct": size, "cap": cap })
        })
        .collect();
    let script = schedlab_testkit::workspace_root().join("scripts/power_reference.py");
    let mut child = std::process::Command::new(&python)
        .arg(&script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(
        child.stdin.as_mut().unwrap(),
        serde_json::to_string(&input).unwrap().as_bytes(),
    )
    .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", script.display());
    let reference: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    for ((metric, size, count), expected) in ours.iter().zip(&reference) {
        let scipy = expected["scipy"].as_u64();
        let agree = match (count, scipy) {
            (Some(n), Some(m)) => n.abs_diff(m) <= 1,
            (None, None) => true,
            (n, m) => n.or(m).is_some_and(|k| k + 1 >= cap),
        };
        assert!(
            agree,
            "{metric} at {size} %: plan {count:?}, SciPy {scipy:?}"
        );
    }
    for figure in &figures {
        let counts: Vec<u64> = (ours.iter())
            .filter(|o| o.0 == *figure)
            .map(|o| o.2.unwrap_or(u64::MAX))
            .collect();
        assert!(
            counts.windows(2).all(|w| w[1] <= w[0]),
            "{figure}: {counts:?} for {sizes:?}"
        );
    }
}

#[test]
fn identical_runs_under_two_labels_are_never_higher_or_lower() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write("same.yaml", &periodic("same", "4ms", 2.0, true));
    let pipeline = pipeline.to_str().unwrap();
    interleaved(&sandbox, &[(pipeline, Some("a")), (pipeline, Some("b"))], 4);
    let compare = sandbox.schedlab(&["compare", pipeline]);
    assert_eq!(compare.code, 0, "{}", compare.stderr);
    let rows: Vec<ComparisonRow> =
        read_rows(&sandbox.data("same", "compare/by-label.parquet")).unwrap();
    let b: Vec<&ComparisonRow> = rows.iter().filter(|r| r.group == "b").collect();
    let tested = b.iter().filter(|r| r.q.is_some()).count();
    assert!(tested >= 8, "{b:#?}");
    let found: Vec<(&str, Verdict, Option<f64>, Option<f64>)> = (b.iter())
        .filter(|r| matches!(r.verdict, Verdict::Higher | Verdict::Lower))
        .map(|r| (r.metric.as_str(), r.verdict, r.diff_pct, r.q))
        .collect();
    assert!(found.is_empty(), "the same configuration, yet {found:?}");
    assert!(
        compare
            .stdout
            .contains("| vs baseline (95 % CI) | q | verdict |")
            && compare.stdout.contains(&format!(
                "q: the p of each of the {tested} differences tested, adjusted together"
            )),
        "{}",
        compare.stdout
    );

    // Every interval stays where its figure can be: nothing here can be negative, no share
    // exceeds 1, and nothing falls by more than 100 %.
    for r in &rows {
        let (low, high) = (r.ci_low.unwrap_or(0.0), r.ci_high.unwrap_or(0.0));
        assert!(low >= 0.0 && low <= high, "{r:#?}");
        assert!(r.unit != "share" || high <= 1.0, "{r:#?}");
        assert!(r.diff_ci_low_pct.is_none_or(|l| l >= -100.0), "{r:#?}");
    }

    // No two rows are one number under two names: a figure equal to another in every run has
    // no row of its own, and the row it is folded into names it.
    let observations: Vec<schedlab_tables::ObservationRow> =
        read_rows(&sandbox.data("same", "compare/by-label.observations.parquet")).unwrap();
    let mut by_figure: std::collections::BTreeMap<(&str, &str), Vec<(&str, f64)>> =
        Default::default();
    for o in &observations {
        by_figure
            .entry((o.metric.as_str(), o.unit.as_str()))
            .or_default()
            .push((o.run_id.as_str(), o.value));
    }
    for list in by_figure.values_mut() {
        list.sort_by(|a, b| a.0.cmp(b.0));
    }
    let shown: std::collections::BTreeSet<&str> = b.iter().map(|r| r.metric.as_str()).collect();
    for ((metric, unit), values) in &by_figure {
        let twin = (by_figure.iter()).find(|((m, u), v)| {
            m < metric
                && u == unit
                && v.len() == values.len()
                && v.iter().zip(values.iter()).all(|(x, y)| {
                    x.0 == y.0 && (x.1 - y.1).abs() <= 1e-9 * x.1.abs().max(y.1.abs())
                })
        });
        if let Some(((first, _), _)) = twin {
            assert!(
                !shown.contains(metric),
                "{metric} equals {first} in every run"
            );
        }
    }
    let folded = (b.iter()).filter_map(|r| r.stands_for.as_deref());
    for names in folded {
        assert!(names.split(',').all(|n| !shown.contains(n)), "{names}");
    }
}

/// The same workload busy 6 ms of every 20 ms against 4 ms (another pipeline, the baseline):
/// 50 % more CPU time, found with q < 0.05. The workload spins for wall time, so on a machine
/// busy with other work it gets less CPU than it spins for; at nice -20 it gets most of it, and
/// where it does not (a VM whose host is busy), the test says it is skipped and why.
#[test]
fn a_planted_difference_in_busy_time_is_higher_for_cpu_time() {
    let test = "a_planted_difference_in_busy_time_is_higher_for_cpu_time";
    if !rustix::process::geteuid().is_root() {
        schedlab_testkit::unavailable(test, "not root, so the workload cannot run at nice -20");
        return;
    }
    let sandbox = Sandbox::new();
    let four = sandbox.write("busy4.yaml", &periodic_at("busy4", "4ms", 1.0, false, -20));
    let six = sandbox.write("busy6.yaml", &periodic_at("busy6", "6ms", 1.0, false, -20));
    let (four, six) = (four.to_str().unwrap(), six.to_str().unwrap());
    interleaved(&sandbox, &[(four, None), (six, None)], 8);
    let compare = sandbox.schedlab(&["compare", six, "--against", four]);
    assert_eq!(compare.code, 0, "{}", compare.stderr);

    // The difference is planted only if the runs got the CPU time they spun for: on a machine
    // whose other load preempts even a nice -20 thread, a 6 ms spin loses more than a 4 ms one,
    // and there is less (or nothing) to find. A quarter lost still leaves a clear difference.
    let observations: Vec<schedlab_tables::ObservationRow> = read_rows(&sandbox.data(
        "busy6",
        "compare/by-label-against-busy4.observations.parquet",
    ))
    .unwrap();
    for (group, busy_ns) in [("busy4", 4e6), ("(no label)", 6e6)] {
        let times: Vec<f64> = (observations.iter())
            .filter(|o| o.group == group && o.metric == "periodic/cpu_time")
            .map(|o| o.value)
            .collect();
        // 50 periods of 20 ms in 1 s, each spinning 4 or 6 ms.
        let got = times.iter().sum::<f64>() / times.len() as f64 / (50.0 * busy_ns);
        if got < 0.75 {
            let reason = format!(
                "the machine's other load took {:.0} % of the CPU time the runs of {group} spun \
                 for (load average {}), so the planted difference is not all there to find",
                100.0 * (1.0 - got),
                std::fs::read_to_string("/proc/loadavg")
                    .unwrap_or_default()
                    .trim()
            );
            crate::util::skip(test, &reason);
            return;
        }
    }

    let rows: Vec<ComparisonRow> =
        read_rows(&sandbox.data("busy6", "compare/by-label-against-busy4.parquet")).unwrap();
    let cpu = row(&rows, "periodic/cpu_time", "(no label)");
    assert_eq!((cpu.baseline.as_str(), cpu.runs), ("busy4", 8));
    assert_eq!(cpu.verdict, Verdict::Higher, "{cpu:#?}");
    assert!(cpu.q.unwrap() < 0.05, "{cpu:#?}");
    // 50 % more, less what the machine took from the runs (a quarter at most).
    let change = cpu.diff_pct.unwrap();
    assert!((20.0..60.0).contains(&change), "{cpu:#?}");
    // The rank test's shift: 2 ms a period over 50 periods, 0.1 s of CPU time (in ns), less
    // what the machine took.
    let (low, high) = (
        cpu.hodges_lehmann_ci_low.unwrap(),
        cpu.hodges_lehmann_ci_high.unwrap(),
    );
    assert!(low > 0.02e9 && high < 0.12e9 && low <= high, "{cpu:#?}");
}
