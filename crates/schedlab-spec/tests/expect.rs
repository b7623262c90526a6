//! `expect:` and `collect.record`: what a pipeline says must hold, and the files it records,
//! compiled; each bad one an exact error at its line and column.

use schedlab_spec::{
    CompileOptions, Direction, ExpectKind, Expectation, Op, Plan, Unit, compile, variant_text,
};

const PARSERS: &[&str] = &["stress-ng", "openssl"];

/// A machine of two classes.
static CLASSES: std::sync::LazyLock<Vec<(String, Vec<u32>)>> =
    std::sync::LazyLock::new(|| vec![("P".into(), vec![0, 1]), ("E".into(), vec![2, 3])]);

fn compile_form(yaml: &str, short: bool) -> Result<Plan, String> {
    let options = CompileOptions {
        parsers: PARSERS,
        nproc: 4,
        classes: &CLASSES,
        short,
        name_part: |_| Ok(()),
        repeat: None,
    };
    compile("p.yaml", yaml, &options).map_err(|errors| {
        (errors.iter().map(ToString::to_string))
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// The first line of each error.
fn headlines(yaml: &str) -> Vec<String> {
    let text = compile_form(yaml, false).expect_err("the pipeline should be rejected");
    (text.lines())
        .filter(|l| l.starts_with("p.yaml:"))
        .map(str::to_owned)
        .collect()
}

const PIPELINE: &str = "\
name: demo
matrix: { pin: [any, \"P:1\"] }
collect:
  workloads:
    sha:
      run: [openssl, speed, sha256]
      cpus: [\"${pin}\"]
      parse: openssl
aggregate:
  - residency: { workload: sha }
  - migrations: {}
  - sched_delay: { workload: sha }
  - cpu_time: { workload: sha }
  - cpu_share: { workload: sha }
  - cpu_activity: {}
expect:
EXPECT";

fn with(expect: &str) -> String {
    PIPELINE.replace("EXPECT", expect)
}

#[test]
fn each_expectation_is_a_bound_in_its_columns_unit_on_rows_a_selector_picks() {
    let plan = compile_form(
        &with(
            "  - residency: { workload: sha, class: P, share: \">= 95%\", variant: { pin: any } }
  - migrations: { workload: sha, per_s: \"< 2/s\" }
  - sched_delay: { workload: sha, p99: \"<= 5ms\" }
  - cpu_time: { workload: sha, seconds: \">= 1.5s\" }
  - cpu_share: { workload: sha, phase: during, class: E, cpus: \"< 0.5\" }
  - cpu_activity: { class: E, c6_pct: \">= 90%\" }
  - compare: { by: pin, baseline: \"P:1\", figure: bytes_per_s, workload: sha, not: lower }
",
        ),
        false,
    )
    .unwrap();
    let expect = &plan.summarize.expect;
    let figures: Vec<(String, String)> = expect.iter().map(|e| (e.figure(), e.bound())).collect();
    assert_eq!(
        figures,
        [
            (
                "residency_rollup.share of sha (scope workload, class P, pin=any)",
                ">= 95%"
            ),
            ("migrations.per_second of sha", "< 2/s"),
            ("sched_delay_workloads.p99_ns of sha", "<= 5ms"),
            ("totals.cpu_time_ns of sha", ">= 1.5s"),
            ("cpu_share.cpus of sha (class E, phase during sha)", "< 0.5"),
            (
                "cpu_activity.c6_pct over run (scope class, class E)",
                ">= 90%"
            ),
            ("compare by pin: bytes_per_s of sha", "not lower than P:1"),
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
    );
    let bound = |i: usize| match &expect[i] {
        Expectation::Figure(f) => (f.kind, f.unit, f.bound.op, f.bound.value),
        Expectation::Compare(_) => panic!("a figure expectation"),
    };
    assert_eq!(
        bound(0),
        (ExpectKind::Residency, Unit::Share, Op::AtLeast, 0.95)
    );
    assert_eq!(
        bound(2),
        (ExpectKind::SchedDelay, Unit::Ns, Op::AtMost, 5e6)
    );
    assert_eq!(bound(3).3, 1.5e9);
    let Expectation::Compare(compare) = &expect[6] else {
        panic!("a compare expectation")
    };
    assert_eq!(compare.not, Direction::Lower);
    assert_eq!(compare.baseline.as_deref(), Some("P:1"));
}

#[test]
fn a_bad_expectation_is_an_error_at_its_line_and_column() {
    let cases = [
        (
            "  - residency: { workload: sha, class: P, shares: \">= 0.9\" }\n",
            "p.yaml:17:43: error: unknown field `shares`, expected one of workload, variant, scope, class, cpu, share, seconds",
        ),
        (
            "  - residency: { workload: sha, class: P, share: 0.9 }\n",
            "p.yaml:17:50: error: `share`: `0.9` has no comparison operator",
        ),
        (
            "  - sched_delay: { workload: sha, p99: \"<= 5\" }\n",
            "p.yaml:17:40: error: `p99`: invalid duration `5`: unknown unit ``; write a number and a unit with no space: 500ms, 70s, 2m (units: ns, us, ms, s, m, h)",
        ),
        (
            "  - residency: { workload: shaa, class: P, share: \">= 0.9\" }\n",
            "p.yaml:17:28: error: `shaa` names no workload of this pipeline",
        ),
        (
            "  - residency: { workload: sha, class: LPE, share: \">= 0.9\" }\n",
            "p.yaml:17:40: error: `LPE` is not a core class of this machine (it has P, E)",
        ),
        (
            "  - residency: { workload: sha, share: \">= 0.9\" }\n",
            "p.yaml:17:5: error: a `residency` expectation needs `class` or `cpu`: the share of what",
        ),
        (
            "  - migrations: { workload: sha, count: \"< 9\", per_s: \"< 2\" }\n",
            "p.yaml:17:55: error: an expectation has one bound; this one has count and per_s",
        ),
        (
            "  - residency: { workload: sha, cpu: 9000, share: \">= 0.9\" }\n",
            "p.yaml:17:38: error: CPU 9000 is beyond the last CPU Linux has, 8191",
        ),
        (
            "  - migrations: { workload: sha }\n",
            "p.yaml:17:5: error: this `migrations` expectation has no bound",
        ),
        (
            "  - residency: { workload: sha, class: P, share: \">= 0.9\", variant: { pinn: any } }\n",
            "p.yaml:17:71: error: `pinn` is not a matrix variable of this pipeline",
        ),
        (
            "  - residency: { workload: sha, class: P, share: \">= 0.9\", variant: { pin: E } }\n",
            "p.yaml:17:76: error: `pin` has no value `E`",
        ),
        (
            "  - cpu_share: { workload: sha, cpus: \"> 0.5\" }\n",
            "p.yaml:17:5: error: a `cpu_share` expectation with a reference workload needs `phase`",
        ),
        (
            "  - cpu_activity: { window: sha, busy_pct: \"> 50%\" }\n",
            "p.yaml:17:29: error: no `cpu_activity` step computes the window `sha`",
        ),
        (
            "  - compare: { by: pins, figure: wall, not: higher }\n",
            "p.yaml:17:20: error: `pins` is neither label, variant, repetition nor a matrix variable",
        ),
        (
            "  - compare: { by: pin, baseline: E, figure: wall, not: higher }\n",
            "p.yaml:17:35: error: `pin` has no value `E` for the baseline",
        ),
        (
            "  - compare: { figure: wall, not: slower }\n",
            "p.yaml:17:35: error: `not: slower`: the verdict ruled out is `higher` or `lower`",
        ),
    ];
    for (expect, wanted) in cases {
        assert_eq!(headlines(&with(expect)), [wanted], "{expect}");
    }
    // A bad bound and a bad selector are both reported.
    assert_eq!(
        headlines(&with(
            "  - cpu_activity: { window: sha, busy_pct: \"> 50\" }\n"
        )),
        [
            "p.yaml:17:44: error: `busy_pct`: `> 50`: `` is not how this figure is written",
            "p.yaml:17:29: error: no `cpu_activity` step computes the window `sha`",
        ]
    );
}

#[test]
fn an_expectation_needs_the_aggregate_step_that_computes_its_figure_for_its_workload() {
    let yaml = with("  - residency: { workload: sha, class: P, share: \">= 0.9\" }\n")
        .replace("  - residency: { workload: sha }\n", "")
        .replace(
            "  - sched_delay: { workload: sha }",
            "  - sched_delay: { workload: other }",
        )
        .replace(
            "      parse: openssl\n",
            "      parse: openssl\n    other: { run: [sleep, \"1\"] }\n",
        );
    let text = compile_form(
        &format!("{yaml}  - sched_delay: {{ workload: sha, max: \"< 1s\" }}\n"),
        false,
    )
    .unwrap_err();
    assert_eq!(
        text,
        "p.yaml:17:28: error: `residency` expectations read `residency_rollup`, which no aggregate step computes
   |
17 |   - residency: { workload: sha, class: P, share: \">= 0.9\" }
   |                            ^
  = hint: add `- residency: { workload: sha }` under `aggregate:`
p.yaml:18:30: error: the `sched_delay` step computes `sched_delay_workloads` for other only, not `sha`
   |
18 |   - sched_delay: { workload: sha, max: \"< 1s\" }
   |                              ^
  = hint: add `- sched_delay: { workload: sha }` under `aggregate:`"
    );
}

#[test]
fn a_short_form_carries_its_own_expectations_and_without_them_keeps_the_pipelines() {
    let full = "  - residency: { workload: sha, class: E, share: \">= 0.9\" }\n";
    let yaml = with(full).replace(
        "collect:",
        "short:\n  topology: { Q: [0] }\n  expect:\n    - residency: { workload: sha, class: Q, share: \">= 0.9\" }\ncollect:",
    );
    let class = |plan: &Plan| match &plan.summarize.expect[..] {
        [Expectation::Figure(f)] => f.class.clone().unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(class(&compile_form(&yaml, false).unwrap()), "E");
    assert_eq!(class(&compile_form(&yaml, true).unwrap()), "Q");
    // Its errors point into `short`.
    let bad = yaml.replace("class: Q", "class: R");
    let text = compile_form(&bad, true).unwrap_err();
    assert!(
        text.starts_with(
            "p.yaml:6:42: error: `R` is not a core class of this machine (it has Q, P, E)"
        ),
        "{text}"
    );
    // `expect: []` in the short form: none.
    let none = yaml.replace(
        "  expect:\n    - residency: { workload: sha, class: Q, share: \">= 0.9\" }\n",
        "  expect: []\n",
    );
    assert!(
        compile_form(&none, true)
            .unwrap()
            .summarize
            .expect
            .is_empty()
    );
    // Without `short.expect`, the pipeline's own.
    let kept = yaml.replace(
        "  expect:\n    - residency: { workload: sha, class: Q, share: \">= 0.9\" }\n",
        "",
    );
    assert_eq!(class(&compile_form(&kept, true).unwrap()), "E");
}

#[test]
fn recorded_files_join_the_identity_only_where_a_pipeline_records_some() {
    let yaml = with("").replace("expect:\n", "");
    let plan = compile_form(&yaml, false).unwrap();
    let identity = plan.runs[0].identity();
    assert!(identity.get("record").is_none(), "{identity}");
    let recording = yaml.replace(
        "collect:\n",
        "vars: { dir: /sys/kernel/debug/sched }\ncollect:\n  record: [\"${dir}/*\", /proc/sys/kernel/sched_rt_period_us]\n",
    );
    let plan = compile_form(&recording, false).unwrap();
    assert_eq!(
        plan.runs[0].collect.record,
        [
            "/sys/kernel/debug/sched/*",
            "/proc/sys/kernel/sched_rt_period_us"
        ]
    );
    assert_eq!(
        plan.runs[0].identity()["record"],
        serde_json::json!(plan.runs[0].collect.record)
    );
    assert_eq!(variant_text(&plan.runs[0].variant), "pin=any");
    let bad = recording.replace("/proc/sys/kernel/sched_rt_period_us", "\"/sys/[a\"");
    assert_eq!(
        headlines(&bad),
        ["p.yaml:5:24: error: `/sys/[a` is not a glob pattern: invalid range pattern"]
    );
}
