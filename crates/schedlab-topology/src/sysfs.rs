//! Reading the raw per-CPU facts out of a sysfs tree, live or captured.
//!
//! Every attribute here is optional: kernels, drivers and capture tools each leave different
//! files out (pepc captures have no `topology/core_id`, hwloc captures no PMU directories, VMs
//! no cpufreq). A missing file is `None`; a file that exists but holds garbage is an error that
//! names it.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::{TopologyError, parse_cpu_list};

/// What sysfs says about one CPU, before any classification.
#[derive(Debug, Clone, Default)]
pub(crate) struct RawCpu {
    pub cpu: u32,
    /// `false` only when `cpuN/online` says `0`; `cpu0` often has no such file.
    pub online: bool,
    pub core_id: Option<i32>,
    pub package_id: Option<i32>,
    /// `cpuN/cpu_capacity` (ARM, RISC-V, recent x86 kernels): 1024 = the fastest CPU.
    pub capacity: Option<i64>,
    /// `cpufreq/cpuinfo_max_freq`, kHz.
    pub max_khz: Option<i64>,
    /// `cpufreq/base_frequency` (intel_pstate), kHz.
    pub base_khz: Option<i64>,
    /// `acpi_cppc/highest_perf`.
    pub cppc_highest_perf: Option<i64>,
    /// `cpufreq/amd_pstate_highest_perf`.
    pub amd_highest_perf: Option<i64>,
    /// `cpufreq/amd_pstate_prefcore_ranking`.
    pub amd_prefcore_ranking: Option<i64>,
    /// `regs/identification/midr_el1` (ARM).
    pub midr: Option<u64>,
    /// The CPU has a `cache/` directory with at least one `indexN`: only then does a missing L3
    /// mean "no L3" rather than "unknown".
    pub caches_known: bool,
    /// The CPUs sharing this CPU's L3, if it has one.
    pub l3_cpus: Option<Vec<u32>>,
    /// The L3 size in KiB, if the capture has `size`.
    pub l3_kib: Option<i64>,
}

/// The hybrid PMU lists under `devices/`: Intel's perf driver registers one PMU per core type.
#[derive(Debug, Clone, Default)]
pub(crate) struct PmuLists {
    pub core: Option<Vec<u32>>,
    pub atom: Option<Vec<u32>>,
    pub lowpower: Option<Vec<u32>>,
}

impl PmuLists {
    pub fn any(&self) -> bool {
        [&self.core, &self.atom, &self.lowpower]
            .iter()
            .any(|l| l.as_ref().is_some_and(|l| !l.is_empty()))
    }
}

/// Everything read from one tree.
#[derive(Debug, Clone)]
pub(crate) struct Machine {
    pub cpus: Vec<RawCpu>,
    pub pmu: PmuLists,
}

impl Machine {
    /// The CPUs that can run anything; classifiers look only at these.
    pub fn online(&self) -> impl Iterator<Item = &RawCpu> {
        self.cpus.iter().filter(|c| c.online)
    }

    /// `true` if some online CPU has an L3, so that a CPU with known caches and no L3 stands out.
    pub fn has_l3_somewhere(&self) -> bool {
        self.online().any(|c| c.l3_cpus.is_some())
    }

    /// `true` if any CPU reports an ARM MIDR: class names are then big/mid/little.
    pub fn is_arm(&self) -> bool {
        self.cpus.iter().any(|c| c.midr.is_some())
    }
}

/// Finds the sysfs root: `root` itself if it holds `devices/system/cpu`, else `root/sys`.
pub(crate) fn sys_dir(root: &Path) -> Result<PathBuf, TopologyError> {
    [root.to_path_buf(), root.join("sys")]
        .into_iter()
        .find(|dir| dir.join("devices/system/cpu").is_dir())
        .ok_or_else(|| TopologyError::NoCpuDir {
            path: root.to_path_buf(),
        })
}

