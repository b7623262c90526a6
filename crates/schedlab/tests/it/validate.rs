//! `schedlab validate` and `run` on broken pipelines: exit code 2, file:line:column, nothing run.

use crate::util::Sandbox;

#[test]
fn validate_reports_every_error_with_position_and_runs_nothing() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "typo.yaml",
        "name: typo\ncollect:\n  duration: 70 secs\n  workloads:\n    w:\n      run: [sleep, \"${secs}\"]\n      start_afer: 1s\n",
    );
    let done = sandbox.schedlab(&["validate", pipeline.to_str().unwrap()]);
    assert_eq!(done.code, 2);
    let file = pipeline.display().to_string();
    assert!(
        done.stderr
            .starts_with(&format!("{file}:3:13: error: invalid duration `70 secs`")),
        "{}",
        done.stderr
    );

    sandbox.write(
        "typo.yaml",
        "name: typo\ncollect:\n  workloads:\n    w:\n      run: [sleep, \"${secs}\"]\n",
    );
    let done = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(done.code, 2);
    assert!(
        done.stderr.starts_with(&format!(
            "{file}:5:20: error: undefined variable `${{secs}}`"
        )),
        "{}",
        done.stderr
    );
    assert!(
        done.stderr
            .contains("hint: define it under `vars:` or `matrix:`"),
        "{}",
        done.stderr
    );
    assert!(
        !sandbox.path("data").exists(),
        "run validates first and writes nothing"
    );
}

#[test]
fn an_unknown_aggregate_window_is_pointed_at() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "w.yaml",
        "name: w\ncollect:\n  workloads:\n    w: { run: [sleep, \"0.1\"] }\naggregate:\n  - residency: { window: traec }\n",
    );
    let done = sandbox.schedlab(&["validate", pipeline.to_str().unwrap()]);
    assert_eq!(done.code, 2);
    let file = pipeline.display().to_string();
    assert!(
        done.stderr.starts_with(&format!(
            "{file}:6:26: error: unknown variant `traec`, expected one of trace"
        )),
        "{}",
        done.stderr
    );
    sandbox.write(
        "w.yaml",
        "name: w\ncollect:\n  workloads:\n    w: { run: [sleep, \"0.1\"] }\naggregate:\n  - residency: { window: trace }\n",
    );
    assert_eq!(
        sandbox
            .schedlab(&["validate", pipeline.to_str().unwrap()])
            .code,
        0
    );
}

/// In their short forms, which declare the core classes they need, so that they validate (and
/// run) on any machine of two CPUs; the full forms name classes this machine may lack, and
/// schedlab-spec's `sections` test compiles them for a hybrid one.
#[test]
fn the_shipped_pipelines_are_valid() {
    let sandbox = Sandbox::new();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../pipelines");
    let mut files: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.path().display().to_string())
        .filter(|p| p.ends_with(".yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let mut args = vec!["validate", "--short"];
    args.extend(files.iter().map(String::as_str));
    let done = sandbox.schedlab(&args);
    assert_eq!(done.code, 0, "{}{}", done.stdout, done.stderr);
}

#[test]
fn a_when_that_is_not_a_switch_or_leaves_a_variant_empty_is_pointed_at() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "when.yaml",
        "name: when\nmatrix: { fg: [on, maybe] }\ncollect:\n  workloads:\n    \
         bg: { run: [sleep, \"0.1\"] }\n    fg: { run: [sleep, \"0.1\"], when: \"${fg}\" }\n",
    );
    let file = pipeline.display().to_string();
    let done = sandbox.schedlab(&["validate", &file]);
    assert_eq!(done.code, 2);
    assert!(
        done.stderr.starts_with(&format!(
            "{file}:6:38: error: `when` is `maybe`, not true/false, on/off or yes/no"
        )),
        "{}",
        done.stderr
    );

    sandbox.write(
        "when.yaml",
        "name: when\nmatrix: { on: [yes, no] }\ncollect:\n  workloads:\n    \
         only: { run: [sleep, \"0.1\"], when: \"${on}\" }\n",
    );
    let done = sandbox.schedlab(&["validate", &file]);
    assert_eq!(done.code, 2);
    assert!(
        done.stderr
            .contains("error: no workload runs in variant `on=false`"),
        "{}",
        done.stderr
    );
}

