//! Pipeline validation: each test is a YAML text and the exact errors a user sees.

use schedlab_spec::{CompileOptions, Plan, Program, compile};

const PARSERS: &[&str] = &["perf-sched", "stress-ng", "openssl", "time"];

fn compile_text(yaml: &str) -> Result<Plan, String> {
    let options = CompileOptions {
        parsers: PARSERS,
        nproc: 8,
    };
    compile("p.yaml", yaml, &options).map_err(|errors| {
        errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    })
}

fn errors(yaml: &str) -> String {
    compile_text(yaml).expect_err("pipeline should be rejected")
}

const GOOD: &str = "\
name: demo
vars: { load: 20 }
matrix: { workers: [1, 2, \"${nproc}\"] }
repeat: 2
collect:
  duration: 5s
  monitors:
    where: { placement: { interval: 100ms } }
  workloads:
    burst:
      start_after: 1s
      run: [stress-ng, --cpu, \"${workers}\", --cpu-load, \"${load}\"]
      parse: stress-ng
      cpus: [0, \"2-3\"]
aggregate:
  - residency: { workload: burst }
";

#[test]
fn a_good_pipeline_expands_matrix_times_repeat_interleaved() {
    let plan = compile_text(GOOD).unwrap();
    let keys: Vec<&str> = plan.runs.iter().map(|r| r.key.as_str()).collect();
    // ${nproc} inside a matrix value is not expanded: matrix values are literal.
    assert_eq!(
        keys,
        [
            "workers=1-r1",
            "workers=2-r1",
            "workers=${nproc}-r1",
            "workers=1-r2",
            "workers=2-r2",
            "workers=${nproc}-r2"
        ]
    );
    let Program::External { argv } = &plan.runs[1].collect.workloads[0].program else {
        panic!("external workload expected")
    };
    assert_eq!(argv, &["stress-ng", "--cpu", "2", "--cpu-load", "20"]);
    assert_eq!(
        plan.runs[0].collect.workloads[0].cpus.as_deref(),
        Some(&[0, 2, 3][..])
    );
    assert_eq!(
        plan.runs[0].collect.workloads[0].start_after.as_millis(),
        1000
    );
}

#[test]
fn unknown_key_names_line_column_and_the_likely_key() {
    let yaml = GOOD.replace("start_after: 1s", "start_afer: 1s");
    assert_eq!(
        errors(&yaml),
        "p.yaml:11:7: error: unknown field `start_afer`, expected one of run, periodic, start_after, nice, cpus, timeout, instances, parse, repeat_until, when
   |
11 |       start_afer: 1s
   |       ^
  = hint: did you mean `start_after`?"
    );
}

#[test]
fn bad_duration_points_at_the_value() {
    let yaml = GOOD.replace("duration: 5s", "duration: 70 secs");
    let text = errors(&yaml);
    assert!(
        text.starts_with("p.yaml:6:13: error: invalid duration `70 secs`: unknown unit `secs`"),
        "{text}"
    );
}

#[test]
fn wrong_type_is_reported_at_its_value() {
    let yaml = GOOD.replace("repeat: 2", "repeat: twice");
    assert!(
        errors(&yaml).starts_with("p.yaml:4:9: error: "),
        "{}",
        errors(&yaml)
    );
}

#[test]
fn unknown_monitor_kind_suggests_the_real_one() {
    let yaml = GOOD.replace("{ placement:", "{ placment:");
    let text = errors(&yaml);
    assert!(
        text.starts_with("p.yaml:8:14: error: unknown field `placment`"),
        "{text}"
    );
    assert!(text.ends_with("hint: did you mean `placement`?"), "{text}");
}

#[test]
fn unknown_parser_and_undefined_variable_are_both_reported() {
    let yaml = GOOD
        .replace("parse: stress-ng", "parse: stressng")
        .replace("${load}", "${lod}");
    assert_eq!(
        errors(&yaml),
        "p.yaml:12:57: error: undefined variable `${lod}`
   |
12 |       run: [stress-ng, --cpu, \"${workers}\", --cpu-load, \"${lod}\"]
   |                                                         ^
  = hint: did you mean `${load}`?
p.yaml:13:14: error: unknown parser `stressng`
   |
13 |       parse: stressng
   |              ^
  = hint: did you mean `stress-ng`?"
    );
}

#[test]
fn aggregate_of_an_unknown_workload_is_an_error() {
    let yaml = GOOD.replace(
        "residency: { workload: burst }",
        "residency: { workload: brust }",
    );
    assert!(errors(&yaml).contains("`brust` names no workload of this pipeline"));
}

#[test]
fn a_workload_needs_a_program() {
    let yaml = GOOD.replace(
        "      run: [stress-ng, --cpu, \"${workers}\", --cpu-load, \"${load}\"]\n",
        "",
    );
    assert!(
        errors(&yaml)
            .starts_with("p.yaml:10:5: error: workload `burst` needs exactly one of `run`"),
        "{}",
        errors(&yaml)
    );
}

#[test]
fn shuffle_permutes_each_repetition_reproducibly() {
    let yaml = GOOD
        .replace("repeat: 2", "repeat: 2\nshuffle: 7")
        .replace("[1, 2, \"${nproc}\"]", "[1, 2, 3, 4]");
    let keys = |plan: &Plan| plan.runs.iter().map(|r| r.key.clone()).collect::<Vec<_>>();
    let first = keys(&compile_text(&yaml).unwrap());
    assert_eq!(
        first,
        keys(&compile_text(&yaml).unwrap()),
        "same seed, same order"
    );
    for block in first.chunks(4) {
        let mut sorted: Vec<&str> = block.iter().map(|k| &k[..k.len() - 3]).collect();
        sorted.sort();
        assert_eq!(
            sorted,
            ["workers=1", "workers=2", "workers=3", "workers=4"],
            "each repetition runs every variant once"
        );
    }
    let interleaved = keys(&compile_text(&yaml.replace("shuffle: 7", "")).unwrap());
    let differs = (1..20).any(|seed| {
        keys(&compile_text(&yaml.replace("shuffle: 7", &format!("shuffle: {seed}"))).unwrap())
            != interleaved
    });
    assert!(differs, "some seed changes the order");
}

#[test]
fn repeat_until_needs_a_duration_and_knows_one_value() {
    let yaml = GOOD.replace(
        "parse: stress-ng",
        "parse: stress-ng\n      repeat_until: monitors",
    );
    assert!(compile_text(&yaml).unwrap().runs[0].collect.workloads[0].repeat_until_end);
    let no_duration = yaml.replace("  duration: 5s\n", "");
    assert!(
        errors(&no_duration)
            .contains("error: `repeat_until: monitors` needs a collection `duration`")
    );
    let typo = yaml.replace("repeat_until: monitors", "repeat_until: monitor");
    assert!(errors(&typo).contains("unknown `repeat_until` value `monitor`"));
}