/// Reads every `cpuN` under `sys/devices/system/cpu`, sorted by CPU number.
pub(crate) fn read_machine(sys: &Path) -> Result<Machine, TopologyError> {
    let cpu_dir = sys.join("devices/system/cpu");
    let policies = cpufreq_policies(&cpu_dir)?;
    let mut cpus = Vec::new();
    for (cpu, dir) in numbered_entries(&cpu_dir, "cpu")? {
        let policy = policies
            .get(&cpu)
            .cloned()
            .unwrap_or_else(|| dir.join("cpufreq"));
        cpus.push(read_cpu(cpu, &dir, &policy)?);
    }
    if cpus.is_empty() {
        return Err(TopologyError::NoCpus { path: cpu_dir });
    }
    let pmu_list = |name: &str| read_opt(&sys.join("devices").join(name).join("cpus"), CPU_LIST);
    let pmu = PmuLists {
        core: pmu_list("cpu_core")?,
        atom: pmu_list("cpu_atom")?,
        lowpower: pmu_list("cpu_lowpower")?,
    };
    Ok(Machine { cpus, pmu })
}

fn read_cpu(cpu: u32, dir: &Path, policy: &Path) -> Result<RawCpu, TopologyError> {
    let caches = read_caches(&dir.join("cache"))?;
    Ok(RawCpu {
        cpu,
        online: read_opt(&dir.join("online"), INTEGER)?.is_none_or(|v| v != 0),
        core_id: read_opt(&dir.join("topology/core_id"), I32)?,
        package_id: read_opt(&dir.join("topology/physical_package_id"), I32)?,
        capacity: read_opt(&dir.join("cpu_capacity"), INTEGER)?,
        max_khz: read_opt(&policy.join("cpuinfo_max_freq"), INTEGER)?,
        base_khz: read_opt(&policy.join("base_frequency"), INTEGER)?,
        cppc_highest_perf: read_opt(&dir.join("acpi_cppc/highest_perf"), INTEGER)?,
        amd_highest_perf: read_opt(&policy.join("amd_pstate_highest_perf"), INTEGER)?,
        amd_prefcore_ranking: read_opt(&policy.join("amd_pstate_prefcore_ranking"), INTEGER)?,
        midr: read_opt(&dir.join("regs/identification/midr_el1"), HEX)?,
        caches_known: caches.known,
        l3_cpus: caches.l3_cpus,
        l3_kib: caches.l3_kib,
    })
}

/// Finds this CPU's level-3 cache among `cache/indexN`.
///
/// The level comes from `indexN/level`; where a capture lacks it (pepc keeps only `id` and
/// `shared_cpu_list`), the x86 numbering is assumed: index0 L1d, index1 L1i, index2 L2, index3 L3.
fn read_caches(cache: &Path) -> Result<Caches, TopologyError> {
    let indexes = numbered_entries(cache, "index")?;
    let mut caches = Caches {
        known: !indexes.is_empty(),
        ..Caches::default()
    };
    for (n, index) in indexes {
        let level = read_opt(&index.join("level"), INTEGER)?.unwrap_or(if n == 3 { 3 } else { 0 });
        if level == 3 {
            let shared = read_opt(&index.join("shared_cpu_list"), CPU_LIST)?;
            caches.l3_cpus = Some(shared.unwrap_or_default());
            caches.l3_kib = read_opt(&index.join("size"), SIZE)?;
            break;
        }
    }
    Ok(caches)
}

/// What one CPU's `cache/` says about its L3.
#[derive(Default)]
struct Caches {
    known: bool,
    l3_cpus: Option<Vec<u32>>,
    l3_kib: Option<i64>,
}

