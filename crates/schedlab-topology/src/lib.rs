//! CPUs and their core classes (P, E, LPE; big, mid, little) read from a sysfs tree.
//!
//! # Brief overview
//!
//! [`detect`] reads `devices/system/cpu` under a sysfs root, live (`/sys`) or captured, and
//! returns one [`CpuInfo`] per CPU: its class, the signal that decided the class
//! ([`CpuInfo::class_source`]), and the facts a report wants next to it (core, package,
//! capacity, frequencies). [`apply_declared`] overrides the classes with a pipeline's
//! `topology:` section, and [`render_table`] is what `schedlab topology` prints.
//! [`parse_cpu_list`] and [`format_cpu_list`] speak the kernel's `0,2-3` list format.
//!
//! Class names: `P`, `E`, `LPE` on x86 (`E2`… for a rare further tier); `big`, `mid`, `little`
//! on ARM (more tiers: `mid1`, `mid2`…); `offline` for an offline CPU; `unknown` for an online
//! CPU that Intel's PMU lists leave out. A machine with one kind of core is all `P`, with class
//! source `uniform`. Class sources: `pmu:cpu_core`, `pmu:cpu_atom`, `pmu:cpu_lowpower`, `l3`
//! (an E-core with no L3 is an LP E-core), `cpu_capacity+midr` or `cpu_capacity`,
//! `amd-pstate+l3`, `base_freq+max_freq` (or either alone, or `cppc_highest_perf`), `uniform`,
//! `declared`; for a machine known only from a perf.data header ([`from_core_pmus`]),
//! `perf.data:<pmu>`, `perf.data:uniform` and `perf.data:unlisted`.
//!
//! # Key design decision
//!
//! One trusted signal decides for the whole machine, tried in a fixed order: Intel's hybrid
//! PMU lists, ARM `cpu_capacity`, AMD amd-pstate ranking, then frequencies (the `classify`
//! module's docs say why each comes where it does). Sources are never mixed CPU by CPU, because
//! real machines disagree with any single proxy somewhere: max frequency varies inside the P
//! class, capacity inside one ARM core type, and LP E-cores share frequency and CPPC values
//! with E-cores. The one signal read alongside others is a missing L3, the only thing that
//! separates LP E-cores from E-cores on Meteor and Panther Lake. The evidence is in `shared/notes/hybrid-topology.md`, and the tests check every
//! real capture of other machines' sysfs (the shared fixtures beside the repository) against its documented classes.
//!
//! # Example
//!
//! ```no_run
//! let cpus = schedlab_topology::detect(std::path::Path::new("/sys"))?;
//! print!("{}", schedlab_topology::render_table(&cpus));
//! # Ok::<(), schedlab_topology::TopologyError>(())
//! ```

mod classify;
mod cpulist;
mod error;
mod recorded;
mod render;
mod sysfs;

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use cpulist::{LAST_CPU, format_cpu_list, parse_cpu_list};
pub use error::TopologyError;
pub use recorded::from_core_pmus;
pub use render::render_table;

/// One CPU (hardware thread) and its class: a row of the `cpus` table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuInfo {
    /// The kernel's CPU number.
    pub cpu: u32,
    /// `topology/core_id`; absent in some captures (pepc) and for offline CPUs.
    pub core_id: Option<i32>,
    /// `topology/physical_package_id`. On phones this numbers clusters, not sockets.
    pub package_id: Option<i32>,
    /// `P`, `E`, `LPE`, `big`, `mid`, `little`, `offline`, `unknown`, or a declared name (see
    /// the crate docs).
    pub class: String,
    /// The signal that decided `class` (see the crate docs for the list).
    pub class_source: String,
    /// `cpu_capacity`, where the kernel exports it (1024 = the fastest CPU).
    pub capacity: Option<i64>,
    /// `cpufreq/cpuinfo_max_freq`, kHz.
    pub max_khz: Option<i64>,
    /// `cpufreq/base_frequency`, kHz (intel_pstate only).
    pub base_khz: Option<i64>,
}

/// Detects the CPUs under a sysfs root and classifies them.
///
/// `sysfs_root` is the directory holding `devices/system/cpu` (`/sys` on a live machine), or a
/// capture's root directory holding `sys/`. Every file is optional; a file that exists but does
/// not hold what the kernel writes there is an error naming it. CPUs are returned by number.
pub fn detect(sysfs_root: &Path) -> Result<Vec<CpuInfo>, TopologyError> {
    let sys = sysfs::sys_dir(sysfs_root)?;
    let machine = sysfs::read_machine(&sys)?;
    let classes = classify::classify(&machine);
    Ok(machine
        .cpus
        .iter()
        .zip(classes)
        .map(|(raw, assignment)| CpuInfo {
            cpu: raw.cpu,
            core_id: raw.core_id,
            package_id: raw.package_id,
            class: assignment.class,
            class_source: assignment.source,
            capacity: raw.capacity,
            max_khz: raw.max_khz,
            base_khz: raw.base_khz,
        })
        .collect())
}

