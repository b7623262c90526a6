//! The comparison's tests: observations from every table, groups, baselines, verdicts and
//! their notes, checked against SciPy's figures.

use schedlab_tables::manifest::RunStatus;
use schedlab_tables::{Needed, PlacementCostRow, SchedDelayWorkloadRow};

use super::*;

use crate::stats::tests::{A, B, C, G, G_BASE};

fn baseline(name: &str) -> Selection {
    Selection {
        baseline: Some(name.into()),
        ..Selection::default()
    }
}

/// The `new` group's row of a comparison by label.
fn new_row(inputs: &CompareInputs) -> ComparisonRow {
    let (seen, groups) = observations(inputs, &GroupBy::Label).unwrap();
    let rows = compare(&seen, &groups, &GroupBy::Label, &Selection::default(), None).unwrap();
    (rows.into_iter()).find(|r| r.group == "new").unwrap()
}

fn run(id: &str, label: Option<&str>, variant: &str, started: &str, status: RunStatus) -> RunRow {
    RunRow {
        run_id: id.into(),
        pipeline: "p".into(),
        label: label.map(Into::into),
        variant: variant.into(),
        repetition: 1,
        host: "h".into(),
        kernel: "k".into(),
        cpu_model: "c".into(),
        started_at: started.into(),
        status,
        duration_ns: 1,
        trace_window_start_ns: None,
        trace_window_end_ns: None,
        kernel_build: None,
        kernel_config_digest: None,
        sched_config: None,
        imported: false,
    }
}

fn wall(run_id: &str, seconds: f64) -> WorkloadMetricRow {
    WorkloadMetricRow {
        run_id: run_id.into(),
        workload: "build".into(),
        instance: 0,
        tid: None,
        tool: "time".into(),
        metric: "wall_time_s".into(),
        value: seconds,
        unit: "s".into(),
    }
}

/// Builds under an `old` kernel, then under a `new` one, a minute apart, each a minute long.
fn labelled(old: &[f64], new: &[f64]) -> CompareInputs {
    let mut inputs = CompareInputs::default();
    for (label, values, hour) in [("old", old, 1), ("new", new, 2)] {
        for (i, value) in values.iter().enumerate() {
            let id = format!("x-{label}-r{i}");
            let started = format!("2026-11-30T0{hour}:{i:02}");
            let mut run = run(&id, Some(label), "", &started, RunStatus::Completed);
            run.repetition = i as u32 + 1;
            run.duration_ns = 60_000_000_000;
            inputs.runs.push(run);
            inputs.workload_metrics.push(wall(&id, *value));
        }
    }
    inputs
}

/// Two kernels, five builds each, labelled in the order they were booted; one failed run.
fn two_kernels() -> CompareInputs {
    let mut inputs = labelled(&B, &A);
    inputs.runs.push(run(
        "x-old-r9",
        Some("old"),
        "",
        "2026-11-30T01:09",
        RunStatus::Failed,
    ));
    inputs.workload_metrics.push(wall("x-old-r9", 1e6));
    inputs
}

#[test]
fn labels_are_compared_with_the_first_booted_and_failed_runs_are_left_out() {
    let (seen, groups) = observations(&two_kernels(), &GroupBy::Label).unwrap();
    assert_eq!(
        groups,
        ["old", "new"],
        "the label whose first run started first leads"
    );
    let rows = compare(&seen, &groups, &GroupBy::Label, &Selection::default(), None).unwrap();
    assert_eq!(rows.len(), 2);
    let (old, new) = (&rows[0], &rows[1]);
    assert_eq!(
        (old.group.as_str(), old.verdict),
        ("old", Verdict::Baseline)
    );
    assert_eq!(old.runs, 5, "the failed run is not counted");
    assert!((old.mean - 628.1).abs() < 1e-9);
    assert_eq!(new.verdict, Verdict::Lower);
    assert!((new.diff_pct.unwrap() - (-15.7 / 628.1 * 100.0)).abs() < 1e-9);
    let (low, high) = (new.diff_ci_low_pct.unwrap(), new.diff_ci_high_pct.unwrap());
    assert!(
        (low - (-19.169271074446154 / 628.1 * 100.0)).abs() < 1e-6,
        "{low}"
    );
    assert!(
        (high - (-12.23072892555371 / 628.1 * 100.0)).abs() < 1e-6,
        "{high}"
    );

    let rows = compare(&seen, &groups, &GroupBy::Label, &baseline("new"), None).unwrap();
    assert_eq!(
        (rows[0].group.as_str(), rows[0].verdict),
        ("old", Verdict::Higher)
    );
    assert_eq!(rows[1].verdict, Verdict::Baseline);
    let err = compare(&seen, &groups, &GroupBy::Label, &baseline("nope"), None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no group `nope` to use as the baseline (groups: old, new)"
    );
}

