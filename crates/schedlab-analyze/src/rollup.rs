//! The per-thread aggregates summed per class, per process and per workload.
//!
//! The summary shows a thread's CPU time per core class, each worker process's placement and
//! migrations, and one line for a workload of many threads (a kernel build's compilers). These
//! sums are aggregates like any other, so a notebook reads the numbers the summary prints. They
//! are taken over the rows the pipeline kept, so they add up to what the per-thread tables hold.

use std::collections::{BTreeMap, BTreeSet};

use crate::headline::Headline;
use schedlab_tables::{
    CpuTimeRow, MigrationSummaryRow, NO_EARLIER_RUN, PlacementCostRow, PlacementCostWorkloadRow,
    ResidencyRollupRow, ResidencyRow, TotalsRow, WakeupPlacementRow,
};
use schedlab_topology::{format_cpu_list, parse_cpu_list};

/// Whose threads a roll-up sums, with its key: `(scope, pid, tid)`.
type Scope = (&'static str, Option<i32>, Option<i32>);

/// The scopes a thread belongs to: itself, its process and its workload.
fn scopes(pid: i32, tid: i32) -> [Scope; 3] {
    [
        ("thread", Some(pid), Some(tid)),
        ("process", Some(pid), None),
        ("workload", None, None),
    ]
}

/// One part of a group's residency: its source, its threads' losses and its CPU time.
#[derive(Default)]
struct Part<'a> {
    source: &'a str,
    threads: BTreeSet<i32>,
    lost_events: Option<i64>,
    run_ns: i64,
}

impl<'a> Part<'a> {
    fn add(&mut self, row: &'a ResidencyRow) {
        self.source = &row.source;
        // A thread's lost events count once, however many of its CPUs the part has.
        if self.threads.insert(row.tid)
            && let Some(lost) = row.lost_events
        {
            *self.lost_events.get_or_insert(0) += lost;
        }
        self.run_ns += row.run_ns;
    }
}

