//! `cpu_activity` from a trace.dat's `cpu_freq_idle` spans, for runs without turbostat (Arm
//! and Android traces carry cpu_frequency and cpu_idle events instead).
//!
//! Over a window (the run, or a workload's lifetime), each span counts for the part of it
//! inside the window. Busy% is the time a CPU ran (idle state -1) over the time its idle state
//! is known; Bzy_MHz is the frequency weighted by the time the CPU ran (by all its time when
//! the trace has no cpu_idle events), and Avg_MHz is Bzy_MHz times Busy%, turbostat's relation
//! between them. Idle states have no turbostat names (C1, C6), so `c1_pct` and `c6_pct` stay
//! null; so do temperature and power, which these events do not carry.

use std::collections::BTreeMap;

use schedlab_tables::{BUSY_CPU_PCT, CpuActivityRow, CpuFreqIdleRow, CpuRow, ProcessRow};

/// The source these rows name.
pub const SOURCE: &str = "cpu_freq_idle";

/// Time sums of one scope over a window.
#[derive(Default)]
struct Sums {
    spans: i64,
    /// Time with a known idle state, and the part of it running.
    idle_known_ns: i64,
    running_ns: i64,
    /// kHz × ns, and ns, of the time frequency weighs (running, or all when idle is unknown).
    freq_weighted: f64,
    freq_ns: i64,
}

impl Sums {
    fn add(&mut self, span: &CpuFreqIdleRow, ns: i64, idle_known_on_cpu: bool) {
        self.spans += 1;
        if let Some(state) = span.idle_state {
            self.idle_known_ns += ns;
            if state == -1 {
                self.running_ns += ns;
            }
        }
        let counts = match span.idle_state {
            Some(state) => state == -1,
            None => !idle_known_on_cpu,
        };
        if let (Some(khz), true) = (span.freq_khz, counts) {
            self.freq_weighted += khz as f64 * ns as f64;
            self.freq_ns += ns;
        }
    }

    fn busy_pct(&self) -> Option<f64> {
        (self.idle_known_ns > 0).then(|| 100.0 * self.running_ns as f64 / self.idle_known_ns as f64)
    }

    fn bzy_mhz(&self) -> Option<f64> {
        (self.freq_ns > 0).then(|| self.freq_weighted / self.freq_ns as f64 / 1000.0)
    }
}