#[test]
fn a_matrix_variable_groups_and_the_other_values_become_the_context() {
    let mut inputs = CompareInputs::default();
    for (i, (variant, seconds)) in [
        ("workers=1,pin=none", 10.0),
        ("workers=2,pin=none", 20.0),
        ("workers=1,pin=0", 11.0),
        ("workers=2,pin=0", 22.0),
    ]
    .into_iter()
    .enumerate()
    {
        let id = format!("r{i}");
        inputs.runs.push(run(
            &id,
            None,
            variant,
            &format!("t{i}"),
            RunStatus::Completed,
        ));
        inputs.workload_metrics.push(wall(&id, seconds));
    }
    let by = GroupBy::from_name("workers");
    let (seen, groups) = observations(&inputs, &by).unwrap();
    assert_eq!(groups, ["workers=1", "workers=2"]);
    let rows = compare(&seen, &groups, &by, &baseline("1"), None).unwrap();
    let summary: Vec<(&str, &str, Verdict)> = (rows.iter())
        .map(|r| (r.context.as_str(), r.group.as_str(), r.verdict))
        .collect();
    assert_eq!(
        summary,
        [
            ("pin=0", "workers=1", Verdict::Baseline),
            ("pin=0", "workers=2", Verdict::TooFewRuns),
            ("pin=none", "workers=1", Verdict::Baseline),
            ("pin=none", "workers=2", Verdict::TooFewRuns),
        ]
    );
    assert_eq!(rows[1].diff_pct, Some(100.0));

    // The pipeline's order wins over the order runs happened to start in (`shuffle`).
    inputs.variant_order = ["workers=2,pin=none", "workers=1,pin=none"]
        .map(String::from)
        .to_vec();
    assert_eq!(
        observations(&inputs, &by).unwrap().1,
        ["workers=2", "workers=1"]
    );

    let err = observations(&inputs, &GroupBy::from_name("nproc")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no run has the matrix variable `nproc` (hint: group by `label`, `variant`, `pin`, `workers`)"
    );
}

