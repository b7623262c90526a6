//! The counters of a run, as both trace formats write them: busy %, frequency, idle states and
//! package power from the `cpu` monitor (`cpu_samples`), busy % and busy MHz per CPU and package
//! power from turbostat, each value placed at the start of the interval it describes.
//!
//! A sample of `cpu_samples` or `turbostat` describes the interval that ends at its `time_ns`; a
//! counter holds its value from its event on, so each value is written at the start of its
//! interval: the previous sample's time, and for a series' first sample, one interval (the
//! gap to the second) before its own. Package power from RAPL is the energy over that interval;
//! a series of one sample has no interval, so it is written at its own time and gives no power.

use std::collections::BTreeMap;

use schedlab_tables::turbostat::{TurbostatSample, read_turbostat};
use schedlab_tables::{CpuSampleRow, Partition, read_table};

use crate::ExportError;

/// A counter and its values as (start of interval, value), in time order.
pub(crate) type Series = (CounterKey, Vec<(i64, f64)>);

/// Every counter of the run with its values.
pub(crate) fn run_counters(partition: &Partition<'_>) -> Result<Vec<Series>, ExportError> {
    let mut series = Counters::default();
    series.cpu_samples(&read_table::<CpuSampleRow>(partition)?);
    series.turbostat(&read_turbostat(partition)?);
    Ok((series.series.into_iter())
        .map(|(key, points)| (key, placed(points)))
        .collect())
}

/// A counter's samples (end of interval, reading) as (start of interval, value), in time order.
/// The first sample's interval is as long as the gap to the second; a sample alone has none, so
/// it is placed at its own time, and energy without an interval gives no power.
fn placed(mut points: Vec<(i64, Reading)>) -> Vec<(i64, f64)> {
    points.sort_by_key(|p| p.0);
    let interval = |i: usize| match (i.checked_sub(1), points.get(i + 1)) {
        (Some(previous), _) => Some(points[i].0 - points[previous].0),
        (None, Some(&(next, _))) => Some(next - points[i].0),
        (None, None) => None,
    };
    (0..points.len())
        .filter_map(|i| {
            let (end, reading) = points[i];
            let interval = interval(i);
            let value = match (reading, interval) {
                (Reading::Level(value), _) => value,
                // µJ over ns: 1e-6 J / 1e-9 s.
                (Reading::EnergyUj(uj), Some(ns)) if ns > 0 => uj as f64 * 1e3 / ns as f64,
                (Reading::EnergyUj(_), _) => return None,
            };
            Some((end - interval.unwrap_or(0), value))
        })
        .collect()
}

/// One counter: its name (Perfetto's track is the name and the unit), the unit that is its
/// only series, and the CPU it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct CounterKey {
    pub(crate) name: String,
    pub(crate) unit: &'static str,
    pub(crate) cpu: Option<i32>,
}

/// A sample's value: a level over its interval, or energy spent in it (package power).
#[derive(Debug, Clone, Copy)]
enum Reading {
    Level(f64),
    EnergyUj(i64),
}

/// The counters' samples by counter, as (end of interval, reading).
#[derive(Default)]
struct Counters {
    series: BTreeMap<CounterKey, Vec<(i64, Reading)>>,
}

