//! The fallback for machines without a PMU list or `cpu_capacity`: frequencies and L3, after
//! hwloc's CPU-kinds rule.
//!
//! CPUs are first split by whether they lack an L3 (LP E-cores; see [`super::pmu`]) and by
//! `base_frequency`, which is flat inside a class even where the maximum is not (Lakefield's
//! classes are 2.8 vs 3.0 GHz at most but 1.4 vs 2.0 GHz base). Inside each split, maximum
//! frequency (or `acpi_cppc/highest_perf` where cpufreq is missing) is grouped with the 10 %
//! rule, so Turbo Boost Max favoured cores stay P-cores. `acpi_cppc/nominal_perf` is not used: it
//! does not order classes (13 on P, 38 on E on a Meteor Lake).

use std::collections::BTreeMap;

use super::{Assignment, Classes, rank_groups, ranked_names};
use crate::sysfs::{Machine, RawCpu};

pub(super) fn classify(machine: &Machine) -> Option<Classes> {
    let cpus: Vec<&RawCpu> = machine.online().collect();
    let all = |f: fn(&RawCpu) -> Option<i64>| cpus.iter().all(|c| f(c).is_some());
    let (perf, perf_name): (fn(&RawCpu) -> Option<i64>, &str) = if all(|c| c.max_khz) {
        (|c| c.max_khz, "max_freq")
    } else if all(|c| c.cppc_highest_perf) {
        (|c| c.cppc_highest_perf, "cppc_highest_perf")
    } else {
        (|_| None, "")
    };
    let use_base = all(|c| c.base_khz);
    let l3_elsewhere = machine.has_l3_somewhere();
    let no_l3 = |c: &RawCpu| l3_elsewhere && c.caches_known && c.l3_cpus.is_none();

    // (has no L3, base kHz) -> CPUs; BTreeMap order puts CPUs with an L3 first.
    let mut splits: BTreeMap<(bool, Option<i64>), Vec<&RawCpu>> = BTreeMap::new();
    for c in &cpus {
        let base = c.base_khz.filter(|_| use_base);
        splits.entry((no_l3(c), base)).or_default().push(c);
    }
    let mut found: Vec<FoundClass> = Vec::new();
    for ((lacks_l3, base), members) in splits {
        let ranges: Vec<_> = members
            .iter()
            .map(|c| perf(c).map_or((0, 0), |v| (v, v)))
            .collect();
        let (group_of, groups) = rank_groups(&ranges);
        for group in 0..groups {
            let in_group: Vec<&RawCpu> = members
                .iter()
                .zip(&group_of)
                .filter(|(_, g)| **g == group)
                .map(|(c, _)| *c)
                .collect();
            found.push(FoundClass {
                lacks_l3,
                base,
                best: in_group.iter().filter_map(|c| perf(c)).max(),
                cpus: in_group.iter().map(|c| c.cpu).collect(),
            });
        }
    }
    if found.len() < 2 {
        return None;
    }
    // Fastest first: CPUs with an L3 before those without, then base, then maximum.
    found.sort_by_key(|f| {
        (
            f.lacks_l3,
            std::cmp::Reverse(f.base),
            std::cmp::Reverse(f.best),
        )
    });
    let with_l3 = found.iter().filter(|f| !f.lacks_l3).count();
    let mut names = ranked_names(with_l3, machine.is_arm());
    names.extend((0..found.len() - with_l3).map(|i| match i {
        0 => "LPE".to_owned(),
        i => format!("LPE{}", i + 1),
    }));
    let source = [
        use_base.then_some("base_freq"),
        (!perf_name.is_empty()).then_some(perf_name),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join("+");
    // With neither signal, only the missing L3 told the classes apart.
    let source = if source.is_empty() {
        "l3".to_owned()
    } else {
        source
    };
    let mut classes = Classes::new();
    for (class, name) in found.into_iter().zip(names) {
        let source = if class.lacks_l3 {
            "l3"
        } else {
            source.as_str()
        };
        for cpu in class.cpus {
            classes.insert(cpu, Assignment::new(name.clone(), source));
        }
    }
    Some(classes)
}

/// One class the fallback found, with what ranks it.
struct FoundClass {
    lacks_l3: bool,
    base: Option<i64>,
    best: Option<i64>,
    cpus: Vec<u32>,
}