/// Residency per class for each thread, and per CPU and per class for each process and each
/// workload, in key order (run, workload, scope, pid, tid; CPUs before classes). Every class of
/// the run (`classes`, per run id) has its row in every group, 0 where the group did not run on
/// it, so that a share is a figure of every run.
pub fn residency_rollup(
    residency: &[ResidencyRow],
    classes: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<ResidencyRollupRow> {
    type Group<'a> = (&'a str, &'a str, Scope);
    // Per group, per (cpu or null, class).
    let mut groups: BTreeMap<Group<'_>, BTreeMap<(Option<i32>, &str), Part<'_>>> = BTreeMap::new();
    // Per group, all of it.
    let mut whole: BTreeMap<Group<'_>, Part<'_>> = BTreeMap::new();
    for r in residency {
        for scope in scopes(r.pid, r.tid) {
            whole
                .entry((&r.run_id, &r.workload, scope))
                .or_default()
                .add(r);
            let parts = groups.entry((&r.run_id, &r.workload, scope)).or_default();
            // A thread's CPU rows are the residency table; only its classes are new.
            let cpus: &[Option<i32>] = if scope.0 == "thread" {
                &[None]
            } else {
                &[Some(r.cpu), None]
            };
            for &cpu in cpus {
                parts.entry((cpu, &r.class)).or_default().add(r);
            }
        }
    }
    let mut out = Vec::new();
    for ((run_id, workload, (scope, pid, tid)), mut parts) in groups {
        // A class the group never ran on: no CPU time, and the losses of all its threads, which
        // may hide what it ran there.
        let every_thread = &whole[&(run_id, workload, (scope, pid, tid))];
        for class in classes.get(run_id).into_iter().flatten() {
            parts.entry((None, class)).or_insert_with(|| Part {
                source: every_thread.source,
                lost_events: every_thread.lost_events,
                ..Part::default()
            });
        }
        // Every run_ns is counted once in a CPU row (or, for a thread, once in a class row).
        let total: i64 = (parts.iter())
            .filter(|((cpu, _), _)| cpu.is_some() || scope == "thread")
            .map(|(_, part)| part.run_ns)
            .sum();
        let mut parts: Vec<_> = parts.into_iter().collect();
        // CPUs first, then classes.
        parts.sort_by_key(|((cpu, class), _)| (cpu.is_none(), *cpu, *class));
        for ((cpu, class), part) in parts {
            out.push(ResidencyRollupRow {
                run_id: run_id.to_owned(),
                workload: workload.to_owned(),
                scope: scope.to_owned(),
                pid,
                tid,
                cpu,
                class: class.to_owned(),
                run_ns: part.run_ns,
                share: if total > 0 {
                    part.run_ns as f64 / total as f64
                } else {
                    0.0
                },
                source: part.source.to_owned(),
                lost_events: part.lost_events,
            });
        }
    }
    out
}

/// Threads, CPU time and migrations summed per process and per workload. `cpu_time` and
/// `migrations` are `None` when the pipeline does not aggregate them; a group's sum is null
/// when its table has no row of the group. Threads (and their lost events) are those of
/// `cpu_time` when it is there, as the summary always counted them: with `window: trace` on one
/// step only, the two tables can hold different threads.
pub fn totals(
    cpu_time: Option<&[CpuTimeRow]>,
    migrations: Option<&[MigrationSummaryRow]>,
) -> Vec<TotalsRow> {
    #[derive(Default)]
    struct Group<'a> {
        threads: BTreeSet<i32>,
        source: &'a str,
        lost_events: Option<i64>,
        cpu_time_ns: Option<i64>,
        migrations: Option<i64>,
    }
    type Key<'a> = (&'a str, &'a str, &'static str, Option<i32>);
    let mut groups: BTreeMap<Key<'_>, Group<'_>> = BTreeMap::new();
    // Each thread's row of either table: (run, workload, pid, tid, source, lost events), then
    // its CPU time or its migrations.
    let rows = (cpu_time.unwrap_or_default().iter())
        .map(|r| {
            let thread = (
                &r.run_id,
                &r.workload,
                r.pid,
                r.tid,
                &r.source,
                r.lost_events,
            );
            (thread, Some(r.cpu_time_ns), None)
        })
        .chain(migrations.unwrap_or_default().iter().map(|m| {
            let thread = (
                &m.run_id,
                &m.workload,
                m.pid,
                m.tid,
                &m.source,
                m.lost_events,
            );
            (thread, None, Some(m.migrations))
        }));
    let threads_from_migrations = cpu_time.is_none();
    for ((run_id, workload, pid, tid, source, lost), cpu_time_ns, migrations) in rows {
        let counts_thread = cpu_time_ns.is_some() || threads_from_migrations;
        for (scope, pid, _) in &scopes(pid, tid)[1..] {
            let group = groups.entry((run_id, workload, scope, *pid)).or_default();
            group.source = source;
            // A thread's lost events count once per group.
            if counts_thread
                && group.threads.insert(tid)
                && let Some(lost) = lost
            {
                *group.lost_events.get_or_insert(0) += lost;
            }
            if let Some(ns) = cpu_time_ns {
                *group.cpu_time_ns.get_or_insert(0) += ns;
            }
            if let Some(count) = migrations {
                *group.migrations.get_or_insert(0) += count;
            }
        }
    }
    (groups.into_iter())
        .map(|((run_id, workload, scope, pid), group)| TotalsRow {
            run_id: run_id.to_owned(),
            workload: workload.to_owned(),
            scope: scope.to_owned(),
            pid,
            threads: group.threads.len() as i64,
            cpu_time_ns: group.cpu_time_ns,
            migrations: group.migrations,
            source: group.source.to_owned(),
            lost_events: group.lost_events,
        })
        .collect()
}

