//! Comparisons per core class an instance ran on (`schedlab compare --per-class`).
//!
//! Seed 004 runs four nice-19 openssl workers on one P-core and four LP E-cores and reads each
//! worker's throughput as "almost identical to my earlier individually pinned results": the
//! worker on the P-core against openssl pinned to a P-core, those on LP E-cores against openssl
//! pinned to one. [`compare::observations`] averages a workload's instances, so here each
//! instance first becomes a workload of its own ([`per_instance`]); then the instances of a run
//! are put under the class they ran on ([`by_class`]: `background on LPE`, the mean of that
//! class's instances in the run). The pinned runs of another pipeline become the baseline the
//! same way, each instance under the class it was pinned to ([`classes_pinned`]); an unpinned
//! instance has no class there, and is left out.
//!
//! Only the figures of the processes the runner started split this way: a workload's own
//! figures (its scheduling delay over all threads, its CPUs per phase, turbostat's windows)
//! and the threads of processes an instance forked are left out.

use std::collections::{BTreeMap, BTreeSet};

use schedlab_tables::{CpuRow, ProcessRow, ResidencyRollupRow, TotalsRow};

use crate::compare::{CompareInputs, Observation};

/// Each instance's class, by (run, workload, instance).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct InstanceClasses(pub BTreeMap<(String, String, u32), String>);

/// The instance-workloads of [`per_instance`]: each one's (workload, instance), by its name.
#[derive(Debug, Default)]
pub struct Instances(BTreeMap<String, (String, u32)>);

/// `inputs` with every row of a workload's process under a workload of its own, named after
/// the workload and instance; the rows of whole workloads are left out.
pub fn per_instance(inputs: &CompareInputs) -> (CompareInputs, Instances) {
    let mut instances = Instances::default();
    let mut name = |workload: &str, instance: u32| {
        let name = format!("{workload} #{instance}");
        (instances.0)
            .entry(name.clone())
            .or_insert_with(|| (workload.to_owned(), instance));
        name
    };
    // (run, pid) → instance, for the rows that name a process by pid.
    let instance_of: BTreeMap<(&str, i32), (&str, u32)> = (inputs.processes.iter())
        .map(|p| {
            (
                (p.run_id.as_str(), p.pid),
                (p.workload.as_str(), p.instance),
            )
        })
        .collect();
    let by_pid = |run: &str, pid: i32| instance_of.get(&(run, pid)).copied();
    let mut split = CompareInputs {
        variant_order: inputs.variant_order.clone(),
        runs: inputs.runs.clone(),
        ..CompareInputs::default()
    };
    for p in &inputs.processes {
        split.processes.push(ProcessRow {
            workload: name(&p.workload, p.instance),
            ..p.clone()
        });
    }
    for m in &inputs.workload_metrics {
        let mut m = m.clone();
        m.workload = name(&m.workload, m.instance);
        split.workload_metrics.push(m);
    }
    for t in &inputs.throughput {
        let mut t = t.clone();
        t.workload = name(&t.workload, t.instance);
        split.throughput.push(t);
    }
    macro_rules! by_process {
        ($($table:ident),*) => {$(
            for row in &inputs.$table {
                if let Some((workload, instance)) = by_pid(&row.run_id, row.pid) {
                    let mut row = row.clone();
                    row.workload = name(workload, instance);
                    split.$table.push(row);
                }
            }
        )*};
    }
    by_process!(cpu_time, placement_cost, wakeup_placement);
    // A process's roll-ups are its instance-workload's.
    for r in inputs
        .residency_rollup
        .iter()
        .filter(|r| r.scope == "process")
    {
        if let Some((workload, instance)) = r.pid.and_then(|pid| by_pid(&r.run_id, pid)) {
            split.residency_rollup.push(ResidencyRollupRow {
                workload: name(workload, instance),
                scope: "workload".into(),
                ..r.clone()
            });
        }
    }
    for t in inputs.totals.iter().filter(|t| t.scope == "process") {
        if let Some((workload, instance)) = t.pid.and_then(|pid| by_pid(&t.run_id, pid)) {
            split.totals.push(TotalsRow {
                workload: name(workload, instance),
                scope: "workload".into(),
                ..t.clone()
            });
        }
    }
    (split, instances)
}

/// The class each instance ran on most (of its CPU time, `residency_rollup` per process),
/// where the pipeline aggregates residency.
pub fn classes_ran(inputs: &CompareInputs) -> InstanceClasses {
    let instance_of: BTreeMap<(&str, i32), &ProcessRow> = (inputs.processes.iter())
        .map(|p| ((p.run_id.as_str(), p.pid), p))
        .collect();
    let mut most: BTreeMap<(String, String, u32), (f64, String)> = BTreeMap::new();
    let per_class =
        (inputs.residency_rollup.iter()).filter(|r| r.scope == "process" && r.cpu.is_none());
    for r in per_class {
        let Some(p) = r
            .pid
            .and_then(|pid| instance_of.get(&(r.run_id.as_str(), pid)))
        else {
            continue;
        };
        let key = (p.run_id.clone(), p.workload.clone(), p.instance);
        let entry = most.entry(key).or_insert((-1.0, String::new()));
        if r.share > entry.0 {
            *entry = (r.share, r.class.clone());
        }
    }
    InstanceClasses(most.into_iter().map(|(k, (_, class))| (k, class)).collect())
}

