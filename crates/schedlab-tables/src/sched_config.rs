//! The scheduler configuration in force during a run: what a patched kernel, a boot parameter, a
//! sysctl or a power setting changes under a comparison, recorded so that nobody has to remember
//! how the machine was set up (issue 13).
//!
//! [`SchedConfig`] is part of the manifest's host facts (written by schedlab-collect). For the
//! `runs` table and for `schedlab compare`, [`HostFacts::sched_settings`] flattens it, with the
//! power settings the host facts already held, into one `key → value` map, and
//! [`settings_text`] / [`parse_settings`] write it as one sorted `key=value` line per setting and
//! read it back. A comparison then diffs maps, whatever the source of each setting.
//!
//! A source that could not be read is empty, with the reason in [`SchedConfig::unreadable`], and
//! its setting reads [`UNKNOWN`]: never a guess.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::manifest::HostFacts;

/// The value a setting takes when its source could not be read (the manifest says why).
pub const UNKNOWN: &str = "unknown";

/// The value of a kernel config option the config lists as `# CONFIG_… is not set`.
pub const NOT_SET: &str = "not set";

/// The scheduler configuration of the machine when the run started.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SchedConfig {
    /// `uname -v`: the kernel's build string (`#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1 …`). Two
    /// builds of one release (a patched kernel) differ here and not in `uname -r`.
    pub kernel_build: String,
    /// The running kernel's config, where the kernel (/proc/config.gz) or /boot keeps it.
    pub kernel_config: Option<KernelConfig>,
    /// /sys/kernel/debug/sched/features: each feature and whether it is on (`NO_X` is `X` off).
    pub sched_features: Option<BTreeMap<String, bool>>,
    /// The scheduler's tunables in /sys/kernel/debug/sched/ (`base_slice_ns`,
    /// `migration_cost_ns`, `preempt`, …; the sysctls that moved to debugfs in Linux 5.13), by
    /// file name: those the kernel has.
    pub sched_debug: BTreeMap<String, String>,
    /// Every /proc/sys/kernel/sched_* file, by sysctl name (`kernel.sched_autogroup_enabled`).
    pub sysctls: BTreeMap<String, String>,
    /// /sys/devices/system/cpu/isolated: the CPUs `isolcpus=` takes from the scheduler, as a CPU
    /// list (empty: none).
    pub isolated_cpus: Option<String>,
    /// /sys/devices/system/cpu/nohz_full: the CPUs without a scheduler tick when they run one
    /// task (empty: none; `None` on kernels without CONFIG_NO_HZ_FULL).
    pub nohz_full_cpus: Option<String>,
    /// /proc/cpuinfo's `microcode` revisions, each with the CPU list that reports it.
    pub microcode: BTreeMap<String, String>,
    /// cpufreq per core class (of the detected topology).
    pub cpufreq: BTreeMap<String, ClassCpufreq>,
    /// The CPU limits of the cgroup schedlab runs in, which its workloads inherit.
    pub cgroup: Option<CgroupLimits>,
    /// Each source that could not be read (`kernel_config`, `sched_features`, `sched_debug`,
    /// `nohz_full`, `microcode`, `governor`, `epp`, `cgroup`, …) and why.
    pub unreadable: BTreeMap<String, String>,
    /// The files the pipeline's `collect.record` names (a tunable such as
    /// `/sys/kernel/debug/sched/llc_aggr_tolerance`), by path: each one's text, or [`UNKNOWN`]
    /// where it could not be read (the run's quality rows say why). Absent from manifests of
    /// pipelines that record none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub recorded: BTreeMap<String, String>,
}

/// The scheduler's part of a kernel config.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelConfig {
    /// Where it was read: `/proc/config.gz` or `/boot/config-<release>`.
    pub source: String,
    /// BLAKE3 of the config text (decompressed), so the same config reads the same from either.
    pub blake3: String,
    /// The `CONFIG_SCHED*`, `CONFIG_HZ*`, `CONFIG_PREEMPT*` and `CONFIG_NO_HZ*` options: value as
    /// written (`y`, `m`, `250`), or [`NOT_SET`].
    pub options: BTreeMap<String, String>,
}

