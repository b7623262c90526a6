//! `schedlab compare` and `schedlab plan`: the analysed runs' figures compared between groups,
//! written under `compare/`, and how many runs a difference needs.

use std::collections::BTreeMap;
use std::path::PathBuf;

use schedlab_analyze::compare::{CompareInputs, GroupBy, Selection};
use schedlab_spec::variant_text;
use schedlab_tables::{ComparisonRow, RunRow, read_table};

use crate::error::RunnerError;
use crate::runner::Runner;
use crate::{config_diff, lock};

/// What a comparison was asked for: how runs are grouped, which groups, and the smallest
/// difference of interest.
pub(crate) struct Asked<'a> {
    pub(crate) by: &'a GroupBy,
    pub(crate) selection: &'a Selection,
    pub(crate) min_effect_pct: Option<f64>,
}

/// What `schedlab compare` computed and where it wrote it.
#[derive(Debug)]
pub struct Comparison {
    /// What differs between the groups' configurations ([`config_diff::differences`]), the
    /// lines the Markdown file opens with.
    pub config: Vec<String>,
    pub rows: Vec<ComparisonRow>,
    pub parquet: PathBuf,
    pub markdown: PathBuf,
    /// The same as a page with a chart per figure.
    pub html: PathBuf,
}

impl<'a> Runner<'a> {
    /// Compares the analysed runs, grouped by `by`, the groups and baseline `selection` names
    /// (`schedlab compare`), differences under `min_effect_pct` percent being noise: reads
    /// `tables/` and `aggregates/` and writes `compare/by-<by>.parquet` and `.md`. It computes
    /// no stage: run the analysis first ([`crate::StageSelection::analysis`]).
    pub fn compare(
        &self,
        by: &GroupBy,
        selection: &Selection,
        min_effect_pct: Option<f64>,
    ) -> Result<Comparison, RunnerError> {
        let _lock = lock::acquire(&self.layout.lock(), "schedlab compare")?;
        let inputs = self.compare_inputs()?;
        let (observations, groups) = schedlab_analyze::compare::observations(&inputs, by)?;
        let asked = Asked {
            by,
            selection,
            min_effect_pct,
        };
        let name = ComparisonName::of(by, None, false);
        self.write_comparison(&inputs.runs, observations, groups, &asked, name)
    }

    /// Like [`Runner::compare`], with the runs of `other` (another pipeline, grouped by its
    /// variants) as the baseline groups (`schedlab compare A --against B`); `map` pairs a
    /// workload here with one there (`(ours, theirs)`). Writes
    /// `compare/by-<by>-against-<other>.{parquet,md}`.
    pub fn compare_against(
        &self,
        other: &Runner<'_>,
        by: &GroupBy,
        map: &[(String, String)],
        selection: &Selection,
        min_effect_pct: Option<f64>,
    ) -> Result<Comparison, RunnerError> {
        let _lock = lock::acquire(&self.layout.lock(), "schedlab compare")?;
        let _theirs = lock::acquire(&other.layout.lock(), "schedlab compare")?;
        let mut inputs = self.compare_inputs()?;
        let theirs = other.compare_inputs()?;
        let ours = schedlab_analyze::compare::observations(&inputs, by)?;
        let variants = schedlab_analyze::compare::observations(&theirs, &GroupBy::Variant)?;
        let their_groups = variants.1.len();
        let (observations, groups) =
            schedlab_analyze::compare::against(ours, variants, &other.plan.name, map)?;
        // The other pipeline is the baseline unless asked otherwise: its group with the most
        // runs (of those --groups keeps).
        let mut selection = selection.clone();
        if selection.baseline.is_none() {
            let candidates: Vec<String> = (groups[..their_groups].iter())
                .filter(|g| selection.keeps(g))
                .cloned()
                .collect();
            selection.baseline =
                schedlab_analyze::compare::default_baseline(&observations, &candidates)
                    .map(|i| candidates[i].clone());
        }
        inputs.runs.extend(theirs.runs);
        let asked = Asked {
            by,
            selection: &selection,
            min_effect_pct,
        };
        let name = ComparisonName::of(by, Some(&other.plan.name), false);
        self.write_comparison(&inputs.runs, observations, groups, &asked, name)
    }

