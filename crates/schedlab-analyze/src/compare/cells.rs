//! The observations a comparison is made of, per context, workload and figure, then per group;
//! a figure equal to another in every run is folded into it.
//!
//! One number under two names (the CPUs a workload received on the only core class a machine
//! has, and on all its CPUs; two "why here" figures that are 0 in every run) is one test, not
//! two: tested twice, it would count twice in the adjustment for many figures and show one
//! finding as two.

use std::collections::BTreeMap;

use super::Observation;

/// (context, workload, metric, unit)
pub(super) type CellKey<'a> = (&'a str, &'a str, &'a str, &'a str);

/// One figure's observations in one context, per group (by its index in the groups compared),
/// each group's runs in collection order.
pub(super) struct Cell<'a> {
    pub key: CellKey<'a>,
    pub groups: BTreeMap<usize, Vec<&'a Observation>>,
    /// The other figures (same context, workload and unit) with these values in every run.
    pub stands_for: Vec<&'a str>,
}

impl Cell<'_> {
    /// Every value of the figure, in every group.
    pub fn values(&self) -> impl Iterator<Item = f64> + '_ {
        self.groups.values().flatten().map(|o| o.value)
    }

    /// Whether `other` has the same runs in the same groups and, run by run, the same value
    /// (to rounding: two sums of the same nanoseconds in another order may differ in the last
    /// bit).
    fn same_values(&self, other: &Cell<'_>) -> bool {
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
        self.groups.len() == other.groups.len()
            && (self.groups.iter().zip(&other.groups)).all(|((i, mine), (j, theirs))| {
                i == j
                    && mine.len() == theirs.len()
                    && (mine.iter().zip(theirs))
                        .all(|(a, b)| a.run_id == b.run_id && close(a.value, b.value))
            })
    }
}

/// The observations of the groups in `groups` (others are left out), per context, workload and
/// figure in that order, each figure equal in every run to one before it (same context, workload
/// and unit) folded into that one's `stands_for`.
pub(super) fn cells<'a>(observations: &'a [Observation], groups: &[String]) -> Vec<Cell<'a>> {
    let mut by_key: BTreeMap<CellKey<'a>, BTreeMap<usize, Vec<&'a Observation>>> = BTreeMap::new();
    for o in observations {
        let Some(group) = groups.iter().position(|g| *g == o.group) else {
            continue;
        };
        let key = (
            o.context.as_str(),
            o.workload.as_str(),
            o.metric.as_str(),
            o.unit.as_str(),
        );
        by_key
            .entry(key)
            .or_default()
            .entry(group)
            .or_default()
            .push(o);
    }
    let mut kept: Vec<Cell<'a>> = Vec::new();
    for (key, mut groups) in by_key {
        for group in groups.values_mut() {
            group.sort_by(|a, b| (&a.started_at, &a.run_id).cmp(&(&b.started_at, &b.run_id)));
        }
        let cell = Cell {
            key,
            groups,
            stands_for: Vec::new(),
        };
        let (context, workload, metric, unit) = key;
        let twin = kept.iter_mut().find(|k| {
            let (c, w, _, u) = k.key;
            (c, w, u) == (context, workload, unit) && k.same_values(&cell)
        });
        match twin {
            Some(twin) => twin.stands_for.push(metric),
            None => kept.push(cell),
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observation(run: &str, group: &str, metric: &str, unit: &str, value: f64) -> Observation {
        Observation {
            run_id: run.into(),
            started_at: run.into(),
            group: group.into(),
            context: String::new(),
            workload: "w".into(),
            metric: metric.into(),
            unit: unit.into(),
            value,
        }
    }

    #[test]
    fn a_figure_equal_to_another_in_every_run_is_kept_once() {
        let mut seen = Vec::new();
        for (run, group, all, p, other) in [
            ("r1", "a", 0.41, 0.41, 0.41),
            ("r2", "a", 0.43, 0.43 + 1e-15, 0.43),
            ("r3", "b", 0.47, 0.47, 0.48),
        ] {
            seen.push(observation(run, group, "cpu_share/run", "CPUs", all));
            seen.push(observation(run, group, "cpu_share/run/P", "CPUs", p));
            // Equal in two runs of three: a figure of its own.
            seen.push(observation(run, group, "cpu_share/after", "CPUs", other));
            // Equal values in another unit: another quantity.
            seen.push(observation(run, group, "turbostat/busy", "share", all));
        }
        let groups = ["a".to_owned(), "b".to_owned()];
        let kept: Vec<(&str, Vec<&str>)> = (cells(&seen, &groups).into_iter())
            .map(|c| (c.key.2, c.stands_for))
            .collect();
        assert_eq!(
            kept,
            [
                ("cpu_share/after", vec![]),
                ("cpu_share/run", vec!["cpu_share/run/P"]),
                ("turbostat/busy", vec![]),
            ]
        );
        // Groups left out of the comparison are left out of the cells.
        let only_b = cells(&seen, &groups[1..]);
        assert!(only_b.iter().all(|c| c.groups.keys().eq([&0])));
    }
}