#[test]
fn every_aggregates_figures_are_compared_under_their_window_and_workload() {
    let mut inputs = two_kernels();
    inputs.cpu_activity.push(CpuActivityRow {
        run_id: "x-new-r0".into(),
        window: "build".into(),
        window_start_ns: Some(0),
        window_end_ns: Some(1),
        scope: "all".into(),
        cpu: None,
        class: None,
        samples: 600,
        busy_pct: Some(97.5),
        avg_mhz: None,
        bzy_mhz: Some(3900.0),
        c1_pct: None,
        c6_pct: None,
        core_tmp_c_max: Some(90.0),
        pkg_watt: Some(28.1),
        source: "turbostat".into(),
        busy: None,
    });
    inputs.cpu_share.push(CpuShareRow {
        run_id: "x-old-r0".into(),
        reference: Some("fg".into()),
        phase: "during".into(),
        phase_start_ns: 0,
        phase_end_ns: 1,
        workload: "build".into(),
        class: "all".into(),
        cpu_ns: 1,
        cpus: 15.07,
        source: "sched".into(),
        change_cpus: None,
        change_cpu_s: None,
    });
    // Two threads of one run: their seconds on a slower class add up.
    for (tid, slower_s) in [(1, 2.0), (2, 0.5)] {
        inputs.placement_cost.push(PlacementCostRow {
            run_id: "x-new-r0".into(),
            workload: "build".into(),
            pid: 1,
            tid,
            comm: "cc1".into(),
            prio: None,
            allowed_cpus: "0-1".into(),
            allowed_source: "unbound".into(),
            run_ns: 3_000_000_000,
            slower_run_ns: (slower_s * 1e9) as i64,
            faster_idle_ns: 0,
            faster_idle_share: 0.0,
            faster_idle_cpus: String::new(),
            faster_lower_prio_ns: None,
            faster_lower_prio_share: None,
            faster_lower_prio_cpus: String::new(),
            wait_ns: 0,
            wait_idle_ns: 0,
            wait_idle_share: 0.0,
            wait_idle_cpus: String::new(),
            lost_events: Some(0),
        });
    }
    // The P class's share of the build's CPU time, its migrations over its 2 s lifetime, the
    // power step after it started, and turbostat's P-class Busy%.
    inputs.residency_rollup.push(ResidencyRollupRow {
        run_id: "x-new-r0".into(),
        workload: "build".into(),
        scope: "workload".into(),
        pid: None,
        tid: None,
        cpu: None,
        class: "P".into(),
        run_ns: 7,
        share: 0.7,
        source: "sched".into(),
        lost_events: Some(0),
    });
    inputs.totals.push(TotalsRow {
        run_id: "x-new-r0".into(),
        workload: "build".into(),
        scope: "workload".into(),
        pid: None,
        threads: 2,
        cpu_time_ns: None,
        migrations: Some(30),
        source: "sched".into(),
        lost_events: Some(0),
    });
    inputs.processes.push(ProcessRow {
        run_id: "x-new-r0".into(),
        workload: "build".into(),
        instance: 0,
        pid: 77,
        start_ns: 1_000_000_000,
        end_ns: Some(3_000_000_000),
        exit_code: Some(0),
        nice: 0,
        affinity: None,
        argv: vec![],
    });
    let mut p_class = inputs.cpu_activity[0].clone();
    (p_class.scope, p_class.class, p_class.busy_pct) =
        ("class".into(), Some("P".into()), Some(99.0));
    (p_class.bzy_mhz, p_class.core_tmp_c_max, p_class.pkg_watt) = (None, None, None);
    inputs.cpu_activity.push(p_class);
    inputs.sched_delay_workloads.push(SchedDelayWorkloadRow {
        run_id: "x-new-r0".into(),
        workload: "build".into(),
        threads: 2,
        wakeups: 100,
        mean_ns: Some(50_000.0),
        p50_ns: Some(40_000),
        p90_ns: Some(90_000),
        p99_ns: Some(3_100_000),
        max_ns: Some(4_000_000),
        preemptions: 0,
        preempt_wait_mean_ns: None,
        preempt_wait_p50_ns: None,
        preempt_wait_p90_ns: None,
        preempt_wait_p99_ns: None,
        preempt_wait_max_ns: None,
        source: "sched".into(),
        lost_events: Some(0),
    });
    let (seen, _) = observations(&inputs, &GroupBy::Label).unwrap();
    let figures: Vec<(&str, &str, &str, f64)> = (seen.iter())
        .filter(|o| !o.metric.starts_with("time/"))
        .map(|o| {
            (
                o.workload.as_str(),
                o.metric.as_str(),
                o.unit.as_str(),
                o.value,
            )
        })
        .collect();
    assert_eq!(
        figures,
        [
            ("build", "migrations/count", "migrations", 30.0),
            ("build", "migrations/per_s", "1/s", 15.0),
            ("build", "placement_cost/faster_idle_s", "s", 0.0),
            ("build", "placement_cost/slower_run_s", "s", 2.5),
            ("build", "placement_cost/wait_idle_s", "s", 0.0),
            ("build", "residency/P_share", "share", 0.7),
            ("build", "runner/wall_s", "s", 2.0),
            ("build", "sched_delay/mean_ms", "ms", 0.05),
            ("build", "sched_delay/p99_ms", "ms", 3.1),
            ("build", "turbostat/P/busy_pct", "%", 99.0),
            ("build", "turbostat/busy_pct", "%", 97.5),
            ("build", "turbostat/bzy_mhz", "MHz", 3900.0),
            ("build", "turbostat/pkg_watt", "W", 28.1),
            ("build", "cpu_share/during fg", "CPUs", 15.07),
        ]
    );
}
#[test]
fn the_rank_test_agrees_disagrees_or_cannot_tell() {
    // Five builds a side, every new one faster: both tests say lower, and the verdict rests
    // on the larger p, the rank test's 2 / C(10, 5).
    let agree = new_row(&two_kernels());
    assert_eq!(
        (agree.verdict, agree.verdict_note.as_deref()),
        (Verdict::Lower, None)
    );
    assert_eq!(agree.mann_whitney_u, Some(0.0));
    assert!((agree.mann_whitney_p.unwrap() - 0.007936507936507936).abs() < 1e-9);
    assert!((agree.welch_p.unwrap() - 7.945527173554463e-06).abs() < 1e-9);
    assert_eq!(agree.verdict_p, agree.mann_whitney_p);

    // Welch's interval lies above 0, but one new run ranks below a baseline run.
    let welch_only = new_row(&labelled(&G_BASE, &G));
    assert_eq!(welch_only.verdict, Verdict::Inconclusive);
    assert_eq!(
        welch_only.verdict_note.as_deref(),
        Some(
            "Welch says higher (q = 0.030), the rank test does not confirm it (p = 0.057, \
             q = 0.057)"
        )
    );
    assert_eq!(welch_only.mann_whitney_u, Some(15.0));

    // Every new run ranks above, but one outlier widens Welch's interval past 0.
    let outlier = [10.2, 10.3, 10.25, 10.15, 30.0];
    let rank_only = new_row(&labelled(&[10.0, 10.1, 9.9, 10.0, 10.05], &outlier));
    assert_eq!(rank_only.verdict, Verdict::Inconclusive);
    assert_eq!(
        rank_only.verdict_note.as_deref(),
        Some(
            "the rank test says higher (p = 0.008, q = 0.008), Welch's test does not \
             (q = 0.351)"
        )
    );
    let lines = notes(&[welch_only.clone(), rank_only]);
    assert_eq!(
        lines[0],
        "- build time/wall_time_s, new vs old: inconclusive: Welch says higher (q = 0.030), \
         the rank test does not confirm it (p = 0.057, q = 0.057)"
    );

    // Three runs a side: the rank test's smallest p is 0.1, so Welch's verdict stands.
    let three = new_row(&labelled(&[2.0, 1.0, 3.0], &[12.0, 11.0, 13.0]));
    assert_eq!(three.verdict, Verdict::Higher);
    assert_eq!(
        three.verdict_note.as_deref(),
        Some("the rank test cannot reach p < 0.05 with these runs (its smallest p is 0.10)")
    );
    assert!(notes(&[three]).is_empty());
}

