//! turbostat's table into activity per CPU, per core class and for all CPUs, over a window.
//!
//! The seeds read Busy%, Avg_MHz, Bzy_MHz, C1/C6 residency, temperature and package power off
//! turbostat for the CPU a workload ran on, for each core class ("the E-core group averaged
//! 97.0 % C6") and for the package, over the workload's run. Each turbostat interval counts
//! toward a window when its middle falls inside it; a window is the whole run or one workload's
//! lifetime, from the `processes` table. Busy frequency is weighted by busy time, the way
//! turbostat's own summary row computes it, so an idle CPU's stray Bzy_MHz does not pull a
//! class's figure.

use std::collections::{BTreeMap, BTreeSet};

use schedlab_tables::turbostat::TurbostatSample;
use schedlab_tables::{BUSY_CPU_PCT, CpuActivityIntervalRow, CpuActivityRow, CpuRow, ProcessRow};

/// The whole run's window name (a workload's window is named after the workload).
pub const RUN_WINDOW: &str = "run";

#[derive(Default)]
struct Mean {
    sum: f64,
    count: u32,
}

impl Mean {
    fn add(&mut self, value: Option<f64>) {
        if let Some(value) = value {
            self.sum += value;
            self.count += 1;
        }
    }

    fn get(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / f64::from(self.count))
    }
}

/// The figures of one scope, summed over its rows.
#[derive(Default)]
struct Activity {
    samples: BTreeSet<i64>,
    busy: Mean,
    avg_mhz: Mean,
    /// Sum of Bzy_MHz × Busy%, and of Busy%.
    busy_cycles: f64,
    busy_weight: f64,
    c1: Mean,
    c6: Mean,
    core_tmp_max: Option<f64>,
}

impl Activity {
    fn add(&mut self, row: &TurbostatSample) {
        self.samples.insert(row.sample);
        self.busy.add(row.busy_pct);
        self.avg_mhz.add(row.avg_mhz);
        if let (Some(bzy), Some(busy)) = (row.bzy_mhz, row.busy_pct) {
            self.busy_cycles += bzy * busy;
            self.busy_weight += busy;
        }
        self.c1.add(row.c1_pct);
        self.c6.add(row.c6_pct);
        if let Some(t) = row.core_tmp_c {
            self.core_tmp_max = Some(self.core_tmp_max.map_or(t, |max: f64| max.max(t)));
        }
    }
}

impl Activity {
    /// Busy frequency weighted by busy time, as turbostat's summary row weighs it.
    fn bzy_mhz(&self) -> Option<f64> {
        (self.busy_weight > 0.0).then(|| self.busy_cycles / self.busy_weight)
    }
}

/// The class's figures in each interval of every run of `samples` (table
/// `cpu_activity_intervals`), computed as a window's are.
pub fn class_intervals(
    samples: &[TurbostatSample],
    cpus: &[CpuRow],
) -> Vec<CpuActivityIntervalRow> {
    let class_of: BTreeMap<(&str, i32), &str> = (cpus.iter())
        .map(|c| ((c.run_id.as_str(), c.cpu), c.class.as_str()))
        .collect();
    /// One class's rows in one interval.
    #[derive(Default)]
    struct Interval {
        time_ns: Option<i64>,
        cpus: i64,
        activity: Activity,
    }
    let mut intervals: BTreeMap<(&str, i64, &str), Interval> = BTreeMap::new();
    for row in samples.iter().filter(|r| !r.summary) {
        let Some(cpu) = row.cpu else { continue };
        let class = class_of
            .get(&(row.run_id.as_str(), cpu))
            .copied()
            .unwrap_or(crate::UNKNOWN_CLASS);
        let interval = intervals
            .entry((&row.run_id, row.sample, class))
            .or_default();
        interval.time_ns = interval.time_ns.or(row.time_ns);
        interval.cpus += 1;
        interval.activity.add(row);
    }
    (intervals.into_iter())
        .map(|((run_id, sample, class), i)| CpuActivityIntervalRow {
            run_id: run_id.to_owned(),
            sample,
            time_ns: i.time_ns,
            class: class.to_owned(),
            cpus: i.cpus,
            busy_pct: i.activity.busy.get(),
            avg_mhz: i.activity.avg_mhz.get(),
            bzy_mhz: i.activity.bzy_mhz(),
            c1_pct: i.activity.c1.get(),
            c6_pct: i.activity.c6.get(),
            core_tmp_c_max: i.activity.core_tmp_max,
            source: "turbostat".to_owned(),
        })
        .collect()
}