/// The classes of `cpus`, fastest first: the classes `declared` names in the order it names
/// them, then the others by their fastest CPU's capacity, then its max frequency, then the
/// conventional order of the names (`P`, `E`, `LPE`, `E2`…; `big`, `mid`…, `little`).
/// `offline` and `unknown` have no place: nothing says how fast they are.
///
/// Detection decides classes and not their order, which is why capacity leads here: it is the
/// scheduler's own measure of speed, and frequency the proxy where no capacity is exported.
pub fn class_order(cpus: &[CpuInfo], declared: &[(String, Vec<u32>)]) -> Vec<String> {
    let mut order: Vec<String> = (declared.iter())
        .map(|(class, _)| class.clone())
        .filter(|class| cpus.iter().any(|c| &c.class == class))
        .collect();
    // Per class, its fastest CPU's (capacity, max frequency).
    let mut fastest: BTreeMap<&str, Speed> = BTreeMap::new();
    for c in cpus {
        if order.contains(&c.class) || c.class == "offline" || c.class == "unknown" {
            continue;
        }
        let best = fastest.entry(&c.class).or_default();
        *best = (best.0.max(c.capacity), best.1.max(c.max_khz));
    }
    let mut detected: Vec<(&str, Speed)> = fastest.into_iter().collect();
    detected.sort_by(|a, b| {
        (b.1.cmp(&a.1)).then_with(|| conventional_rank(a.0).cmp(&conventional_rank(b.0)))
    });
    order.extend(detected.into_iter().map(|(class, _)| class.to_owned()));
    order
}

/// Each class of `cpus` fastest first ([`class_order`], nothing declared) with its CPUs by
/// number: what a pipeline's `cpus: [P]` and `${nproc_P}` name on this machine.
pub fn classes(cpus: &[CpuInfo]) -> Vec<(String, Vec<u32>)> {
    (class_order(cpus, &[]).into_iter())
        .map(|class| {
            let members = (cpus.iter())
                .filter(|c| c.class == class)
                .map(|c| c.cpu)
                .collect();
            (class, members)
        })
        .collect()
}

/// A CPU's capacity and max frequency, compared in that order (`None` below any value).
type Speed = (Option<i64>, Option<i64>);

/// Where a class name comes in the classifier's naming, fastest first; other names after,
/// alphabetically (the caller's sort is stable over names in alphabetical order).
fn conventional_rank(class: &str) -> (u32, u32) {
    let tier = |prefix: &str| {
        class
            .strip_prefix(prefix)
            .and_then(|n| n.parse::<u32>().ok())
    };
    match class {
        "P" | "big" => (0, 0),
        "E" | "mid" => (1, 0),
        "LPE" => (2, 0),
        "little" => (3, 0),
        _ => match tier("E").or_else(|| tier("mid")) {
            Some(n) => (1, n),
            None => (4, 0),
        },
    }
}

/// The CPUs a `topology:` declaration names, and nothing else known of them: for a machine
/// known only from files that do not list its CPUs (an imported timehist text).
pub fn declared_cpus(declared: &[(String, Vec<u32>)]) -> Vec<CpuInfo> {
    let mut cpus: Vec<CpuInfo> = (declared.iter())
        .flat_map(|(class, members)| members.iter().map(move |&cpu| (cpu, class)))
        .map(|(cpu, class)| CpuInfo {
            cpu,
            core_id: None,
            package_id: None,
            class: class.clone(),
            class_source: "declared".to_owned(),
            capacity: None,
            max_khz: None,
            base_khz: None,
        })
        .collect();
    cpus.sort_by_key(|c| c.cpu);
    cpus.dedup_by_key(|c| c.cpu);
    cpus
}

/// Overrides detected classes with declared ones, e.g. a pipeline's
/// `topology: { P: [0-3], E: [4-11] }`; overridden CPUs get class source `declared`.
///
/// CPUs not named keep their detected class. Nothing is changed if any declared CPU does not
/// exist or is declared twice: the error says which.
pub fn apply_declared(
    cpus: &mut [CpuInfo],
    declared: &[(String, Vec<u32>)],
) -> Result<(), TopologyError> {
    let mut class_of: BTreeMap<u32, &str> = BTreeMap::new();
    for (class, members) in declared {
        for &cpu in members {
            if !cpus.iter().any(|c| c.cpu == cpu) {
                let present: Vec<u32> = cpus.iter().map(|c| c.cpu).collect();
                return Err(TopologyError::UnknownCpu {
                    class: class.clone(),
                    cpu,
                    present: format_cpu_list(&present),
                });
            }
            if let Some(first) = class_of.insert(cpu, class)
                && first != class
            {
                return Err(TopologyError::DuplicateCpu {
                    cpu,
                    first: first.to_owned(),
                    second: class.clone(),
                });
            }
        }
    }
    for info in cpus.iter_mut() {
        if let Some(class) = class_of.get(&info.cpu) {
            info.class = (*class).to_owned();
            info.class_source = "declared".to_owned();
        }
    }
    Ok(())
}