/// `inputs` (from [`labelled`]) with the figure `tool/metric` in `unit`: `old`'s values in the
/// old runs, `new`'s in the new.
fn with_figure(
    mut inputs: CompareInputs,
    name: &str,
    unit: &str,
    old: &[f64],
    new: &[f64],
) -> CompareInputs {
    let (tool, metric) = name.split_once('/').unwrap();
    for (label, values) in [("old", old), ("new", new)] {
        for (i, value) in values.iter().enumerate() {
            inputs.workload_metrics.push(WorkloadMetricRow {
                tool: tool.into(),
                metric: metric.into(),
                unit: unit.into(),
                ..wall(&format!("x-{label}-r{i}"), *value)
            });
        }
    }
    inputs
}

/// The comparison by label of `inputs`, with `--min-effect`.
fn compared(inputs: &CompareInputs, min_effect: Option<f64>) -> Vec<ComparisonRow> {
    let (seen, groups) = observations(inputs, &GroupBy::Label).unwrap();
    compare(
        &seen,
        &groups,
        &GroupBy::Label,
        &Selection::default(),
        min_effect,
    )
    .unwrap()
}

fn new_rows(rows: &[ComparisonRow]) -> Vec<&ComparisonRow> {
    rows.iter().filter(|r| r.group == "new").collect()
}

