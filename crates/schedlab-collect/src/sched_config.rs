//! Reads the scheduler configuration in force ([`SchedConfig`]): the kernel's build string and
//! config, sched features and tunables, `kernel.sched_*` sysctls, isolated and nohz_full CPUs,
//! microcode, cpufreq per core class and the cgroup CPU limits the workloads inherit.
//!
//! Every source is optional: what the machine does not let schedlab read is left empty with the
//! reason in [`SchedConfig::unreadable`], and the run goes on. The parsers are pure functions
//! over the files' text, so the tests feed them without the machine.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use schedlab_tables::manifest::{CgroupLimits, ClassCpufreq, KernelConfig, SchedConfig};
use schedlab_tables::sched_config::NOT_SET;
use schedlab_topology::{CpuInfo, format_cpu_list};

const DEBUG_SCHED: &str = "/sys/kernel/debug/sched";

/// The tunables in /sys/kernel/debug/sched/ that change scheduling: EEVDF's (6.6 on), CFS's
/// before it (5.13 to 6.5), and both's. `debug` and `verbose` dump state, not settings.
const DEBUG_TUNABLES: [&str; 9] = [
    "base_slice_ns",
    "latency_ns",
    "min_granularity_ns",
    "idle_min_granularity_ns",
    "wakeup_granularity_ns",
    "migration_cost_ns",
    "nr_migrate",
    "preempt",
    "tunable_scaling",
];

/// The kernel config options kept: the scheduler's, its tick and its preemption model.
const CONFIG_PREFIXES: [&str; 4] = [
    "CONFIG_SCHED",
    "CONFIG_HZ",
    "CONFIG_PREEMPT",
    "CONFIG_NO_HZ",
];

/// Reads the configuration now. `cpus` (the detected topology) gives the core classes.
pub fn read(cpus: &[CpuInfo]) -> SchedConfig {
    let mut unreadable = BTreeMap::new();
    let mut note = |source: &str, reason: String| {
        unreadable.insert(source.to_owned(), reason);
    };
    let uname = rustix::system::uname();
    let release = uname.release().to_string_lossy().into_owned();
    let kernel_config = kernel_config(&release)
        .map_err(|e| note("kernel_config", e))
        .ok();
    mount_debugfs();
    let sched_features = read_text(Path::new(DEBUG_SCHED).join("features"))
        .map(|text| sched_features(&text))
        .map_err(|e| note("sched_features", e))
        .ok();
    let sched_debug = sched_debug()
        .map_err(|e| note("sched_debug", e))
        .unwrap_or_default();
    let cpu_list = |file: &str, note: &mut dyn FnMut(&str, String)| {
        read_text(Path::new("/sys/devices/system/cpu").join(file))
            .map(|t| t.trim().to_owned())
            .map_err(|e| note(file, e))
            .ok()
    };
    let isolated_cpus = cpu_list("isolated", &mut note);
    let nohz_full_cpus = cpu_list("nohz_full", &mut note);
    let microcode = read_text("/proc/cpuinfo").map(|text| microcode(&text));
    let microcode = match microcode {
        Ok(found) if found.is_empty() => {
            note("microcode", "/proc/cpuinfo has no microcode field".into());
            found
        }
        Ok(found) => found,
        Err(e) => {
            note("microcode", e);
            BTreeMap::new()
        }
    };
    let (cpufreq, missing) = cpufreq(cpus, Path::new("/sys/devices/system/cpu"));
    missing
        .into_iter()
        .for_each(|(source, why)| note(source, why));
    let cgroup = cgroup_limits().map_err(|e| note("cgroup", e)).ok();
    SchedConfig {
        kernel_build: uname.version().to_string_lossy().into_owned(),
        kernel_config,
        sched_features,
        sched_debug,
        sysctls: sysctls(),
        isolated_cpus,
        nohz_full_cpus,
        microcode,
        cpufreq,
        cgroup,
        unreadable,
        recorded: BTreeMap::new(),
    }
}

