//! Every shipped pipeline's short form (`--short`) run by the real binary through all four
//! stages on this machine, with real stress-ng, openssl, make and perf: every aggregate the
//! pipeline asks for has rows in every run, the aggregates agree with each other and with
//! the trace they were computed from, and `schedlab check --short` passes its expectations.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::util::{Need, Sandbox, can_run};
use schedlab_spec::{CompileOptions, MonitorKind, Plan, Program, StepKind};
use schedlab_tables::{
    CpuTimeRow, ExpectationRow, ProcessRow, ResidencyRollupRow, ResidencyRow, SchedSliceRow,
    TotalsRow, read_batches, read_rows, read_table,
};

const TEST: &str = "every_short_form_runs_all_stages_into_consistent_aggregates";

#[test]
fn every_short_form_runs_all_stages_into_consistent_aggregates() {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let sandbox = Sandbox::new();
    // kernel-build-time's short form builds this tree, relative to where schedlab runs.
    copy_dir(
        &root.join("fixtures/build-tree"),
        &sandbox.path("fixtures/build-tree"),
    );
    let mut pipelines: Vec<PathBuf> = std::fs::read_dir(root.join("pipelines"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    pipelines.sort();
    assert!(pipelines.len() >= 8, "{pipelines:?}");
    for file in &pipelines {
        let plan = short_plan(file);
        if plan.runs.is_empty() {
            crate::util::skip(
                &format!("{TEST} ({})", plan.name),
                "no collect section: its runs are imported (tests/it/import.rs imports one)",
            );
            continue;
        }
        if !can_run(&format!("{TEST} ({})", plan.name), &needs(&plan)) {
            continue;
        }
        let started = Instant::now();
        let done = sandbox.schedlab(&["run", file.to_str().unwrap(), "--short"]);
        assert_eq!(
            done.code,
            0,
            "{}: {}{}",
            file.display(),
            done.stdout,
            done.stderr
        );
        // What the short forms cost, for the README (not a timed assertion).
        eprintln!(
            "{TEST}: {} ran in {:.1} s",
            plan.name,
            started.elapsed().as_secs_f64()
        );
        check_aggregates(&sandbox, &plan);
        check_expectations(&sandbox, file, &plan);
    }
}

/// A short form's expectations hold on this machine: they are the ones its declared topology
/// makes true (a pinned run on its class), never the seed's findings about a hybrid machine,
/// which the full form states.
fn check_expectations(sandbox: &Sandbox, file: &Path, plan: &Plan) {
    if plan.summarize.expect.is_empty() {
        return;
    }
    let check = sandbox.schedlab(&["check", file.to_str().unwrap(), "--short"]);
    assert_eq!(
        check.code, 0,
        "{}: {}{}",
        plan.name, check.stdout, check.stderr
    );
    let rows: Vec<ExpectationRow> =
        read_rows(&sandbox.data(&plan.name, "report/expectations.parquet")).unwrap();
    let deciding = rows.iter().filter(|r| r.scope == "runs").count();
    assert_eq!(
        deciding,
        plan.summarize.expect.len(),
        "{}: {rows:?}",
        plan.name
    );
}

/// The pipeline's short form as the binary compiles it on this machine.
fn short_plan(file: &Path) -> Plan {
    let parsers: Vec<&str> = (schedlab_parse::ParserKind::ALL.iter())
        .map(|k| k.name())
        .collect();
    let cpus = schedlab_topology::detect(Path::new("/sys")).unwrap();
    let classes = schedlab_topology::classes(&cpus);
    let options = CompileOptions {
        parsers: &parsers,
        nproc: std::thread::available_parallelism().unwrap().get(),
        classes: &classes,
        short: true,
        name_part: |_| Ok(()),
        repeat: None,
    };
    let source = std::fs::read_to_string(file).unwrap();
    schedlab_spec::compile(&file.display().to_string(), &source, &options)
        .unwrap_or_else(|errors| panic!("{}: {errors:?}", file.display()))
}

/// The programs the plan's workloads start, and a trace of every CPU where a perf-sched
/// monitor is not optional.
fn needs(plan: &Plan) -> Vec<Need> {
    let collect = &plan.runs[0].collect;
    let mut needs: Vec<Need> = (collect.workloads.iter())
        .filter_map(|w| match &w.program {
            Program::External { argv } => Some(Need::Program(leak(&argv[0]))),
            Program::Periodic(_) => None,
        })
        .collect();
    if (collect.monitors.iter()).any(|m| matches!(m.kind, MonitorKind::PerfSched(_)) && !m.optional)
    {
        needs.push(Need::TraceAllCpus);
    }
    needs
}

/// `Need::Program` names a program for the whole test; these few names live as long.
fn leak(name: &str) -> &'static str {
    Box::leak(name.to_owned().into_boxed_str())
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// Rows of `table` (under `tables` or `aggregates`) in `run`'s partition.
fn rows_in(root: &Path, table: &str, run: &str) -> usize {
    let part = root.join(format!("{table}/run_id={run}/part-0.parquet"));
    (read_batches(&part).unwrap_or_else(|e| panic!("{}: {e}", part.display())))
        .iter()
        .map(|b| b.num_rows())
        .sum()
}

fn check_aggregates(sandbox: &Sandbox, plan: &Plan) {
    let name = &plan.name;
    let runs = sandbox.runs(name);
    assert_eq!(runs.len(), plan.runs.len(), "{name}: {runs:?}");
    let (tables, aggregates) = (
        sandbox.data(name, "tables"),
        sandbox.data(name, "aggregates"),
    );
    let processes: Vec<ProcessRow> = read_table(&tables).unwrap();
    for run in &runs {
        // turbostat cannot read MSRs in a VM, and its optional monitor is then skipped: the
        // aggregates made from its table are empty with it.
        let turbostat = rows_in(&tables, "turbostat", run) > 0;
        // A step about one workload has nothing in a variant that leaves it out (`when`).
        let ran =
            |workload: &str| (processes.iter()).any(|p| &p.run_id == run && p.workload == workload);
        for step in &plan.aggregate {
            let table = step.kind.name();
            if !turbostat && ["cpu_activity", "power_step"].contains(&table) {
                continue;
            }
            if step.workload.as_deref().is_some_and(|w| !ran(w)) {
                continue;
            }
            // Throughput is openssl's: nothing in a run without an openssl workload.
            let openssl = (plan.runs[0].collect.workloads.iter())
                .filter(|w| w.parse.as_deref() == Some("openssl"))
                .any(|w| ran(&w.name));
            if step.kind == StepKind::Throughput && !openssl {
                continue;
            }
            assert!(
                rows_in(&aggregates, table, run) > 0,
                "{name}: {table} has no rows in run {run}"
            );
        }
    }

    // Each thread's residency shares sum to 1, and its CPU time is its residency summed.
    let residency: Vec<ResidencyRow> = read_table(&aggregates).unwrap();
    let mut per_thread: BTreeMap<(&str, i32, &str), (f64, i64)> = BTreeMap::new();
    for r in &residency {
        let sums = per_thread.entry((&r.run_id, r.tid, &r.source)).or_default();
        sums.0 += r.share;
        sums.1 += r.run_ns;
    }
    for ((run, tid, source), (share, _)) in &per_thread {
        assert!(
            (share - 1.0).abs() < 1e-9,
            "{name}: {run} tid {tid} ({source}): shares sum to {share}"
        );
    }
    let cpu_time: Vec<CpuTimeRow> = read_table(&aggregates).unwrap();
    for c in cpu_time.iter().filter(|c| c.cpu_time_ns > 0) {
        if let Some((_, run_ns)) = per_thread.get(&(c.run_id.as_str(), c.tid, c.source.as_str())) {
            assert_eq!(*run_ns, c.cpu_time_ns, "{name}: {c:?}");
        }
    }

    // From a trace, a thread's slices' figure is the run time of its slices, and its CPU time
    // that too unless its headline is another (see `cpu_time.headline`).
    let traced: Vec<&CpuTimeRow> = cpu_time.iter().filter(|c| c.source == "sched").collect();
    if !traced.is_empty() {
        let slices: Vec<SchedSliceRow> = read_table(&tables).unwrap();
        let mut run_ns: BTreeMap<(&str, i32), i64> = BTreeMap::new();
        for s in &slices {
            *run_ns.entry((&s.run_id, s.tid)).or_default() += s.run_ns;
        }
        for c in traced {
            let sliced = run_ns.get(&(c.run_id.as_str(), c.tid)).copied();
            assert_eq!(sliced, c.slice_ns, "{name}: {c:?}");
            let headline = match c.headline.as_str() {
                "slices" => c.slice_ns,
                "kernel" => c.kernel_ns,
                // /proc's, booked per sample: the residency sums above check it.
                "proc" => Some(c.cpu_time_ns),
                other => panic!("{name}: headline {other}: {c:?}"),
            };
            assert_eq!(headline, Some(c.cpu_time_ns), "{name}: {c:?}");
        }
    }

    // A workload's, process's or thread's shares per class (and per CPU) sum to 1.
    let rollup: Vec<ResidencyRollupRow> = read_table(&aggregates).unwrap();
    let mut per_scope: BTreeMap<_, [f64; 2]> = BTreeMap::new();
    for r in &rollup {
        let key = (&r.run_id, &r.workload, &r.scope, r.pid, r.tid, &r.source);
        per_scope.entry(key).or_default()[usize::from(r.cpu.is_some())] += r.share;
    }
    for (key, [by_class, by_cpu]) in per_scope {
        assert!((by_class - 1.0).abs() < 1e-9, "{name}: {key:?}: {by_class}");
        let cpus_listed = key.2 != "thread";
        assert!(
            !cpus_listed || (by_cpu - 1.0).abs() < 1e-9,
            "{name}: {key:?}: {by_cpu}"
        );
    }

    // A workload's total CPU time is its threads' summed.
    let totals: Vec<TotalsRow> = read_table(&aggregates).unwrap();
    for t in totals.iter().filter(|t| t.scope == "workload") {
        let Some(total) = t.cpu_time_ns else { continue };
        let threads: i64 = (cpu_time.iter())
            .filter(|c| c.run_id == t.run_id && c.workload == t.workload && c.source == t.source)
            .map(|c| c.cpu_time_ns)
            .sum();
        assert_eq!(total, threads, "{name}: {t:?}");
    }
}