#[test]
fn the_default_baseline_is_the_group_with_the_most_runs() {
    // One unlabelled run, collected first, beside three runs each of `a` and `b`.
    let mut inputs = CompareInputs::default();
    let labels = [
        None,
        Some("a"),
        Some("a"),
        Some("a"),
        Some("b"),
        Some("b"),
        Some("b"),
    ];
    for (i, label) in labels.into_iter().enumerate() {
        let id = format!("r{i}");
        let started = format!("2026-11-30T0{i}:00");
        inputs
            .runs
            .push(run(&id, label, "", &started, RunStatus::Completed));
        inputs.workload_metrics.push(wall(&id, 10.0 + i as f64));
    }
    let (seen, groups) = observations(&inputs, &GroupBy::Label).unwrap();
    assert_eq!(groups, ["(no label)", "a", "b"]);
    let rows = compare(&seen, &groups, &GroupBy::Label, &Selection::default(), None).unwrap();
    let verdicts: Vec<(&str, &str, Verdict)> = (rows.iter())
        .map(|r| (r.group.as_str(), r.baseline.as_str(), r.verdict))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("(no label)", "a", Verdict::TooFewRuns),
            ("a", "a", Verdict::Baseline),
            ("b", "a", Verdict::Higher),
        ],
        "a, not the lone run, is the baseline (ties: the first collected)"
    );

    // --groups a,b leaves the lone run out; names unknown are errors.
    let only = Selection {
        groups: vec!["b".into(), "a".into()],
        ..Selection::default()
    };
    let rows = compare(&seen, &groups, &GroupBy::Label, &only, None).unwrap();
    let kept: Vec<&str> = rows.iter().map(|r| r.group.as_str()).collect();
    assert_eq!(kept, ["a", "b"]);
    let typo = Selection {
        groups: vec!["c".into()],
        ..Selection::default()
    };
    let err = compare(&seen, &groups, &GroupBy::Label, &typo, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "--groups names no group `c` (groups: (no label), a, b)"
    );
    let outside = Selection {
        baseline: Some("(no label)".into()),
        groups: vec!["a".into(), "b".into()],
    };
    let err = compare(&seen, &groups, &GroupBy::Label, &outside, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no group `(no label)` to use as the baseline (groups: a, b)"
    );
    assert_eq!(default_baseline(&seen, &groups), Some(1));
}

// Per figure (t/c, t/close, time/wall_time_s), by SciPy 1.17.1: Welch's p
// (`ttest_ind(new, old, equal_var=False)`) 0.8507063199650885, 0.04139388184053285 and
// 7.945527173554463e-06; the exact rank test's (`mannwhitneyu(new, old, method="exact")`)
// 0.8412698412698413, 0.007936507936507936 and 0.007936507936507936; the larger of the two
// adjusted by `false_discovery_control([...])`: 0.8507063199650885, 0.062090822760799275 and
// 0.023809523809523808. Welch's alone adjusted: 0.851, 0.0621, 2.38e-05; the rank test's:
// 0.841, 0.0119, 0.0119. t/close's Welch p is below 0.05 alone, not among three figures.
#[test]
fn every_figure_of_a_comparison_is_adjusted_together() {
    let close_old = [10.0, 10.1, 9.9, 10.0, 10.05];
    let close_new = [10.11, 10.14, 10.13, 10.15, 10.45];
    let inputs = with_figure(labelled(&A, &B), "t/close", "s", &close_old, &close_new);
    let inputs = with_figure(inputs, "t/c", "s", &A, &C);
    let rows = compared(&inputs, None);
    let new = new_rows(&rows);
    let qs: Vec<(&str, f64)> = new
        .iter()
        .map(|r| (r.metric.as_str(), r.q.unwrap()))
        .collect();
    let expected = [
        ("t/c", 0.8507063199650885),
        ("t/close", 0.062090822760799275),
        ("time/wall_time_s", 0.023809523809523808),
    ];
    for ((metric, q), (m, e)) in qs.iter().zip(expected) {
        assert!(*metric == m && (q - e).abs() < 1e-9, "{qs:?}");
    }
    assert_eq!(new[2].verdict, Verdict::Higher);
    assert_eq!(new[0].verdict, Verdict::WithinNoise);
    // Its ranks do separate the groups (exact p 0.0079, 0.012 adjusted), Welch's test does
    // not after adjustment: neither verdict stands.
    let close = new[1];
    assert!((close.welch_p.unwrap() - 0.04139388184053285).abs() < 1e-9);
    assert_eq!(close.verdict, Verdict::Inconclusive);
    assert_eq!(
        close.verdict_note.as_deref(),
        Some(
            "the rank test says higher (p = 0.008, q = 0.012), Welch's test does not \
             (q = 0.062)"
        )
    );
}