/// The class each instance was pinned to: its affinity's CPUs all of that one class (in the
/// run's `cpus`). Unpinned instances, and those pinned across classes, have none.
pub fn classes_pinned(inputs: &CompareInputs, cpus: &[CpuRow]) -> InstanceClasses {
    let class_of: BTreeMap<(&str, i32), &str> = (cpus.iter())
        .map(|c| ((c.run_id.as_str(), c.cpu), c.class.as_str()))
        .collect();
    let mut out = BTreeMap::new();
    for p in &inputs.processes {
        let Some(list) = &p.affinity else { continue };
        let Ok(pinned) = schedlab_topology::parse_cpu_list(list) else {
            continue;
        };
        let classes: BTreeSet<Option<&&str>> = (pinned.iter())
            .map(|cpu| class_of.get(&(p.run_id.as_str(), *cpu as i32)))
            .collect();
        if let [Some(class)] = classes.into_iter().collect::<Vec<_>>()[..] {
            let key = (p.run_id.clone(), p.workload.clone(), p.instance);
            out.insert(key, (*class).to_owned());
        }
    }
    InstanceClasses(out)
}

/// The name of `workload`'s instances on `class`, as comparisons show it.
pub fn class_workload(workload: &str, class: &str) -> String {
    format!("{workload} on {class}")
}

/// Observations of [`per_instance`]'s workloads put under the class each instance had in
/// `classes`: per run and figure, the mean over that class's instances. Instances without a
/// class are left out.
pub fn by_class(
    observations: Vec<Observation>,
    instances: &Instances,
    classes: &InstanceClasses,
) -> Vec<Observation> {
    // (run, class-workload, metric) → the observation, and its instances' values.
    let mut merged: BTreeMap<(String, String, String), (Observation, Vec<f64>)> = BTreeMap::new();
    for o in observations {
        let Some((workload, instance)) = instances.0.get(&o.workload) else {
            continue;
        };
        let key = (o.run_id.clone(), workload.clone(), *instance);
        let Some(class) = classes.0.get(&key) else {
            continue;
        };
        let name = class_workload(workload, class);
        let entry = merged
            .entry((o.run_id.clone(), name.clone(), o.metric.clone()))
            .or_insert_with(|| {
                let first = Observation {
                    workload: name,
                    ..o.clone()
                };
                (first, Vec::new())
            });
        entry.1.push(o.value);
    }
    (merged.into_values())
        .map(|(o, values)| Observation {
            value: values.iter().sum::<f64>() / values.len() as f64,
            ..o
        })
        .collect()
}

