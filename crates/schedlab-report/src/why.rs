//! The summary's "Why here?" part: per run and workload, in plain words, what its placement
//! cost it (the `placement_cost_workloads` roll-up of `placement_cost` and `wakeup_placement`),
//! how it moved
//! (`migration_classes`) and how long it waited (`sched_delay_workloads`). Seed page 8 asks why
//! openssl spent most of its time on E and LP E cores while nice-19 workers held the P-cores;
//! this is that answer, from the trace.

use std::collections::BTreeMap;
use std::fmt::Write;

use schedlab_tables::{CpuRow, MigrationClassRow, PlacementCostWorkloadRow, SchedDelayWorkloadRow};

use crate::table::escape;

fn s(ns: i64) -> String {
    format!("{:.3} s", ns as f64 / 1e9)
}

fn ms(ns: i64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

/// The rows a "Why here?" paragraph reads, all of one pipeline's runs.
pub struct WhyInputs<'a> {
    /// Per run and workload, its threads' figures summed.
    pub workloads: &'a [PlacementCostWorkloadRow],
    pub migrations: &'a [MigrationClassRow],
    pub delays: &'a [SchedDelayWorkloadRow],
    pub cpus: &'a [CpuRow],
    /// Runs aggregated without a trace, when the pipeline asked for `placement_cost`: said,
    /// not left out silently (/proc samples say where a thread ran, not what else did).
    pub untraced_runs: &'a [&'a str],
}

/// `; 812 of 827 migrations were at wakeup (E→P 400, P→E 412), 15 of a waiting thread`.
fn migration_text(rows: &[&MigrationClassRow]) -> Option<String> {
    let total: i64 = rows.iter().map(|m| m.migrations).sum();
    if total == 0 {
        return None;
    }
    let at_wakeup: i64 = rows.iter().map(|m| m.at_wakeup).sum();
    let runnable: i64 = rows.iter().map(|m| m.runnable).sum();
    let running: i64 = rows.iter().map(|m| m.running).sum();
    let pairs: Vec<String> = (rows.iter())
        .filter(|m| m.migrations > 0)
        .map(|m| {
            format!(
                "{}→{} {}",
                escape(&m.from_class),
                escape(&m.to_class),
                m.migrations
            )
        })
        .collect();
    Some(format!(
        ". {at_wakeup} of {total} migrations ({}) were at wakeup, {runnable} moved it while it \
         waited runnable, {running} while it ran",
        pairs.join(", ")
    ))
}

/// `; p99 wakeup delay 0.120 ms, p99 wait after preemption 3.100 ms`.
fn delay_text(d: &SchedDelayWorkloadRow) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(p99) = d.p99_ns {
        parts.push(format!(
            "p99 wakeup delay {} (of {} wakeups)",
            ms(p99),
            d.wakeups
        ));
    }
    if let Some(p99) = d.preempt_wait_p99_ns {
        parts.push(format!(
            "p99 wait after preemption {} (of {} preemptions)",
            ms(p99),
            d.preemptions
        ));
    }
    (!parts.is_empty()).then(|| format!(". {}", parts.join(", ")))
}

/// The ranked classes of each run, fastest first.
fn classes_of_runs(cpus: &[CpuRow]) -> BTreeMap<&str, Vec<&str>> {
    let mut ranked: BTreeMap<&str, Vec<(i32, &str)>> = BTreeMap::new();
    for c in cpus {
        if let Some(rank) = c.class_rank {
            ranked.entry(&c.run_id).or_default().push((rank, &c.class));
        }
    }
    (ranked.into_iter())
        .map(|(run, mut classes)| {
            classes.sort_unstable();
            classes.dedup();
            (run, classes.into_iter().map(|(_, c)| c).collect())
        })
        .collect()
}

/// One paragraph per run and workload, or `None` without `placement_cost` rows.
/// `1 thread`, `3 threads, its parent process among them`: a workload's threads are those of
/// every process it started, the parent that starts its workers included (`threads: 2` of a
/// periodic workload is three: the process and its two threads).
fn thread_count(threads: i64) -> String {
    match threads {
        1 => "1 thread".to_owned(),
        n => format!("{n} threads, its parent process among them"),
    }
}

