//! Expectations: judged by the summarize stage into `report/expectations.parquet`, and read back
//! by `schedlab check`, which exits by them.
//!
//! `check` runs what `run` runs (collect the missing runs, recompute what is stale) and then
//! reads the judgement of its own label's runs: a regression under a new kernel, collected
//! with `--label`, is judged on that kernel's runs alone, as a `git bisect run` step needs.

use std::path::PathBuf;

use schedlab_analyze::expectations::{self, ExpectationInputs};
use schedlab_tables::{ExpectationRow, Judgement, MigrationSummaryRow, read_rows, read_table};

use crate::files::remove_if_exists;
use crate::{Runner, RunnerError};

/// What `schedlab check` found for its label (`--json`: this).
#[derive(Debug, serde::Serialize)]
pub struct CheckReport {
    /// The label judged (`None`: the runs collected without one).
    pub label: Option<String>,
    /// Every row of that label, per run and deciding.
    pub rows: Vec<ExpectationRow>,
    /// All expectations together: `Fail` when one fails, else `CannotJudge` when one cannot be
    /// judged, else `Pass`.
    pub judgement: Judgement,
    /// Where the rows were read.
    pub file: PathBuf,
}

impl CheckReport {
    /// The deciding rows that did not pass, one per expectation.
    pub fn not_passing(&self) -> impl Iterator<Item = &ExpectationRow> {
        (self.rows.iter()).filter(|r| r.scope == "runs" && r.judgement != Judgement::Pass)
    }
}

impl Runner<'_> {
    /// The pipeline's expectations judged against every run's aggregates, written to
    /// `report/expectations.parquet` (returned with the rows); with none, that file is removed.
    pub(crate) fn judge_expectations(
        &self,
    ) -> Result<(Vec<ExpectationRow>, Option<PathBuf>), RunnerError> {
        let file = self.layout.expectations();
        if self.plan.summarize.expect.is_empty() {
            remove_if_exists(&file)?;
            return Ok((Vec::new(), None));
        }
        let inputs = self.compare_inputs()?;
        let migrations: Vec<MigrationSummaryRow> = read_table(&self.layout.aggregates())?;
        let rows = expectations::evaluate(
            &self.plan.summarize.expect,
            &ExpectationInputs {
                compare: &inputs,
                migrations: &migrations,
            },
        );
        schedlab_tables::write_rows(&file, &rows)?;
        Ok((rows, Some(file)))
    }

    /// The judgement of this command's label, as the summarize stage wrote it: run after
    /// [`Runner::execute`] has brought the summary up to date.
    pub fn check(&self) -> Result<CheckReport, RunnerError> {
        let file = self.layout.expectations();
        let label = self.options.label.clone();
        let rows: Vec<ExpectationRow> = read_rows(&file)?;
        let rows: Vec<ExpectationRow> = (rows.into_iter()).filter(|r| r.label == label).collect();
        let judgement = expectations::overall(expectations::deciding(&rows, label.as_deref()));
        Ok(CheckReport {
            label,
            rows,
            judgement,
            file,
        })
    }
}
