//! Bar charts of figures the seed articles print as numbers: each workload's CPU time split by
//! core class (`class_residency`, seed page 4's "residency per core class"), and the CPUs each
//! workload received before, during and after a reference workload (`cpu_share`, seed page 8's
//! "15.96 CPUs before openssl started, 15.07 while it ran").
//!
//! Both draw aggregate rows as they are (`residency_rollup`'s workload rows of a whole class,
//! `cpu_share`'s rows of class `all`), the same figures the summary's tables print, so a chart
//! and its table never disagree.

use std::collections::BTreeMap;

use plotters::style::RGBAColor;
use schedlab_tables::{CpuRow, CpuShareRow, ResidencyRollupRow};

use crate::plots::{Frame, LegendEntry, RunContext, Swatch, sorted_unique, stacked_bars};
use crate::style::{class_color, workload_color};

/// The classes of `cpus` fastest first (by `class_rank`, then name), then any other class the
/// rows name.
fn class_order<'a>(cpus: &'a [&CpuRow], named: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut ranked: Vec<(Option<i32>, &str)> = cpus
        .iter()
        .map(|c| (c.class_rank, c.class.as_str()))
        .collect();
    ranked.sort_by_key(|&(rank, class)| (rank.is_none(), rank, class));
    let mut order: Vec<String> = Vec::new();
    for class in ranked.into_iter().map(|(_, class)| class).chain(named) {
        if !order.iter().any(|c| c == class) {
            order.push(class.to_owned());
        }
    }
    order
}

/// A bar per workload: the percent of its CPU time on each core class, stacked in class order
/// (fastest at the bottom). `None` without workload rows of a whole class.
pub fn class_residency(
    title: &str,
    rows: &[&ResidencyRollupRow],
    cpus: &[&CpuRow],
) -> Result<Option<String>, String> {
    let shares: BTreeMap<(&str, &str), f64> = (rows.iter())
        .filter(|r| r.scope == "workload" && r.cpu.is_none())
        .map(|r| ((r.workload.as_str(), r.class.as_str()), 100.0 * r.share))
        .collect();
    if shares.is_empty() {
        return Ok(None);
    }
    let classes = class_order(cpus, shares.keys().map(|(_, class)| *class));
    let classes: Vec<String> = (classes.into_iter())
        .filter(|c| shares.keys().any(|(_, class)| class == c))
        .collect();
    let workloads = sorted_unique(shares.keys().map(|(workload, _)| *workload));
    let bars: Vec<(String, Vec<(f64, RGBAColor)>)> = (workloads.iter())
        .map(|w| {
            let parts = (classes.iter())
                .map(|c| {
                    let share = shares.get(&(w.as_str(), c.as_str())).copied();
                    (share.unwrap_or(0.0), class_color(c))
                })
                .collect();
            (w.clone(), parts)
        })
        .collect();
    let legend: Vec<LegendEntry> = (classes.iter().rev())
        .map(|c| (format!("class {c}"), class_color(c), Swatch::Fill))
        .collect();
    let frame = Frame::of_bars(title, &legend, bars.len());
    stacked_bars(&frame, &bars, "% of the workload's CPU time").map(Some)
}

