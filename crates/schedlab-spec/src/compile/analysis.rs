//! The analysis sections: `import`'s workload selectors, the `aggregate` steps and `summarize`.

use crate::diagnostic::closest;
use crate::locate::{Part, yaml_path};
use crate::plan::{AggregateStep, Summarize};
use crate::raw::{RawPipeline, RawStep, RawSummarize};
use crate::selector::{Select, WorkloadSelector};

use super::Checker;

impl Checker<'_> {
    /// `import.workloads`: each a selector.
    pub(super) fn import(&mut self, raw: &RawPipeline) -> Vec<WorkloadSelector> {
        let mut selectors = Vec::new();
        for (workload, select) in raw.import.iter().flat_map(|i| &i.workloads) {
            match select.value.parse::<Select>() {
                Ok(select) => selectors.push(WorkloadSelector {
                    workload: workload.clone(),
                    select,
                }),
                Err(err) => self.error_at(
                    select,
                    format!("workload `{workload}`: {}", err.problem),
                    Some(
                        "`comm:NAME` (its command name; `comm:stress-ng*` for a prefix), \
                         `pid:PID` (one process) or `tree:PID` (a process and its descendants)"
                            .into(),
                    ),
                ),
            }
        }
        selectors
    }

    pub(super) fn aggregate(&mut self, raw: &RawPipeline) {
        let collected = raw.collect.iter().flat_map(|c| c.workloads.keys());
        let imported = raw.import.iter().flat_map(|i| i.workloads.keys());
        let named = self
            .importing
            .unwrap_or_default()
            .iter()
            .map(|w| &w.workload);
        let workload_names: Vec<&str> = (collected.chain(imported).chain(named))
            .map(String::as_str)
            .collect();
        for (index, step) in raw.aggregate.iter().enumerate() {
            let kind = step.kind();
            if step.options().window.is_some() && !kind.takes_window() {
                self.error_at_path(
                    &yaml_path!["aggregate", index, kind.name(), "window"],
                    Part::Key,
                    format!("`window` does not apply to `{}`", kind.name()),
                    Some("it applies to residency, migrations, sched_delay and cpu_time".into()),
                );
            }
            if let Some(workload) = &step.options().workload
                && !workload_names.contains(&workload.value.as_str())
            {
                let hint = closest(&workload.value, workload_names.iter().copied())
                    .map(|best| format!("did you mean `{best}`?"));
                self.error_at(
                    workload,
                    format!("`{}` names no workload of this pipeline", workload.value),
                    hint,
                );
            }
        }
    }
}

impl From<&RawStep> for AggregateStep {
    fn from(raw: &RawStep) -> Self {
        let options = raw.options();
        AggregateStep {
            kind: raw.kind(),
            workload: options.workload.as_ref().map(|w| w.value.clone()),
            startup: options.startup.map(|d| d.0),
            window: options.window,
        }
    }
}

impl From<RawSummarize> for Summarize {
    fn from(raw: RawSummarize) -> Self {
        Summarize {
            report: raw.report,
            plots: raw.plots,
            expect: Vec::new(),
        }
    }
}