impl Counters {
    fn push(
        &mut self,
        (name, unit, cpu): (String, &'static str, Option<i32>),
        time_ns: i64,
        reading: Option<Reading>,
    ) {
        if let Some(reading) = reading {
            let key = CounterKey { name, unit, cpu };
            self.series.entry(key).or_default().push((time_ns, reading));
        }
    }

    /// The built-in `cpu` monitor: busy %, frequency and idle states per CPU, and package
    /// power from RAPL on the first CPU of each package.
    fn cpu_samples(&mut self, rows: &[CpuSampleRow]) {
        for row in rows {
            let (cpu, t) = (row.cpu, row.time_ns);
            let level = |v: Option<f64>| v.map(Reading::Level);
            let at = |what: &str, unit| (format!("CPU {cpu} {what}"), unit, Some(cpu));
            self.push(at("busy", "%"), t, level(row.busy_pct));
            let mhz = row.freq_khz.map(|khz| khz as f64 / 1000.0);
            self.push(at("frequency", "MHz"), t, level(mhz));
            self.push(at("idle states", "%"), t, level(row.idle_state_pct));
            let package = (format!("package of CPU {cpu} power"), "W", None);
            self.push(package, t, row.package_energy_uj.map(Reading::EnergyUj));
        }
    }

    /// turbostat: busy % and busy MHz per CPU, and the summary row's busy %, busy MHz and
    /// package power. Rows without a time (the runner did not know when turbostat started)
    /// cannot be placed.
    fn turbostat(&mut self, rows: &[TurbostatSample]) {
        for row in rows {
            // The summary row is the machine's; a row of no CPU is neither.
            let cpu = if row.summary { None } else { row.cpu };
            let (Some(t), true) = (row.time_ns, row.summary || cpu.is_some()) else {
                continue;
            };
            let level = |v: Option<f64>| v.map(Reading::Level);
            let at = |what: &str, unit| match cpu {
                None => (format!("turbostat {what}"), unit, None),
                Some(cpu) => (format!("CPU {cpu} turbostat {what}"), unit, Some(cpu)),
            };
            self.push(at("Busy", "%"), t, level(row.busy_pct));
            self.push(at("Bzy_MHz", "MHz"), t, level(row.bzy_mhz));
            if row.summary {
                self.push(at("PkgWatt", "W"), t, level(row.pkg_watt));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    fn sample(time_ms: i64, busy: f64, energy_uj: Option<i64>) -> CpuSampleRow {
        CpuSampleRow {
            run_id: "r".into(),
            time_ns: time_ms * MS,
            cpu: 0,
            busy_pct: Some(busy),
            freq_khz: Some(2_400_000),
            idle_state_pct: None,
            package_energy_uj: energy_uj,
        }
    }

    /// Every counter's values as (start of interval in ms, value), by name and unit.
    fn exported(counters: Counters) -> BTreeMap<(String, &'static str), Vec<(i64, f64)>> {
        (counters.series.into_iter())
            .map(|(key, points)| {
                let values = placed(points)
                    .into_iter()
                    .map(|(t, v)| (t / MS, v))
                    .collect();
                ((key.name, key.unit), values)
            })
            .collect()
    }

    #[test]
    fn samples_are_placed_at_the_start_of_their_interval_and_energy_becomes_watts() {
        let mut counters = Counters::default();
        // Given out of order: each row covers the 200 ms before it; 1 J per 200 ms is 5 W.
        counters.cpu_samples(&[
            sample(1200, 20.0, Some(1_000_000)),
            sample(1000, 10.0, Some(1_000_000)),
            sample(1400, 30.0, Some(2_000_000)),
        ]);
        let series = exported(counters);
        let key = |name: &str, unit| (name.to_owned(), unit);
        let busy = [(800, 10.0), (1000, 20.0), (1200, 30.0)];
        assert_eq!(series[&key("CPU 0 busy", "%")], busy);
        let mhz = [(800, 2400.0), (1000, 2400.0), (1200, 2400.0)];
        assert_eq!(series[&key("CPU 0 frequency", "MHz")], mhz);
        let watts = [(800, 5.0), (1000, 5.0), (1200, 10.0)];
        assert_eq!(series[&key("package of CPU 0 power", "W")], watts);
        assert!(
            !series.contains_key(&key("CPU 0 idle states", "%")),
            "null: no counter"
        );
    }

    #[test]
    fn a_lone_sample_stays_at_its_time_and_gives_no_power() {
        let mut counters = Counters::default();
        counters.cpu_samples(&[sample(1000, 10.0, Some(1_000_000))]);
        let series = exported(counters);
        assert_eq!(series[&("CPU 0 busy".to_owned(), "%")], [(1000, 10.0)]);
        assert_eq!(series[&("package of CPU 0 power".to_owned(), "W")], []);
    }

    #[test]
    fn turbostat_gives_busy_and_mhz_per_cpu_and_package_watts_from_its_summary() {
        let row = |time_ms: Option<i64>, summary: bool, cpu: Option<i32>| TurbostatSample {
            run_id: "r".into(),
            sample: 0,
            time_ns: time_ms.map(|t| t * MS),
            summary,
            cpu,
            busy_pct: Some(50.0),
            avg_mhz: Some(1000.0),
            bzy_mhz: Some(2000.0),
            c1_pct: None,
            c6_pct: None,
            core_tmp_c: None,
            pkg_watt: Some(12.5),
        };
        let mut counters = Counters::default();
        counters.turbostat(&[
            row(Some(1000), true, None),
            row(Some(1000), false, Some(1)),
            row(Some(2000), true, None),
            row(Some(2000), false, Some(1)),
            // The runner did not know when turbostat started: no place on the clock.
            row(None, true, None),
        ]);
        let names: Vec<_> = exported(counters)
            .into_iter()
            .map(|((name, unit), values)| (name, unit, values.len()))
            .collect();
        let expected = [
            ("CPU 1 turbostat Busy", "%"),
            ("CPU 1 turbostat Bzy_MHz", "MHz"),
            ("turbostat Busy", "%"),
            ("turbostat Bzy_MHz", "MHz"),
            ("turbostat PkgWatt", "W"),
        ];
        let expected: Vec<_> = (expected.iter())
            .map(|&(name, unit)| (name.to_owned(), unit, 2))
            .collect();
        assert_eq!(names, expected);
    }
}