#[test]
fn differences_below_min_effect_are_noise_whatever_q_says() {
    // The new kernel's builds are 2.50 % faster, with q = 2 / C(10, 5) = 0.0079.
    let rows = compared(&two_kernels(), Some(5.0));
    let new = new_rows(&rows)[0];
    assert!((new.q.unwrap() - 2.0 / 252.0).abs() < 1e-12);
    assert_eq!(
        (new.verdict, new.verdict_note.as_deref()),
        (
            Verdict::WithinNoise,
            Some("-2.50 % is within --min-effect 5 %")
        )
    );
    assert_eq!(
        new_rows(&compared(&two_kernels(), Some(1.0)))[0].verdict,
        Verdict::Lower
    );
    let (seen, groups) = observations(&two_kernels(), &GroupBy::Label).unwrap();
    let err = compare(
        &seen,
        &groups,
        &GroupBy::Label,
        &Selection::default(),
        Some(0.0),
    );
    assert_eq!(
        err.unwrap_err().to_string(),
        "--min-effect takes a positive size such as `2%`, not 0 %"
    );
}

#[test]
fn constant_counts_are_no_certain_difference() {
    // 0 0 0 0 against 1 1 1 1: with no spread at all Welch's p would be 0 (SciPy's too). A
    // count cannot show a spread below one: each group is taken as 4 runs one of which
    // counted one more (sd 1/√4): SciPy's `ttest_ind_from_stats(1, 0.5, 4, 0, 0.5, 4,
    // equal_var=False)` gives 0.030019745287544405; the rank test's is 2 / C(8, 4) = 0.0286.
    let walls = [60.0, 61.0, 59.0, 60.5];
    let inputs = with_figure(
        labelled(&walls, &walls),
        "t/n",
        "count",
        &[0.0; 4],
        &[1.0; 4],
    );
    let rows = compared(&inputs, None);
    let count = (rows.iter())
        .find(|r| r.metric == "t/n" && r.group == "new")
        .unwrap();
    assert!((count.welch_p.unwrap() - 0.030019745287544405).abs() < 1e-9);
    assert_eq!(count.verdict_p, count.welch_p);
    // Adjusted with the wall time's (p = 1): 0.0300 × 2 = 0.060, no difference.
    assert!((count.q.unwrap() - 2.0 * 0.030019745287544405).abs() < 1e-9);
    assert_eq!(count.verdict, Verdict::WithinNoise);

    // Three runs of exactly 500 operations against three of exactly 1500: a difference of a
    // thousand counts against a spread of at most one (SciPy: p = 2.96e-13). The rank test
    // cannot reach 0.05 with three runs a side, so Welch's verdict stands.
    let walls = [60.0, 61.0, 59.0];
    let inputs = with_figure(
        labelled(&walls, &walls),
        "t/ops",
        "ops",
        &[500.0; 3],
        &[1500.0; 3],
    );
    let rows = compared(&inputs, None);
    let ops = (rows.iter())
        .find(|r| r.metric == "t/ops" && r.group == "new")
        .unwrap();
    assert!((ops.welch_p.unwrap() - 2.962958573393325e-13).abs() < 1e-15);
    assert_eq!(ops.verdict, Verdict::Higher);

    // A figure that is not a count, 0 in every baseline run: only the rank test speaks for
    // it, and with three runs a side it cannot reach 0.05.
    let inputs = with_figure(
        labelled(&walls, &walls),
        "t/wait_s",
        "s",
        &[0.0; 3],
        &[0.0005, 0.00051, 0.00049],
    );
    let rows = compared(&inputs, None);
    let wait = (rows.iter())
        .find(|r| r.metric == "t/wait_s" && r.group == "new")
        .unwrap();
    assert!(wait.welch_p.unwrap() < 1e-3, "{wait:#?}");
    assert!((wait.verdict_p.unwrap() - 0.1).abs() < 1e-12, "2 / C(6, 3)");
    assert_eq!(wait.verdict, Verdict::WithinNoise);
}

