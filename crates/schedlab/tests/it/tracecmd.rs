//! trace.dat end to end: LISA's v6 trace of a 6-CPU Arm big.LITTLE board (Juno) told from its
//! content by `parse auto`, imported as a run on another data directory, gathered here and
//! analysed; its cpu_idle events give `cpu_activity`'s Busy% per CPU, checked against
//! `trace-cmd report`'s events replayed by hand.

use std::collections::BTreeMap;
use std::process::Command;

use crate::util::Sandbox;
use schedlab_tables::{CpuActivityRow, CpuRow, QualityRow, SchedSliceRow, TraceRow, read_table};

const PIPELINE: &str = "\
name: arm
import:
  workloads:
    shell: \"comm:bash\"
topology: { big: [1, 2], LITTLE: [0, 3, 4, 5] }
aggregate:
  - cpu_time: {}
  - cpu_activity: {}
summarize:
  report: [markdown, html]
";

/// Per CPU, the share of the time from its first cpu_idle event to the trace's last event in
/// which it ran (idle state (u32)-1), from `trace-cmd report -R` on `file`.
fn busy_pct_by_report(file: &std::path::Path) -> BTreeMap<i32, f64> {
    let out = Command::new("trace-cmd")
        .args(["report", "-t", "-R", "-i"])
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let time = |l: &str| -> i64 {
        let after = &l[l.find("] ").unwrap() + 2..];
        let stamp = after.trim_start().split(':').next().unwrap();
        let (s, ns) = stamp.split_once('.').unwrap();
        s.parse::<i64>().unwrap() * 1_000_000_000 + ns.parse::<i64>().unwrap()
    };
    let end = text
        .lines()
        .filter(|l| l.contains("] "))
        .map(time)
        .max()
        .unwrap();
    let mut state: BTreeMap<i32, (i64, bool)> = BTreeMap::new();
    let (mut known, mut running): (BTreeMap<i32, i64>, BTreeMap<i32, i64>) = Default::default();
    for l in text.lines().filter(|l| l.contains(" cpu_idle: ")) {
        let field = |k: &str| -> i64 {
            let v = &l[l.find(&format!("{k}=")).unwrap() + k.len() + 1..];
            v.split_whitespace().next().unwrap().parse().unwrap()
        };
        let (cpu, runs) = (field("cpu_id") as i32, field("state") == u32::MAX as i64);
        if let Some((since, was_running)) = state.insert(cpu, (time(l), runs)) {
            *known.entry(cpu).or_default() += time(l) - since;
            *running.entry(cpu).or_default() += if was_running { time(l) - since } else { 0 };
        }
    }
    for (cpu, (since, was_running)) in state {
        *known.entry(cpu).or_default() += end - since;
        *running.entry(cpu).or_default() += if was_running { end - since } else { 0 };
    }
    known
        .iter()
        .map(|(cpu, k)| (*cpu, 100.0 * running[cpu] as f64 / *k as f64))
        .collect()
}

