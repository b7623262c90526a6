//! How each workload ended, said by a real run: stopped by schedlab at the collection's end,
//! killed by a signal schedlab did not send, exited with a non-zero code, or stopped where the
//! pipeline expects it. The run's status, its quality notes, the summary, `schedlab status` and
//! `schedlab run`'s exit code all say it.

use crate::util::{Finished, Need, Sandbox, can_run, read_json};
use schedlab_tables::manifest::RunStatus;
use schedlab_tables::{QualityRow, RunRow, Severity, read_table};

/// A pipeline run by the real binary: what it printed, its only run's manifest and quality
/// notes, and what `schedlab status` says afterwards.
struct Ran {
    done: Finished,
    run: String,
    manifest: serde_json::Value,
    quality: Vec<QualityRow>,
    status: String,
    summary_md: String,
}

fn run(sandbox: &Sandbox, name: &str, yaml: &str) -> Ran {
    let pipeline = sandbox.write(&format!("{name}.yaml"), yaml);
    let pipeline = pipeline.to_str().unwrap();
    let done = sandbox.schedlab(&["run", pipeline]);
    let runs = sandbox.runs(name);
    assert_eq!(runs.len(), 1, "{runs:?}: {}", done.stderr);
    let run = runs[0].clone();
    let manifest = read_json(&sandbox.data(name, &format!("runs/{run}/manifest.json")));
    let quality = read_table(&sandbox.data(name, "tables")).unwrap();
    let status = sandbox.schedlab(&["status", pipeline]);
    assert_eq!(status.code, 0, "{}", status.stderr);
    let summary_md = std::fs::read_to_string(sandbox.data(name, "report/summary.md")).unwrap();
    Ran {
        done,
        run,
        manifest,
        quality,
        status: status.stdout,
        summary_md,
    }
}

impl Ran {
    /// The quality notes whose source is `source`.
    fn notes(&self, source: &str) -> Vec<&QualityRow> {
        self.quality.iter().filter(|q| q.source == source).collect()
    }

    /// The manifest's record of workload `name`'s first process.
    fn process(&self, name: &str) -> &serde_json::Value {
        (self.manifest["processes"].as_array().unwrap().iter())
            .find(|p| p["workload"] == name)
            .unwrap_or_else(|| panic!("no process of {name}: {}", self.manifest))
    }

    /// The status the `runs` table holds for the run.
    fn table_status(&self, sandbox: &Sandbox, name: &str) -> RunStatus {
        let runs: Vec<RunRow> = read_table(&sandbox.data(name, "tables")).unwrap();
        assert_eq!(runs.len(), 1);
        runs[0].status
    }
}

/// The seconds in `… after 2.0 s, …` of a note.
fn seconds_after(message: &str) -> f64 {
    let (_, rest) = message.split_once(" after ").expect("an `after N s`");
    rest.split_once(" s").unwrap().0.parse().unwrap()
}

#[test]
fn a_workload_stopped_at_the_end_of_collection_is_reported_stopped() {
    let sandbox = Sandbox::new();
    let ran = run(
        &sandbox,
        "filler",
        "name: filler\ncollect:\n  duration: 2s\n  workloads:\n    nap: { run: [sleep, \"30\"] }\n",
    );
    assert_eq!(ran.done.code, 3, "{}", ran.done.stderr);
    assert!(
        ran.done.stderr.contains(&format!(
            "1 run(s) had a workload stopped at the end of collection before it ended by itself: {}",
            ran.run
        )),
        "{}",
        ran.done.stderr
    );
    assert_eq!(ran.manifest["status"], "workload-stopped");
    assert_eq!(
        ran.table_status(&sandbox, "filler"),
        RunStatus::WorkloadStopped
    );
    // schedlab's SIGTERM ended it: the record says so, and so does the shell's convention.
    let nap = ran.process("nap");
    assert_eq!(nap["stopped"], "end of collection", "{nap}");
    assert_eq!(nap["signal"], "SIGTERM", "{nap}");
    assert_eq!(nap["exit_code"], 143, "{nap}");

    let notes = ran.notes("nap");
    assert_eq!(notes.len(), 1, "{:?}", ran.quality);
    let note = notes[0];
    assert_eq!(note.severity, Severity::Warning);
    assert!(
        note.message
            .starts_with("workload nap (instance 0) was stopped at the end of collection after ")
            && note.message.contains("its stderr is empty")
            && note.message.contains("`stop: expected`"),
        "{}",
        note.message
    );
    // The seconds it ran: the manifest's own start and end, and about the 2 s collection.
    let lived_s =
        (nap["end_ns"].as_i64().unwrap() - nap["start_ns"].as_i64().unwrap()) as f64 / 1e9;
    let said = seconds_after(&note.message);
    assert!(
        (said - lived_s).abs() <= 0.051,
        "{said} s said, {lived_s} s lived"
    );
    assert!((1.9..3.5).contains(&said), "{said} s in a 2 s collection");

    // The summary opens with it, in the terminal and in summary.md, and lists the note.
    let line = format!("runs not completed: {} workload-stopped", ran.run);
    assert!(ran.done.stdout.starts_with(&line), "{}", ran.done.stdout);
    assert!(
        ran.summary_md.contains(&format!("**{line}")),
        "{}",
        ran.summary_md
    );
    assert!(
        ran.summary_md.contains(
            "[warning] nap: workload nap (instance 0) was stopped at the end of collection"
        ),
        "{}",
        ran.summary_md
    );
    // `status` says it under the run.
    assert!(
        ran.status
            .contains(&format!("{:<40} workload-stopped", ran.run))
            && ran
                .status
                .contains("    workload nap#0 was stopped at the end of collection after "),
        "{}",
        ran.status
    );
}

