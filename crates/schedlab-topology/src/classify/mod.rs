//! Turning raw sysfs facts into core classes: one module per signal source, tried in order of
//! trust.
//!
//! 1. [`pmu`]: Intel's hybrid PMU lists, plus L3 sharing to tell LP E-cores from E-cores.
//! 2. [`capacity`]: `cpu_capacity` (ARM), grouped by MIDR core type where the kernel shows it.
//! 3. [`amd`]: amd-pstate's per-core ranking, per L3 domain, confirmed by differing L3 sizes.
//! 4. [`freq`]: base and max frequency (or CPPC highest_perf) with hwloc's 10 % merge, and L3.
//!
//! The first source that applies and finds more than one class decides for every CPU; if none
//! does, all CPUs are one class, [`UNIFORM_CLASS`]. Offline CPUs are set aside before any source
//! looks, so a missing file on an offline CPU cannot split a class.

mod amd;
mod capacity;
mod freq;
mod pmu;

use std::collections::BTreeMap;

use crate::sysfs::Machine;

/// The class of every CPU on a machine with one kind of core.
///
/// `P` rather than a name of its own: every CPU there is the machine's fastest, tables grouped by
/// class keep one row, and a pipeline written for hybrid machines (`cpus: P`) still runs.
const UNIFORM_CLASS: &str = "P";

/// One CPU's class and the signal that decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Assignment {
    pub class: String,
    pub source: String,
}

impl Assignment {
    fn new(class: impl Into<String>, source: impl Into<String>) -> Self {
        Assignment {
            class: class.into(),
            source: source.into(),
        }
    }
}

/// Classes by CPU number, as each source returns them.
type Classes = BTreeMap<u32, Assignment>;

/// Classifies every CPU of `machine`, in the order of `machine.cpus`.
pub(crate) fn classify(machine: &Machine) -> Vec<Assignment> {
    let detected = pmu::classify(machine)
        .or_else(|| capacity::classify(machine))
        .or_else(|| amd::classify(machine))
        .or_else(|| freq::classify(machine))
        .unwrap_or_default();
    machine
        .cpus
        .iter()
        .map(|raw| match detected.get(&raw.cpu) {
            _ if !raw.online => Assignment::new("offline", "offline"),
            Some(assignment) => assignment.clone(),
            None => Assignment::new(UNIFORM_CLASS, "uniform"),
        })
        .collect()
}

/// Groups ranges of a performance signal, highest first, the way hwloc merges frequencies.
///
/// `ranges[i]` is the (lowest, highest) value of unit `i` (a CPU, a MIDR core type, an L3
/// domain). Units are sorted by their highest value, descending; a unit starts a new group when
/// the previous unit's lowest value exceeds this unit's highest by more than 10 %. The chain
/// rule keeps favoured cores (5.2 vs 5.0 GHz on an i7-1370P) and small capacity spreads
/// (997-1024 on a GB10) inside one class. Returns each unit's group, 0 = fastest, and the number
/// of groups.
fn rank_groups(ranges: &[(i64, i64)]) -> (Vec<usize>, usize) {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(ranges[i].1));
    let mut group_of = vec![0; ranges.len()];
    let mut groups = 0;
    let mut previous_low: Option<i64> = None;
    for i in order {
        let (low, high) = ranges[i];
        let far = previous_low.is_some_and(|prev| i128::from(prev) * 10 > i128::from(high) * 11);
        previous_low = match previous_low {
            Some(prev) if !far => Some(prev.min(low)),
            _ => {
                groups += 1;
                Some(low)
            }
        };
        group_of[i] = groups - 1;
    }
    (group_of, groups)
}

/// Names for `n` ranked classes, fastest first.
///
/// x86: `P`, `E`, then `E2`, `E3`… (a third class with an L3 is rare: Speed Select base
/// frequencies, say). ARM: `big`, `little`; three tiers `big`, `mid`, `little` (phones call the
/// top tier "prime"); more tiers number the middle ones `mid1`, `mid2`…
fn ranked_names(n: usize, arm: bool) -> Vec<String> {
    (0..n)
        .map(|i| match (arm, i) {
            (false, 0) => "P".to_owned(),
            (false, 1) => "E".to_owned(),
            (false, i) => format!("E{i}"),
            (true, 0) => "big".to_owned(),
            (true, i) if i + 1 == n => "little".to_owned(),
            (true, _) if n == 3 => "mid".to_owned(),
            (true, i) => format!("mid{i}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(values: &[i64]) -> Vec<(i64, i64)> {
        values.iter().map(|&v| (v, v)).collect()
    }

    #[test]
    fn favoured_cores_stay_in_their_class() {
        let (groups, n) = rank_groups(&scalar(&[5_000_000, 5_200_000, 3_900_000]));
        assert_eq!((groups, n), (vec![0, 0, 1], 2));
    }

    #[test]
    fn close_values_chain_into_one_group() {
        // Each step is under 10 %, so the chain holds even though 1024 vs 850 is 20 %.
        let (groups, n) = rank_groups(&scalar(&[1024, 960, 900, 850]));
        assert_eq!((groups, n), (vec![0, 0, 0, 0], 1));
    }

    #[test]
    fn ranges_compare_low_end_to_next_high_end() {
        let (groups, n) = rank_groups(&[(997, 1024), (718, 731), (1000, 1000)]);
        assert_eq!((groups, n), (vec![0, 1, 0], 2));
    }

    #[test]
    fn names() {
        assert_eq!(ranked_names(3, false), ["P", "E", "E2"]);
        assert_eq!(ranked_names(2, true), ["big", "little"]);
        assert_eq!(ranked_names(3, true), ["big", "mid", "little"]);
        assert_eq!(ranked_names(4, true), ["big", "mid1", "mid2", "little"]);
    }
}
