//! Which groups a comparison takes and which is its baseline: `--groups` and `--baseline`.

use super::{CompareError, Observation};

/// Which groups a comparison (or a plan) takes, and which of them is the baseline: `--groups`
/// and `--baseline`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// The group the others are compared with (its name, or a matrix variable's value alone);
    /// `None`: the group with the most runs, ties going to the one that comes first (the label
    /// collected first, the matrix's first value), so a lone run is never the default baseline
    /// beside groups of several.
    pub baseline: Option<String>,
    /// Only these groups (names or values, as `baseline`); empty: every group.
    pub groups: Vec<String>,
}

impl Selection {
    /// Whether `group` is one `--groups` keeps.
    pub fn keeps(&self, group: &str) -> bool {
        self.groups.is_empty() || self.groups.iter().any(|wanted| names(group, wanted))
    }

    /// The groups kept, in their order, and the index of the baseline among them.
    pub(super) fn apply(
        &self,
        observations: &[Observation],
        groups: &[String],
    ) -> Result<(Vec<String>, usize), CompareError> {
        for wanted in &self.groups {
            if !groups.iter().any(|g| names(g, wanted)) {
                return Err(CompareError::UnknownGroup {
                    name: wanted.clone(),
                    known: groups.to_vec(),
                });
            }
        }
        let kept: Vec<String> = groups.iter().filter(|g| self.keeps(g)).cloned().collect();
        let base = match &self.baseline {
            Some(wanted) => kept.iter().position(|g| names(g, wanted)).ok_or_else(|| {
                CompareError::UnknownBaseline {
                    name: wanted.clone(),
                    known: kept.clone(),
                }
            })?,
            None => default_baseline(observations, &kept).unwrap_or(0),
        };
        Ok((kept, base))
    }
}

/// Whether `wanted` (from `--baseline` or `--groups`) names `group`: its whole name, or the value
/// of a `variable=value` group.
fn names(group: &str, wanted: &str) -> bool {
    group == wanted || group.split_once('=').is_some_and(|(_, v)| v == wanted)
}

/// The index in `candidates` of the group with the most runs among `observations`, ties going to
/// the first (`None` when no candidate has a run): the default baseline.
pub fn default_baseline(observations: &[Observation], candidates: &[String]) -> Option<usize> {
    let mut runs: Vec<std::collections::BTreeSet<&str>> =
        vec![Default::default(); candidates.len()];
    for o in observations {
        if let Some(index) = candidates.iter().position(|g| *g == o.group) {
            runs[index].insert(&o.run_id);
        }
    }
    let most = runs.iter().map(|r| r.len()).max().filter(|n| *n > 0)?;
    runs.iter().position(|r| r.len() == most)
}