    /// Compares `observations` and writes the result, opened by the configuration differences
    /// of `runs`, under `name`.
    pub(crate) fn write_comparison(
        &self,
        runs: &[RunRow],
        observations: Vec<schedlab_analyze::compare::Observation>,
        groups: Vec<String>,
        asked: &Asked<'_>,
        name: ComparisonName,
    ) -> Result<Comparison, RunnerError> {
        let by = asked.by;
        let rows = schedlab_analyze::compare::compare(
            &observations,
            &groups,
            by,
            asked.selection,
            asked.min_effect_pct,
        )?;
        let config = config_differences(runs, &observations, &groups, &rows, by);
        let dir = self.layout.compare();
        std::fs::create_dir_all(&dir).map_err(|source| RunnerError::Io {
            path: dir.clone(),
            source,
        })?;
        let ComparisonName { key, title } = name;
        let (parquet, markdown) = self.layout.comparison(&key);
        schedlab_tables::write_rows(&parquet, &rows)?;
        schedlab_tables::write_rows(&self.layout.comparison_observations(&key), &observations)?;
        let mut text = format!(
            "# {}: compared by {}\n\nConfiguration in force:\n\n```text\n{}\n```\n\n{}",
            self.plan.name,
            title,
            config.join("\n"),
            schedlab_report::comparison_table(&rows)
        );
        if let Some(line) = schedlab_analyze::compare::adjustment(&rows) {
            text += &format!("\n{line}\n");
        }
        let notes = schedlab_analyze::compare::notes(&rows);
        if !notes.is_empty() {
            text += &format!("\n## Notes\n\n{}\n", notes.join("\n"));
        }
        let page_title = format!("{}: compared by {title}", self.plan.name);
        let page = schedlab_report::comparison_page(&page_title, &text, &rows)?;
        let html = self.layout.comparison_html(&key);
        for (path, bytes) in [(&markdown, text.as_bytes()), (&html, page.as_bytes())] {
            schedlab_tables::write_file_atomic(path, bytes).map_err(|source| RunnerError::Io {
                path: path.clone(),
                source,
            })?;
        }
        Ok(Comparison {
            config,
            rows,
            parquet,
            markdown,
            html,
        })
    }

    /// How many runs per group the analysed runs, grouped by `by`, need for a difference of
    /// `detect_pct` percent from the baseline `selection` names to be found (`schedlab plan`), and how
    /// long collecting the missing ones takes with the pipeline's cooldown. Writes nothing.
    pub fn runs_needed(
        &self,
        by: &GroupBy,
        selection: &Selection,
        detect_pct: f64,
    ) -> Result<Vec<schedlab_tables::RunsNeeded>, RunnerError> {
        let _lock = lock::acquire(&self.layout.lock(), "schedlab plan")?;
        let inputs = self.compare_inputs()?;
        let (observations, groups) = schedlab_analyze::compare::observations(&inputs, by)?;
        // Every run of a pipeline has the same collect section, so the same cooldown.
        let cooldown = (self.plan.runs.first())
            .and_then(|run| run.collect.cooldown)
            .unwrap_or_default();
        Ok(schedlab_analyze::compare::runs_needed(
            &observations,
            &groups,
            selection,
            detect_pct,
            &inputs.runs,
            cooldown.as_secs_f64(),
        )?)
    }

    /// The tables a comparison reads, from `tables/` and `aggregates/`.
    pub(crate) fn compare_inputs(&self) -> Result<CompareInputs, RunnerError> {
        let (tables, aggregates) = (self.layout.tables(), self.layout.aggregates());
        Ok(CompareInputs {
            variant_order: self.plan.variants.iter().map(variant_text).collect(),
            runs: read_table(&tables)?,
            processes: read_table(&tables)?,
            workload_metrics: read_table(&tables)?,
            cpu_time: read_table(&aggregates)?,
            throughput: read_table(&aggregates)?,
            cpu_share: read_table(&aggregates)?,
            cpu_activity: read_table(&aggregates)?,
            placement_cost: read_table(&aggregates)?,
            wakeup_placement: read_table(&aggregates)?,
            migration_classes: read_table(&aggregates)?,
            sched_delay_workloads: read_table(&aggregates)?,
            residency_rollup: read_table(&aggregates)?,
            totals: read_table(&aggregates)?,
            power_step: read_table(&aggregates)?,
        })
    }
}

/// What a comparison's files are named after (`compare/by-<key>.*`) and its title says.
pub(crate) struct ComparisonName {
    key: String,
    title: String,
}

impl ComparisonName {
    /// `by-<by>`, `-against-<other>` when another pipeline is the baseline, and `-per-class`
    /// when instances are compared per class (`compare --per-class`).
    pub(crate) fn of(by: &GroupBy, against: Option<&str>, per_class: bool) -> ComparisonName {
        let (mut key, mut title) = match against {
            Some(other) => (
                format!("{}-against-{other}", by.name()),
                format!("{}, against {other}", by.name()),
            ),
            None => (by.name().to_owned(), by.name().to_owned()),
        };
        if per_class {
            key.push_str("-per-class");
            title.push_str(", per class an instance ran on");
        }
        ComparisonName { key, title }
    }
}

/// How the configurations of the compared groups differ: the runs that gave figures, each in
/// its group, against the baseline the comparison used.
pub(crate) fn config_differences(
    runs: &[RunRow],
    observations: &[schedlab_analyze::compare::Observation],
    groups: &[String],
    rows: &[ComparisonRow],
    by: &GroupBy,
) -> Vec<String> {
    let Some(baseline) = rows.first().map(|r| r.baseline.as_str()) else {
        return Vec::new();
    };
    let group_of: BTreeMap<&str, &str> = (observations.iter())
        .map(|o| (o.run_id.as_str(), o.group.as_str()))
        .collect();
    let settings: Vec<config_diff::RunSettings> = (runs.iter())
        .filter_map(|run| {
            let group = group_of.get(run.run_id.as_str())?;
            Some(config_diff::RunSettings::of(run, group))
        })
        .collect();
    config_diff::differences(&settings, groups, baseline, by.name())
}
