//! The summary's "Why here?" part: per run and workload, in plain words, what its placement
//! cost it (the `placement_cost` and `wakeup_placement` aggregates). Seed page 8 asks why
//! openssl spent most of its time on E and LP E cores while nice-19 workers held the P-cores;
//! this is that answer, from the trace.

use std::collections::BTreeMap;
use std::fmt::Write;

use schedlab_tables::{CpuRow, PlacementCostRow, WakeupPlacementRow};

use crate::table::escape;

/// A workload's threads' figures, summed (thread-seconds).
#[derive(Default)]
struct Sums {
    threads: usize,
    prios: Vec<i32>,
    run_ns: i64,
    slower_run_ns: i64,
    faster_idle_ns: i64,
    lower_prio_ns: Option<i64>,
    wait_ns: i64,
    wait_idle_ns: i64,
    wakeups: i64,
    same_cpu: i64,
    other_class: i64,
    onto_busy_while_idle: i64,
}

fn s(ns: i64) -> String {
    format!("{:.3} s", ns as f64 / 1e9)
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
pub fn why_lines(
    costs: &[PlacementCostRow],
    wakeups: &[WakeupPlacementRow],
    cpus: &[CpuRow],
) -> Option<String> {
    if costs.is_empty() {
        return None;
    }
    let mut sums: BTreeMap<(&str, &str), Sums> = BTreeMap::new();
    for c in costs {
        let sum = sums.entry((&c.run_id, &c.workload)).or_default();
        sum.threads += 1;
        sum.prios.extend(c.prio);
        sum.run_ns += c.run_ns;
        sum.slower_run_ns += c.slower_run_ns;
        sum.faster_idle_ns += c.faster_idle_ns;
        if let Some(ns) = c.faster_lower_prio_ns {
            *sum.lower_prio_ns.get_or_insert(0) += ns;
        }
        sum.wait_ns += c.wait_ns;
        sum.wait_idle_ns += c.wait_idle_ns;
    }
    for w in wakeups {
        if let Some(sum) = sums.get_mut(&(w.run_id.as_str(), w.workload.as_str())) {
            sum.wakeups += w.wakeups;
            sum.same_cpu += w.same_cpu;
            if w.from_class != w.to_class && w.from_class != "none" {
                sum.other_class += w.wakeups;
            }
            sum.onto_busy_while_idle += w.onto_busy_while_idle;
        }
    }
    let classes = classes_of_runs(cpus);
    let mut out = String::new();
    for ((run, workload), sum) in &sums {
        let run_classes = classes.get(run).cloned().unwrap_or_default();
        let mut prios = sum.prios.clone();
        prios.sort_unstable();
        prios.dedup();
        let prio = match prios[..] {
            [one] => format!(", prio {one}"),
            [] => String::new(),
            _ => format!(", prio {}-{}", prios[0], prios[prios.len() - 1]),
        };
        let mut text = format!(
            "{} {} ({} thread{}{prio}) ran {}",
            escape(run),
            escape(workload),
            sum.threads,
            if sum.threads == 1 { "" } else { "s" },
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
            .and_then(|()| match sum.lower_prio_ns {
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
        if sum.wakeups > 0 {
            write!(
                text,
                ". Of {} wakeups, {} put it back on the same CPU, {} on another class, and {} \
                 on a busy CPU while one of an equal or faster class was idle",
                sum.wakeups, sum.same_cpu, sum.other_class, sum.onto_busy_while_idle
            )
            .expect("writing to a String");
        }
        writeln!(out, "- {text}.").expect("writing to a String");
    }
    Some(out)
}