#[test]
fn an_arm_trace_dat_is_detected_imported_gathered_and_analysed() {
    let fixtures = schedlab_testkit::shared_fixtures_or_skip!("trace-dat");
    let trace = fixtures.join("arm-sched-load-v6.dat");
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write("arm.yaml", PIPELINE);
    let pipeline = pipeline.to_str().unwrap();

    let out = sandbox.path("parsed");
    let parsed = sandbox.schedlab(&[
        "parse",
        "auto",
        trace.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(parsed.code, 0, "{}", parsed.stderr);
    assert!(
        parsed
            .stderr
            .contains("arm-sched-load-v6.dat: trace-cmd (trace.dat magic"),
        "{}",
        parsed.stderr
    );
    let slices: Vec<SchedSliceRow> =
        schedlab_tables::read_rows(&out.join("sched_slices.parquet")).unwrap();
    assert_eq!(
        slices.len(),
        399,
        "one slice per sched_switch (trace-cmd report counts 399)"
    );

    // Imported on "another machine", then gathered into this data directory.
    let import = sandbox.schedlab(&[
        "import",
        pipeline,
        trace.to_str().unwrap(),
        "--data",
        "board",
        "--label",
        "juno",
    ]);
    assert_eq!(import.code, 0, "{}", import.stderr);
    assert!(
        import.stderr.contains("arm-sched-load-v6.dat: trace-cmd ("),
        "{}",
        import.stderr
    );
    let gathered = sandbox.schedlab(&["gather", "board"]);
    assert_eq!(gathered.code, 0, "{}", gathered.stderr);
    assert!(
        gathered.stdout.contains("1 run(s) gathered"),
        "{}",
        gathered.stdout
    );
    let analysed = sandbox.schedlab(&["analyze", pipeline]);
    assert_eq!(analysed.code, 0, "{}", analysed.stderr);

    let tables = sandbox.data("arm", "tables");
    let traces: Vec<TraceRow> = read_table(&tables).unwrap();
    assert_eq!(traces.len(), 1);
    assert_eq!(traces[0].file_format.as_deref(), Some("trace.dat v6"));
    assert_eq!(
        (traces[0].clock.as_str(), traces[0].trace_clock.as_deref()),
        ("local", Some("local"))
    );
    let cpus: Vec<CpuRow> = read_table(&tables).unwrap();
    let classes: Vec<(i32, &str)> = cpus.iter().map(|c| (c.cpu, c.class.as_str())).collect();
    assert_eq!(
        classes,
        [
            (0, "LITTLE"),
            (1, "big"),
            (2, "big"),
            (3, "LITTLE"),
            (4, "LITTLE"),
            (5, "LITTLE")
        ]
    );
    let quality: Vec<QualityRow> = read_table(&tables).unwrap();
    assert!(
        quality
            .iter()
            .any(|q| q.message.contains("`local` trace clock")),
        "{quality:?}"
    );
    let slices: Vec<SchedSliceRow> = read_table(&tables).unwrap();
    assert!(
        slices
            .iter()
            .any(|s| s.workload.as_deref() == Some("shell")),
        "bash found by comm:"
    );

    // Busy% per CPU over the run from the cpu_idle events, as the report's events give it.
    let activity: Vec<CpuActivityRow> = read_table(&sandbox.data("arm", "aggregates")).unwrap();
    let want = busy_pct_by_report(&trace);
    assert_eq!(want.len(), 6, "every CPU has cpu_idle events");
    for (cpu, busy) in want {
        let row = (activity.iter())
            .find(|r| r.window == "run" && r.scope == "cpu" && r.cpu == Some(cpu))
            .unwrap_or_else(|| panic!("cpu {cpu} in cpu_activity: {activity:?}"));
        assert_eq!(row.source, "cpu_freq_idle");
        let got = row.busy_pct.unwrap();
        assert!(
            (got - busy).abs() < 1e-9,
            "cpu {cpu}: {got} % against {busy} %"
        );
        assert!(row.bzy_mhz.is_some(), "cpu {cpu} has cpu_frequency events");
    }
    // The trace cut inside its CPU data: refused at import with the hint; salvaged with it.
    let bytes = std::fs::read(&trace).unwrap();
    let cut = sandbox.write("cut.dat", "");
    std::fs::write(&cut, &bytes[..bytes.len() - 50_000]).unwrap();
    let cut = cut.to_str().unwrap();
    let refused = sandbox.schedlab(&["import", pipeline, cut, "--label", "cut"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("cut.dat: byte ") && refused.stderr.contains("`--salvage`"),
        "{}",
        refused.stderr
    );
    let salvaged = sandbox.schedlab(&["import", pipeline, cut, "--label", "cut", "--salvage"]);
    assert_eq!(salvaged.code, 0, "{}", salvaged.stderr);

    let report = std::fs::read_to_string(sandbox.data("arm", "report/summary.md")).unwrap();
    assert!(
        report.contains("cpu_freq_idle") || report.contains("LITTLE"),
        "{report}"
    );
}
