//! Intel hybrid: the perf driver registers one PMU per core type, and its `cpus` file lists
//! that type's CPUs. This is the most direct signal there is; frequency is only a proxy for it.
//!
//! `cpu_lowpower` exists only on Arrow Lake-H. Meteor and Panther Lake list LP E-cores under
//! `cpu_atom` with the E-cores, and frequency does not separate them (2.4 GHz and highest_perf
//! 24 on both on a Panther Lake sample); what does is that LP E-cores sit outside the compute
//! tile and have no L3 at all. Lakefield's E-cores do share the L3, so "no L3" must mean "this
//! CPU lists caches but none of level 3, while other CPUs have one".

use super::{Assignment, Classes};
use crate::sysfs::Machine;

pub(super) fn classify(machine: &Machine) -> Option<Classes> {
    let pmu = &machine.pmu;
    if !pmu.any() {
        return None;
    }
    let listed =
        |list: &Option<Vec<u32>>, cpu: u32| list.as_ref().is_some_and(|l| l.contains(&cpu));
    let l3_elsewhere = machine.has_l3_somewhere();
    let classes = machine
        .online()
        .map(|raw| {
            let assignment = if listed(&pmu.lowpower, raw.cpu) {
                Assignment::new("LPE", "pmu:cpu_lowpower")
            } else if listed(&pmu.core, raw.cpu) {
                Assignment::new("P", "pmu:cpu_core")
            } else if listed(&pmu.atom, raw.cpu) {
                if l3_elsewhere && raw.caches_known && raw.l3_cpus.is_none() {
                    Assignment::new("LPE", "l3")
                } else {
                    Assignment::new("E", "pmu:cpu_atom")
                }
            } else {
                // Online yet in no PMU list: the kernel did not say, and guessing from frequency
                // on one CPU would be worse than saying so.
                Assignment::new("unknown", "pmu:unlisted")
            };
            (raw.cpu, assignment)
        })
        .collect();
    Some(classes)
}
