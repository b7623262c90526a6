//! AMD hybrids (Zen 5 + Zen 5c, e.g. the Ryzen AI 9 HX 370): amd-pstate's per-core ranking, read
//! per L3 domain.
//!
//! The two core types sit behind separate L3s (16 MB and 8 MB on the HX 370), so the unit is the
//! L3 domain, and its key the best ranking in it: preferred-core rankings differ core by core
//! inside one CCX (166 to 236 in steps of 5 on desktop parts), which would chain or split
//! arbitrarily if read per CPU. A ranking gap alone is not trusted either: on a 9950X the two
//! identical CCDs can rank far apart. Classes are declared only when the ranking groups and the
//! L3 sizes agree, i.e. no L3 size occurs in two groups. No sysfs capture of such a machine
//! exists yet (see the crate docs); the tests build one.

use std::collections::{BTreeMap, BTreeSet};

use super::{Assignment, Classes, rank_groups, ranked_names};
use crate::sysfs::{Machine, RawCpu};

pub(super) fn classify(machine: &Machine) -> Option<Classes> {
    let cpus: Vec<&RawCpu> = machine.online().collect();
    let all = |f: fn(&RawCpu) -> Option<i64>| cpus.iter().all(|c| f(c).is_some());
    let ranking: fn(&RawCpu) -> Option<i64> = if all(|c| c.amd_prefcore_ranking) {
        |c| c.amd_prefcore_ranking
    } else if all(|c| c.amd_highest_perf) {
        |c| c.amd_highest_perf
    } else {
        return None;
    };
    // L3 domain (its lowest CPU) -> (cpus, best ranking, L3 KiB)
    let mut domains: BTreeMap<u32, (Vec<u32>, i64, i64)> = BTreeMap::new();
    for c in &cpus {
        let domain = *c.l3_cpus.as_ref()?.first()?;
        let (rank, kib) = (ranking(c)?, c.l3_kib?);
        let entry = domains.entry(domain).or_insert((Vec::new(), rank, kib));
        entry.0.push(c.cpu);
        entry.1 = entry.1.max(rank);
    }
    let domains: Vec<_> = domains.into_values().collect();
    let ranges: Vec<_> = domains.iter().map(|d| (d.1, d.1)).collect();
    let (group_of, groups) = rank_groups(&ranges);
    if groups < 2 {
        return None;
    }
    let mut sizes_per_group = vec![BTreeSet::new(); groups];
    for (domain, &group) in domains.iter().zip(&group_of) {
        sizes_per_group[group].insert(domain.2);
    }
    let sizes_overlap = sizes_per_group
        .iter()
        .enumerate()
        .any(|(i, a)| sizes_per_group[i + 1..].iter().any(|b| !a.is_disjoint(b)));
    if sizes_overlap {
        return None;
    }
    let names = ranked_names(groups, false);
    let mut classes = Classes::new();
    for (domain, group) in domains.iter().zip(group_of) {
        for &cpu in &domain.0 {
            classes.insert(cpu, Assignment::new(names[group].clone(), "amd-pstate+l3"));
        }
    }
    Some(classes)
}
