//! End-to-end: real pipelines run by the real binary, with real processes and /proc samples.

use crate::util::{Need, Sandbox, can_run, read_json};
use schedlab_tables::manifest::RunStatus;
use schedlab_tables::{
    PlacementRow, ProcessRow, QualityRow, RunRow, Severity, WorkloadMetricRow, read_table,
};

/// A pipeline of about one second: one periodic thread sampled from /proc.
const SMALL: &str = "\
name: small
collect:
  monitors:
    where: { placement: { interval: 50ms } }
  workloads:
    tick:
      start_after: 100ms
      periodic: { threads: 1, period: 50ms, busy: 10ms, duration: 1s }
aggregate:
  - residency: {}
  - cpu_time: {}
";

fn lines_starting(text: &str, prefix: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with(prefix))
        .map(str::to_owned)
        .collect()
}

#[test]
fn second_run_recomputes_nothing_and_edits_rerun_only_what_they_touch() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write("small.yaml", SMALL);
    let pipeline = pipeline.to_str().unwrap();

    let first = sandbox.schedlab(&["run", pipeline]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let runs = sandbox.runs("small");
    assert_eq!(runs.len(), 1);
    assert!(
        (first.stderr).contains(&format!(
            "parse: 1 of 1 runs to compute: {} (never computed)",
            runs[0]
        )),
        "{}",
        first.stderr
    );
    assert!(
        first.stdout.contains("| tick |"),
        "summary table printed: {}",
        first.stdout
    );

    let second = sandbox.schedlab(&["run", pipeline]);
    assert_eq!(second.code, 0, "{}", second.stderr);
    let report = format!(
        "report: {}",
        sandbox.data("small", "report/summary.md").display()
    );
    assert_eq!(
        second.stderr.lines().collect::<Vec<_>>(),
        [
            "collect: all 1 runs collected already, nothing to collect",
            "parse: all 1 runs fresh, nothing to do",
            "aggregate: all 1 runs fresh, nothing to do",
            "summarize: fresh, nothing to do",
            &report,
        ]
    );
    assert!(
        second.stdout.contains("| tick |"),
        "the stored summary is shown again"
    );

    // An edit to the aggregate section only: collect and parse stay, aggregate and summarize rerun.
    sandbox.write("small.yaml", &SMALL.replace("  - cpu_time: {}\n", ""));
    let third = sandbox.schedlab(&["run", pipeline]);
    assert_eq!(third.code, 0, "{}", third.stderr);
    assert!(
        third
            .stderr
            .contains("parse: all 1 runs fresh, nothing to do"),
        "{}",
        third.stderr
    );
    assert!(
        third.stderr.contains(&format!(
            "aggregate: 1 of 1 runs to compute: {} (the `aggregate` section of {pipeline} changed)",
            runs[0]
        )),
        "{}",
        third.stderr
    );
    let partition = format!("aggregates/cpu_time/run_id={}", runs[0]);
    assert!(
        (third.stderr).contains(&format!(
            "summarize: running (input {partition}/part-0.parquet is gone"
        )),
        "{}",
        third.stderr
    );
    assert!(
        !sandbox.data("small", &partition).exists(),
        "an output no longer produced is removed"
    );

    // status explains a stale stage before anything runs.
    sandbox.write(
        "small.yaml",
        &SMALL.replace("cpu_time: {}", "sched_delay: {}"),
    );
    let status = sandbox.schedlab(&["status", pipeline]);
    assert!(
        status.stdout.contains("collect    fresh"),
        "{}",
        status.stdout
    );
    assert!(
        status.stdout.contains("parse      fresh"),
        "{}",
        status.stdout
    );
    assert!(
        status
            .stdout
            .contains("aggregate  stale: 1 of 1 runs stale"),
        "{}",
        status.stdout
    );
    assert!(
        status
            .stdout
            .contains("    aggregate stale: the `aggregate` section"),
        "the stale run says why: {}",
        status.stdout
    );

    // An edit to the collect section: a new run set beside the old one.
    sandbox.write("small.yaml", &SMALL.replace("busy: 10ms", "busy: 5ms"));
    let status = sandbox.schedlab(&["status", pipeline]);
    assert!(
        status
            .stdout
            .contains("(not of the current collect section)"),
        "{}",
        status.stdout
    );
    assert!(
        status
            .stdout
            .contains("collect    stale: 1 of 1 runs not collected"),
        "{}",
        status.stdout
    );
    let analyze = sandbox.schedlab(&["analyze", pipeline]);
    assert_eq!(
        analyze.code, 2,
        "analyze never collects: {}",
        analyze.stderr
    );
    assert!(
        analyze
            .stderr
            .contains("no collected or imported runs for this pipeline"),
        "{}",
        analyze.stderr
    );
    let fourth = sandbox.schedlab(&["run", pipeline]);
    assert_eq!(fourth.code, 0, "{}", fourth.stderr);
    let after = sandbox.runs("small");
    assert_eq!(after.len(), 2, "old run kept beside the new one: {after:?}");
    assert!(after.contains(&runs[0]));
    let new_run = after.iter().find(|r| **r != runs[0]).unwrap();
    assert!(
        (fourth.stderr).contains(&format!(
            "parse: 1 of 1 runs to compute: {new_run} (never computed)"
        )),
        "{}",
        fourth.stderr
    );
    assert!(
        (fourth.stderr).contains(&format!(
            "run {}: its tables and aggregates were removed (it was collected by an earlier \
             collect section)",
            runs[0]
        )),
        "{}",
        fourth.stderr
    );
    assert!(
        !sandbox
            .data("small", &format!("tables/runs/run_id={}", runs[0]))
            .exists()
    );
}