/// A file's text, or why not, naming the file.
fn read_text(path: impl AsRef<Path>) -> Result<String, String> {
    let path = path.as_ref();
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The running kernel's config: /proc/config.gz (the kernel's own, with CONFIG_IKCONFIG_PROC),
/// else /boot/config-<release>.
fn kernel_config(release: &str) -> Result<KernelConfig, String> {
    let gz = Path::new("/proc/config.gz");
    let boot = PathBuf::from(format!("/boot/config-{release}"));
    let (source, text) = match std::fs::File::open(gz) {
        Ok(file) => {
            let mut text = String::new();
            flate2::read::GzDecoder::new(file)
                .read_to_string(&mut text)
                .map_err(|e| format!("{}: {e}", gz.display()))?;
            (gz.to_path_buf(), text)
        }
        Err(gz_err) => match std::fs::read_to_string(&boot) {
            Ok(text) => (boot, text),
            Err(boot_err) => {
                return Err(format!(
                    "{}: {gz_err}; {}: {boot_err}",
                    gz.display(),
                    boot.display()
                ));
            }
        },
    };
    Ok(KernelConfig {
        source: source.display().to_string(),
        blake3: blake3::hash(text.as_bytes()).to_hex().to_string(),
        options: config_options(&text),
    })
}

/// The scheduler's options of a kernel config text (see [`CONFIG_PREFIXES`]): `CONFIG_X=v` as
/// `v`, `# CONFIG_X is not set` as [`NOT_SET`]. Other lines and comments are skipped.
pub(crate) fn config_options(text: &str) -> BTreeMap<String, String> {
    let wanted = |name: &str| CONFIG_PREFIXES.iter().any(|p| name.starts_with(p));
    (text.lines())
        .filter_map(|line| {
            let line = line.trim();
            let (name, value) = match line.strip_prefix("# ") {
                Some(comment) => (comment.strip_suffix(" is not set")?, NOT_SET),
                None => line.split_once('=')?,
            };
            (wanted(name) && !name.contains(' ')).then(|| (name.to_owned(), value.to_owned()))
        })
        .collect()
}

/// debugfs holds sched/features and the tunables. As root, mount it where it is missing, as
/// the perf monitor mounts tracefs; otherwise reading says why not.
fn mount_debugfs() {
    if Path::new(DEBUG_SCHED).exists() || !rustix::process::geteuid().is_root() {
        return;
    }
    let mounted = std::process::Command::new("mount")
        .args(["-t", "debugfs", "debugfs", "/sys/kernel/debug"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if mounted {
        tracing::info!("mounted debugfs on /sys/kernel/debug");
    }
}

/// sched/features: `GENTLE_FAIR_SLEEPERS NO_HRTICK …`, a feature's name or `NO_` and its name.
pub(crate) fn sched_features(text: &str) -> BTreeMap<String, bool> {
    (text.split_whitespace())
        .map(|word| match word.strip_prefix("NO_") {
            Some(name) => (name.to_owned(), false),
            None => (word.to_owned(), true),
        })
        .collect()
}

/// The tunables of [`DEBUG_TUNABLES`] the kernel has, or why none could be read.
fn sched_debug() -> Result<BTreeMap<String, String>, String> {
    let dir = Path::new(DEBUG_SCHED);
    let mut found = BTreeMap::new();
    let mut errors = Vec::new();
    for name in DEBUG_TUNABLES {
        let path = dir.join(name);
        if !path.exists() {
            continue;
        }
        match read_text(&path) {
            Ok(text) => drop(found.insert(name.to_owned(), text.trim().to_owned())),
            Err(e) => errors.push(e),
        }
    }
    if found.is_empty() {
        return Err(match errors.first() {
            Some(first) => first.clone(),
            None => format!(
                "{}: none of the scheduler's tunables is there",
                dir.display()
            ),
        });
    }
    Ok(found)
}

/// Every /proc/sys/kernel/sched_* file that reads, by sysctl name.
fn sysctls() -> BTreeMap<String, String> {
    let Ok(entries) = std::fs::read_dir("/proc/sys/kernel") else {
        return BTreeMap::new();
    };
    (entries.flatten())
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(entry.path()).ok()?;
            name.starts_with("sched_")
                .then(|| (format!("kernel.{name}"), text.trim().to_owned()))
        })
        .collect()
}