pub fn why_lines(inputs: &WhyInputs<'_>) -> Option<String> {
    let WhyInputs {
        workloads,
        migrations,
        delays,
        cpus,
        untraced_runs,
    } = *inputs;
    if workloads.is_empty() && untraced_runs.is_empty() {
        return None;
    }
    let classes = classes_of_runs(cpus);
    let mut out = String::new();
    for sum in workloads {
        let (run, workload) = (sum.run_id.as_str(), sum.workload.as_str());
        let run_classes = classes.get(run).cloned().unwrap_or_default();
        let prio = match (sum.prio_min, sum.prio_max) {
            (Some(low), Some(high)) if low == high => format!(", prio {low}"),
            (Some(low), Some(high)) => format!(", prio {low}-{high}"),
            _ => String::new(),
        };
        // The run times are its threads' headline figures: said where they are not slices, or
        // where slices ran on a CPU whose idle was not traced.
        let by = match (sum.headline.as_str(), sum.idle_blind_cpus.as_str()) {
            ("slices" | "", "") => String::new(),
            ("slices" | "", cpus) => format!(
                " (slices, too high: the idle of cpu {} is not traced)",
                escape(cpus)
            ),
            (kinds, _) => format!(" ({})", escape(kinds).replace("proc", "/proc")),
        };
        let mut text = format!(
            "{} {} ({}{prio}) ran {}{by}",
            escape(run),
            escape(workload),
            thread_count(sum.threads),
            s(sum.run_ns),
        );
        if run_classes.len() < 2 {
            let class = run_classes.first().copied().unwrap_or("?");
            write!(
                text,
                "; the machine has one core class ({}), so no CPU was faster than another",
                escape(class)
            )
        } else {
            write!(
                text,
                ", {} of it on a slower class than it was allowed (classes fastest first: {}); \
                 a faster CPU it may use was idle for {} of that",
                s(sum.slower_run_ns),
                escape(&run_classes.join(", ")),
                s(sum.faster_idle_ns),
            )
            .and_then(|()| match sum.faster_lower_prio_ns {
                Some(ns) => write!(text, " and ran lower-priority work for {}", s(ns)),
                None => write!(text, " (the trace gives no priorities to compare)"),
            })
        }
        .expect("writing to a String");
        write!(
            text,
            ". It waited runnable for {}, {} of it while another CPU it may use was idle",
            s(sum.wait_ns),
            s(sum.wait_idle_ns),
        )
        .expect("writing to a String");
        if let (Some(wakeups @ 1..), Some(same), Some(other), Some(busy)) = (
            sum.wakeups,
            sum.same_cpu,
            sum.other_class,
            sum.onto_busy_while_idle,
        ) {
            write!(
                text,
                ". Of {wakeups} wakeups, {same} put it back on the same CPU, {other} on another \
                 class, and {busy} on a busy CPU while one of an equal or faster class was idle",
            )
            .expect("writing to a String");
        }
        let moves: Vec<&MigrationClassRow> = (migrations.iter())
            .filter(|m| m.run_id == run && m.workload == workload)
            .collect();
        text.extend(migration_text(&moves));
        let delay = delays
            .iter()
            .find(|d| d.run_id == run && d.workload == workload);
        text.extend(delay.and_then(delay_text));
        writeln!(out, "- {text}.").expect("writing to a String");
    }
    for run in untraced_runs {
        writeln!(
            out,
            "- {}: no perf trace, so no figures here: they need what every CPU ran when, which \
             /proc placement samples do not record.",
            escape(run)
        )
        .expect("writing to a String");
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(cpu: i32, class: &str, class_rank: i32) -> CpuRow {
        CpuRow::declared("r1", cpu, class, Some(class_rank))
    }

    fn summed() -> PlacementCostWorkloadRow {
        PlacementCostWorkloadRow {
            run_id: "r1".into(),
            workload: "openssl".into(),
            threads: 1,
            prio_min: Some(120),
            prio_max: Some(120),
            run_ns: 31_200_000_000,
            slower_run_ns: 25_000_000_000,
            faster_idle_ns: 0,
            faster_lower_prio_ns: Some(24_600_000_000),
            wait_ns: 1_000_000_000,
            wait_idle_ns: 0,
            wakeups: Some(10),
            same_cpu: Some(4),
            other_class: Some(3),
            onto_busy_while_idle: Some(1),
            headline: "slices".into(),
            idle_blind_cpus: String::new(),
        }
    }

    #[test]
    fn a_hybrid_run_reads_as_time_on_the_slower_class_and_a_uniform_one_says_so() {
        let hybrid = [cpu(0, "P", 0), cpu(1, "E", 1)];
        let rows = [summed()];
        let inputs = |cpus| WhyInputs {
            workloads: &rows,
            migrations: &[],
            delays: &[],
            cpus,
            untraced_runs: &[],
        };
        let text = why_lines(&inputs(&hybrid)).expect("a row");
        assert!(
            text.starts_with(
                "- r1 openssl (1 thread, prio 120) ran 31.200 s, 25.000 s of it on a slower \
                 class than it was allowed (classes fastest first: P, E); a faster CPU it may \
                 use was idle for 0.000 s of that and ran lower-priority work for 24.600 s. \
                 It waited runnable for 1.000 s, 0.000 s of it while another CPU it may use was \
                 idle. Of 10 wakeups, 4 put it back on the same CPU, 3 on another class, and 1 \
                 on a busy CPU while one of an equal or faster class was idle."
            ),
            "{text}"
        );
        let uniform = [cpu(0, "P", 0), cpu(1, "P", 0)];
        let text = why_lines(&inputs(&uniform)).expect("a row");
        assert!(
            text.contains("the machine has one core class (P)"),
            "{text}"
        );
        assert!(!text.contains("slower class"), "{text}");
        let corrected = [PlacementCostWorkloadRow {
            headline: "kernel".into(),
            ..summed()
        }];
        let text = why_lines(&WhyInputs {
            workloads: &corrected,
            ..inputs(&uniform)
        })
        .expect("a row");
        assert!(
            text.starts_with("- r1 openssl (1 thread, prio 120) ran 31.200 s (kernel); "),
            "{text}"
        );
        let nothing = WhyInputs {
            workloads: &[],
            ..inputs(&hybrid)
        };
        assert_eq!(why_lines(&nothing), None);
    }
}
