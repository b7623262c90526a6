//! Pipeline validation: each test is a YAML text and the exact errors a user sees.

use std::time::Duration;

use schedlab_spec::{CompileOptions, MonitorKind, Plan, Program, compile};

const PARSERS: &[&str] = &["perf-sched", "stress-ng", "openssl", "time"];

/// Stands in for the runner's rule (`schedlab_runner::layout::check_name_part`), which this
/// crate cannot depend on: what matters here is that its verdict and words reach the diagnostic.
fn name_part(text: &str) -> Result<(), String> {
    if text.is_empty() || text.contains(['.', '$', '{', '}']) {
        Err("the runner's rule".into())
    } else {
        Ok(())
    }
}

/// A machine of three core classes, as `schedlab topology` would describe a small hybrid one.
static HYBRID: std::sync::LazyLock<Vec<(String, Vec<u32>)>> = std::sync::LazyLock::new(|| {
    vec![
        ("P".into(), vec![0, 1]),
        ("E".into(), vec![2, 3, 4, 5]),
        ("LPE".into(), vec![6, 7]),
    ]
});

fn compile_text(yaml: &str) -> Result<Plan, String> {
    compile_form(yaml, false)
}

/// The pipeline (`short`: its short form) compiled for the [`HYBRID`] machine.
fn compile_form(yaml: &str, short: bool) -> Result<Plan, String> {
    let options = CompileOptions {
        parsers: PARSERS,
        nproc: 8,
        classes: &HYBRID,
        short,
        name_part,
        repeat: None,
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
matrix: { workers: [1, 2, 4] }
repeat: 2
collect:
  duration: 5s
  monitors:
    where: { placement: { interval: 100ms } }
  workloads:
    burst:
      start_after: 1s
      run: [stress-ng, --cpu, \"${workers}\", --cpu-load, \"${load}\", \"${nproc}\"]
      parse: stress-ng
      cpus: [0, \"2-3\"]
aggregate:
  - residency: { workload: burst }
";

#[test]
fn a_good_pipeline_expands_matrix_times_repeat_interleaved() {
    let plan = compile_text(GOOD).unwrap();
    let keys: Vec<&str> = plan.runs.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "workers=1-r1",
            "workers=2-r1",
            "workers=4-r1",
            "workers=1-r2",
            "workers=2-r2",
            "workers=4-r2"
        ]
    );
    let Program::External { argv } = &plan.runs[1].collect.workloads[0].program else {
        panic!("external workload expected")
    };
    assert_eq!(argv, &["stress-ng", "--cpu", "2", "--cpu-load", "20", "8"]);
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
        "p.yaml:11:7: error: unknown field `start_afer`, expected one of run, periodic, start_after, nice, cpus, timeout, instances, parse, repeat_until, when, stop
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
12 |       run: [stress-ng, --cpu, \"${workers}\", --cpu-load, \"${lod}\", \"${nproc}\"]
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
        "      run: [stress-ng, --cpu, \"${workers}\", --cpu-load, \"${load}\", \"${nproc}\"]\n",
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
        .replace("[1, 2, 4]", "[1, 2, 3, 4]");
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

/// `stop: expected` is a plan field only where it is written: a workload without it has the
/// identity it had before the key existed, and one with it has another.
#[test]
fn stop_knows_one_value_and_enters_the_identity_only_when_set() {
    let without = compile_text(GOOD).unwrap();
    assert!(!without.runs[0].collect.workloads[0].stop_expected);
    let identity = without.runs[0].identity().to_string();
    assert!(!identity.contains("stop"), "{identity}");

    let yaml = GOOD.replace("parse: stress-ng", "parse: stress-ng\n      stop: expected");
    let with = compile_text(&yaml).unwrap();
    assert!(with.runs[0].collect.workloads[0].stop_expected);
    let identity = with.runs[0].identity().to_string();
    assert!(identity.contains("\"stop_expected\":true"), "{identity}");

    let typo = yaml.replace("stop: expected", "stop: expectd");
    assert_eq!(
        errors(&typo),
        "p.yaml:14:13: error: unknown `stop` value `expectd`
   |
14 |       stop: expectd
   |             ^
  = hint: the only value is `expected`: schedlab stopping the workload (at the collection's end, or its timeout) is part of the experiment"
    );
    let flow = GOOD.replace(
        "parse: stress-ng",
        "parse: stress-ng\n      stop: [expected]",
    );
    assert!(
        errors(&flow).starts_with("p.yaml:14:13: error:"),
        "{}",
        errors(&flow)
    );
}

#[test]
fn a_duration_too_long_for_nanoseconds_is_an_error_at_its_value() {
    let yaml = GOOD.replace("duration: 5s", "duration: 99999999999999999999h");
    assert_eq!(
        errors(&yaml),
        "p.yaml:6:13: error: duration `99999999999999999999h` is too long; the longest is 2562047h
  |
6 |   duration: 99999999999999999999h
  |             ^"
    );
}

const PERIODIC: &str = "\
name: periodic
collect:
  workloads:
    a:
      nice: 5
      periodic: { threads: 2, period: 10ms, busy: 5ms, duration: 1s }
    b:
      nice: 5
      periodic: { threads: 2, period: 10ms, busy: 5ms, duration: 1s }
";

#[test]
fn a_key_inside_a_flow_mapping_is_pointed_at() {
    let yaml = PERIODIC.replacen("busy: 5ms", "busy: 20ms", 1);
    assert_eq!(
        errors(&yaml),
        "p.yaml:6:45: error: `busy` is longer than `period`
  |
6 |       periodic: { threads: 2, period: 10ms, busy: 20ms, duration: 1s }
  |                                             ^"
    );
}

#[test]
fn the_second_of_two_workloads_with_the_same_key_is_pointed_at_when_it_is_wrong() {
    let second = PERIODIC.rfind("nice: 5").unwrap();
    let mut yaml = PERIODIC.to_owned();
    yaml.replace_range(second..second + "nice: 5".len(), "nice: 30");
    assert_eq!(
        errors(&yaml),
        "p.yaml:8:13: error: nice 30 is outside -20..=19
  |
8 |       nice: 30
  |             ^"
    );
}

/// The first line of each error, `file:line:column: error: message`.
fn headlines(yaml: &str) -> Vec<String> {
    errors(yaml)
        .lines()
        .filter(|l| l.starts_with("p.yaml:"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn counts_and_lists_that_would_run_nothing_are_errors_at_their_value() {
    let yaml = PERIODIC
        .replacen("threads: 2", "threads: 0", 1)
        .replacen("nice: 5", "nice: 5\n      instances: 0\n      cpus: []", 1)
        .replacen("period: 10ms, busy: 5ms", "period: 0ms, busy: 0ms", 1);
    assert_eq!(
        headlines(&yaml),
        [
            "p.yaml:8:28: error: `threads` is 0, which runs nothing",
            "p.yaml:8:39: error: `period` must be longer than 0",
            "p.yaml:6:18: error: `instances` is 0, which runs nothing",
            "p.yaml:7:13: error: an empty CPU list",
        ]
    );
    // Without runs, nothing else is checked: the workloads are checked as each run is planned.
    let yaml = PERIODIC.replace(
        "name: periodic",
        "name: periodic\nrepeat: 0\nmatrix: { x: [] }",
    );
    assert_eq!(
        headlines(&yaml),
        [
            "p.yaml:3:14: error: matrix variable `x` has no values",
            "p.yaml:2:9: error: `repeat` is 0, which runs nothing",
        ]
    );
}

#[test]
fn zero_intervals_and_limits_are_errors_at_their_value() {
    let yaml = GOOD
        .replace("duration: 5s", "duration: 0s")
        .replace("interval: 100ms", "interval: 0ms")
        .replace("start_after: 1s", "start_after: 0s\n      timeout: 0s");
    assert_eq!(
        headlines(&yaml),
        [
            "p.yaml:6:13: error: `duration` must be longer than 0",
            "p.yaml:8:37: error: `interval` must be longer than 0",
            "p.yaml:12:16: error: `timeout` must be longer than 0",
        ]
    );
}

#[test]
fn matrix_names_follow_the_runners_rule_and_values_are_any_text() {
    let yaml =
        (GOOD.replace("{ workers: [1, 2, 4] }", "{ work.ers: [1, 2] }")).replace("${workers}", "1");
    assert_eq!(
        errors(&yaml),
        "p.yaml:3:11: error: matrix variable `work.ers` is not usable in a directory name
  |
3 | matrix: { work.ers: [1, 2] }
  |           ^
  = hint: the runner's rule"
    );
    // Values are any text; `vars` and `${nproc}` are substituted, and the plan keeps the text.
    let yaml = GOOD.replace(
        "{ workers: [1, 2, 4] }",
        "{ workers: [0.5, \"1.2GHz\", \"a/b\", \"with space\", \"${nproc}\", \"${load}x\"] }",
    );
    let plan = compile_text(&yaml).unwrap();
    let values: Vec<&str> = (plan.variants.iter())
        .map(|v| v["workers"].as_str())
        .collect();
    assert_eq!(values, ["0.5", "1.2GHz", "a/b", "with space", "8", "20x"]);
    // A value that comes out equal to another would be the same runs twice.
    let yaml = GOOD.replace(
        "{ workers: [1, 2, 4] }",
        "{ workers: [8, \"${nproc}\", 8] }",
    );
    assert_eq!(
        headlines(&yaml),
        [
            "p.yaml:3:24: error: matrix value `${nproc}` is `8` here, which `workers` already lists",
            "p.yaml:3:36: error: matrix value `8` is listed twice",
        ]
    );
    // The pipeline's name is a directory of its own, not part of a run's: `.` is allowed
    // there, a name of dots alone is not.
    let dotted = compile_text(&GOOD.replace("name: demo", "name: kernel-6.8"));
    assert!(dotted.is_ok(), "{dotted:?}");
    let yaml = GOOD.replace("name: demo", "name: ..");
    assert!(
        errors(&yaml)
            .starts_with("p.yaml:1:7: error: pipeline name `..` is not usable as a directory name"),
        "{}",
        errors(&yaml)
    );
}

#[test]
fn a_pipeline_of_too_many_runs_or_cpus_is_refused_before_it_is_expanded() {
    let yaml = GOOD.replace("repeat: 2", "repeat: 4000000000");
    assert_eq!(
        headlines(&yaml),
        ["p.yaml:4:9: error: the pipeline expands to 12000000000 runs (matrix × repeat)"]
    );
    let yaml = GOOD.replace("\"2-3\"", "\"0-4000000000\"");
    assert_eq!(
        headlines(&yaml),
        ["p.yaml:14:17: error: `0-4000000000` is not a CPU list"]
    );
}

#[test]
fn a_declared_topology_keeps_its_order_and_class_order_names_its_classes_once() {
    let yaml = GOOD.replace(
        "name: demo\n",
        "name: demo\ntopology: { small: [1], big: [0] }\nclass_order: [big, small]\n",
    );
    let plan = compile_text(&yaml).expect("valid");
    let declared: Vec<&str> = plan.topology.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(declared, ["small", "big"], "as written, not sorted");
    assert_eq!(plan.class_order, ["big", "small"]);

    let twice = yaml.replace("[big, small]", "[big, big]");
    assert!(
        errors(&twice).starts_with("p.yaml:3:20: error: class `big` is listed twice"),
        "{}",
        errors(&twice)
    );
    let typo = yaml.replace("[big, small]", "[big, smal]");
    let text = errors(&typo);
    assert!(
        text.starts_with("p.yaml:3:20: error: `smal` is not a class of this pipeline's `topology`"),
        "{text}"
    );
    assert!(text.ends_with("hint: did you mean `small`?"), "{text}");
}

/// A pipeline pinning one workload by core class, with `CPUS` and `ARGS` to fill in.
const BY_CLASS: &str = "\
name: classes
collect:
  workloads:
    w:
      run: [stress-ng, ARGS]
      cpus: CPUS
";

fn by_class(cpus: &str, args: &str) -> String {
    BY_CLASS.replace("CPUS", cpus).replace("ARGS", args)
}

/// The one workload's CPUs and argv.
fn pinned(yaml: &str) -> (Vec<u32>, Vec<String>) {
    let plan = compile_text(yaml).unwrap();
    let workload = &plan.runs[0].collect.workloads[0];
    let Program::External { argv } = &workload.program else {
        panic!("external workload expected")
    };
    (workload.cpus.clone().unwrap(), argv[1..].to_vec())
}

#[test]
fn a_class_in_cpus_is_all_its_cpus_or_its_first_n_and_nproc_counts_them() {
    let counts = "\"${nproc_P}\", \"${nproc_E}\", \"${nproc_except_LPE}\", \"${nproc}\"";
    assert_eq!(
        pinned(&by_class("[P]", counts)),
        (
            vec![0, 1],
            vec!["2".into(), "4".into(), "6".into(), "8".into()]
        )
    );
    assert_eq!(pinned(&by_class("[\"E:1\"]", "x")).0, [2]);
    assert_eq!(pinned(&by_class("[E, LPE]", "x")).0, [2, 3, 4, 5, 6, 7]);
    assert_eq!(pinned(&by_class("[\"P:1,LPE:2\", 4]", "x")).0, [0, 4, 6, 7]);
    // The pipeline's topology is laid over the machine's: CPUs it names change class, the
    // others keep theirs.
    let declared = by_class("[\"E:1\"]", "\"${nproc_P}\", \"${nproc_E}\"").replace(
        "name: classes\n",
        "name: classes\ntopology: { P: [0], E: [1] }\n",
    );
    assert_eq!(pinned(&declared), (vec![1], vec!["1".into(), "5".into()]));
}

#[test]
fn a_class_the_machine_lacks_is_an_error_that_names_the_classes_it_has() {
    assert_eq!(
        errors(&by_class("[P, LP]", "x")),
        "p.yaml:6:17: error: `LP` is not a core class of this machine (it has P, E, LPE)
  |
6 |       cpus: [P, LP]
  |                 ^
  = hint: `schedlab topology` lists the classes; a pipeline can declare its own, e.g. `topology: { P: [0], E: [1] }`"
    );
    assert_eq!(
        headlines(&by_class("[e]", "\"${nproc_except_big}\"")),
        [
            "p.yaml:5:24: error: `big` is not a core class of this machine (it has P, E, LPE)",
            "p.yaml:6:14: error: `e` is not a core class of this machine (it has P, E, LPE)",
        ]
    );
    assert!(
        errors(&by_class("[e]", "x")).ends_with("hint: did you mean `E`?"),
        "{}",
        errors(&by_class("[e]", "x"))
    );
    assert_eq!(
        headlines(&by_class("[\"LPE:3\", \"P:0\", \"P:x\"]", "x")),
        [
            "p.yaml:6:14: error: `LPE:3` asks for 3 CPUs of class LPE, which has 2 here",
            "p.yaml:6:23: error: `P:0` needs a count of CPUs after the colon",
            "p.yaml:6:30: error: `P:x` needs a count of CPUs after the colon",
        ]
    );
    // Through a matrix variable, the message says which value.
    let yaml = by_class("[\"${pin}\"]", "x").replace(
        "name: classes\n",
        "name: classes\nmatrix: { pin: [\"P:1\", \"X:1\"] }\n",
    );
    assert_eq!(
        headlines(&yaml),
        [
            "p.yaml:7:14: error: `${pin}` is `X:1` here: `X` is not a core class of this machine (it has P, E, LPE)"
        ]
    );
    // A declared topology's CPUs are numbers: a class there is not a CPU list.
    let yaml =
        by_class("[P]", "x").replace("name: classes\n", "name: classes\ntopology: { P: [E] }\n");
    assert_eq!(
        headlines(&yaml),
        ["p.yaml:2:17: error: `E` is not a CPU list"]
    );
}

/// Durations, counts and sampling intervals through variables, with a short form that shortens
/// them.
const SCALED: &str = "\
name: scaled
vars: { seconds: 60, record: 70s, settle: 2s, sample: 1s }
matrix: { workers: [\"${nproc}\", \"${nproc_except_LPE}\"] }
repeat: 3
short:
  vars: { seconds: 5, record: 8s, sample: 50ms }
  matrix: { workers: [\"${nproc}\"] }
  repeat: 1
  topology: { P: [0], LPE: [1] }
collect:
  duration: \"${record}\"
  workloads:
    w:
      start_after: \"${settle}\"
      run: [stress-ng, --cpu, \"${workers}\", --timeout, \"${seconds}s\"]
      instances: \"${nproc_except_P}\"
  monitors:
    where: { placement: { interval: \"${sample}\" } }
";

#[test]
fn durations_and_counts_take_variables_and_the_short_form_replaces_them() {
    let full = compile_form(SCALED, false).unwrap();
    assert_eq!(full.name, "scaled");
    assert_eq!(full.runs.len(), 6);
    let run = &full.runs[1].collect;
    assert_eq!(run.duration.unwrap().as_secs(), 70);
    assert_eq!(run.workloads[0].start_after.as_secs(), 2);
    assert_eq!(run.workloads[0].instances, 6);
    let Program::External { argv } = &run.workloads[0].program else {
        panic!("external workload expected")
    };
    assert_eq!(argv[2..], ["6", "--timeout", "60s"]);
    let interval = |run: &schedlab_spec::CollectPlan| match &run.monitors[0].kind {
        MonitorKind::Placement(o) => o.interval,
        other => panic!("a placement monitor expected, got {other:?}"),
    };
    assert_eq!(interval(run), Duration::from_secs(1));

    let short = compile_form(SCALED, true).unwrap();
    assert_eq!(short.name, "scaled-short", "its own data directory");
    assert_eq!(short.runs.len(), 1);
    assert_eq!(
        short.topology,
        [("P".into(), vec![0]), ("LPE".into(), vec![1])]
    );
    let run = &short.runs[0].collect;
    assert_eq!(run.duration.unwrap().as_secs(), 8);
    assert_eq!(
        run.workloads[0].instances, 7,
        "CPU 1 of 8 is declared LPE, 0 P"
    );
    let Program::External { argv } = &run.workloads[0].program else {
        panic!("external workload expected")
    };
    assert_eq!(argv[2..], ["8", "--timeout", "5s"]);
    assert_eq!(interval(run), Duration::from_millis(50));
}

#[test]
fn a_short_form_only_replaces_and_a_variable_duration_must_come_out_as_one() {
    let yaml = SCALED
        .replace("vars: { seconds: 5,", "vars: { secnds: 5,")
        .replace(
            "matrix: { workers: [\"${nproc}\"] }",
            "matrix: { threads: [1] }",
        );
    assert_eq!(
        errors(&yaml),
        "p.yaml:6:11: error: the short form sets `secnds`, which `vars` does not define
  |
6 |   vars: { secnds: 5, record: 8s, sample: 50ms }
  |           ^
  = hint: did you mean `seconds`?
p.yaml:7:13: error: the short form sets `threads`, which `matrix` does not define
  |
7 |   matrix: { threads: [1] }
  |             ^
  = hint: a short form only replaces values of `matrix`"
    );
    let yaml = SCALED.replace("record: 70s", "record: 70");
    assert_eq!(
        headlines(&yaml),
        [
            "p.yaml:11:13: error: `${record}` is `70` here: invalid duration `70`: unknown unit ``; \
          write a number and a unit with no space: 500ms, 70s, 2m (units: ns, us, ms, s, m, h)"
        ]
    );
    let yaml = SCALED.replace("sample: 1s", "sample: 0s");
    assert_eq!(
        headlines(&yaml),
        ["p.yaml:18:37: error: `interval` must be longer than 0"]
    );
    let yaml = SCALED.replace("\"${settle}\"", "\"${setle}\"");
    assert_eq!(
        headlines(&yaml),
        ["p.yaml:14:20: error: undefined variable `${setle}`"]
    );
    // The short form's own topology is checked where it is written.
    let yaml = SCALED.replace("LPE: [1] }", "LPE: [E] }");
    assert_eq!(
        compile_form(&yaml, true)
            .unwrap_err()
            .lines()
            .next()
            .unwrap(),
        "p.yaml:9:29: error: `E` is not a CPU list"
    );
    let none = "name: plain\ncollect:\n  workloads:\n    w: { run: [true] }\n";
    assert_eq!(
        compile_form(none, true).unwrap_err(),
        "p.yaml:1:7: error: pipeline `plain` has no short form
  |
1 | name: plain
  |       ^
  = hint: add a `short:` section (`short: {}` when it is short already)"
    );
}

/// A workload pinned to `${pin}`: `FULL` in the full form, `SHORT` in the short form.
const PINNED_FORMS: &str = "\
name: forms
vars: { pin: FULL }
short: { vars: { pin: SHORT } }
collect:
  workloads:
    w:
      run: [stress-ng]
      cpus: [\"${pin}\"]
";

#[test]
fn a_full_form_refused_for_a_class_the_machine_lacks_says_its_short_form_runs_here() {
    let forms =
        |full: &str, short: &str| PINNED_FORMS.replace("FULL", full).replace("SHORT", short);
    assert_eq!(
        errors(&forms("LP", "P")),
        "p.yaml:8:14: error: `${pin}` is `LP` here: `LP` is not a core class of this machine (it has P, E, LPE)
  |
8 |       cpus: [\"${pin}\"]
  |              ^
  = hint: its short form runs on this machine: `schedlab run p.yaml --short`; or: `schedlab topology` lists the classes; a pipeline can declare its own, e.g. `topology: { P: [0], E: [1] }`"
    );
    // A short form that this machine cannot run either is not offered.
    let both = errors(&forms("LP", "LP"));
    assert!(!both.contains("--short"), "{both}");
    assert!(
        both.ends_with("e.g. `topology: { P: [0], E: [1] }`"),
        "{both}"
    );
    // Nor is it offered for another kind of error, or under --short itself.
    let other = errors(&forms("P", "P").replace("[stress-ng]", "[stress-ng, \"${nope}\"]"));
    assert!(!other.contains("--short"), "{other}");
    let short = compile_form(&forms("P", "LP"), true).unwrap_err();
    assert!(!short.contains("runs on this machine"), "{short}");
}
