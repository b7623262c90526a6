//! Another pipeline's runs as the baseline groups of this one's (`schedlab compare A --against B`).

use super::{CompareError, Observation};

/// Another pipeline's runs as the baseline of this one's (`schedlab compare A --against B`):
/// seed 003 sets foreground-vs-background's openssl against sustained-single-thread's isolated
/// runs. `theirs` are the other pipeline's observations grouped by variant; each of its groups
/// becomes `<pipeline>` (or `<pipeline>: <variant>`) and comes first, so the first is the
/// default baseline. Its workloads match ours by name, or as `map` says (`(ours, theirs)`);
/// its runs stand in every context of ours, since the two pipelines share none.
pub fn against(
    (ours, our_groups): (Vec<Observation>, Vec<String>),
    (theirs, their_groups): (Vec<Observation>, Vec<String>),
    pipeline: &str,
    map: &[(String, String)],
) -> Result<(Vec<Observation>, Vec<String>), CompareError> {
    let names = |observations: &[Observation]| {
        let mut names: Vec<String> = observations.iter().map(|o| o.workload.clone()).collect();
        names.sort();
        names.dedup();
        names
    };
    let (here, there) = (names(&ours), names(&theirs));
    for (mine, other) in map {
        let missing = if !here.contains(mine) {
            format!("this pipeline has no workload `{mine}` with figures")
        } else if !there.contains(other) {
            format!("{pipeline} has no workload `{other}` with figures")
        } else {
            continue;
        };
        return Err(CompareError::UnknownMappedWorkload(format!(
            "--map {mine}={other}: {missing} (workloads here: {}; in {pipeline}: {})",
            here.join(", "),
            there.join(", ")
        )));
    }
    let renamed = |group: &str| match their_groups[..] {
        [_] => pipeline.to_owned(),
        _ => format!("{pipeline}: {group}"),
    };
    let mut contexts: Vec<&str> = ours.iter().map(|o| o.context.as_str()).collect();
    contexts.sort_unstable();
    contexts.dedup();
    let mut all: Vec<Observation> = Vec::new();
    for o in &theirs {
        let workload = (map.iter())
            .find(|(_, other)| *other == o.workload)
            .map_or_else(|| o.workload.clone(), |(mine, _)| mine.clone());
        for context in &contexts {
            all.push(Observation {
                group: renamed(&o.group),
                context: (*context).to_owned(),
                workload: workload.clone(),
                ..o.clone()
            });
        }
    }
    let mut groups: Vec<String> = their_groups.iter().map(|g| renamed(g)).collect();
    groups.extend(our_groups);
    all.extend(ours);
    Ok((all, groups))
}
