//! The `expectations` table (`report/expectations.parquet`): what the summarize stage judged of
//! each of a pipeline's `expect:` entries, per label, run by run and over the label's runs.
//! `schedlab check` exits by its `runs` rows.

use serde::{Deserialize, Serialize};

word_enum! {
    /// What an expectation came to.
    pub enum Judgement {
        /// It holds.
        Pass = "pass",
        /// It does not hold (`reason` says where).
        Fail = "fail",
        /// The runs cannot say: a figure missing, a failed run, too few runs for a comparison.
        CannotJudge = "cannot judge",
    }
}

/// One judgement of one expectation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExpectationRow {
    /// The expectation's position in the pipeline's `expect:` list, from 1.
    pub expectation: i64,
    /// What it bounds, in words: `residency_rollup.share of sha (scope workload, class P)`, or
    /// `compare by label: cpu_time`.
    pub figure: String,
    /// The bound as written (`>= 0.95`, `<= 5ms`), or the verdict ruled out (`not higher than
    /// base`).
    pub bound: String,
    /// The label of the runs judged (null: runs collected without one).
    pub label: Option<String>,
    /// `run`: one run (`run_id`); `group`: one group of a comparison (`group`); `runs`: the
    /// label's runs together, the row that decides.
    pub scope: String,
    pub run_id: Option<String>,
    /// The comparison group a `group` row judges (with `run_ids` its runs).
    pub group: Option<String>,
    /// The runs a `group` or `runs` row covers, comma-joined in collection order.
    pub run_ids: String,
    /// `run`: the figure in the run, the worst of its rows where it has several (one per
    /// thread, say); `runs`: the mean over the runs; `group`: the difference from the baseline
    /// in percent. Null where there is none.
    pub value: Option<f64>,
    /// `runs`: the worst run's value, the one that decides.
    pub worst: Option<f64>,
    /// The unit of `value` and `worst`, the aggregate column's (`share`, `ns`, `%`, `W`, …).
    pub unit: String,
    pub judgement: Judgement,
    /// Why it fails or cannot be judged, or what a comparison said.
    pub reason: Option<String>,
}

table!(
    ExpectationRow,
    "expectations",
    encodings {
        figure: Dictionary,
        bound: Dictionary,
        label: Dictionary,
        scope: Dictionary,
        run_id: DictionaryWithRange,
        group: Dictionary,
        run_ids: Dictionary,
        unit: Dictionary,
        judgement: Dictionary,
        reason: Dictionary,
    },
);