/// The cpufreq settings of one core class's CPUs: each value with the CPU list that has it (one
/// entry when the class agrees).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassCpufreq {
    pub governor: BTreeMap<String, String>,
    pub energy_performance_preference: BTreeMap<String, String>,
}

/// A cgroup's CPU limits, as the kernel's files say them (no conversion between versions).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CgroupLimits {
    /// The cgroup directories read: the cgroup v2 one, or one per v1 hierarchy (cpu, cpuset).
    pub dirs: Vec<String>,
    /// By file name: cgroup v2 `cpu.max`, `cpu.weight`, `cpuset.cpus.effective`; v1
    /// `cpu.cfs_quota_us`, `cpu.cfs_period_us`, `cpu.shares`, `cpuset.effective_cpus`.
    pub files: BTreeMap<String, String>,
}

impl HostFacts {
    /// The run's configuration as settings to compare, `None` for a manifest written before
    /// schedlab recorded it. The kernel release, build and config digest are not among them:
    /// the `runs` table has columns of their own for those.
    ///
    /// Keys: `CONFIG_…`; `sched_feature.<NAME>` (`on`, `off`); `sched_debug.<file>`;
    /// `kernel.sched_…`; `isolated`, `nohz_full` (a CPU list or `none`); `microcode`;
    /// `governor.<class>`, `epp.<class>`; `cpufreq_driver`, `smt`, `turbo` (`on`, `off`);
    /// `cgroup.<file>`; `record.<path>` for each file the pipeline records. A value held by only some CPUs reads `A on 0-3, B on 4-7`; a source that
    /// could not be read gives one key (`kernel_config`, `sched_features`, …) reading [`UNKNOWN`].
    pub fn sched_settings(&self) -> Option<BTreeMap<String, String>> {
        let c = self.sched_config.as_ref()?;
        let mut out = BTreeMap::new();
        let mut set = |key: String, value: &str| {
            out.insert(key, value.to_owned());
        };
        match &c.kernel_config {
            Some(config) => (config.options.iter()).for_each(|(k, v)| set(k.clone(), v)),
            None => set("kernel_config".into(), UNKNOWN),
        }
        match &c.sched_features {
            Some(features) => {
                (features.iter()).for_each(|(k, on)| set(format!("sched_feature.{k}"), on_off(*on)))
            }
            None => set("sched_features".into(), UNKNOWN),
        }
        if c.sched_debug.is_empty() {
            set("sched_debug".into(), UNKNOWN);
        }
        (c.sched_debug.iter()).for_each(|(k, v)| set(format!("sched_debug.{k}"), v));
        (c.sysctls.iter()).for_each(|(k, v)| set(k.clone(), v));
        let cpu_list = |list: &Option<String>| match list.as_deref() {
            Some("") => "none".to_owned(),
            Some(list) => list.to_owned(),
            None => UNKNOWN.to_owned(),
        };
        set("isolated".into(), &cpu_list(&c.isolated_cpus));
        set("nohz_full".into(), &cpu_list(&c.nohz_full_cpus));
        set("microcode".into(), &by_value(&c.microcode));
        for (class, cpufreq) in &c.cpufreq {
            set(format!("governor.{class}"), &by_value(&cpufreq.governor));
            let epp = &cpufreq.energy_performance_preference;
            set(format!("epp.{class}"), &by_value(epp));
        }
        let known = |value: &Option<String>| value.clone().unwrap_or_else(|| UNKNOWN.into());
        set("cpufreq_driver".into(), &known(&self.cpufreq_driver));
        set("smt".into(), &known(&self.smt));
        set(
            "turbo".into(),
            &known(&self.turbo.map(|t| on_off(t).to_owned())),
        );
        match &c.cgroup {
            Some(cgroup) => (cgroup.files.iter()).for_each(|(k, v)| set(format!("cgroup.{k}"), v)),
            None => set("cgroup".into(), UNKNOWN),
        }
        (c.recorded.iter()).for_each(|(path, v)| set(format!("record.{path}"), v));
        Some(out)
    }
}