#[test]
fn a_rebuilt_schedlab_recomputes_the_analysis_but_never_recollects() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write("small.yaml", SMALL);
    let pipeline = pipeline.to_str().unwrap();
    assert_eq!(sandbox.schedlab(&["run", pipeline]).code, 0);

    // Another build: the same program with another GNU build id, which identifies it (the
    // linker's note: name size 4, a type of 3, "GNU\0", then the id); linked without one, with
    // other bytes (trailing data is ignored by exec), which its digest tells.
    let rebuilt = sandbox.path("schedlab-rebuilt");
    let mut bytes = std::fs::read(env!("CARGO_BIN_EXE_schedlab")).unwrap();
    let note = (bytes.windows(16))
        .position(|w| w[..4] == [4, 0, 0, 0] && w[8..] == [3, 0, 0, 0, b'G', b'N', b'U', 0]);
    match note {
        Some(note) => bytes[note + 16] ^= 0xff,
        None => bytes.extend_from_slice(b"another build"),
    }
    std::fs::write(&rebuilt, bytes).unwrap();
    std::fs::set_permissions(
        &rebuilt,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let command = sandbox.command(&["run", pipeline]);
    let done = crate::util::finished(
        std::process::Command::new(&rebuilt)
            .args(command.get_args())
            .current_dir(command.get_current_dir().unwrap())
            .envs(command.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .env_remove("RUST_LOG")
            .output()
            .unwrap(),
    );
    assert_eq!(done.code, 0, "{}", done.stderr);
    let lines: Vec<&str> = done.stderr.lines().collect();
    assert_eq!(
        lines[0],
        "collect: all 1 runs collected already, nothing to collect"
    );
    for (line, stage) in lines[1..4].iter().zip(["parse", "aggregate", "summarize"]) {
        assert!(
            line.starts_with(stage) && line.contains("(schedlab was rebuilt"),
            "{line}"
        );
    }
}

#[test]
fn from_and_only_select_stages_and_force_them() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write("small.yaml", SMALL);
    let pipeline = pipeline.to_str().unwrap();
    assert_eq!(sandbox.schedlab(&["run", pipeline]).code, 0);

    let only = sandbox.schedlab(&["run", pipeline, "--only", "aggregate"]);
    assert_eq!(
        only.stderr.lines().collect::<Vec<_>>(),
        [
            format!(
                "aggregate: 1 of 1 runs to compute: {} (forced)",
                sandbox.runs("small")[0]
            ),
            format!(
                "report: {}",
                sandbox.data("small", "report/summary.md").display()
            ),
        ]
    );

    // What a killed stage leaves (a second Ctrl-C, SIGKILL) is swept when the stage runs again.
    let tmp = sandbox.write("data/small/tables/.tmp-abc.parquet", "half a table");
    let parts = sandbox.write(
        "data/small/tables/.staging-r1-xyz/sched_slices/run_id=r1/part-0.parquet",
        "part",
    );
    let from = sandbox.schedlab(&["run", pipeline, "--from", "parse"]);
    let staging = parts.ancestors().nth(3).unwrap();
    assert!(!tmp.exists() && !staging.exists());
    let run = &sandbox.runs("small")[0];
    assert_eq!(
        lines_starting(&from.stderr, ""),
        [
            format!("parse: 1 of 1 runs to compute: {run} (forced)"),
            format!("aggregate: 1 of 1 runs to compute: {run} (forced)"),
            "summarize: running (forced)".to_owned(),
            format!(
                "report: {}",
                sandbox.data("small", "report/summary.md").display()
            ),
        ]
    );
    let analyze = sandbox.schedlab(&["analyze", pipeline]);
    assert_eq!(analyze.code, 0);
    assert!(
        !analyze.stderr.contains("collect"),
        "analyze never collects: {}",
        analyze.stderr
    );

    let bad = sandbox.schedlab(&["run", pipeline, "--only", "agregate"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("unknown stage `agregate`"),
        "{}",
        bad.stderr
    );
}

#[test]
fn tables_are_written_as_parquet_and_read_back() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write("small.yaml", SMALL);
    assert_eq!(
        sandbox.schedlab(&["run", pipeline.to_str().unwrap()]).code,
        0
    );

    let runs: Vec<RunRow> = read_table(&sandbox.data("small", "tables")).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, RunStatus::Completed);
    let processes: Vec<ProcessRow> = read_table(&sandbox.data("small", "tables")).unwrap();
    assert_eq!(processes.len(), 1);
    assert_eq!(processes[0].workload, "tick");
    assert_eq!(processes[0].exit_code, Some(0));
    let lifetime_ms = (processes[0].end_ns.unwrap() - processes[0].start_ns) / 1_000_000;
    assert!(
        (950..2000).contains(&lifetime_ms),
        "periodic ran ~1 s, took {lifetime_ms} ms"
    );

    // Placement samples every 50 ms over ~1 s, all of the workload's process.
    let placement: Vec<PlacementRow> = read_table(&sandbox.data("small", "tables")).unwrap();
    let worker: Vec<&PlacementRow> = placement
        .iter()
        .filter(|p| p.pid == processes[0].pid)
        .collect();
    // About 20; fewer if the sampler is late on a busy machine.
    assert!(worker.len() >= 10, "{} samples", worker.len());
    assert!(worker.iter().all(|p| p.workload.as_deref() == Some("tick")));
    let nproc = std::thread::available_parallelism().unwrap().get() as i32;
    assert!(worker.iter().all(|p| (0..nproc).contains(&p.cpu)));

    // The periodic thread's own report: 20 periods of 50 ms in 1 s.
    let metrics: Vec<WorkloadMetricRow> = read_table(&sandbox.data("small", "tables")).unwrap();
    let value = |name: &str| {
        metrics
            .iter()
            .find(|m| m.metric == name)
            .map(|m| m.value)
            .unwrap()
    };
    assert_eq!(value("periods") + value("missed_periods"), 20.0);
    assert!(
        value("duty_cycle") > 5.0 && value("duty_cycle") < 40.0,
        "duty {}",
        value("duty_cycle")
    );

    let manifest = read_json(&sandbox.path(&format!(
        "data/small/runs/{}/manifest.json",
        sandbox.runs("small")[0]
    )));
    let raw = manifest["raw_files"].as_array().unwrap();
    assert!(
        raw.iter()
            .all(|f| f["blake3"].as_str().unwrap().len() == 64),
        "raw files hashed when the run ended"
    );
    // No temporary files left behind anywhere.
    for dir in ["tables", "aggregates", "report"] {
        for entry in std::fs::read_dir(sandbox.data("small", dir))
            .unwrap()
            .flatten()
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            assert!(
                !name.starts_with(".tmp") && !name.ends_with(".tmp"),
                "{dir}/{name}"
            );
        }
    }
}