/// /proc/cpuinfo's microcode revision per CPU, gathered into revision → CPU list.
pub(crate) fn microcode(cpuinfo: &str) -> BTreeMap<String, String> {
    let mut cpus: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    let mut processor = None;
    for line in cpuinfo.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key.trim() {
            "processor" => processor = value.trim().parse::<u32>().ok(),
            "microcode" => {
                if let Some(cpu) = processor {
                    cpus.entry(value.trim().to_owned()).or_default().push(cpu);
                }
            }
            _ => {}
        }
    }
    (cpus.into_iter())
        .map(|(revision, cpus)| (revision, format_cpu_list(&cpus)))
        .collect()
}

/// Governor and EPP per core class, from `<cpu_dir>/cpuN/cpufreq/`; and the settings no CPU
/// had (`governor` without cpufreq, `epp` where the driver has none), with why.
fn cpufreq(
    cpus: &[CpuInfo],
    cpu_dir: &Path,
) -> (BTreeMap<String, ClassCpufreq>, Vec<(&'static str, String)>) {
    type Cpus = BTreeMap<String, Vec<u32>>;
    let mut by_class: BTreeMap<&str, (Cpus, Cpus)> = BTreeMap::new();
    let mut missing = Vec::new();
    for cpu in cpus.iter().filter(|c| c.class != "offline") {
        let dir = cpu_dir.join(format!("cpu{}/cpufreq", cpu.cpu));
        let (governors, epps) = by_class.entry(&cpu.class).or_default();
        for (file, into) in [
            ("scaling_governor", &mut *governors),
            ("energy_performance_preference", &mut *epps),
        ] {
            if let Ok(text) = std::fs::read_to_string(dir.join(file)) {
                into.entry(text.trim().to_owned())
                    .or_default()
                    .push(cpu.cpu);
            }
        }
    }
    let lists = |values: Cpus| -> BTreeMap<String, String> {
        (values.into_iter())
            .map(|(value, cpus)| (value, format_cpu_list(&cpus)))
            .collect()
    };
    let none_has = |pick: fn(&(Cpus, Cpus)) -> &Cpus| by_class.values().all(|v| pick(v).is_empty());
    let first = cpu_dir.join("cpu0/cpufreq");
    if none_has(|v| &v.0) {
        let why = format!("no CPU has cpufreq ({}/scaling_governor)", first.display());
        missing.push(("governor", why));
    }
    if none_has(|v| &v.1) {
        let why = format!(
            "no CPU has energy_performance_preference ({}/energy_performance_preference)",
            first.display()
        );
        missing.push(("epp", why));
    }
    let classes = (by_class.into_iter())
        .map(|(class, (governors, epps))| {
            let cpufreq = ClassCpufreq {
                governor: lists(governors),
                energy_performance_preference: lists(epps),
            };
            (class.to_owned(), cpufreq)
        })
        .collect();
    (classes, missing)
}

/// The files of a cgroup directory that limit CPU, per hierarchy kind.
const V2_FILES: [&str; 3] = ["cpu.max", "cpu.weight", "cpuset.cpus.effective"];
const V1_CPU_FILES: [&str; 3] = ["cpu.cfs_quota_us", "cpu.cfs_period_us", "cpu.shares"];
const V1_CPUSET_FILES: [&str; 1] = ["cpuset.effective_cpus"];

/// The CPU limits of schedlab's own cgroup: the workloads are its children and inherit it.
fn cgroup_limits() -> Result<CgroupLimits, String> {
    let membership = read_text("/proc/self/cgroup")?;
    let mountinfo = read_text("/proc/self/mountinfo")?;
    let dirs = cgroup_dirs(&membership, &mountinfo, |dir| {
        std::fs::read_to_string(dir.join("cgroup.controllers")).unwrap_or_default()
    });
    if dirs.is_empty() {
        return Err("no mounted cgroup hierarchy has the cpu or cpuset controller".into());
    }
    let mut files = BTreeMap::new();
    for (dir, names) in &dirs {
        for name in *names {
            if let Ok(text) = std::fs::read_to_string(dir.join(name)) {
                files.insert(name.to_string(), text.trim().to_owned());
            }
        }
    }
    if files.is_empty() {
        let read: Vec<String> = dirs.iter().map(|(d, _)| d.display().to_string()).collect();
        return Err(format!("no CPU limit file in {}", read.join(", ")));
    }
    Ok(CgroupLimits {
        dirs: dirs.iter().map(|(d, _)| d.display().to_string()).collect(),
        files,
    })
}

/// The directories of the process's cgroup that hold its CPU limits, with the files to read in
/// each: from /proc/self/cgroup (`hierarchy:controllers:path`) and /proc/self/mountinfo. A
/// cgroup v1 hierarchy mounted with the `cpu` or `cpuset` controller is used for it; otherwise
/// the cgroup v2 one, when its root's `cgroup.controllers` (read by `controllers`) offers the
/// controller. On a hybrid machine both can take part.
pub(crate) fn cgroup_dirs(
    membership: &str,
    mountinfo: &str,
    controllers: impl Fn(&Path) -> String,
) -> Vec<(PathBuf, &'static [&'static str])> {
    struct Mount<'a> {
        root: &'a str,
        point: String,
        fstype: &'a str,
        options: &'a str,
    }
    let mounts: Vec<Mount> = (mountinfo.lines())
        .filter_map(|line| {
            let (before, after) = line.split_once(" - ")?;
            let fields: Vec<&str> = before.split(' ').collect();
            let mut after = after.split(' ');
            let fstype = after.next()?;
            let options = after.nth(1)?;
            Some(Mount {
                root: fields.get(3)?,
                point: unescape_mount_path(fields.get(4)?),
                fstype,
                options,
            })
        })
        .collect();
    // The cgroup's directory under a mount: its path relative to the mount's root.
    let under = |mount: &Mount, path: &str| -> PathBuf {
        let relative = path.strip_prefix(mount.root).unwrap_or(path);
        match relative.trim_start_matches('/') {
            "" => PathBuf::from(&mount.point),
            relative => Path::new(&mount.point).join(relative),
        }
    };
    let mut dirs = Vec::new();
    let mut v2_controllers: Vec<&str> = Vec::new();
    for (controller, v1_files) in [("cpu", &V1_CPU_FILES[..]), ("cpuset", &V1_CPUSET_FILES[..])] {
        let v1 = (membership.lines())
            .filter_map(|line| {
                // `hierarchy-id:controllers:path`; the path may itself hold `:`.
                let mut fields = line.splitn(3, ':').skip(1);
                fields.next().zip(fields.next())
            })
            .find(|(ctrls, _)| ctrls.split(',').any(|c| c == controller))
            .and_then(|(_, path)| {
                let mount = mounts.iter().find(|m| {
                    m.fstype == "cgroup" && m.options.split(',').any(|o| o == controller)
                })?;
                Some(under(mount, path))
            });
        match v1 {
            Some(dir) => dirs.push((dir, v1_files)),
            None => v2_controllers.push(controller),
        }
    }
    let v2 = (membership.lines())
        .find_map(|l| l.strip_prefix("0::"))
        .and_then(|path| {
            let mount = mounts.iter().find(|m| m.fstype == "cgroup2")?;
            let offered = controllers(Path::new(&mount.point));
            let offered: Vec<&str> = offered.split_whitespace().collect();
            v2_controllers
                .iter()
                .any(|c| offered.contains(c))
                .then(|| under(mount, path))
        });
    dirs.extend(v2.map(|dir| (dir, &V2_FILES[..])));
    dirs
}