#[test]
fn a_stop_the_pipeline_expects_leaves_the_run_completed() {
    let sandbox = Sandbox::new();
    let ran = run(
        &sandbox,
        "expected",
        "name: expected\ncollect:\n  duration: 2s\n  workloads:\n    \
         nap: { run: [sleep, \"30\"], stop: expected }\n",
    );
    assert_eq!(ran.done.code, 0, "{}", ran.done.stderr);
    assert_eq!(ran.manifest["status"], "completed");
    assert_eq!(ran.table_status(&sandbox, "expected"), RunStatus::Completed);
    // Stopped all the same, and recorded so; only the verdict differs.
    let nap = ran.process("nap");
    assert_eq!(nap["stopped"], "end of collection", "{nap}");
    assert_eq!(nap["stop_expected"], true, "{nap}");
    assert!(
        (ran.quality.iter()).all(|q| q.severity == Severity::Info),
        "{:?}",
        ran.quality
    );
    assert!(
        !ran.done.stdout.contains("not completed"),
        "{}",
        ran.done.stdout
    );
    assert!(
        !ran.summary_md.contains("not completed"),
        "{}",
        ran.summary_md
    );
    assert!(!ran.status.contains("nap#0"), "{}", ran.status);
}

/// A timeout is the pipeline's own stop: the run stays `completed`, but a warning says the
/// workload did not end by itself.
#[test]
fn a_workload_stopped_by_its_timeout_is_a_warning_in_a_completed_run() {
    let sandbox = Sandbox::new();
    let ran = run(
        &sandbox,
        "timed",
        "name: timed\ncollect:\n  workloads:\n    nap: { run: [sleep, \"30\"], timeout: 500ms }\n",
    );
    assert_eq!(ran.done.code, 0, "{}", ran.done.stderr);
    assert_eq!(ran.manifest["status"], "completed");
    let notes = ran.notes("nap");
    assert_eq!(notes.len(), 1, "{:?}", ran.quality);
    assert_eq!(notes[0].severity, Severity::Warning);
    assert!(
        notes[0]
            .message
            .starts_with("workload nap (instance 0) was stopped by its timeout after ")
            && notes[0].message.contains("a longer `timeout`"),
        "{}",
        notes[0].message
    );
}

#[test]
fn a_workload_exiting_non_zero_names_its_code_and_its_stderr() {
    let sandbox = Sandbox::new();
    let ran = run(
        &sandbox,
        "boom",
        "name: boom\ncollect:\n  workloads:\n    \
         w: { run: [sh, -c, \"echo starting >&2; echo boom >&2; exit 3\"] }\n",
    );
    assert_eq!(ran.done.code, 1, "{}", ran.done.stderr);
    assert_eq!(ran.manifest["status"], "failed");
    assert_eq!(ran.table_status(&sandbox, "boom"), RunStatus::Failed);
    let w = ran.process("w");
    assert_eq!(
        (&w["exit_code"], &w["signal"]),
        (&3.into(), &serde_json::Value::Null)
    );
    let notes = ran.notes("w");
    assert_eq!(notes.len(), 1, "{:?}", ran.quality);
    assert_eq!(notes[0].severity, Severity::Error);
    assert!(
        notes[0]
            .message
            .starts_with("workload w (instance 0) exited with code 3 after ")
            && notes[0]
                .message
                .ends_with("its stderr's last line: \"boom\""),
        "{}",
        notes[0].message
    );
    assert!(
        ran.done
            .stdout
            .starts_with(&format!("runs not completed: {} failed", ran.run)),
        "{}",
        ran.done.stdout
    );
    assert!(
        ran.status
            .contains("    workload w#0 exited with code 3 after "),
        "{}",
        ran.status
    );
}