/// Maps each CPU to its cpufreq policy directory through `cpufreq/policyN/related_cpus`.
///
/// Live sysfs and hwloc captures also link `cpuN/cpufreq` to the policy, but pepc captures keep
/// only the policy directories, so the policies' own CPU lists are the one source that works for
/// every format; `cpuN/cpufreq` is the fallback for CPUs no policy lists.
fn cpufreq_policies(cpu_dir: &Path) -> Result<BTreeMap<u32, PathBuf>, TopologyError> {
    let mut map = BTreeMap::new();
    for (_, policy) in numbered_entries(&cpu_dir.join("cpufreq"), "policy")? {
        let cpus = match read_opt(&policy.join("related_cpus"), CPU_WORDS)? {
            Some(cpus) => Some(cpus),
            None => read_opt(&policy.join("affected_cpus"), CPU_WORDS)?,
        };
        for cpu in cpus.unwrap_or_default() {
            map.insert(cpu, policy.clone());
        }
    }
    Ok(map)
}

/// The `<prefix>N` entries of a directory, sorted by N; an absent directory has none.
fn numbered_entries(dir: &Path, prefix: &str) -> Result<Vec<(u32, PathBuf)>, TopologyError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if is_absent(&e) => return Ok(Vec::new()),
        Err(source) => {
            return Err(TopologyError::Io {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| TopologyError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let name = entry.file_name();
        let number = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<u32>().ok());
        if let Some(n) = number {
            found.push((n, entry.path()));
        }
    }
    found.sort();
    Ok(found)
}

/// How to parse one kind of sysfs value, and what to call it in an error.
struct Attr<T> {
    parse: fn(&str) -> Option<T>,
    expected: &'static str,
}

const INTEGER: Attr<i64> = Attr {
    parse: |s| s.parse().ok(),
    expected: "an integer",
};
const I32: Attr<i32> = Attr {
    parse: |s| s.parse().ok(),
    expected: "a 32-bit integer",
};
const HEX: Attr<u64> = Attr {
    parse: |s| u64::from_str_radix(s.strip_prefix("0x").unwrap_or(s), 16).ok(),
    expected: "a hexadecimal register value",
};
const CPU_LIST: Attr<Vec<u32>> = Attr {
    parse: |s| parse_cpu_list(s).ok(),
    expected: "a CPU list such as 0,2-3",
};
/// cpufreq's `related_cpus` and `affected_cpus` print CPU numbers separated by spaces, not a list.
const CPU_WORDS: Attr<Vec<u32>> = Attr {
    parse: |s| s.split_whitespace().map(|w| w.parse().ok()).collect(),
    expected: "CPU numbers separated by spaces",
};
const SIZE: Attr<i64> = Attr {
    parse: size_kib,
    expected: "a cache size such as 512K",
};

/// Reads and parses an optional sysfs attribute.
///
/// Absent means `None`: the file does not exist, or the kernel refuses to produce a value
/// (`ENODEV`, `ENXIO`, `EOPNOTSUPP`, as some `acpi_cppc` files do on firmware without CPPC).
/// Any other read error, and any parse error, names the file.
fn read_opt<T>(path: &Path, attr: Attr<T>) -> Result<Option<T>, TopologyError> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if is_absent(&e) => return Ok(None),
        Err(source) => {
            return Err(TopologyError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    (attr.parse)(text.trim())
        .map(Some)
        .ok_or_else(|| TopologyError::Parse {
            path: path.to_path_buf(),
            expected: attr.expected,
            found: text.trim_end().chars().take(80).collect(),
        })
}

fn is_absent(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound
        || matches!(
            e.raw_os_error(),
            Some(libc::ENODEV | libc::ENXIO | libc::EOPNOTSUPP | libc::ENOTDIR)
        )
}

/// Cache sizes as the kernel prints them: `512K`, `16384K`, occasionally `8M`.
fn size_kib(s: &str) -> Option<i64> {
    let (digits, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, "K"),
    };
    let n: i64 = digits.parse().ok()?;
    match unit {
        "K" => Some(n),
        "M" => n.checked_mul(1024),
        _ => None,
    }
}
