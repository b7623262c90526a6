//! `schedlab compare`: the analysis brought up to date (the other pipeline's too, with
//! `--against`), then each figure's groups against the baseline, as a table or JSON.

use std::path::Path;
use std::process::ExitCode;

use anyhow::bail;
use schedlab_runner::{Runner, StageSelection, progress};

use super::EXIT_INTERRUPTED;
use super::pipeline::execute_then;
use crate::cli::{Common, CompareArgs, Form, Groups};

/// What `compare` and `plan` were asked to show.
pub struct Asked<'a> {
    pub groups: &'a Groups,
    /// Only the figures whose name (or a name it stands for) contains one of these.
    pub metric: &'a [String],
    pub min_effect: Option<f64>,
    pub json: bool,
    /// Each workload's instances per core class they ran on (`compare --per-class`).
    pub per_class: bool,
}

impl Asked<'_> {
    pub fn shows(&self, metric: &str, stands_for: Option<&str>) -> bool {
        let names =
            std::iter::once(metric).chain(stands_for.into_iter().flat_map(|s| s.split(',')));
        self.metric.is_empty()
            || names
                .into_iter()
                .any(|n| self.metric.iter().any(|m| n.contains(m)))
    }
}

/// Brings the analysis up to date, then prints the comparison's figures (those whose name
/// contains one of `--metric`, or all).
pub fn compare(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let asked = Asked {
        groups: &args.groups,
        metric: &args.metric,
        min_effect: args.min_effect,
        json: args.json,
        per_class: args.per_class,
    };
    let (pipeline, common, form) = (&args.pipeline, &args.common, args.form);
    let Some(other) = args.against.as_deref() else {
        return compare_with(pipeline, common, form, &asked, None);
    };
    // The other pipeline's analysis first, then this one's, then both compared.
    execute_then(
        other,
        common,
        form.into(),
        StageSelection::analysis(),
        |theirs, outcome| {
            if outcome.interrupted {
                return Ok(ExitCode::from(EXIT_INTERRUPTED));
            }
            compare_with(pipeline, common, form, &asked, Some((theirs, &args.map)))
        },
    )
}

/// `compare` once the other pipeline (if any) is analysed.
fn compare_with(
    pipeline: &Path,
    common: &Common,
    form: Form,
    asked: &Asked<'_>,
    against: Option<(&Runner<'_>, &[(String, String)])>,
) -> anyhow::Result<ExitCode> {
    let analysis = StageSelection::analysis();
    execute_then(
        pipeline,
        common,
        form.into(),
        analysis,
        |runner, outcome| {
            if outcome.interrupted {
                return Ok(ExitCode::from(EXIT_INTERRUPTED));
            }
            let by = schedlab_runner::GroupBy::from_name(&asked.groups.by);
            let selection = asked.groups.selection();
            // Reading every run's figures and drawing a chart per figure takes seconds on many runs.
            let bar = progress::spinner("compare");
            let comparison = match against {
                _ if asked.per_class => {
                    let (other, map) = against.map_or((None, &[][..]), |(o, m)| (Some(o), m));
                    runner.compare_per_class(other, &by, map, &selection, asked.min_effect)
                }
                None => runner.compare(&by, &selection, asked.min_effect),
                Some((other, map)) => {
                    runner.compare_against(other, &by, map, &selection, asked.min_effect)
                }
            };
            bar.finish_and_clear();
            let comparison = comparison?;
            // How many differences q adjusts for: all the comparison's, not only those shown.
            let adjustment = schedlab_runner::adjustment(&comparison.rows);
            let shown: Vec<_> = (comparison.rows.into_iter())
                .filter(|r| asked.shows(&r.metric, r.stands_for.as_deref()))
                .collect();
            if shown.is_empty() && !asked.metric.is_empty() {
                bail!(
                    "no figure's name contains {} (see {})",
                    asked.metric.join(" or "),
                    comparison.markdown.display()
                );
            }
            if shown.is_empty() {
                bail!(
                    "the runs have no figures to compare (hint: a workload with `parse:`, or the \
                 cpu_time, cpu_share or cpu_activity aggregates, give them)"
                );
            }
            if asked.json {
                println!("{}", serde_json::to_string_pretty(&shown)?);
            } else {
                println!("{}\n", comparison.config.join("\n"));
                print!("{}", schedlab_runner::comparison_table(&shown));
                if let Some(line) = adjustment {
                    println!("\n{line}");
                }
                let notes = schedlab_runner::notes(&shown);
                if !notes.is_empty() {
                    println!("\n{}", notes.join("\n"));
                }
            }
            eprintln!(
                "compare: wrote {}, {} (a chart per figure) and {}",
                comparison.markdown.display(),
                comparison.html.display(),
                comparison.parquet.display()
            );
            Ok(ExitCode::SUCCESS)
        },
    )
}
