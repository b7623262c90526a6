//! "Why here?" on a real traced run: seed page 8's experiment scaled to this machine (nice-19
//! workers on every CPU, one normal-priority worker among them) with a declared topology (cpu 0
//! = P, the others E), checked against `perf sched timehist -s` and against the trace's slices.

use std::collections::BTreeMap;
use std::process::Command;

use crate::util::{Need, Sandbox, can_run};
use schedlab_tables::{
    CpuTimeRow, CpuTimelineRow, PlacementCostRow, ResidencyRow, SchedDelayRow, SchedSliceRow,
    WakeupPlacementRow, read_table,
};

const PIPELINE: &str = "\
name: why
topology: { P: [0], E: [\"1-LAST\"] }
collect:
  monitors:
    sched: { perf-sched: {} }
  workloads:
    background:
      run: [stress-ng, --cpu, \"${nproc}\", --cpu-method, int64, --timeout, 3s]
      nice: 19
    foreground:
      start_after: 1s
      run: [stress-ng, --cpu, \"1\", --cpu-method, int64, --timeout, 1s]
aggregate:
  - cpu_time: {}
  - residency: {}
  - sched_delay: {}
  - cpu_timeline: {}
  - placement_cost: {}
  - wakeup_placement: {}
";

const TEST: &str = "the_why_here_aggregates_agree_with_perf_and_with_the_slices";

/// perf's "Idle stats" per CPU, in ms (`CPU  0 idle for     13.376  msec  (  0.19%)`). A CPU
/// perf says was "idle entire time window" is one on which it saw no idle slice end (perf prints
/// that for a CPU that never went idle, too): 0 ms of idle slices, as the timeline must have.
fn perf_idle_ms(perf_data: &std::path::Path) -> BTreeMap<i32, f64> {
    let out = Command::new("perf")
        .args(["sched", "timehist", "-s", "-i"])
        .arg(perf_data)
        .output()
        .expect("perf runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let idle = text
        .split("Idle stats:")
        .nth(1)
        .expect("perf prints idle stats");
    idle.lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix("CPU")?;
            if let Some(cpu) = rest.strip_suffix(" idle entire time window") {
                return Some((cpu.trim().parse().ok()?, 0.0));
            }
            let (cpu, rest) = rest.trim().split_once(" idle for ")?;
            let ms = rest.split_whitespace().next()?.parse().ok()?;
            Some((cpu.trim().parse().ok()?, ms))
        })
        .collect()
}

#[test]
fn the_why_here_aggregates_agree_with_perf_and_with_the_slices() {
    let needs = [Need::TraceAllCpus, Need::Program("stress-ng")];
    if !can_run(TEST, &needs) {
        return;
    }
    let nproc = std::thread::available_parallelism().unwrap().get();
    if nproc < 2 {
        crate::util::skip(TEST, "one CPU: no class can be faster than another");
        return;
    }
    let sandbox = Sandbox::new();
    let text = PIPELINE.replace("LAST", &(nproc - 1).to_string());
    let pipeline = sandbox.write("why.yaml", &text);
    let run = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (tables, aggregates) = (
        sandbox.data("why", "tables"),
        sandbox.data("why", "aggregates"),
    );
    let run_id = sandbox.runs("why").pop().expect("one run");
    let perf_data = sandbox.data("why", &format!("runs/{run_id}/raw/sched.perf.data"));

    // The timeline's idle time per CPU is perf's, to its printed 0.001 ms.
    let timeline: Vec<CpuTimelineRow> = read_table(&aggregates).unwrap();
    let perf_idle = perf_idle_ms(&perf_data);
    assert_eq!(perf_idle.len(), nproc, "perf gives every CPU's idle time");
    for (cpu, perf_ms) in &perf_idle {
        let ours: i64 = (timeline.iter())
            .filter(|r| r.cpu == *cpu && &*r.state == "idle")
            .map(|r| r.end_ns - r.start_ns)
            .sum();
        let ours_ms = ours as f64 / 1e6;
        assert!(
            (ours_ms - perf_ms).abs() < 0.0015,
            "cpu {cpu}: {ours_ms} ms, perf {perf_ms} ms"
        );
    }

    // Each thread's run time is its cpu_time, its wakeups are sched_delay's.
    let costs: Vec<PlacementCostRow> = read_table(&aggregates).unwrap();
    let cpu_time: Vec<CpuTimeRow> = read_table(&aggregates).unwrap();
    let delays: Vec<SchedDelayRow> = read_table(&aggregates).unwrap();
    let wakeups: Vec<WakeupPlacementRow> = read_table(&aggregates).unwrap();
    assert_eq!(costs.len(), cpu_time.len(), "a row per workload thread");
    for c in &costs {
        let time = cpu_time
            .iter()
            .find(|t| t.tid == c.tid)
            .expect("same threads");
        assert_eq!(c.run_ns, time.cpu_time_ns, "{c:#?}");
        assert_eq!(c.allowed_source, "unbound");
        let woken: i64 = wakeups
            .iter()
            .filter(|w| w.tid == c.tid)
            .map(|w| w.wakeups)
            .sum();
        let delay = delays
            .iter()
            .find(|d| d.tid == c.tid)
            .expect("same threads");
        assert_eq!(woken, delay.wakeups, "tid {}", c.tid);
    }

    // The figures against the slices themselves, by brute force: with one P CPU, time on an E
    // CPU while the P CPU idled (or ran a lower priority) is a plain sum of overlaps. A thread
    // whose figures are the kernel's (see `cpu_time.headline`) has its time on E CPUs as the
    // kernel counts it, and the spans beside it in proportion.
    let slices: Vec<SchedSliceRow> = read_table(&tables).unwrap();
    let residency: Vec<ResidencyRow> = read_table(&aggregates).unwrap();
    let on_p: Vec<&SchedSliceRow> = slices.iter().filter(|s| s.cpu == 0).collect();
    let overlap = |a: &SchedSliceRow, b: &SchedSliceRow| {
        (a.end_ns.min(b.end_ns) - a.start_ns.max(b.start_ns)).max(0)
    };
    for c in &costs {
        let own: Vec<&SchedSliceRow> = (slices.iter())
            .filter(|s| s.tid == c.tid && s.cpu != 0)
            .collect();
        let sliced: i64 = own.iter().map(|s| s.run_ns).sum();
        let slower: i64 = (residency.iter())
            .filter(|r| r.tid == c.tid && r.cpu != 0)
            .map(|r| r.run_ns)
            .sum();
        let to_headline = |ns: i64| (ns as i128 * slower as i128 / sliced.max(1) as i128) as i64;
        let idle: i64 = (own.iter())
            .flat_map(|s| {
                on_p.iter()
                    .filter(|p| p.tid == 0)
                    .map(move |p| overlap(s, p))
            })
            .sum();
        let headline = &cpu_time.iter().find(|t| t.tid == c.tid).unwrap().headline;
        if headline == "slices" {
            assert_eq!(slower, sliced, "{c:#?}");
        }
        assert_eq!(
            (c.slower_run_ns, c.faster_idle_ns),
            (slower, if sliced > 0 { to_headline(idle) } else { idle }),
            "{c:#?}"
        );
        if let Some(prio) = c.prio {
            let lower: i64 = (own.iter())
                .flat_map(|s| {
                    (on_p.iter())
                        .filter(|p| p.tid != 0 && p.prio.is_some_and(|q| q > prio))
                        .map(move |p| overlap(s, p))
                })
                .sum();
            let lower = if sliced > 0 {
                to_headline(lower)
            } else {
                lower
            };
            assert_eq!(c.faster_lower_prio_ns, Some(lower), "{c:#?}");
        }
    }
    let fg: Vec<&PlacementCostRow> = costs
        .iter()
        .filter(|c| c.workload == "foreground")
        .collect();
    assert!(!fg.is_empty(), "the foreground ran");
}

/// Without a trace there is nothing to answer "why here" from: the summary says so for each
/// such run instead of leaving the part out.
#[test]
fn a_run_without_a_trace_says_the_why_here_figures_need_one() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "untraced.yaml",
        "\
name: untraced
collect:
  monitors:
    where: { placement: { interval: 50ms } }
  workloads:
    tick:
      periodic: { threads: 1, period: 50ms, busy: 10ms, duration: 500ms }
aggregate:
  - cpu_time: {}
  - placement_cost: {}
",
    );
    let run = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run_id = sandbox.runs("untraced").pop().expect("one run");
    let summary = std::fs::read_to_string(sandbox.data("untraced", "report/summary.md")).unwrap();
    let why = summary.split("## Why here?").nth(1).expect(&summary);
    assert!(
        why.contains(&format!("- {run_id}: no perf trace, so no figures here")),
        "{why}"
    );
    let costs: Vec<PlacementCostRow> = read_table(&sandbox.data("untraced", "aggregates")).unwrap();
    assert!(costs.is_empty(), "{costs:#?}");
}

/// Every run has every figure: a periodic workload pinned to cpu 0 never migrates, yet each of
/// its runs has a `migration_classes` row per class pair (all 0) and `wakeup_placement` rows per
/// thread and class pair, and `compare` finds every figure in every run, so a mean over runs
/// counts the runs without migrations instead of dropping them.
#[test]
fn a_run_without_migrations_has_a_row_for_every_figure() {
    const TEST: &str = "a_run_without_migrations_has_a_row_for_every_figure";
    if !can_run(TEST, &[Need::TraceAllCpus]) {
        return;
    }
    let nproc = std::thread::available_parallelism().unwrap().get();
    if nproc < 2 {
        crate::util::skip(
            TEST,
            "one CPU: a pinned workload has nowhere else to go anyway",
        );
        return;
    }
    let sandbox = Sandbox::new();
    let text = format!(
        "\
name: every
topology: {{ P: [0], E: [\"1-{last}\"] }}
repeat: 2
collect:
  monitors:
    sched: {{ perf-sched: {{}} }}
  workloads:
    pinned:
      cpus: [0]
      periodic: {{ threads: 2, period: 20ms, busy: 4ms, duration: 1500ms }}
aggregate:
  - residency: {{}}
  - migrations: {{}}
  - sched_delay: {{}}
  - cpu_time: {{}}
  - cpu_share: {{}}
  - cpu_timeline: {{}}
  - placement_cost: {{}}
  - wakeup_placement: {{}}
",
        last = nproc - 1
    );
    let pipeline = sandbox.write("every.yaml", &text);
    let pipeline = pipeline.to_str().unwrap();
    let run = sandbox.schedlab(&["run", pipeline]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let runs = sandbox.runs("every");
    assert_eq!(runs.len(), 2, "{runs:?}");
    let aggregates = sandbox.data("every", "aggregates");

    let migrations: Vec<schedlab_tables::MigrationSummaryRow> = read_table(&aggregates).unwrap();
    assert!(
        migrations.iter().all(|m| m.migrations == 0),
        "pinned to cpu 0, the workload never migrates: {migrations:#?}"
    );
    let classes: Vec<schedlab_tables::MigrationClassRow> = read_table(&aggregates).unwrap();
    let wakeups: Vec<WakeupPlacementRow> = read_table(&aggregates).unwrap();
    for run_id in &runs {
        let mut pairs: Vec<(&str, &str, i64)> = (classes.iter())
            .filter(|c| &c.run_id == run_id && c.workload == "pinned")
            .map(|c| (c.from_class.as_str(), c.to_class.as_str(), c.migrations))
            .collect();
        pairs.sort();
        assert_eq!(
            pairs,
            [("E", "E", 0), ("E", "P", 0), ("P", "E", 0), ("P", "P", 0)],
            "{run_id}"
        );
        let threads: Vec<i32> = (migrations.iter())
            .filter(|m| &m.run_id == run_id)
            .map(|m| m.tid)
            .collect();
        for tid in threads {
            let rows = (wakeups.iter())
                .filter(|w| &w.run_id == run_id && w.tid == tid)
                .count();
            assert_eq!(rows, 6, "{run_id} tid {tid}: from P, E or none to P or E");
        }
    }

    // Every figure compare finds is found in every run.
    let compared = sandbox.schedlab(&["compare", pipeline, "--by", "repetition"]);
    assert_eq!(compared.code, 0, "{}", compared.stderr);
    let observations: Vec<schedlab_tables::ObservationRow> = schedlab_tables::read_rows(
        &sandbox.data("every", "compare/by-repetition.observations.parquet"),
    )
    .unwrap();
    let mut figures: BTreeMap<(String, String, String), Vec<String>> = BTreeMap::new();
    for o in &observations {
        let key = (o.context.clone(), o.workload.clone(), o.metric.clone());
        figures.entry(key).or_default().push(o.run_id.clone());
    }
    for metric in [
        "migration_classes/at_wakeup",
        "wakeup_placement/wakeups_to_other_class",
    ] {
        assert!(
            figures.keys().any(|(_, _, m)| m == metric),
            "{metric} is compared: {:?}",
            figures.keys()
        );
    }
    for (figure, mut seen_in) in figures {
        seen_in.sort();
        assert_eq!(seen_in, runs, "{figure:?} is in every run");
    }
}