// Student's t for the mean of 0 0 1 0: (-0.546, 1.046); Welch's for its difference from
// 2 1 3 2, in percent of 2.0: (-149.1 %, -25.9 %) (SciPy's `t.interval` and
// `ttest_ind(...).confidence_interval()`). The bootstrap intervals are those of
// `stats::bootstrap`'s tests, which enumerate every resample.
#[test]
fn intervals_of_counts_stay_at_or_above_0() {
    let walls = [60.0, 61.0, 59.0, 60.5];
    let inputs = with_figure(
        labelled(&walls, &walls),
        "m/count",
        "migrations",
        &[2.0, 1.0, 3.0, 2.0],
        &[0.0, 0.0, 1.0, 0.0],
    );
    let rows = compared(&inputs, None);
    let count = (rows.iter())
        .find(|r| r.metric == "m/count" && r.group == "new")
        .unwrap();
    assert_eq!(
        (count.ci_low, count.ci_high, count.ci_method.as_str()),
        (Some(0.0), Some(0.75), "bootstrap")
    );
    assert_eq!(
        (count.diff_ci_low_pct, count.diff_ci_high_pct),
        (Some(-100.0), Some(-60.0))
    );
    assert_eq!(count.diff_ci_method.as_deref(), Some("bootstrap"));
    let base = (rows.iter())
        .find(|r| r.metric == "m/count" && r.group == "old")
        .unwrap();
    assert_eq!(
        base.ci_method, "t",
        "2 1 3 2: Student's (0.70, 3.30) is inside"
    );
    assert!(
        notes(&rows)
            .last()
            .unwrap()
            .starts_with("- intervals marked † are")
    );
}

#[test]
fn a_figure_equal_to_another_in_every_run_is_one_test() {
    let inputs = with_figure(labelled(&A, &B), "t/x", "s", &A, &C);
    let inputs = with_figure(inputs, "t/y", "s", &A, &C);
    let rows = compared(&inputs, None);
    let new = new_rows(&rows);
    let names: Vec<(&str, Option<&str>)> = (new.iter())
        .map(|r| (r.metric.as_str(), r.stands_for.as_deref()))
        .collect();
    assert_eq!(names, [("t/x", Some("t/y")), ("time/wall_time_s", None)]);
    // Two figures, not three: 2 / C(10, 5) × 2 (SciPy's `false_discovery_control([0.8507,
    // 0.0079365])`: 0.015873015873015872).
    assert!((new[1].q.unwrap() - 0.015873015873015872).abs() < 1e-12);
}

// numpy's `median(subtract.outer(new, old))` and the shifts SciPy's exact test does not
// reject (see `stats::rank`'s test): -15.9 s, (-20.0, -11.8).
#[test]
fn the_rank_test_reports_the_hodges_lehmann_shift() {
    let new = new_row(&two_kernels());
    assert!((new.hodges_lehmann.unwrap() + 15.9).abs() < 1e-9);
    assert!((new.hodges_lehmann_ci_low.unwrap() + 20.0).abs() < 1e-9);
    assert!((new.hodges_lehmann_ci_high.unwrap() + 11.8).abs() < 1e-9);
}

