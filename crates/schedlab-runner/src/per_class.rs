//! `schedlab compare --per-class`: each workload's instances under the core class they ran on,
//! and with `--against`, the other pipeline's instances under the class they were pinned to
//! (seed 004: each worker against the pinned run of its own class).

use schedlab_analyze::compare::{self, GroupBy};
use schedlab_analyze::per_class;
use schedlab_tables::{CpuRow, read_table};

use crate::comparison::{Asked, ComparisonName};
use crate::{Comparison, Runner, RunnerError, Selection, lock};

impl Runner<'_> {
    /// Compares per class an instance ran on (its most CPU time, from `residency_rollup`, so
    /// the pipeline must aggregate `residency`), grouped by `by`; with `other`, against that
    /// pipeline's pinned runs, all of them one baseline group, each of its instances under the
    /// class its affinity lies in (`map` pairs workloads as `compare --map` does, class by
    /// class). Writes `compare/by-<by>[-against-<other>]-per-class.{parquet,md,html}`.
    pub fn compare_per_class(
        &self,
        other: Option<&Runner<'_>>,
        by: &GroupBy,
        map: &[(String, String)],
        selection: &Selection,
        min_effect_pct: Option<f64>,
    ) -> Result<Comparison, RunnerError> {
        let asked = Asked {
            by,
            selection,
            min_effect_pct,
        };
        let _lock = lock::acquire(&self.layout.lock(), "schedlab compare")?;
        let mut inputs = self.compare_inputs()?;
        let (split, instances) = per_class::per_instance(&inputs);
        let (observations, groups) = compare::observations(&split, by)?;
        let ours = per_class::by_class(observations, &instances, &per_class::classes_ran(&inputs));
        let Some(other) = other else {
            let name = ComparisonName::of(by, None, true);
            return self.write_comparison(&inputs.runs, ours, groups, &asked, name);
        };
        let _theirs = lock::acquire(&other.layout.lock(), "schedlab compare")?;
        let theirs = other.compare_inputs()?;
        let cpus: Vec<CpuRow> = read_table(&other.layout.tables())?;
        let (split, their_instances) = per_class::per_instance(&theirs);
        // Their pinned runs are one baseline, whatever their variant: each class's figures come
        // from the runs pinned to it.
        let (observations, their_groups) = compare::observations(&split, &GroupBy::Label)?;
        let pinned = per_class::classes_pinned(&theirs, &cpus);
        let theirs_by_class = per_class::by_class(observations, &their_instances, &pinned);
        let class_map = per_class::class_map(map, &ours, &theirs_by_class);
        let (observations, groups) = compare::against(
            (ours, groups),
            (theirs_by_class, their_groups),
            &other.plan.name,
            &class_map,
        )?;
        inputs.runs.extend(theirs.runs);
        let name = ComparisonName::of(by, Some(&other.plan.name), true);
        self.write_comparison(&inputs.runs, observations, groups, &asked, name)
    }
}