/// The windows of `run_id`: name, and the span on the run clock (`None` for the whole run).
pub(crate) fn windows<'a>(
    names: &'a [String],
    run_id: &str,
    processes: &[ProcessRow],
) -> Vec<(&'a str, Option<(i64, i64)>)> {
    (names.iter())
        .filter_map(|name| {
            if name == RUN_WINDOW {
                return Some((name.as_str(), None));
            }
            let own = (processes.iter()).filter(|p| p.run_id == run_id && p.workload == *name);
            let (start, end) = crate::lifetime(own)?;
            Some((name.as_str(), Some((start, end.unwrap_or(i64::MAX)))))
        })
        .collect()
}

/// The middle of every interval of a run whose end time is known, by interval index. The first
/// interval is taken to be as long as the second.
fn interval_middles(rows: &[&TurbostatSample]) -> BTreeMap<i64, i64> {
    let ends: BTreeMap<i64, i64> = (rows.iter())
        .filter_map(|r| Some((r.sample, r.time_ns?)))
        .collect();
    let mut middles = BTreeMap::new();
    let mut previous: Option<i64> = None;
    let second_length = ends
        .values()
        .nth(1)
        .zip(ends.values().next())
        .map(|(b, a)| b - a);
    for (&sample, &end) in &ends {
        let start = previous.or_else(|| second_length.map(|length| end - length));
        middles.insert(sample, start.map_or(end, |start| start + (end - start) / 2));
        previous = Some(end);
    }
    middles
}

/// Activity rows for every run of `samples`, over each window in `window_names` (`run`, or a
/// workload name; a workload a run did not start gives that run no rows for it).
pub fn activity(
    samples: &[TurbostatSample],
    cpus: &[CpuRow],
    processes: &[ProcessRow],
    window_names: &[String],
) -> Vec<CpuActivityRow> {
    let mut by_run: BTreeMap<&str, Vec<&TurbostatSample>> = BTreeMap::new();
    for s in samples {
        by_run.entry(&s.run_id).or_default().push(s);
    }
    let mut out = Vec::new();
    for (run_id, rows) in by_run {
        let class_of: BTreeMap<i32, &str> = (cpus.iter())
            .filter(|c| c.run_id == run_id)
            .map(|c| (c.cpu, c.class.as_str()))
            .collect();
        let middles = interval_middles(&rows);
        for (window, span) in windows(window_names, run_id, processes) {
            let inside = |row: &&&TurbostatSample| match span {
                None => true,
                Some((start, end)) => middles
                    .get(&row.sample)
                    .is_some_and(|middle| (start..=end).contains(middle)),
            };
            let mut per_cpu: BTreeMap<i32, Activity> = BTreeMap::new();
            let mut per_class: BTreeMap<&str, Activity> = BTreeMap::new();
            let mut all = Activity::default();
            let mut pkg_watt = Mean::default();
            for row in rows.iter().filter(inside) {
                if row.summary {
                    pkg_watt.add(row.pkg_watt);
                    continue;
                }
                let Some(cpu) = row.cpu else { continue };
                per_cpu.entry(cpu).or_default().add(row);
                let class = class_of.get(&cpu).copied().unwrap_or(crate::UNKNOWN_CLASS);
                per_class.entry(class).or_default().add(row);
                all.add(row);
            }
            if all.samples.is_empty() {
                continue;
            }
            let row = |scope: &str, cpu, class: Option<&str>, a: &Activity, watt| CpuActivityRow {
                run_id: run_id.to_owned(),
                window: window.to_owned(),
                window_start_ns: span.map(|s| s.0),
                window_end_ns: span.map(|s| s.1).filter(|&end| end != i64::MAX),
                scope: scope.to_owned(),
                cpu,
                class: class.map(str::to_owned),
                samples: a.samples.len() as i64,
                busy_pct: a.busy.get(),
                avg_mhz: a.avg_mhz.get(),
                bzy_mhz: a.bzy_mhz(),
                c1_pct: a.c1.get(),
                c6_pct: a.c6.get(),
                core_tmp_c_max: a.core_tmp_max,
                pkg_watt: watt,
                source: "turbostat".to_owned(),
                busy: (scope == "cpu").then(|| a.busy.get().is_some_and(|b| b >= BUSY_CPU_PCT)),
            };
            out.push(row("all", None, None, &all, pkg_watt.get()));
            for (class, a) in &per_class {
                out.push(row("class", None, Some(class), a, None));
            }
            for (cpu, a) in &per_cpu {
                let class = class_of.get(cpu).copied().unwrap_or(crate::UNKNOWN_CLASS);
                out.push(row("cpu", Some(*cpu), Some(class), a, None));
            }
        }
    }
    out
}