#[test]
fn nice_and_affinity_are_applied_and_output_kept() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "probe.yaml",
        "name: probe\ncollect:\n  workloads:\n    look:\n      run: [cat, /proc/self/stat, /proc/self/status]\n      nice: 7\n      cpus: [0]\n",
    );
    let done = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let run = &sandbox.runs("probe")[0];
    let stdout = std::fs::read_to_string(
        sandbox.data("probe", &format!("runs/{run}/raw/look.0.stdout.txt")),
    )
    .unwrap();
    let stat_fields: Vec<&str> = stdout
        .lines()
        .next()
        .unwrap()
        .rsplit_once(") ")
        .unwrap()
        .1
        .split(' ')
        .collect();
    // Field 19 of /proc/PID/stat is nice; the split starts at field 3.
    assert_eq!(stat_fields[19 - 3], "7");
    assert!(
        stdout.lines().any(|l| l == "Cpus_allowed_list:\t0"),
        "{stdout}"
    );
    let processes: Vec<ProcessRow> = read_table(&sandbox.data("probe", "tables")).unwrap();
    assert_eq!(
        (processes[0].nice, processes[0].affinity.as_deref()),
        (7, Some("0"))
    );
}

#[test]
fn a_failing_workload_marks_its_run_failed_with_its_stderr() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "fail.yaml",
        "name: fail\ncollect:\n  workloads:\n    broken:\n      run: [ls, /no/such/path]\n",
    );
    let done = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(done.code, 1, "{}", done.stderr);
    assert!(done.stderr.contains("1 run(s) failed"), "{}", done.stderr);
    let quality: Vec<QualityRow> = read_table(&sandbox.data("fail", "tables")).unwrap();
    assert!(
        quality.iter().any(|q| q.severity == Severity::Error
            && q.message.contains("exited with code 2")
            && q.message.contains("/no/such/path")),
        "{quality:?}"
    );
}

