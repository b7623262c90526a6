//! The conventions of a command-line tool, checked from outside: bash completes schedlab's
//! commands and flags from `schedlab completions bash`, groff renders `schedlab man`'s pages
//! without a warning, every command's `--help` lists its exit codes, and `status --json` and
//! `check --json` say what their text says, as JSON a script parses.

use std::collections::BTreeSet;
use std::process::Command;

use crate::util::{Need, Sandbox, can_run};

/// The visible subcommands, as `schedlab --help` lists them.
fn commands(sandbox: &Sandbox) -> Vec<String> {
    let help = sandbox.schedlab(&["--help"]).stdout;
    let listed = help
        .split("Commands:\n")
        .nth(1)
        .expect("a Commands section");
    (listed.lines())
        .take_while(|l| l.starts_with("  "))
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// What bash's completion function offers after `words` (the last one being completed).
fn bash_completes(sandbox: &Sandbox, words: &[&str]) -> BTreeSet<String> {
    let script = sandbox.schedlab(&["completions", "bash"]);
    assert_eq!(script.code, 0, "{}", script.stderr);
    let file = sandbox.write("schedlab.bash", &script.stdout);
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source {}; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{}'; COMP_POINT=${{#COMP_LINE}}; \
         _schedlab schedlab '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        file.display(),
        quoted.join(" "),
        words.len() - 1,
        words.join(" "),
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let done = crate::util::finished(
        Command::new("bash")
            .arg("-c")
            .arg(program)
            .output()
            .unwrap(),
    );
    assert_eq!(done.code, 0, "{}", done.stderr);
    done.stdout.lines().map(str::to_owned).collect()
}

#[test]
fn bash_completes_commands_and_each_commands_flags() {
    if !can_run(
        "bash_completes_commands_and_each_commands_flags",
        &[Need::Program("bash")],
    ) {
        return;
    }
    let sandbox = Sandbox::new();
    let offered = bash_completes(&sandbox, &["schedlab", ""]);
    for command in commands(&sandbox) {
        assert!(offered.contains(&command), "{command} not in {offered:?}");
    }
    assert_eq!(
        bash_completes(&sandbox, &["schedlab", "che"]),
        BTreeSet::from(["check".to_owned()])
    );
    let flags = bash_completes(&sandbox, &["schedlab", "check", "--"]);
    for flag in ["--json", "--bisect", "--label", "--data", "--short"] {
        assert!(flags.contains(flag), "{flag} not in {flags:?}");
    }
    assert!(
        !flags.contains("--dry-run"),
        "run's flag offered for check: {flags:?}"
    );
}

#[test]
fn man_pages_cover_every_command_and_groff_renders_them_cleanly() {
    if !can_run(
        "man_pages_cover_every_command_and_groff_renders_them_cleanly",
        &[Need::Program("groff")],
    ) {
        return;
    }
    let sandbox = Sandbox::new();
    let out = sandbox.path("man");
    let done = sandbox.schedlab(&["man", "--out", out.to_str().unwrap()]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let mut expected: BTreeSet<String> = (commands(&sandbox).iter())
        .map(|c| format!("schedlab-{c}.1"))
        .collect();
    expected.insert("schedlab.1".into());
    expected.insert("schedlab-export-perfetto.1".into());
    let written: BTreeSet<String> = (std::fs::read_dir(&out).unwrap().flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(written, expected);
    for page in &written {
        let rendered = Command::new("groff")
            .args(["-k", "-man", "-Tutf8", "-ww", "-z"])
            .arg(out.join(page))
            .output()
            .unwrap();
        let warnings = String::from_utf8_lossy(&rendered.stderr);
        assert!(
            rendered.status.success() && warnings.is_empty(),
            "{page}: {warnings}"
        );
    }
    let check = Command::new("groff")
        .args(["-k", "-man", "-Tutf8", "-P-cbou"])
        .arg(out.join("schedlab-check.1"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(
        text.contains("schedlab-check - Check a pipeline's expectations"),
        "{text}"
    );
    assert!(text.contains("--bisect") && text.contains("125"), "{text}");
}

#[test]
fn every_commands_help_lists_its_exit_codes() {
    let sandbox = Sandbox::new();
    let codes = |args: &[&str]| -> BTreeSet<String> {
        let help = sandbox.schedlab(args).stdout;
        let section = help.split("Exit codes:\n").nth(1).unwrap_or_else(|| {
            panic!("`schedlab {}` lists no exit codes:\n{help}", args.join(" "))
        });
        (section.lines())
            .filter_map(|l| l.strip_prefix("  "))
            .filter_map(|l| l.split_whitespace().next())
            .filter(|w| w.parse::<u8>().is_ok())
            .map(str::to_owned)
            .collect()
    };
    let set = |codes: &[&str]| codes.iter().map(|c| c.to_string()).collect::<BTreeSet<_>>();
    for command in commands(&sandbox) {
        if command == "completions" || command == "export" {
            continue;
        }
        let listed = codes(&[command.as_str(), "--help"]);
        assert!(
            listed.contains("0") && listed.contains("2"),
            "{command}: {listed:?}"
        );
    }
    assert_eq!(codes(&["run", "--help"]), set(&["0", "1", "2", "3", "130"]));
    assert_eq!(
        codes(&["check", "--help"]),
        set(&["0", "1", "2", "125", "130"])
    );
    assert_eq!(
        codes(&["export", "perfetto", "--help"]),
        set(&["0", "2", "130"])
    );
    let top = sandbox.schedlab(&["--help"]).stdout;
    assert!(top.contains("Exit codes: 0 done;"), "{top}");
}

/// A periodic thread pinned to a declared P-core for half a second, and two expectations on it.
const PINNED: &str = "\
name: pinned
topology: { P: [0], E: [1] }
collect:
  monitors:
    where: { placement: { interval: 50ms } }
  workloads:
    spin:
      periodic: { threads: 1, period: 20ms, busy: 5ms, duration: 500ms }
      cpus: [P]
aggregate:
  - residency: { workload: spin }
  - cpu_time: { workload: spin }
expect:
  - residency: { workload: spin, class: P, share: \">= 0.95\" }
  - cpu_time: { workload: spin, seconds: \">= 1s\" }
";

#[test]
fn status_and_check_json_say_what_their_text_says() {
    let sandbox = Sandbox::new();
    let file = sandbox.write("pinned.yaml", PINNED);
    let file = file.to_str().unwrap();

    let before = sandbox.schedlab(&["status", file, "--json"]);
    assert_eq!(before.code, 0, "{}", before.stderr);
    let before: serde_json::Value = serde_json::from_str(&before.stdout).unwrap();
    assert_eq!(before["pipeline"], "pinned");
    assert_eq!(before["runs"], serde_json::json!([]));
    let stages = before["stages"].as_object().unwrap();
    let names: Vec<&str> = stages.keys().map(String::as_str).collect();
    assert_eq!(names.len(), 4, "{stages:?}");
    assert!(
        stages["collect"][0]
            .as_str()
            .unwrap()
            .starts_with("1 of 1 runs not collected")
    );

    let checked = sandbox.schedlab(&["check", file, "--json"]);
    assert_eq!(
        checked.code, 1,
        "cpu_time >= 1s of a 0.5 s run fails: {}",
        checked.stderr
    );
    let report: serde_json::Value = serde_json::from_str(&checked.stdout).unwrap();
    assert_eq!(report["judgement"], "fail");
    let rows = report["rows"].as_array().unwrap();
    let runs = sandbox.runs("pinned");
    assert_eq!(runs.len(), 1);
    let judged = |expectation: i64, scope: &str| {
        (rows.iter())
            .find(|r| r["expectation"] == expectation && r["scope"] == scope)
            .unwrap_or_else(|| panic!("no {scope} row of expectation {expectation}: {rows:?}"))
    };
    assert_eq!(judged(1, "runs")["judgement"], "pass");
    assert_eq!(judged(2, "runs")["judgement"], "fail");
    assert_eq!(judged(2, "run")["run_id"], runs[0].as_str());
    assert_eq!(judged(2, "run")["unit"], "ns");
    let seconds = judged(2, "run")["value"].as_f64().unwrap() / 1e9;
    assert!(seconds > 0.0 && seconds < 1.0, "{seconds}");
    assert!(
        checked.stderr.contains("expectation 2 fails"),
        "{}",
        checked.stderr
    );

    let after = sandbox.schedlab(&["status", file, "--json"]);
    let after: serde_json::Value = serde_json::from_str(&after.stdout).unwrap();
    let text = sandbox.schedlab(&["status", file]).stdout;
    let run = &after["runs"][0];
    assert_eq!(run["run_id"], runs[0].as_str());
    assert_eq!(run["status"], "completed");
    assert!(
        text.contains(&format!("{} completed", runs[0])) || text.contains(&runs[0]),
        "{text}"
    );
    for (stage, reasons) in after["stages"].as_object().unwrap() {
        assert_eq!(
            reasons,
            &serde_json::json!([]),
            "{stage} stale after check: {text}"
        );
        assert!(text.contains(&format!("  {stage:<10} fresh")), "{text}");
    }
}

/// Two runs of a periodic thread with an optional perf trace, which a PATH without perf skips.
const SKIPPED_TRACE: &str = "\
name: skipped
repeat: 2
collect:
  monitors:
    sched: { perf-sched: {}, optional: true }
    where: { placement: { interval: 100ms } }
  workloads:
    p:
      periodic: { threads: 1, period: 50ms, busy: 5ms, duration: 500ms }
";

#[test]
fn a_warning_of_every_run_is_said_once_with_its_runs_and_the_report_is_named() {
    let sandbox = Sandbox::new();
    sandbox.write("skipped.yaml", SKIPPED_TRACE);
    let run = |args: &[&str]| {
        crate::util::finished(
            (sandbox.command(args).env("PATH", "/nonexistent"))
                .output()
                .unwrap(),
        )
    };
    let done = run(&["run", "skipped.yaml"]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let runs = sandbox.runs("skipped");
    assert_eq!(runs.len(), 2, "{runs:?}");
    let skipped: Vec<&str> = (done.stderr.lines())
        .filter(|l| l.contains("perf-sched skipped"))
        .collect();
    assert_eq!(
        skipped,
        [format!(
            "collect: warning: sched: optional monitor perf-sched skipped: perf is not installed \
             (hint: apt-get install linux-perf) (2 runs: {}, {})",
            runs[0], runs[1]
        )],
        "{}",
        done.stderr
    );
    assert!(
        !done.stderr.contains("WARN"),
        "a log line in tracing's format: {}",
        done.stderr
    );
    let in_summary: Vec<&str> = (done.stdout.lines())
        .filter(|l| l.contains("perf-sched skipped"))
        .collect();
    assert_eq!(in_summary.len(), 1, "{}", done.stdout);
    assert!(
        in_summary[0].starts_with(&format!(
            "warning: {}, {} [warning] sched:",
            runs[0], runs[1]
        )),
        "{}",
        in_summary[0]
    );

    let report = sandbox.data("skipped", "report/summary.md");
    assert!(report.exists());
    let named = format!("report: {}", report.display());
    assert_eq!(
        done.stderr.lines().last(),
        Some(named.as_str()),
        "{}",
        done.stderr
    );
    let analyzed = run(&["analyze", "skipped.yaml", "--force"]);
    assert_eq!(analyzed.code, 0, "{}", analyzed.stderr);
    assert_eq!(
        analyzed.stderr.lines().last(),
        Some(named.as_str()),
        "{}",
        analyzed.stderr
    );
}
