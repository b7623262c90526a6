//! Runs into observations: one value per completed run, workload and figure, each run placed in
//! its group and context.

use std::collections::BTreeMap;

use schedlab_tables::manifest::RunStatus;
use schedlab_tables::{ProcessRow, RunRow};

use super::figures::{AGGREGATES, Lifetimes};
use super::{CompareError, CompareInputs, GroupBy, Observation};

/// A figure of a run: where several instances or threads report it, their mean; CPU time is
/// the sum over the workload's threads.
#[derive(Default)]
struct Figure {
    unit: String,
    sum: f64,
    count: u32,
    summed: bool,
}

impl Figure {
    fn value(&self) -> f64 {
        if self.summed {
            self.sum
        } else {
            self.sum / f64::from(self.count)
        }
    }
}

/// One value per completed run, workload and figure, with the run's group and context; and the
/// groups in order: labels as first collected, variants as the pipeline lists them (the default
/// baseline is the first).
pub fn observations(
    inputs: &CompareInputs,
    by: &GroupBy,
) -> Result<(Vec<Observation>, Vec<String>), CompareError> {
    let completed: Vec<&RunRow> = (inputs.runs.iter())
        .filter(|r| r.status == RunStatus::Completed)
        .collect();
    if completed.is_empty() {
        return Err(CompareError::NoCompletedRuns {
            failed: inputs.runs.len(),
        });
    }
    let mut placed: BTreeMap<&str, (String, String)> = BTreeMap::new();
    for run in &completed {
        let Some(place) = group_and_context(run, by) else {
            continue;
        };
        placed.insert(&run.run_id, place);
    }
    if placed.is_empty() {
        let mut known: Vec<String> = (completed.iter())
            .flat_map(|r| variables(&r.variant).map(|(k, _)| k.to_owned()))
            .collect();
        known.sort();
        known.dedup();
        return Err(CompareError::UnknownVariable {
            name: by.name().to_owned(),
            known,
        });
    }

    // Labels in the order they were first collected; variants in the pipeline's order, then
    // (for variants no longer in the pipeline) by when they were collected.
    let mut order: Vec<(usize, &str, &str)> = (completed.iter())
        .filter_map(|r| {
            let (group, _) = placed.get(r.run_id.as_str())?;
            let rank = match by {
                GroupBy::Label => 0,
                GroupBy::Repetition => r.repetition as usize,
                _ => (inputs.variant_order.iter())
                    .position(|v| *v == r.variant)
                    .unwrap_or(usize::MAX),
            };
            Some((rank, r.started_at.as_str(), group.as_str()))
        })
        .collect();
    order.sort();
    let mut groups: Vec<String> = Vec::new();
    for (_, _, group) in order {
        if !groups.iter().any(|g| g == group) {
            groups.push(group.to_owned());
        }
    }

    // (run, workload, metric)
    let mut figures: BTreeMap<(String, String, String), Figure> = BTreeMap::new();
    // Figures that are not finite (a tool's `nan`, a rate over zero seconds) are left out: they
    // have no mean.
    let mut add = |run: &str, workload: &str, metric: String, unit: &str, value: f64, summed| {
        if !value.is_finite() {
            return;
        }
        let key = (run.to_owned(), workload.to_owned(), metric);
        let figure = figures.entry(key).or_default();
        figure.unit = unit.to_owned();
        figure.sum += value;
        figure.count += 1;
        figure.summed = summed;
    };
    for m in &inputs.workload_metrics {
        let metric = format!("{}/{}", m.tool, m.metric);
        add(&m.run_id, &m.workload, metric, &m.unit, m.value, false);
    }
    for p in &inputs.processes {
        if let Some(end) = p.end_ns {
            let wall_s = (end - p.start_ns) as f64 / 1e9;
            add(
                &p.run_id,
                &p.workload,
                "runner/wall_s".into(),
                "s",
                wall_s,
                false,
            );
        }
    }
    let lifetimes = workload_lifetimes(&inputs.processes);
    for aggregate in AGGREGATES {
        for (run, workload, metric, unit, value, summed) in aggregate.of(inputs, &lifetimes) {
            add(run, workload, metric, unit, value, summed);
        }
    }

    let started: BTreeMap<&str, &str> = (completed.iter())
        .map(|r| (r.run_id.as_str(), r.started_at.as_str()))
        .collect();
    let observations = (figures.into_iter())
        .filter_map(|((run_id, workload, metric), figure)| {
            let (group, context) = placed.get(run_id.as_str())?;
            Some(Observation {
                started_at: started.get(run_id.as_str())?.to_string(),
                run_id,
                group: group.clone(),
                context: context.clone(),
                workload,
                metric,
                unit: figure.unit.clone(),
                value: figure.value(),
            })
        })
        .collect();
    Ok((observations, groups))
}

/// Each run's workloads' lifetimes in seconds: first process start to last process end (runs
/// with a process still running have none).
fn workload_lifetimes(processes: &[ProcessRow]) -> Lifetimes<'_> {
    let mut spans: BTreeMap<(&str, &str), Vec<&ProcessRow>> = BTreeMap::new();
    for p in processes {
        spans.entry((&p.run_id, &p.workload)).or_default().push(p);
    }
    (spans.into_iter())
        .filter_map(|(key, own)| {
            let (start, end) = crate::lifetime(own.into_iter())?;
            Some((key, (end? - start) as f64 / 1e9))
        })
        .collect()
}

/// The `key=value` pairs of a run's variant.
fn variables(variant: &str) -> impl Iterator<Item = (&str, &str)> {
    (variant.split(',')).filter_map(|pair| pair.split_once('='))
}

/// A run's group under `by`, and what else tells it apart; `None` when the run lacks the
/// grouping variable.
fn group_and_context(run: &RunRow, by: &GroupBy) -> Option<(String, String)> {
    let label = run.label.clone().unwrap_or_default();
    Some(match by {
        GroupBy::Label => (
            run.label.clone().unwrap_or_else(|| "(no label)".to_owned()),
            run.variant.clone(),
        ),
        GroupBy::Variant => (
            if run.variant.is_empty() {
                "(no matrix)".to_owned()
            } else {
                run.variant.clone()
            },
            label,
        ),
        GroupBy::Repetition => {
            let mut context = Vec::new();
            if !label.is_empty() {
                context.push(format!("label={label}"));
            }
            if !run.variant.is_empty() {
                context.push(run.variant.clone());
            }
            (format!("repetition={}", run.repetition), context.join(","))
        }
        GroupBy::Variable(name) => {
            let (_, value) = variables(&run.variant).find(|(k, _)| k == name)?;
            let mut rest: Vec<String> = (variables(&run.variant))
                .filter(|(k, _)| k != name)
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            if !label.is_empty() {
                rest.insert(0, format!("label={label}"));
            }
            (format!("{name}={value}"), rest.join(","))
        }
    })
}