/// `kill -9 $$` ends the shell by a signal; `exit 137` ends it with the code a shell reports for
/// that signal. The first is a kill from outside schedlab, the second an exit code.
#[test]
fn a_workload_killed_by_a_signal_names_the_signal() {
    let sandbox = Sandbox::new();
    let ran = run(
        &sandbox,
        "killed",
        "name: killed\ncollect:\n  workloads:\n    \
         shot: { run: [sh, -c, \"kill -9 $$\"] }\n    \
         coded: { run: [sh, -c, \"exit 137\"] }\n",
    );
    assert_eq!(ran.done.code, 1, "{}", ran.done.stderr);
    assert_eq!(ran.manifest["status"], "failed");
    let shot = ran.process("shot");
    assert_eq!(shot["signal"], "SIGKILL", "{shot}");
    assert_eq!(shot["exit_code"], 137, "{shot}");
    assert_eq!(shot["stopped"], serde_json::Value::Null, "{shot}");
    let coded = ran.process("coded");
    assert_eq!(
        (&coded["exit_code"], &coded["signal"]),
        (&137.into(), &serde_json::Value::Null)
    );

    let shot_notes = ran.notes("shot");
    assert_eq!(shot_notes.len(), 1, "{:?}", ran.quality);
    assert_eq!(shot_notes[0].severity, Severity::Error);
    assert!(
        shot_notes[0]
            .message
            .starts_with("workload shot (instance 0) was killed by SIGKILL after ")
            && shot_notes[0]
                .message
                .contains("a signal schedlab did not send"),
        "{}",
        shot_notes[0].message
    );
    let coded_notes = ran.notes("coded");
    assert!(
        coded_notes.len() == 1
            && coded_notes[0]
                .message
                .starts_with("workload coded (instance 0) exited with code 137"),
        "{coded_notes:?}"
    );
    assert!(
        ran.status
            .contains("    workload shot#0 was killed by SIGKILL after "),
        "{}",
        ran.status
    );
}

/// The case, shorter: `openssl speed -seconds 3 sha256` needs 3 s per block size, and a
/// 1 s collection stops it in its first. Its text went to stderr (stdout stays empty until the
/// table at the end), so the parser's error names both files, and the stop names the last line
/// openssl wrote.
#[test]
fn openssl_stopped_before_its_first_result_is_stopped_and_its_parser_names_both_files() {
    let test = "openssl_stopped_before_its_first_result_is_stopped_and_its_parser_names_both_files";
    if !can_run(test, &[Need::Program("openssl")]) {
        return;
    }
    let sandbox = Sandbox::new();
    let ran = run(
        &sandbox,
        "speed",
        "name: speed\ncollect:\n  duration: 1s\n  workloads:\n    \
         w: { run: [openssl, speed, -seconds, \"3\", sha256], parse: openssl }\n",
    );
    assert_eq!(ran.done.code, 3, "{}", ran.done.stderr);
    let stderr = std::fs::read_to_string(
        sandbox.data("speed", &format!("runs/{}/raw/w.0.stderr.txt", ran.run)),
    )
    .unwrap();
    assert_eq!(stderr.trim(), "Doing sha256 for 3s on 16 size blocks:");
    let stopped = ran.notes("w");
    assert!(
        stopped.len() == 1
            && stopped[0]
                .message
                .contains("its stderr's last line: \"Doing sha256 for 3s on 16 size blocks:\""),
        "{stopped:?}"
    );
    let parser = ran.notes("openssl");
    assert_eq!(parser.len(), 1, "{:?}", ran.quality);
    assert_eq!(
        parser[0].message,
        "no results in raw/w.0.stdout.txt or raw/w.0.stderr.txt: raw/w.0.stdout.txt is empty; \
         raw/w.0.stderr.txt:1: no `Doing …` line and no result table (hint: is this `openssl \
         speed` output?)"
    );
}