/// Each workload's `placement_cost` threads summed per run, with its `wakeup_placement` rows
/// summed over every class pair when there are any (`wakeups: None` without them). A wakeup onto
/// another class is one whose `from_class` is a class the thread ran on before, not
/// [`NO_EARLIER_RUN`]. `headlines` holds each thread's `cpu_time` row, by run and tid, for
/// which figure its run times are and which of its CPUs were idle-blind (a thread without one
/// counts as plain `slices`).
pub fn placement_cost_workloads(
    costs: &[PlacementCostRow],
    wakeups: Option<&[WakeupPlacementRow]>,
    headlines: &BTreeMap<(&str, i32), &CpuTimeRow>,
) -> Vec<PlacementCostWorkloadRow> {
    let mut rows: BTreeMap<(&str, &str), PlacementCostWorkloadRow> = BTreeMap::new();
    // Per workload, its threads' headlines and idle-blind CPUs.
    type Kinds<'a> = (BTreeSet<&'a str>, BTreeSet<u32>);
    let mut kinds: BTreeMap<(&str, &str), Kinds<'_>> = BTreeMap::new();
    for c in costs {
        let time = headlines.get(&(c.run_id.as_str(), c.tid));
        let (headlines, blind) = kinds.entry((&c.run_id, &c.workload)).or_default();
        headlines.insert(time.map_or(Headline::Slices.as_str(), |t| t.headline.as_str()));
        let cpus = time.map_or(Ok(Vec::new()), |t| parse_cpu_list(&t.idle_blind_cpus));
        blind.extend(cpus.unwrap_or_default());
        let row =
            (rows.entry((&c.run_id, &c.workload))).or_insert_with(|| PlacementCostWorkloadRow {
                run_id: c.run_id.clone(),
                workload: c.workload.clone(),
                threads: 0,
                prio_min: None,
                prio_max: None,
                run_ns: 0,
                slower_run_ns: 0,
                faster_idle_ns: 0,
                faster_lower_prio_ns: None,
                wait_ns: 0,
                wait_idle_ns: 0,
                wakeups: wakeups.map(|_| 0),
                same_cpu: wakeups.map(|_| 0),
                other_class: wakeups.map(|_| 0),
                onto_busy_while_idle: wakeups.map(|_| 0),
                headline: String::new(),
                idle_blind_cpus: String::new(),
            });
        row.threads += 1;
        if let Some(prio) = c.prio {
            row.prio_min = Some(row.prio_min.map_or(prio, |p| p.min(prio)));
            row.prio_max = Some(row.prio_max.map_or(prio, |p| p.max(prio)));
        }
        row.run_ns += c.run_ns;
        row.slower_run_ns += c.slower_run_ns;
        row.faster_idle_ns += c.faster_idle_ns;
        if let Some(ns) = c.faster_lower_prio_ns {
            *row.faster_lower_prio_ns.get_or_insert(0) += ns;
        }
        row.wait_ns += c.wait_ns;
        row.wait_idle_ns += c.wait_idle_ns;
    }
    for w in wakeups.unwrap_or_default() {
        let Some(row) = rows.get_mut(&(w.run_id.as_str(), w.workload.as_str())) else {
            continue;
        };
        let add = |field: &mut Option<i64>, n: i64| *field = Some(field.unwrap_or(0) + n);
        add(&mut row.wakeups, w.wakeups);
        add(&mut row.same_cpu, w.same_cpu);
        let other = w.from_class != w.to_class && w.from_class != NO_EARLIER_RUN;
        add(&mut row.other_class, if other { w.wakeups } else { 0 });
        add(&mut row.onto_busy_while_idle, w.onto_busy_while_idle);
    }
    for (key, row) in rows.iter_mut() {
        let (headlines, blind) = kinds.remove(key).unwrap_or_default();
        row.headline = headlines.into_iter().collect::<Vec<_>>().join(", ");
        row.idle_blind_cpus = format_cpu_list(&blind.into_iter().collect::<Vec<_>>());
    }
    rows.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn residency(pid: i32, tid: i32, cpu: i32, class: &str, run_ns: i64) -> ResidencyRow {
        ResidencyRow {
            run_id: "r".into(),
            workload: "w".into(),
            pid,
            tid,
            comm: "c".into(),
            cpu,
            class: class.into(),
            run_ns,
            share: 0.0,
            source: "sched".into(),
            lost_events: Some(tid.into()),
            slice_ns: Some(run_ns),
            kernel_ns: None,
            headline: "slices".into(),
            idle_blind: false,
        }
    }

    #[test]
    fn residency_sums_per_class_for_a_thread_and_per_cpu_and_class_for_its_process_and_workload_with_a_row_for_every_class()
     {
        let rows = [
            residency(1, 1, 0, "P", 30),
            residency(1, 1, 1, "P", 10),
            residency(1, 2, 2, "E", 60),
            residency(5, 5, 2, "E", 100),
        ];
        let classes = BTreeMap::from([(
            "r".to_owned(),
            BTreeSet::from(["P".to_owned(), "E".to_owned()]),
        )]);
        let rollup = residency_rollup(&rows, &classes);
        let seen: Vec<String> = (rollup.iter())
            .map(|r| {
                let at = match (r.tid, r.pid) {
                    (Some(tid), _) => format!("tid {tid}"),
                    (None, Some(pid)) => format!("pid {pid}"),
                    (None, None) => "all".to_owned(),
                };
                let on = r
                    .cpu
                    .map_or_else(|| "class".to_owned(), |cpu| format!("cpu {cpu}"));
                let (class, run_ns, share) = (&r.class, r.run_ns, r.share);
                let lost = r.lost_events.unwrap_or(-1);
                format!(
                    "{} {at}, {on} {class}: {run_ns} ns {share}, lost {lost}",
                    r.scope
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                "process pid 1, cpu 0 P: 30 ns 0.3, lost 1",
                "process pid 1, cpu 1 P: 10 ns 0.1, lost 1",
                "process pid 1, cpu 2 E: 60 ns 0.6, lost 2",
                "process pid 1, class E: 60 ns 0.6, lost 2",
                "process pid 1, class P: 40 ns 0.4, lost 1",
                "process pid 5, cpu 2 E: 100 ns 1, lost 5",
                "process pid 5, class E: 100 ns 1, lost 5",
                "process pid 5, class P: 0 ns 0, lost 5",
                "thread tid 1, class E: 0 ns 0, lost 1",
                "thread tid 1, class P: 40 ns 1, lost 1",
                "thread tid 2, class E: 60 ns 1, lost 2",
                "thread tid 2, class P: 0 ns 0, lost 2",
                "thread tid 5, class E: 100 ns 1, lost 5",
                "thread tid 5, class P: 0 ns 0, lost 5",
                "workload all, cpu 0 P: 30 ns 0.15, lost 1",
                "workload all, cpu 1 P: 10 ns 0.05, lost 1",
                "workload all, cpu 2 E: 160 ns 0.8, lost 7",
                "workload all, class E: 160 ns 0.8, lost 7",
                "workload all, class P: 40 ns 0.2, lost 1",
            ]
        );
    }

    fn cpu_time(pid: i32, tid: i32, cpu_time_ns: i64) -> CpuTimeRow {
        CpuTimeRow {
            run_id: "r".into(),
            workload: "w".into(),
            pid,
            tid,
            comm: "c".into(),
            cpu_time_ns,
            wall_ns: 0,
            source: "sched".into(),
            lost_events: Some(10),
            proc_check_ns: None,
            trace_check_ns: None,
            trace_exceeds_proc: None,
            slice_ns: Some(cpu_time_ns),
            kernel_ns: None,
            headline: "slices".into(),
            idle_blind_cpus: String::new(),
        }
    }

    fn migrations(pid: i32, tid: i32, migrations: i64) -> MigrationSummaryRow {
        MigrationSummaryRow {
            run_id: "r".into(),
            workload: "w".into(),
            pid,
            tid,
            comm: "c".into(),
            migrations,
            startup_migrations: 0,
            steady_migrations: migrations,
            steady_interval_mean_ns: None,
            per_second: None,
            source: "sched".into(),
            lost_events: Some(10),
        }
    }

    #[test]
    fn totals_count_the_cpu_time_threads_and_their_losses_once_and_leave_a_missing_table_null() {
        let times = [
            cpu_time(1, 1, 100),
            cpu_time(1, 2, 200),
            cpu_time(5, 5, 400),
        ];
        let moves = [
            migrations(1, 1, 3),
            migrations(1, 2, 4),
            migrations(5, 6, 1),
        ];
        let both = totals(Some(&times), Some(&moves));
        let seen: Vec<_> = (both.iter())
            .map(|t| {
                (
                    t.scope.as_str(),
                    t.pid,
                    t.threads,
                    t.cpu_time_ns,
                    t.migrations,
                    t.lost_events,
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("process", Some(1), 2, Some(300), Some(7), Some(20)),
                // tid 6 has migrations but no CPU-time row (another window): its migrations
                // count, but it is not one of the threads the summary lists.
                ("process", Some(5), 1, Some(400), Some(1), Some(10)),
                ("workload", None, 3, Some(700), Some(8), Some(30)),
            ]
        );
        let without_migrations = totals(Some(&times), None);
        assert_eq!(without_migrations[2].migrations, None);
        assert_eq!(without_migrations[2].threads, 3);
        let without_cpu_time = totals(None, Some(&moves));
        assert_eq!(without_cpu_time[2].cpu_time_ns, None);
        assert_eq!(without_cpu_time[2].threads, 3);
        assert_eq!(without_cpu_time[1].threads, 1);
    }

    fn cost(tid: i32, prio: Option<i32>, run_ns: i64) -> PlacementCostRow {
        PlacementCostRow {
            run_id: "r".into(),
            workload: "w".into(),
            pid: 1,
            tid,
            comm: "c".into(),
            prio,
            allowed_cpus: "0-1".into(),
            allowed_source: "unbound".into(),
            run_ns,
            slower_run_ns: run_ns / 2,
            faster_idle_ns: 1,
            faster_idle_share: 0.0,
            faster_idle_cpus: String::new(),
            faster_lower_prio_ns: prio.map(|_| 2),
            faster_lower_prio_share: None,
            faster_lower_prio_cpus: String::new(),
            wait_ns: 3,
            wait_idle_ns: 4,
            wait_idle_share: 0.0,
            wait_idle_cpus: String::new(),
            lost_events: Some(0),
        }
    }

    fn woken(tid: i32, from: &str, to: &str, wakeups: i64) -> WakeupPlacementRow {
        WakeupPlacementRow {
            run_id: "r".into(),
            workload: "w".into(),
            pid: 1,
            tid,
            comm: "c".into(),
            from_class: from.into(),
            to_class: to.into(),
            wakeups,
            share: 0.0,
            same_cpu: 1,
            other_cpu: wakeups - 1,
            onto_busy: 0,
            onto_busy_while_idle: 1,
            same_cpu_share: 0.0,
            other_cpu_share: 0.0,
        }
    }

    #[test]
    fn a_workloads_why_here_figures_are_its_threads_summed() {
        let costs = [
            cost(1, Some(120), 10),
            cost(2, Some(139), 20),
            cost(3, None, 30),
        ];
        let wakeups = [
            woken(1, "P", "P", 5),
            woken(2, "P", "E", 3),
            woken(3, NO_EARLIER_RUN, "E", 2),
        ];
        // Thread 2's run times are the kernel's (it ran on idle-blind cpu 1), thread 1's its
        // slices; thread 3 has no `cpu_time` row.
        let times = [
            cpu_time(1, 1, 10),
            CpuTimeRow {
                headline: "kernel".into(),
                idle_blind_cpus: "1".into(),
                ..cpu_time(1, 2, 20)
            },
        ];
        let headlines = times.iter().map(|t| (("r", t.tid), t)).collect();
        let [row] = &placement_cost_workloads(&costs, Some(&wakeups), &headlines)[..] else {
            panic!("one workload");
        };
        assert_eq!(
            (
                row.threads,
                row.prio_min,
                row.prio_max,
                row.run_ns,
                row.slower_run_ns
            ),
            (3, Some(120), Some(139), 60, 30)
        );
        assert_eq!(
            (row.faster_lower_prio_ns, row.wait_ns, row.wait_idle_ns),
            (Some(4), 9, 12)
        );
        assert_eq!(
            (
                row.wakeups,
                row.same_cpu,
                row.other_class,
                row.onto_busy_while_idle
            ),
            (Some(10), Some(3), Some(3), Some(3)),
            "only P→E is onto another class: a first run has no class to leave"
        );
        assert_eq!(
            (&*row.headline, &*row.idle_blind_cpus),
            ("kernel, slices", "1")
        );
        let without = placement_cost_workloads(&costs[..1], None, &headlines);
        assert_eq!(without[0].wakeups, None);
        assert_eq!(
            (&*without[0].headline, &*without[0].idle_blind_cpus),
            ("slices", "")
        );
    }
}
