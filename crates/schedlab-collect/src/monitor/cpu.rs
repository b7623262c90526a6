//! The built-in `cpu` monitor: every interval and CPU, the busy share (/proc/stat), the current
//! frequency (cpufreq), the time in idle states deeper than polling (cpuidle) and the package
//! energy (powercap RAPL). It is the part of turbostat that needs no MSRs: it runs unprivileged
//! and in VMs, where turbostat cannot, so every run has a CPU timeline to set workloads against.
//!
//! Sources are found once, at start; what the machine lacks stays null in every row and is said
//! once, as a note in the manifest, rather than per row. Each row covers the interval that ends
//! at its `time_ns`; the first reading is only the baseline. Busy is everything but idle and
//! iowait over all time (steal counts as busy: the vCPU wanted to run); energy counters wrap at
//! `max_energy_range_uj`, which the delta corrects for.
//!
//! Stopping does not wait for the next deadline: the thread sleeps on a channel whose timeout is
//! computed from the absolute CLOCK_MONOTONIC deadline, and dropping the sender wakes it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use procfs::{CurrentSI, KernelStats};
use schedlab_tables::CpuSampleRow;
use schedlab_topology::{format_cpu_list, parse_cpu_list};

use crate::clock::{monotonic_ns, ns, thread_cpu_ns};
use crate::host::read_trimmed;

const CPU_SYSFS: &str = "/sys/devices/system/cpu";
const POWERCAP: &str = "/sys/class/powercap";

/// Shortest interval: /proc/stat counts in ticks of 10 ms, so shorter ones would be noise.
const MIN_INTERVAL_NS: i64 = 50_000_000;

pub struct Sampler {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<(Vec<CpuSampleRow>, i64)>,
    output: PathBuf,
    notes: Vec<String>,
}

impl Sampler {
    pub fn start(run_id: String, interval: Duration, output: PathBuf) -> Sampler {
        let sources = Sources::discover();
        let notes = sources.missing();
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let interval = ns(interval).max(MIN_INTERVAL_NS);
            let mut rows = Vec::new();
            let before = thread_cpu_ns();
            let mut previous = sources.read();
            let mut cpu_spent = thread_cpu_ns() - before;
            let mut next = previous.time_ns;
            loop {
                next += interval;
                let now = monotonic_ns();
                if next <= now {
                    // Fell behind (a stalled machine): skip the missed deadlines, keep the phase.
                    next += ((now - next) / interval + 1) * interval;
                }
                let wait = Duration::from_nanos((next - now).max(0) as u64);
                if !matches!(stopped.recv_timeout(wait), Err(RecvTimeoutError::Timeout)) {
                    break;
                }
                let before = thread_cpu_ns();
                let current = sources.read();
                sources.rows(&run_id, &previous, &current, &mut rows);
                previous = current;
                cpu_spent += thread_cpu_ns() - before;
            }
            (rows, cpu_spent)
        });
        Sampler {
            stop,
            thread,
            output,
            notes,
        }
    }

    /// Stops sampling and writes the rows; returns the sampler's own CPU time in ns and what the
    /// machine does not expose.
    pub fn stop(self) -> Result<(i64, Vec<String>), String> {
        drop(self.stop);
        let (rows, cpu_spent) = self
            .thread
            .join()
            .map_err(|_| "cpu sampler panicked".to_owned())?;
        schedlab_tables::write_rows(&self.output, &rows).map_err(|err| err.to_string())?;
        Ok((cpu_spent, self.notes))
    }
}

/// Where one CPU's figures come from.
struct CpuSource {
    cpu: u32,
    freq: Option<PathBuf>,
    /// `time` files of the idle states deeper than POLL; `None` without cpuidle.
    idle_times: Option<Vec<PathBuf>>,
}

/// A package's RAPL domains (several on multi-die parts), reported on its first CPU.
struct Package {
    id: u32,
    first: usize,
    domains: Vec<Domain>,
}

struct Domain {
    energy: PathBuf,
    max_range_uj: Option<u64>,
}

struct Sources {
    cpus: Vec<CpuSource>,
    packages: Vec<Package>,
    stat_readable: bool,
    /// RAPL domains found but not readable (energy_uj is root-only since Linux 5.10).
    unreadable_energy: Option<PathBuf>,
}

/// One reading of every source; counters, not rates.
struct Reading {
    time_ns: i64,
    /// (busy, total) ticks per CPU, aligned with `Sources::cpus`.
    stat: Vec<Option<(u64, u64)>>,
    freq_khz: Vec<Option<u64>>,
    idle_us: Vec<Option<u64>>,
    /// Per package, aligned with `Sources::packages`: one counter per domain.
    energy_uj: Vec<Vec<Option<u64>>>,
}