#[test]
fn a_group_that_drifts_with_collection_order_is_flagged() {
    // The old kernel's builds grow slower run by run (SciPy's linregress: slope 0.51 s,
    // 95 % interval 0.379 … 0.641); the new kernel's do not drift.
    let drifting = [10.0, 10.5, 11.2, 11.4, 12.1];
    let (seen, groups) = observations(&labelled(&drifting, &A), &GroupBy::Label).unwrap();
    let rows = compare(&seen, &groups, &GroupBy::Label, &Selection::default(), None).unwrap();
    let (old, new) = (&rows[0], &rows[1]);
    assert_eq!(old.run_ids, "x-old-r0,x-old-r1,x-old-r2,x-old-r3,x-old-r4");
    assert!(old.order_effect && !new.order_effect, "{rows:#?}");
    assert!((old.slope_per_run.unwrap() - 0.51).abs() < 1e-9);
    assert!((old.slope_ci_low.unwrap() - 0.3787843773545875).abs() < 1e-6);
    assert!((old.first_vs_rest_pct.unwrap() - 100.0 * (10.0 - 11.3) / 11.3).abs() < 1e-9);
    assert_eq!(
        notes(&rows),
        [
            "- build time/wall_time_s, old: order effect: +4.62 % per run in collection order \
          (95 % CI +3.43 % … +5.81 %); the first run -11.50 % against the rest"
        ]
    );

    // By repetition: the n-th run of each label together, the label as the context.
    let by = GroupBy::from_name("repetition");
    let (seen, groups) = observations(&labelled(&drifting, &A), &by).unwrap();
    assert_eq!(
        groups,
        (1..=5)
            .map(|i| format!("repetition={i}"))
            .collect::<Vec<_>>()
    );
    let rows = compare(&seen, &groups, &by, &Selection::default(), None).unwrap();
    let firsts: Vec<(&str, &str, f64)> = (rows.iter())
        .filter(|r| r.group == "repetition=1")
        .map(|r| (r.context.as_str(), r.run_ids.as_str(), r.mean))
        .collect();
    assert_eq!(
        firsts,
        [
            ("label=new", "x-new-r0", A[0]),
            ("label=old", "x-old-r0", 10.0)
        ]
    );
}

#[test]
fn the_runs_needed_come_from_the_measured_spread_and_durations() {
    let (seen, groups) = observations(&two_kernels(), &GroupBy::Label).unwrap();
    let runs = two_kernels().runs;
    // A difference of 0.5 % of the old kernel's 628.1 s with the spreads measured (2.10 s
    // and 2.59 s): 9.976 runs a side by SciPy's noncentral t (see `runs_to_detect`'s
    // test), so 10: five more each, a minute each plus a 5 s cooldown.
    let plan = runs_needed(&seen, &groups, &Selection::default(), 0.5, &runs, 5.0).unwrap();
    assert_eq!(plan.len(), 1);
    let row = &plan[0];
    assert_eq!((row.group.as_str(), row.baseline.as_str()), ("new", "old"));
    assert_eq!(
        (row.runs, row.needed, row.missing),
        ((5, 5), Needed::Runs(10), 10)
    );
    assert!((row.collect_s - 650.0).abs() < 1e-9, "{row:#?}");
    assert!((row.spread_pct.unwrap() - 100.0 * 2.593260495977997 / 628.1).abs() < 1e-9);
    // 5 % needs no more runs than are there.
    let plan = runs_needed(&seen, &groups, &Selection::default(), 5.0, &runs, 5.0).unwrap();
    assert_eq!((plan[0].needed, plan[0].missing), (Needed::Runs(2), 0));
    let err = runs_needed(&seen, &groups, &Selection::default(), 0.0, &runs, 5.0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot plan for a difference of 0 % (hint: a positive size such as `--detect 2%`)"
    );
}