/// `--map a=b` for classes: `a on C` is `b on C` for every class `C` both sides have.
pub fn class_map(
    map: &[(String, String)],
    ours: &[Observation],
    theirs: &[Observation],
) -> Vec<(String, String)> {
    let names = |observations: &[Observation]| -> BTreeSet<String> {
        observations.iter().map(|o| o.workload.clone()).collect()
    };
    let (here, there) = (names(ours), names(theirs));
    let mut out = Vec::new();
    for (mine, other) in map {
        for name in &here {
            let Some(class) = name.strip_prefix(&format!("{mine} on ")) else {
                continue;
            };
            let theirs = class_workload(other, class);
            if there.contains(&theirs) {
                out.push((name.clone(), theirs));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use schedlab_tables::manifest::RunStatus;
    use schedlab_tables::{RunRow, Verdict, WorkloadMetricRow};

    use super::*;
    use crate::compare::{self, GroupBy};

    fn run(id: &str, variant: &str) -> RunRow {
        RunRow {
            run_id: id.into(),
            pipeline: "p".into(),
            label: None,
            variant: variant.into(),
            repetition: 1,
            host: "h".into(),
            kernel: "k".into(),
            cpu_model: "c".into(),
            started_at: format!("t{id}"),
            status: RunStatus::Completed,
            duration_ns: 1,
            trace_window_start_ns: None,
            trace_window_end_ns: None,
            kernel_build: None,
            kernel_config_digest: None,
            sched_config: None,
            imported: false,
        }
    }

    fn process(
        run: &str,
        workload: &str,
        instance: u32,
        pid: i32,
        affinity: Option<&str>,
    ) -> ProcessRow {
        ProcessRow {
            run_id: run.into(),
            workload: workload.into(),
            instance,
            pid,
            start_ns: 0,
            end_ns: Some(1_000_000_000),
            exit_code: Some(0),
            nice: 19,
            affinity: affinity.map(Into::into),
            argv: vec!["openssl".into()],
        }
    }

    fn rate(run: &str, workload: &str, instance: u32, kb_per_s: f64) -> WorkloadMetricRow {
        WorkloadMetricRow {
            run_id: run.into(),
            workload: workload.into(),
            instance,
            tid: None,
            tool: "openssl".into(),
            metric: "sha256/16384/bytes_per_s".into(),
            value: kb_per_s * 1000.0,
            unit: "B/s".into(),
        }
    }

    fn on_class(run: &str, pid: i32, class: &str, share: f64) -> ResidencyRollupRow {
        ResidencyRollupRow {
            run_id: run.into(),
            workload: "background".into(),
            scope: "process".into(),
            pid: Some(pid),
            tid: None,
            cpu: None,
            class: class.into(),
            run_ns: 1,
            share,
            source: "placement".into(),
            lost_events: None,
        }
    }

    fn cpu(run: &str, cpu: i32, class: &str) -> CpuRow {
        CpuRow::declared(run, cpu, class, None)
    }

    /// Seed 004's table: the worker on CPU 0 (the P-core) and three on LP E-cores, against
    /// openssl pinned to the P-core and to an LP E-core.
    #[test]
    fn each_instance_is_compared_with_the_pinned_runs_of_the_class_it_ran_on() {
        let mut ours = CompareInputs::default();
        ours.runs.push(run("a1", ""));
        let workers = [(0, 100, "P", 3_858_018.84), (1, 101, "LPE", 3_050_047.19)];
        for (instance, pid, class, kb) in workers {
            ours.processes
                .push(process("a1", "background", instance, pid, None));
            ours.workload_metrics
                .push(rate("a1", "background", instance, kb));
            ours.residency_rollup.push(on_class("a1", pid, class, 1.0));
        }
        // A third worker mostly on LP E: its class is where most of its time went.
        ours.processes
            .push(process("a1", "background", 2, 102, None));
        ours.workload_metrics
            .push(rate("a1", "background", 2, 3_049_508.52));
        ours.residency_rollup.push(on_class("a1", 102, "P", 0.1));
        ours.residency_rollup.push(on_class("a1", 102, "LPE", 0.9));

        let mut theirs = CompareInputs::default();
        let cpus: Vec<CpuRow> = ["b1", "b2", "b3", "b4"]
            .iter()
            .flat_map(|r| [cpu(r, 0, "P"), cpu(r, 1, "LPE")])
            .collect();
        for (id, variant, affinity, kb) in [
            ("b1", "pin=P:1", Some("0"), 3_854_000.0),
            ("b2", "pin=LPE:1", Some("1"), 3_051_000.0),
            ("b3", "pin=P:1", Some("0"), 3_856_000.0),
            ("b4", "pin=any", None, 3_849_000.0),
        ] {
            theirs.runs.push(run(id, variant));
            theirs.processes.push(process(id, "sha", 0, 7, affinity));
            theirs.workload_metrics.push(rate(id, "sha", 0, kb));
        }

        let (split, instances) = per_instance(&ours);
        let (observations, groups) = compare::observations(&split, &GroupBy::Label).unwrap();
        let ours = by_class(observations, &instances, &classes_ran(&ours));
        let mut values: Vec<(String, f64)> = (ours.iter())
            .filter(|o| o.metric == "openssl/sha256/16384/bytes_per_s")
            .map(|o| (o.workload.clone(), o.value / 1000.0))
            .collect();
        values.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(values[0].0, "background on LPE");
        assert!((values[0].1 - (3_050_047.19 + 3_049_508.52) / 2.0).abs() < 1e-6);
        assert_eq!(values[1], ("background on P".to_owned(), 3_858_018.84));

        let (split, their_instances) = per_instance(&theirs);
        let (observations, their_groups) = compare::observations(&split, &GroupBy::Label).unwrap();
        let pinned = classes_pinned(&theirs, &cpus);
        assert_eq!(
            pinned.0.len(),
            3,
            "the unpinned run has no class: {pinned:?}"
        );
        let theirs = by_class(observations, &their_instances, &pinned);
        let map = class_map(&[("background".into(), "sha".into())], &ours, &theirs);
        assert_eq!(
            map,
            [
                ("background on LPE".to_owned(), "sha on LPE".to_owned()),
                ("background on P".to_owned(), "sha on P".to_owned())
            ]
        );
        let (all, groups) =
            compare::against((ours, groups), (theirs, their_groups), "pinned", &map).unwrap();
        let rows = compare::compare(
            &all,
            &groups,
            &GroupBy::Label,
            &compare::Selection::default(),
            None,
        )
        .unwrap();
        let p = (rows.iter())
            .find(|r| {
                r.workload == "background on P"
                    && r.metric == "openssl/sha256/16384/bytes_per_s"
                    && r.verdict != Verdict::Baseline
            })
            .unwrap();
        assert_eq!(p.baseline, "pinned");
        // 3,858,018.84 kB/s against the pinned runs' mean of 3,855,000: +0.078 %.
        let expected = 100.0 * (3_858_018.84 - 3_855_000.0) / 3_855_000.0;
        assert!((p.diff_pct.unwrap() - expected).abs() < 1e-9, "{p:?}");
        assert_eq!(p.verdict, Verdict::TooFewRuns);
    }
}
