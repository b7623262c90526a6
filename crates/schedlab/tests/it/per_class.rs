//! `schedlab compare --per-class` on real runs (seed 004): two unpinned periodic instances on a
//! declared P-core and E-core, each set against another pipeline's runs pinned to the class it
//! ran on, its unpinned run left out.

use std::collections::BTreeMap;

use crate::util::Sandbox;
use schedlab_tables::{
    ComparisonRow, ObservationRow, ProcessRow, ResidencyRollupRow, Verdict, WorkloadMetricRow,
    read_rows, read_table,
};

/// Two instances of a periodic thread, unpinned, on CPU 0 declared P and CPU 1 declared E.
const WORKERS: &str = "\
name: workers
topology: { P: [0], E: [1] }
collect:
  monitors:
    where: { placement: { interval: 50ms } }
  workloads:
    bg:
      instances: 2
      periodic: { threads: 1, period: 20ms, busy: 10ms, duration: 1s }
aggregate:
  - residency: { workload: bg }
  - cpu_time: { workload: bg }
";

/// One periodic thread of half the period, pinned to each class and unpinned.
const PINNED: &str = "\
name: pinned
topology: { P: [0], E: [1] }
matrix: { pin: [P, E, any] }
collect:
  monitors:
    where: { placement: { interval: 50ms } }
  workloads:
    spin:
      periodic: { threads: 1, period: 10ms, busy: 5ms, duration: 1s }
      cpus: [\"${pin}\"]
aggregate:
  - residency: { workload: spin }
";

const PERIODS: &str = "periodic/periods";

#[test]
fn each_instance_is_compared_with_the_runs_pinned_to_the_class_it_ran_on() {
    let sandbox = Sandbox::new();
    let workers = sandbox.write("workers.yaml", WORKERS);
    let pinned = sandbox.write("pinned.yaml", PINNED);
    let (workers, pinned) = (workers.to_str().unwrap(), pinned.to_str().unwrap());
    for file in [workers, pinned] {
        let run = sandbox.schedlab(&["run", file]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let compared = sandbox.schedlab(&[
        "compare",
        workers,
        "--against",
        pinned,
        "--map",
        "bg=spin",
        "--per-class",
        "--metric",
        PERIODS,
    ]);
    assert_eq!(compared.code, 0, "{}{}", compared.stdout, compared.stderr);

    // Where each instance ran most, and its own count of periods, from the tables. A tie (an
    // instance sampled as often on either class) goes to the class listed first, as compare
    // breaks it.
    let tables = sandbox.data("workers", "tables");
    let processes: Vec<ProcessRow> = read_table(&tables).unwrap();
    let rollup: Vec<ResidencyRollupRow> =
        read_table(&sandbox.data("workers", "aggregates")).unwrap();
    let metrics: Vec<WorkloadMetricRow> = read_table(&tables).unwrap();
    let mut per_class: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for p in &processes {
        let class = (rollup.iter())
            .filter(|r| r.scope == "process" && r.pid == Some(p.pid) && r.cpu.is_none())
            .reduce(|best, r| if r.share > best.share { r } else { best })
            .map(|r| r.class.clone())
            .expect("each instance has residency");
        let periods = (metrics.iter())
            .find(|m| m.instance == p.instance && m.metric == "periods")
            .unwrap()
            .value;
        per_class.entry(class).or_default().push(periods);
    }
    // The pinned pipeline's count per class: only its runs pinned to that class.
    let pinned_metrics: Vec<WorkloadMetricRow> =
        read_table(&sandbox.data("pinned", "tables")).unwrap();
    let pinned_runs: Vec<schedlab_tables::RunRow> =
        read_table(&sandbox.data("pinned", "tables")).unwrap();
    let pinned_periods = |class: &str| {
        let run = (pinned_runs.iter())
            .find(|r| r.variant == format!("pin={class}"))
            .unwrap();
        (pinned_metrics.iter())
            .find(|m| m.run_id == run.run_id && m.metric == "periods")
            .unwrap()
            .value
    };

    let key = "compare/by-label-against-pinned-per-class";
    let rows: Vec<ComparisonRow> =
        read_rows(&sandbox.data("workers", &format!("{key}.parquet"))).unwrap();
    for (class, values) in &per_class {
        let workload = format!("bg on {class}");
        let row = (rows.iter())
            .find(|r| {
                r.workload == workload && r.metric == PERIODS && r.verdict != Verdict::Baseline
            })
            .unwrap_or_else(|| panic!("no row of {workload}: {rows:#?}"));
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        assert_eq!(row.mean, mean, "{row:?}");
        assert_eq!(row.baseline, "pinned");
        let base = pinned_periods(class);
        let diff = 100.0 * (mean - base) / base;
        assert!(
            (row.diff_pct.unwrap() - diff).abs() < 1e-9,
            "{row:?} vs {diff}"
        );
        assert!(
            compared.stdout.contains(&format!("| bg on {class} |")),
            "{}",
            compared.stdout
        );
    }
    // The baseline of each class is its one pinned run; the unpinned one is in none.
    let observations: Vec<ObservationRow> =
        read_rows(&sandbox.data("workers", &format!("{key}.observations.parquet"))).unwrap();
    let unpinned = (pinned_runs.iter())
        .find(|r| r.variant == "pin=any")
        .unwrap();
    assert!(!observations.iter().any(|o| o.run_id == unpinned.run_id));
    for class in per_class.keys() {
        let theirs: Vec<&ObservationRow> = (observations.iter())
            .filter(|o| o.group == "pinned" && o.workload == format!("bg on {class}"))
            .filter(|o| o.metric == PERIODS)
            .collect();
        assert_eq!(theirs.len(), 1, "{class}: {theirs:?}");
        assert_eq!(theirs[0].value, pinned_periods(class));
    }
}