/// A bar per phase (`before`, `during`, `after` the reference workload, in time order, or the
/// one `run`): the CPUs each workload received, stacked in the workloads' colours. `None`
/// without rows.
pub fn cpu_share(
    title: &str,
    rows: &[&CpuShareRow],
    run: &RunContext,
) -> Result<Option<String>, String> {
    let rows: Vec<&&CpuShareRow> = rows.iter().filter(|r| r.class == "all").collect();
    if rows.is_empty() {
        return Ok(None);
    }
    let mut phases: Vec<(i64, &str)> = rows
        .iter()
        .map(|r| (r.phase_start_ns, r.phase.as_str()))
        .collect();
    phases.sort();
    phases.dedup();
    let workloads = sorted_unique(rows.iter().map(|r| r.workload.as_str()));
    let bars: Vec<(String, Vec<(f64, RGBAColor)>)> = (phases.iter())
        .map(|&(_, phase)| {
            let parts = (workloads.iter())
                .map(|w| {
                    let cpus = (rows.iter())
                        .find(|r| r.phase == phase && &r.workload == w)
                        .map_or(0.0, |r| r.cpus);
                    (cpus, workload_color(&run.workloads, w))
                })
                .collect();
            // `before openssl`; the one phase of a run without a reference is `run`.
            let reference = (rows.iter())
                .find(|r| r.phase == phase)
                .and_then(|r| r.reference.as_deref());
            let name = match reference {
                Some(reference) => format!("{phase} {reference}"),
                None => phase.to_owned(),
            };
            (name, parts)
        })
        .collect();
    let legend: Vec<LegendEntry> = (workloads.iter().rev())
        .map(|w| (w.clone(), workload_color(&run.workloads, w), Swatch::Fill))
        .collect();
    let frame = Frame::of_bars(title, &legend, bars.len());
    stacked_bars(&frame, &bars, "CPUs received (CPU time / phase length)").map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(cpu: i32, class: &str, rank: i32) -> CpuRow {
        CpuRow::declared("r", cpu, class, Some(rank))
    }

    fn class_row(workload: &str, class: &str, share: f64) -> ResidencyRollupRow {
        ResidencyRollupRow {
            run_id: "r".into(),
            workload: workload.into(),
            scope: "workload".into(),
            pid: None,
            tid: None,
            cpu: None,
            class: class.into(),
            run_ns: (share * 1e9) as i64,
            share,
            source: "slices".into(),
            lost_events: None,
        }
    }

    #[test]
    fn class_residency_stacks_each_workloads_share_per_class_fastest_first() {
        let cpus = [cpu(0, "P", 0), cpu(1, "E", 1)];
        let cpus: Vec<&CpuRow> = cpus.iter().collect();
        let mut per_cpu = class_row("fg", "P", 0.9);
        per_cpu.cpu = Some(0);
        let rows = [
            class_row("fg", "E", 0.25),
            class_row("fg", "P", 0.75),
            class_row("bg", "E", 1.0),
            per_cpu,
        ];
        let rows: Vec<&ResidencyRollupRow> = rows.iter().collect();
        let svg = class_residency("t", &rows, &cpus).unwrap().unwrap();
        for text in ["\nclass P\n", "\nclass E\n", "\nfg\n", "\nbg\n"] {
            assert!(svg.contains(text), "{text:?} in {svg}");
        }
        // fg's bar: P from 0 to 75 %, E from 75 % to 100 %; bg's: E alone (a zero-height P).
        let p = class_color("P");
        let fill = |c: RGBAColor| format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
        let rects = |c: RGBAColor| {
            svg.lines()
                .filter(|l| l.starts_with("<rect") && l.contains(&fill(c)))
                .count()
        };
        assert!(rects(p) >= 2 && rects(class_color("E")) >= 2, "{svg}");
        assert_eq!(class_residency("t", &[], &cpus).unwrap(), None);
    }

    fn share_row(phase: &str, start: i64, workload: &str, cpus: f64) -> CpuShareRow {
        CpuShareRow {
            run_id: "r".into(),
            reference: Some("openssl".into()),
            phase: phase.into(),
            phase_start_ns: start,
            phase_end_ns: start + 10,
            workload: workload.into(),
            class: "all".into(),
            cpu_ns: 0,
            cpus,
            source: "slices".into(),
            change_cpus: None,
            change_cpu_s: None,
        }
    }

    #[test]
    fn cpu_share_draws_a_bar_per_phase_in_time_order_named_by_the_reference() {
        let rows = [
            share_row("during", 10, "openssl", 0.93),
            share_row("during", 10, "bg", 15.07),
            share_row("before", 0, "bg", 15.96),
            share_row("after", 20, "bg", 15.9),
        ];
        let rows: Vec<&CpuShareRow> = rows.iter().collect();
        let run = RunContext {
            workloads: vec!["bg".into(), "openssl".into()],
            ..RunContext::default()
        };
        let svg = cpu_share("t", &rows, &run).unwrap().unwrap();
        let at = |text: &str| {
            svg.find(&format!("\n{text}\n"))
                .unwrap_or_else(|| panic!("{text} in {svg}"))
        };
        assert!(at("before openssl") < at("during openssl"));
        assert!(at("during openssl") < at("after openssl"));
        assert!(svg.contains("CPUs received"));
        assert_eq!(cpu_share("t", &[], &run).unwrap(), None);
    }
}
