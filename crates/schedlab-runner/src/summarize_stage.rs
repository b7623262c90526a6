//! The summarize stage: the report from every run's partitions, recomputed when any changed.

use std::collections::BTreeMap;

use indicatif::ProgressFinish;

use crate::digest::{self, Digests};
use crate::error::RunnerError;
use crate::files::write_json;
use crate::layout::Layout;
use crate::options::Outcome;
use crate::parse_stage::CollectedRun;
use crate::progress;
use crate::runner::Runner;
use crate::state::{Record, Stage};

impl<'a> Runner<'a> {
    pub(crate) fn summarize_stage(
        &self,
        runs: &[CollectedRun],
        cache: &mut Digests,
        outcome: &mut Outcome,
    ) -> Result<(), RunnerError> {
        let stage = Stage::Summarize;
        let all: Vec<&CollectedRun> = runs.iter().collect();
        self.per_run_stage(stage, &all, cache, outcome)?;
        if outcome.interrupted {
            return Ok(());
        }
        let (inputs, plots) = self.summarize_inputs(runs, cache)?;
        let record_path = self.layout.record(stage, None);
        let before = Record::load(&record_path);
        let reasons = if self.options.selection.forced.contains(&stage) {
            vec!["forced".to_owned()]
        } else {
            Record::staleness(
                before.as_ref(),
                stage,
                &inputs,
                &self.layout.root,
                &self.options.pipeline_file,
            )
        };
        if reasons.is_empty() {
            (self.say)("summarize: fresh, nothing to do");
            return Ok(());
        }
        (self.say)(&format!("summarize: running ({})", reasons.join("; ")));
        // Cleared however the stage ends.
        let _bar = (self.options.progress)
            .then(|| progress::spinner("summarize").with_finish(ProgressFinish::AndClear));
        Layout::sweep_leftovers(&self.layout.report());
        let paths = schedlab_report::SummaryPaths {
            tables: &self.layout.tables(),
            aggregates: &self.layout.aggregates(),
            report: &self.layout,
        };

        let (expectations, judged) = self.judge_expectations()?;
        let mut summary = schedlab_report::summarize(
            &self.plan.name,
            &paths,
            &self.plan.summarize,
            &plots,
            &expectations,
        )?;
        summary.written.extend(judged);
        let mut text = match &summary.not_completed {
            Some(line) => format!("{line}\n\n{}", summary.table),
            None => summary.table,
        };
        for table in &summary.sections {
            text.push('\n');
            text.push_str(table);
        }
        for warning in &summary.warnings {
            text.push_str(&format!("warning: {warning}\n"));
        }
        outcome.summary = Some(text);
        let mut outputs = BTreeMap::new();
        for file in &summary.written {
            let stamp = digest::stamp(file, None).map_err(|source| RunnerError::Io {
                path: file.clone(),
                source,
            })?;
            outputs.insert(self.layout.relative(file), stamp);
        }
        write_json(&record_path, &Record { inputs, outputs })
    }
}