impl Sources {
    fn discover() -> Sources {
        let base = Path::new(CPU_SYSFS);
        let online = online_cpus();
        let cpus: Vec<CpuSource> = online
            .iter()
            .map(|&cpu| {
                let dir = base.join(format!("cpu{cpu}"));
                let freq = dir.join("cpufreq/scaling_cur_freq");
                CpuSource {
                    cpu,
                    freq: read_number(&freq).is_some().then_some(freq),
                    idle_times: idle_state_times(&dir.join("cpuidle")),
                }
            })
            .collect();
        let (packages, unreadable_energy) = rapl_packages(&cpus);
        Sources {
            cpus,
            packages,
            stat_readable: KernelStats::current().is_ok(),
            unreadable_energy,
        }
    }

    /// One note per source the machine lacks.
    fn missing(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let lacking = |has: &dyn Fn(&CpuSource) -> bool| -> Vec<u32> {
            self.cpus
                .iter()
                .filter(|c| !has(c))
                .map(|c| c.cpu)
                .collect()
        };
        if self.cpus.is_empty() {
            notes.push(format!(
                "cannot read {CPU_SYSFS}/online: no CPU sampled, the cpu_samples table is empty"
            ));
            return notes;
        }
        if !self.stat_readable {
            notes.push("cannot read /proc/stat: busy_pct is null".to_owned());
        }
        let no_freq = lacking(&|c| c.freq.is_some());
        if !no_freq.is_empty() {
            notes.push(format!(
                "cpufreq is not exposed for CPU {} (no {CPU_SYSFS}/cpuN/cpufreq/scaling_cur_freq, \
                 as in most VMs): freq_khz is null there",
                format_cpu_list(&no_freq)
            ));
        }
        let no_idle = lacking(&|c| c.idle_times.is_some());
        if !no_idle.is_empty() {
            notes.push(format!(
                "cpuidle is not exposed for CPU {} (no {CPU_SYSFS}/cpuN/cpuidle): \
                 idle_state_pct is null there",
                format_cpu_list(&no_idle)
            ));
        }
        match &self.unreadable_energy {
            Some(path) => notes.push(format!(
                "cannot read {} (RAPL energy is root-only since Linux 5.10): \
                 package_energy_uj is null",
                path.display()
            )),
            None if self.packages.is_empty() => notes.push(format!(
                "no RAPL package domain under {POWERCAP} (no intel_rapl driver, as in most VMs \
                 and on ARM): package_energy_uj is null"
            )),
            None => {}
        }
        notes
    }

    fn read(&self) -> Reading {
        let time_ns = monotonic_ns();
        let stat = self.read_stat();
        let freq_khz = self
            .cpus
            .iter()
            .map(|c| c.freq.as_deref().and_then(read_number))
            .collect();
        let idle_us = self
            .cpus
            .iter()
            .map(|c| {
                let times = c.idle_times.as_ref()?;
                times.iter().map(|p| read_number(p)).sum::<Option<u64>>()
            })
            .collect();
        let energy_uj = self
            .packages
            .iter()
            .map(|p| p.domains.iter().map(|d| read_number(&d.energy)).collect())
            .collect();
        Reading {
            time_ns,
            stat,
            freq_khz,
            idle_us,
            energy_uj,
        }
    }

    /// /proc/stat lists online CPUs in order without their numbers (as procfs returns them), so
    /// they are matched to the online list read alongside; a hotplug in between loses one sample.
    fn read_stat(&self) -> Vec<Option<(u64, u64)>> {
        let none = || vec![None; self.cpus.len()];
        let Ok(stats) = KernelStats::current() else {
            return none();
        };
        let online = online_cpus();
        if online.len() != stats.cpu_time.len() {
            return none();
        }
        let by_cpu: BTreeMap<u32, (u64, u64)> = online
            .into_iter()
            .zip(&stats.cpu_time)
            .map(|(cpu, t)| {
                let busy = t.user
                    + t.nice
                    + t.system
                    + t.irq.unwrap_or(0)
                    + t.softirq.unwrap_or(0)
                    + t.steal.unwrap_or(0);
                (cpu, (busy, busy + t.idle + t.iowait.unwrap_or(0)))
            })
            .collect();
        self.cpus
            .iter()
            .map(|c| by_cpu.get(&c.cpu).copied())
            .collect()
    }

    /// The rows for the interval between two readings.
    fn rows(&self, run_id: &str, before: &Reading, after: &Reading, rows: &mut Vec<CpuSampleRow>) {
        let elapsed_us = (after.time_ns - before.time_ns) as f64 / 1000.0;
        for (i, source) in self.cpus.iter().enumerate() {
            let busy_pct = before.stat[i].zip(after.stat[i]).and_then(|(b, a)| {
                // Counters only grow, but iowait may go back: guard every difference.
                let total = a.1.saturating_sub(b.1);
                (total > 0).then(|| a.0.saturating_sub(b.0) as f64 / total as f64 * 100.0)
            });
            let idle_state_pct = before.idle_us[i]
                .zip(after.idle_us[i])
                .filter(|_| elapsed_us > 0.0)
                .map(|(b, a)| (a.saturating_sub(b) as f64 / elapsed_us * 100.0).min(100.0));
            let package_energy_uj = self
                .packages
                .iter()
                .position(|p| p.first == i)
                .and_then(|p| self.energy_delta(p, before, after));
            rows.push(CpuSampleRow {
                run_id: run_id.to_owned(),
                time_ns: after.time_ns,
                cpu: source.cpu as i32,
                busy_pct: busy_pct.map(|p| p.min(100.0)),
                freq_khz: after.freq_khz[i].and_then(|khz| i64::try_from(khz).ok()),
                idle_state_pct,
                package_energy_uj,
            });
        }
    }

