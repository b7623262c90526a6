//! `cpu_capacity`: the scheduler's own view of relative CPU performance (1024 = fastest).
//!
//! It ranks classes, but varies inside one core type (718 and 731 for the Cortex-A725s of one
//! GB10, 997 to 1024 for its X925s), so equal values cannot define a class. Where the kernel
//! shows `midr_el1`, CPUs of one core type (same implementer and part number) form one unit
//! that is never split; units then merge with the 10 % rule of [`super::rank_groups`], which
//! also joins different core types of equal capacity (a Snapdragon's A715 and A710, both 855,
//! one cpufreq policy), since the scheduler cannot tell them apart either.

use std::collections::BTreeMap;

use super::{Assignment, Classes, rank_groups, ranked_names};
use crate::sysfs::Machine;

/// The MIDR bits that name a core type: implementer [31:24], architecture [19:16] and part
/// number [15:4]; variant and revision (steppings of one design) are left out.
const MIDR_CORE_TYPE: u64 = 0xFF0F_FFF0;

pub(super) fn classify(machine: &Machine) -> Option<Classes> {
    let cpus: Vec<_> = machine.online().collect();
    if cpus.is_empty() || cpus.iter().any(|c| c.capacity.is_none()) {
        return None;
    }
    let by_midr = cpus.iter().all(|c| c.midr.is_some());
    // unit key -> (cpus, lowest capacity, highest capacity)
    let mut units: BTreeMap<u64, (Vec<u32>, i64, i64)> = BTreeMap::new();
    for c in &cpus {
        let capacity = c.capacity.unwrap_or_default();
        let key = match c.midr {
            Some(midr) if by_midr => midr & MIDR_CORE_TYPE,
            _ => u64::from(c.cpu),
        };
        let unit = units.entry(key).or_insert((Vec::new(), capacity, capacity));
        unit.0.push(c.cpu);
        unit.1 = unit.1.min(capacity);
        unit.2 = unit.2.max(capacity);
    }
    let units: Vec<_> = units.into_values().collect();
    let ranges: Vec<_> = units.iter().map(|u| (u.1, u.2)).collect();
    let (group_of, groups) = rank_groups(&ranges);
    if groups < 2 {
        return None;
    }
    let names = ranked_names(groups, machine.is_arm());
    let source = if by_midr {
        "cpu_capacity+midr"
    } else {
        "cpu_capacity"
    };
    let mut classes = Classes::new();
    for (unit, group) in units.iter().zip(group_of) {
        for &cpu in &unit.0 {
            classes.insert(cpu, Assignment::new(names[group].clone(), source));
        }
    }
    Some(classes)
}