#[test]
fn a_window_on_a_step_it_does_not_apply_to_is_pointed_at() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "w.yaml",
        "name: w\ncollect:\n  workloads:\n    w: { run: [sleep, \"0.1\"] }\naggregate:\n  \
         - residency: { window: trace }\n  - cpu_share: { window: trace }\n",
    );
    let file = pipeline.display().to_string();
    let done = sandbox.schedlab(&["validate", &file]);
    assert_eq!(done.code, 2);
    assert!(
        done.stderr.starts_with(&format!(
            "{file}:7:18: error: `window` does not apply to `cpu_share`"
        )),
        "{}",
        done.stderr
    );
    assert!(
        done.stderr.contains("1 error in"),
        "residency takes a window: {}",
        done.stderr
    );
}

#[test]
fn labels_and_matrix_variables_follow_one_rule_that_the_message_states() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "m.yaml",
        "name: m\nmatrix: { n.x: [1, a.b] }\ncollect:\n  workloads:\n    w: { run: [echo, \"${n.x}\"] }\n",
    );
    let file = pipeline.display().to_string();
    let done = sandbox.schedlab(&["validate", &file]);
    assert_eq!(done.code, 2);
    assert!(
        done.stderr.starts_with(&format!(
            "{file}:2:11: error: matrix variable `n.x` is not usable in a directory name"
        )),
        "{}",
        done.stderr
    );
    let rule = "use letters, digits, `-` and `_` (it becomes part of directory names)";
    assert!(
        done.stderr.contains(&format!("hint: {rule}")),
        "{}",
        done.stderr
    );

    sandbox.write(
        "m.yaml",
        "name: m\nmatrix: { n: [1, a-b] }\ncollect:\n  workloads:\n    w: { run: [echo, \"${n}\"] }\n",
    );
    let done = sandbox.schedlab(&["run", &file, "--label", "v6.1", "--dry-run"]);
    assert_eq!(done.code, 2);
    assert_eq!(
        done.stderr,
        format!("schedlab: error: label `v6.1` is not usable in a directory name (hint: {rule})\n")
    );
    let done = sandbox.schedlab(&["run", &file, "--label", "v6_1", "--dry-run"]);
    assert_eq!(done.code, 0, "{}", done.stderr);
}

/// The binary names this machine's classes, as `schedlab topology` detects them: its first class
/// pins, and a class it lacks is an error that lists the ones it has.
#[test]
fn classes_are_this_machines() {
    let cpus = schedlab_topology::detect(std::path::Path::new("/sys")).unwrap();
    let classes = schedlab_topology::classes(&cpus);
    let (first, members) = &classes[0];
    let sandbox = Sandbox::new();
    let pipeline = |cpus: &str| {
        let text = format!(
            "name: pinned\ncollect:\n  workloads:\n    w: {{ run: [sleep, \"${{nproc_{first}}}\"], cpus: [{cpus}] }}\n"
        );
        sandbox.write("pinned.yaml", &text)
    };
    let dry = sandbox.schedlab(&[
        "run",
        pipeline(&format!("\"{first}:1\"")).to_str().unwrap(),
        "--dry-run",
    ]);
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    let expected = format!("sleep {} (nice 0, CPUs {})", members.len(), members[0]);
    assert!(
        dry.stdout.contains(&expected),
        "{expected} in {}",
        dry.stdout
    );

    let done = sandbox.schedlab(&["validate", pipeline("NOPE").to_str().unwrap()]);
    assert_eq!(done.code, 2);
    let names: Vec<&str> = classes.iter().map(|(c, _)| c.as_str()).collect();
    // Its column moves with the length of the first class's name.
    let expected = format!(
        "error: `NOPE` is not a core class of this machine (it has {})",
        names.join(", ")
    );
    assert!(done.stderr.contains("pinned.yaml:4:"), "{}", done.stderr);
    assert!(
        done.stderr.contains(&expected),
        "{expected} in {}",
        done.stderr
    );
}