fn on_off(on: bool) -> &'static str {
    if on { "on" } else { "off" }
}

/// One value, or each value with its CPUs (`A on 0-3, B on 4-7`); [`UNKNOWN`] for none.
fn by_value(values: &BTreeMap<String, String>) -> String {
    match values.len() {
        0 => UNKNOWN.to_owned(),
        1 => values.keys().next().cloned().unwrap_or_default(),
        _ => (values.iter())
            .map(|(value, cpus)| format!("{value} on {cpus}"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The settings as text: one `key=value` line per setting, sorted by key (the `runs` table's
/// `sched_config`). A line break inside a value becomes a space, so every line is one setting.
pub fn settings_text(settings: &BTreeMap<String, String>) -> String {
    (settings.iter())
        .map(|(key, value)| format!("{key}={}", value.replace(['\n', '\r'], " ")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Reads [`settings_text`]'s text back (a line without `=` is ignored).
pub fn parse_settings(text: &str) -> BTreeMap<String, String> {
    (text.lines())
        .filter_map(|line| line.split_once('='))
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        (pairs.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_manifest_without_the_configuration_has_no_settings() {
        assert_eq!(HostFacts::default().sched_settings(), None);
    }

    #[test]
    fn every_source_becomes_settings_and_an_unreadable_one_says_unknown() {
        let facts = HostFacts {
            smt: Some("on".into()),
            turbo: Some(false),
            sched_config: Some(SchedConfig {
                kernel_build: "#1 SMP".into(),
                kernel_config: Some(KernelConfig {
                    source: "/proc/config.gz".into(),
                    blake3: "ab".into(),
                    options: map(&[("CONFIG_HZ", "250"), ("CONFIG_SCHED_CORE", NOT_SET)]),
                }),
                sched_features: None,
                sched_debug: map(&[("preempt", "none voluntary (full) lazy")]),
                sysctls: map(&[("kernel.sched_autogroup_enabled", "1")]),
                isolated_cpus: Some(String::new()),
                nohz_full_cpus: None,
                microcode: map(&[("0x10", "0-3"), ("0x12", "4-7")]),
                cpufreq: BTreeMap::from([(
                    "P".to_owned(),
                    ClassCpufreq {
                        governor: map(&[("performance", "0-3")]),
                        energy_performance_preference: BTreeMap::new(),
                    },
                )]),
                cgroup: Some(CgroupLimits {
                    dirs: vec!["/sys/fs/cgroup/x".into()],
                    files: map(&[("cpu.max", "max 100000")]),
                }),
                unreadable: BTreeMap::new(),
                recorded: map(&[("/sys/kernel/debug/sched/llc_aggr_tolerance", "512")]),
            }),
            ..HostFacts::default()
        };
        let text = settings_text(&facts.sched_settings().unwrap());
        assert_eq!(
            text,
            "CONFIG_HZ=250\n\
             CONFIG_SCHED_CORE=not set\n\
             cgroup.cpu.max=max 100000\n\
             cpufreq_driver=unknown\n\
             epp.P=unknown\n\
             governor.P=performance\n\
             isolated=none\n\
             kernel.sched_autogroup_enabled=1\n\
             microcode=0x10 on 0-3, 0x12 on 4-7\n\
             nohz_full=unknown\n\
             record./sys/kernel/debug/sched/llc_aggr_tolerance=512\n\
             sched_debug.preempt=none voluntary (full) lazy\n\
             sched_features=unknown\n\
             smt=on\n\
             turbo=off"
        );
        assert_eq!(parse_settings(&text), facts.sched_settings().unwrap());
    }

    #[test]
    fn a_line_break_in_a_value_stays_inside_its_line() {
        let text = settings_text(&map(&[("a", "x\ny"), ("b", "z")]));
        assert_eq!(text, "a=x y\nb=z");
    }
}