/// mountinfo writes a space, tab, newline and backslash in a path as octal escapes (`\040`).
fn unescape_mount_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut rest = path;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 4);
        match code.and_then(|c| u8::from_str_radix(c, 8).ok()) {
            Some(byte) => {
                out.push(char::from(byte));
                rest = &rest[at + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(map: &BTreeMap<String, String>) -> Vec<(&str, &str)> {
        map.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
    }

    #[test]
    fn only_the_schedulers_config_options_are_kept_and_not_set_is_a_value() {
        // Lines as a kernel config has them (this machine's /proc/config.gz, 6.18).
        let text = "\
#
# Automatically generated file; DO NOT EDIT.
CONFIG_NO_HZ_COMMON=y
# CONFIG_HZ_PERIODIC is not set
CONFIG_HZ_250=y
CONFIG_HZ=250
CONFIG_PREEMPT_DYNAMIC=y
# CONFIG_PREEMPT is not set
# CONFIG_SCHED_CORE is not set
CONFIG_SCHEDSTATS=y
CONFIG_SMP=y
CONFIG_LOCALVERSION=\"-sched test\"
# CONFIG_SCHED_DEBUG is not set because of a comment
# Scheduler features
CONFIG_RCU_NOCB_CPU=y
";
        assert_eq!(
            pairs(&config_options(text)),
            [
                ("CONFIG_HZ", "250"),
                ("CONFIG_HZ_250", "y"),
                ("CONFIG_HZ_PERIODIC", "not set"),
                ("CONFIG_NO_HZ_COMMON", "y"),
                ("CONFIG_PREEMPT", "not set"),
                ("CONFIG_PREEMPT_DYNAMIC", "y"),
                ("CONFIG_SCHEDSTATS", "y"),
                ("CONFIG_SCHED_CORE", "not set"),
            ]
        );
    }

    #[test]
    fn a_feature_with_no_is_off() {
        let features = sched_features("PLACE_LAG NO_RUN_TO_PARENT TTWU_QUEUE\n");
        let got: Vec<(&str, bool)> = features.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            got,
            [
                ("PLACE_LAG", true),
                ("RUN_TO_PARENT", false),
                ("TTWU_QUEUE", true)
            ]
        );
    }

    #[test]
    fn microcode_revisions_are_gathered_with_their_cpus() {
        let cpuinfo = "processor\t: 0\nmicrocode\t: 0x2c\n\nprocessor\t: 1\nmicrocode\t: 0x2c\n\n\
                       processor\t: 2\nmicrocode\t: 0x1f\n\nprocessor\t: 3\nmicrocode\t: 0x2c\n";
        assert_eq!(
            pairs(&microcode(cpuinfo)),
            [("0x1f", "2"), ("0x2c", "0-1,3")]
        );
        assert!(microcode("processor\t: 0\nBogoMIPS\t: 48.00\n").is_empty());
    }

    /// This machine's /proc/self/mountinfo and /proc/self/cgroup: cgroup v1 controllers with an
    /// unified v2 hierarchy that has no cpu controller (a hybrid setup).
    const HYBRID_MOUNTS: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const HYBRID_CGROUP: &str =
        "4:memory:/process_api/defd\n3:cpuset:/\n2:cpuacct:/\n1:cpu:/\n0::/\n";

    #[test]
    fn a_hybrid_machine_reads_the_v1_cpu_and_cpuset_hierarchies() {
        let dirs = cgroup_dirs(HYBRID_CGROUP, HYBRID_MOUNTS, |_| "hugetlb\n".into());
        let got: Vec<(&str, &[&str])> = dirs
            .iter()
            .map(|(d, files)| (d.to_str().unwrap(), *files))
            .collect();
        assert_eq!(
            got,
            [
                ("/sys/fs/cgroup/cpu", &V1_CPU_FILES[..]),
                ("/sys/fs/cgroup/cpuset", &V1_CPUSET_FILES[..]),
            ]
        );
    }

    #[test]
    fn a_v2_machine_reads_the_cgroup_under_the_v2_mount() {
        let mounts = "30 23 0:27 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
        let membership = "0::/user.slice/user-1000.slice/session-2.scope\n";
        let dirs = cgroup_dirs(membership, mounts, |root| {
            assert_eq!(root, Path::new("/sys/fs/cgroup"));
            "cpuset cpu io memory pids\n".into()
        });
        assert_eq!(
            dirs,
            [(
                PathBuf::from("/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope"),
                &V2_FILES[..]
            )]
        );
        // A v2 hierarchy that offers neither controller has no CPU limits to read.
        assert!(cgroup_dirs(membership, mounts, |_| "memory pids".into()).is_empty());
    }

    #[test]
    fn a_container_sees_its_cgroup_relative_to_the_mounts_root() {
        let mounts = "50 40 0:27 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n";
        let dirs = cgroup_dirs("0::/docker/abc/app\n", mounts, |_| "cpu".into());
        assert_eq!(dirs[0].0, PathBuf::from("/sys/fs/cgroup/app"));
        assert_eq!(unescape_mount_path("/mnt/a\\040b\\"), "/mnt/a b\\");
    }
}
