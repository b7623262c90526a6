//! Classes of a machine known only from a recording made there: an imported perf.data names
//! the CPUs of each core PMU in its header (HEADER_HYBRID_TOPOLOGY, which perf writes on hybrid
//! machines only), and nothing else that tells core types apart.
//!
//! Intel's PMU names map to the classes sysfs detection gives (`cpu_core` P, `cpu_atom` E,
//! `cpu_lowpower` LPE); any other core PMU (ARM's per-type PMUs) names its own class, since
//! the header says nothing of which is faster. Meteor and Panther Lake's LP E-cores are under
//! `cpu_atom` and only sysfs's caches tell them apart, so an import from such a machine needs
//! a `topology:` declaration to split them.

use crate::CpuInfo;
use crate::cpulist::parse_cpu_list;

/// The class each Intel core PMU's CPUs belong to.
const INTEL_CORE_PMUS: [(&str, &str); 3] = [
    ("cpu_core", "P"),
    ("cpu_atom", "E"),
    ("cpu_lowpower", "LPE"),
];

/// The CPUs `0..nr_cpus` of a recorded machine, classed by the core PMU lists of its header,
/// written as perf prints them (`cpu_core: 0-15; cpu_atom: 16-23`); `None` or an empty text: a
/// machine with one kind of core, all `P`. A CPU that no list names is `unknown`. Class sources
/// are `perf.data:<pmu>` and `perf.data:uniform`. An unreadable list is an error naming it.
pub fn from_core_pmus(
    nr_cpus: u32,
    pmus: Option<&str>,
) -> Result<Vec<CpuInfo>, crate::TopologyError> {
    let mut lists: Vec<(String, String, Vec<u32>)> = Vec::new();
    for part in pmus
        .unwrap_or("")
        .split(';')
        .filter(|p| !p.trim().is_empty())
    {
        let (pmu, cpus) = part.split_once(':').unwrap_or((part, ""));
        let pmu = pmu.trim();
        let class = (INTEL_CORE_PMUS.iter())
            .find(|(name, _)| *name == pmu)
            .map_or(pmu, |(_, class)| class);
        lists.push((
            pmu.to_owned(),
            class.to_owned(),
            parse_cpu_list(cpus.trim())?,
        ));
    }
    let info = |cpu: u32| {
        let (class, source) = if lists.is_empty() {
            ("P".to_owned(), "perf.data:uniform".to_owned())
        } else {
            match lists.iter().find(|(_, _, cpus)| cpus.contains(&cpu)) {
                Some((pmu, class, _)) => (class.clone(), format!("perf.data:{pmu}")),
                None => ("unknown".to_owned(), "perf.data:unlisted".to_owned()),
            }
        };
        CpuInfo {
            cpu,
            core_id: None,
            package_id: None,
            class,
            class_source: source,
            capacity: None,
            max_khz: None,
            base_khz: None,
        }
    };
    Ok((0..nr_cpus).map(info).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(cpus: &[CpuInfo]) -> Vec<(u32, &str, &str)> {
        (cpus.iter())
            .map(|c| (c.cpu, c.class.as_str(), c.class_source.as_str()))
            .collect()
    }

    #[test]
    fn intel_core_pmus_name_p_and_e_and_the_rest_is_unknown() {
        let cpus = from_core_pmus(5, Some("cpu_core: 0-1; cpu_atom: 2-3")).unwrap();
        assert_eq!(
            classes(&cpus),
            [
                (0, "P", "perf.data:cpu_core"),
                (1, "P", "perf.data:cpu_core"),
                (2, "E", "perf.data:cpu_atom"),
                (3, "E", "perf.data:cpu_atom"),
                (4, "unknown", "perf.data:unlisted"),
            ]
        );
    }

    #[test]
    fn without_core_pmus_every_cpu_is_one_class() {
        let cpus = from_core_pmus(2, None).unwrap();
        assert_eq!(
            classes(&cpus),
            [(0, "P", "perf.data:uniform"), (1, "P", "perf.data:uniform")]
        );
    }

    #[test]
    fn other_pmus_name_their_own_class_and_bad_lists_are_errors() {
        let cpus = from_core_pmus(2, Some("armv8_cortex_a55: 0; armv8_cortex_a76: 1")).unwrap();
        assert_eq!(cpus[1].class, "armv8_cortex_a76");
        assert!(from_core_pmus(2, Some("cpu_core: 0-x")).is_err());
    }
}