/// Activity rows for every run of `spans` over each window in `window_names` (`run`, or a
/// workload name), skipping the runs in `covered` (those turbostat already describes).
pub fn activity(
    spans: &[CpuFreqIdleRow],
    cpus: &[CpuRow],
    processes: &[ProcessRow],
    window_names: &[String],
    covered: &[&str],
) -> Vec<CpuActivityRow> {
    let mut by_run: BTreeMap<&str, Vec<&CpuFreqIdleRow>> = BTreeMap::new();
    for s in spans
        .iter()
        .filter(|s| !covered.contains(&s.run_id.as_str()))
    {
        by_run.entry(&s.run_id).or_default().push(s);
    }
    let mut out = Vec::new();
    for (run_id, rows) in by_run {
        let class_of: BTreeMap<i32, &str> = (cpus.iter())
            .filter(|c| c.run_id == run_id)
            .map(|c| (c.cpu, c.class.as_str()))
            .collect();
        let class = |cpu: i32| class_of.get(&cpu).copied().unwrap_or(crate::UNKNOWN_CLASS);
        // A CPU whose trace has cpu_idle events: its frequency counts only while it runs.
        let idle_known: Vec<i32> = (rows.iter())
            .filter(|s| s.idle_state.is_some())
            .map(|s| s.cpu)
            .collect();
        for (window, span) in crate::cpu_activity::windows(window_names, run_id, processes) {
            let (mut per_cpu, mut per_class, mut all) =
                (BTreeMap::new(), BTreeMap::new(), Sums::default());
            for s in &rows {
                let (start, end) = match span {
                    None => (s.start_ns, s.end_ns),
                    Some((w0, w1)) => (s.start_ns.max(w0), s.end_ns.min(w1)),
                };
                if end <= start {
                    continue;
                }
                let known = idle_known.contains(&s.cpu);
                let ns = end - start;
                per_cpu
                    .entry(s.cpu)
                    .or_insert_with(Sums::default)
                    .add(s, ns, known);
                per_class
                    .entry(class(s.cpu))
                    .or_insert_with(Sums::default)
                    .add(s, ns, known);
                all.add(s, ns, known);
            }
            if all.spans == 0 {
                continue;
            }
            let row = |scope: &str, cpu: Option<i32>, class: Option<&str>, s: &Sums| {
                let (busy, bzy) = (s.busy_pct(), s.bzy_mhz());
                CpuActivityRow {
                    run_id: run_id.to_owned(),
                    window: window.to_owned(),
                    window_start_ns: span.map(|s| s.0),
                    window_end_ns: span.map(|s| s.1).filter(|&end| end != i64::MAX),
                    scope: scope.to_owned(),
                    cpu,
                    class: class.map(str::to_owned),
                    samples: s.spans,
                    busy_pct: busy,
                    avg_mhz: busy.zip(bzy).map(|(b, f)| f * b / 100.0),
                    bzy_mhz: bzy,
                    c1_pct: None,
                    c6_pct: None,
                    core_tmp_c_max: None,
                    pkg_watt: None,
                    source: SOURCE.to_owned(),
                    busy: (scope == "cpu").then(|| busy.is_some_and(|b| b >= BUSY_CPU_PCT)),
                }
            };
            out.push(row("all", None, None, &all));
            for (c, s) in &per_class {
                out.push(row("class", None, Some(c), s));
            }
            for (cpu, s) in &per_cpu {
                out.push(row("cpu", Some(*cpu), Some(class(*cpu)), s));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(
        cpu: i32,
        start_ns: i64,
        end_ns: i64,
        khz: Option<i64>,
        idle: Option<i32>,
    ) -> CpuFreqIdleRow {
        CpuFreqIdleRow {
            run_id: "r".into(),
            cpu,
            start_ns,
            end_ns,
            freq_khz: khz,
            idle_state: idle,
        }
    }

    fn cpu(cpu: i32, class: &str) -> CpuRow {
        CpuRow {
            run_id: "r".into(),
            cpu,
            core_id: None,
            package_id: None,
            class: class.into(),
            class_rank: None,
            class_source: "declared".into(),
            capacity: None,
            max_khz: None,
        }
    }

    /// CPU 0 (big) runs 30 of 100 ns at 2 GHz, 10 at 1 GHz, idles 60; CPU 1 (LITTLE) has only
    /// frequency events: 500 MHz for 50 ns, 1 GHz for 50.
    #[test]
    fn busy_is_running_over_known_time_and_frequency_weighs_the_running_time() {
        let spans = [
            span(0, 0, 30, Some(2_000_000), Some(-1)),
            span(0, 30, 90, Some(2_000_000), Some(1)),
            span(0, 90, 100, Some(1_000_000), Some(-1)),
            span(1, 0, 50, Some(500_000), None),
            span(1, 50, 100, Some(1_000_000), None),
        ];
        let cpus = [cpu(0, "big"), cpu(1, "LITTLE")];
        let rows = activity(&spans, &cpus, &[], &["run".into()], &[]);
        let get = |scope: &str, cpu: Option<i32>| {
            rows.iter()
                .find(|r| r.scope == scope && r.cpu == cpu)
                .unwrap()
        };
        let big = get("cpu", Some(0));
        assert_eq!(big.busy_pct, Some(40.0));
        assert_eq!(big.bzy_mhz, Some(1750.0), "(2000 × 30 + 1000 × 10) / 40");
        assert_eq!(big.avg_mhz, Some(700.0));
        assert_eq!(big.busy, Some(true));
        let little = get("cpu", Some(1));
        assert_eq!(
            (little.busy_pct, little.bzy_mhz, little.avg_mhz),
            (None, Some(750.0), None)
        );
        assert_eq!(little.busy, Some(false), "unknown busy is not busy");
        let all = get("all", None);
        assert_eq!(all.busy_pct, Some(40.0), "only CPU 0 says when it idles");
        assert_eq!(all.samples, 5);
        assert!(rows.iter().all(|r| r.source == SOURCE));
        assert!(
            activity(&spans, &cpus, &[], &["run".into()], &["r"]).is_empty(),
            "turbostat covers the run"
        );
    }
}