#[test]
fn a_missing_program_is_refused_before_anything_runs() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "missing.yaml",
        "name: missing\ncollect:\n  workloads:\n    w:\n      run: [no-such-tool-anywhere, --x]\n",
    );
    let done = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(done.code, 2);
    assert!(
        done.stderr
            .contains("program `no-such-tool-anywhere` not found on PATH"),
        "{}",
        done.stderr
    );
    assert!(
        sandbox.runs("missing").is_empty(),
        "nothing half-written: {:?}",
        sandbox.runs("missing")
    );
}

#[test]
fn openssl_effective_throughput_comes_from_its_operation_count_and_wall_time() {
    if !can_run(
        "openssl_effective_throughput_comes_from_its_operation_count_and_wall_time",
        &[Need::Program("openssl")],
    ) {
        return;
    }
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "speed.yaml",
        "name: speed\ncollect:\n  workloads:\n    sha:\n      run: [openssl, speed, -seconds, \"1\", -bytes, \"16384\", sha256]\n      \
         parse: openssl\naggregate:\n  - throughput: { workload: sha }\n",
    );
    let done = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let rows: Vec<schedlab_tables::ThroughputRow> =
        read_table(&sandbox.data("speed", "aggregates")).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(
        (
            row.test.as_str(),
            row.block_bytes,
            row.measured_clock.as_str()
        ),
        ("sha256/16384", 16384.0, "cpu")
    );
    let processes: Vec<ProcessRow> = read_table(&sandbox.data("speed", "tables")).unwrap();
    let wall_s = (processes[0].end_ns.unwrap() - processes[0].start_ns) as f64 / 1e9;
    assert!((row.wall_s - wall_s).abs() < 1e-9);
    assert!((row.effective_bytes_per_s - row.ops * 16384.0 / wall_s).abs() < 1.0);
    // openssl divides by its CPU time, which is at most the wall time: it never reports less.
    let reported = row.reported_bytes_per_s.unwrap();
    assert!(
        row.effective_bytes_per_s <= reported * 1.01,
        "effective {} > reported {reported}",
        row.effective_bytes_per_s
    );
    // openssl stops on a 1 s real-time alarm, so the process lived at least that long. (How far
    // below the reported rate the effective one falls is the share of CPU openssl got, which
    // depends on how busy the machine is: not asserted.)
    assert!(row.wall_s >= 1.0, "wall {} s", row.wall_s);
}

#[test]
fn a_workload_with_when_off_is_left_out_of_that_variant_only() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "ab.yaml",
        "name: ab\nmatrix: { fg: [on, off] }\ncollect:\n  workloads:\n    \
         bg: { run: [sleep, \"0.1\"] }\n    fg: { run: [sleep, \"0.1\"], when: \"${fg}\" }\n",
    );
    let done = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let processes: Vec<ProcessRow> = read_table(&sandbox.data("ab", "tables")).unwrap();
    let runs: Vec<RunRow> = read_table(&sandbox.data("ab", "tables")).unwrap();
    let variant_of = |run_id: &str| {
        (runs.iter())
            .find(|r| r.run_id == run_id)
            .map(|r| r.variant.clone())
            .unwrap()
    };
    let mut started: Vec<(String, String)> = (processes.iter())
        .map(|p| (variant_of(&p.run_id), p.workload.clone()))
        .collect();
    started.sort();
    // YAML reads `on` and `off` as booleans.
    assert_eq!(
        started,
        [
            ("fg=false".to_owned(), "bg".to_owned()),
            ("fg=true".to_owned(), "bg".to_owned()),
            ("fg=true".to_owned(), "fg".to_owned()),
        ]
    );
}