    /// Energy of package `p` over the interval, summed over its domains, corrected for wraps.
    fn energy_delta(&self, p: usize, before: &Reading, after: &Reading) -> Option<i64> {
        let domains = &self.packages[p].domains;
        let mut sum: u64 = 0;
        for (d, domain) in domains.iter().enumerate() {
            let (b, a) = (before.energy_uj[p][d]?, after.energy_uj[p][d]?);
            sum += if a >= b {
                a - b
            } else {
                domain.max_range_uj?.checked_sub(b)? + a
            };
        }
        i64::try_from(sum).ok()
    }
}

/// The `time` files (µs) of a CPU's idle states other than POLL, which is busy-waiting.
fn idle_state_times(cpuidle: &Path) -> Option<Vec<PathBuf>> {
    let entries = std::fs::read_dir(cpuidle).ok()?;
    let mut times: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|dir| {
            dir.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("state"))
                && read_trimmed(dir.join("name")).is_some_and(|name| name != "POLL")
        })
        .map(|dir| dir.join("time"))
        .collect();
    times.sort();
    Some(times)
}

/// RAPL package domains (`intel-rapl:N`, named `package-P…`), grouped by package and attached
/// to the first sampled CPU of that package; also the first domain whose counter is unreadable.
fn rapl_packages(cpus: &[CpuSource]) -> (Vec<Package>, Option<PathBuf>) {
    let mut packages: Vec<Package> = Vec::new();
    let mut unreadable = None;
    let Ok(entries) = std::fs::read_dir(POWERCAP) else {
        return (packages, unreadable);
    };
    let mut zones: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix("intel-rapl:"))
                .is_some_and(|rest| !rest.contains(':'))
        })
        .collect();
    zones.sort();
    for zone in zones {
        let Some(id) = read_trimmed(zone.join("name")).and_then(|name| package_id(&name)) else {
            continue;
        };
        let energy = zone.join("energy_uj");
        if read_number(&energy).is_none() {
            unreadable.get_or_insert(energy);
            continue;
        }
        let domain = Domain {
            energy,
            max_range_uj: read_number(&zone.join("max_energy_range_uj")),
        };
        if let Some(package) = packages.iter_mut().find(|p| p.id == id) {
            package.domains.push(domain);
            continue;
        }
        let first = cpus.iter().position(|c| {
            read_number(
                &Path::new(CPU_SYSFS).join(format!("cpu{}/topology/physical_package_id", c.cpu)),
            ) == Some(u64::from(id))
        });
        if let Some(first) = first {
            packages.push(Package {
                id,
                first,
                domains: vec![domain],
            });
        }
    }
    (packages, unreadable)
}

/// `package-0` → 0; multi-die parts name their domains `package-0-die-1` and the like.
fn package_id(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("package-")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The CPUs the kernel has online now (sysfs `online`), in order.
fn online_cpus() -> Vec<u32> {
    read_trimmed(Path::new(CPU_SYSFS).join("online"))
        .and_then(|text| parse_cpu_list(&text).ok())
        .unwrap_or_default()
}

fn read_number(path: &Path) -> Option<u64> {
    read_trimmed(path)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One package with one domain whose counter wraps at `max_range_uj`.
    fn energy_between(before: u64, after: u64, max_range_uj: Option<u64>) -> Option<i64> {
        let sources = Sources {
            cpus: Vec::new(),
            packages: vec![Package {
                id: 0,
                first: 0,
                domains: vec![Domain {
                    energy: PathBuf::new(),
                    max_range_uj,
                }],
            }],
            stat_readable: true,
            unreadable_energy: None,
        };
        let reading = |uj| Reading {
            time_ns: 0,
            stat: Vec::new(),
            freq_khz: Vec::new(),
            idle_us: Vec::new(),
            energy_uj: vec![vec![Some(uj)]],
        };
        sources.energy_delta(0, &reading(before), &reading(after))
    }

    #[test]
    fn energy_counters_wrap_at_their_range() {
        assert_eq!(energy_between(100, 350, Some(1000)), Some(250));
        assert_eq!(energy_between(990, 10, Some(1000)), Some(20));
        assert_eq!(energy_between(990, 10, None), None);
    }

    #[test]
    fn package_ids_from_domain_names() {
        assert_eq!(package_id("package-0"), Some(0));
        assert_eq!(package_id("package-1-die-1"), Some(1));
        assert_eq!(package_id("psys"), None);
    }
}
