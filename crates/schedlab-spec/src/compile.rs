//! Raw YAML model → checked [`Plan`]: every error at once, each with file:line:column.

mod analysis;
mod classes;
mod expect;
mod matrix;
mod runs;
mod short_form;

pub use matrix::substitute;

use classes::laid_over;
use matrix::matrix_combinations;

use std::cell::Cell;
use std::collections::BTreeMap;
use std::time::Duration;

use schedlab_topology::LAST_CPU;
use serde_saphyr::Spanned;

use crate::diagnostic::{Diagnostic, hint_for_serde_message};
use crate::locate::{Part, Place, Positions, Step, yaml_path};
use crate::plan::{AggregateStep, Plan, Summarize, variant_text};
use crate::raw::RawPipeline;
use crate::selector::WorkloadSelector;

/// What compilation needs from the rest of schedlab.
#[derive(Debug, Clone)]
pub struct CompileOptions<'a> {
    /// Parser names a workload's `parse:` may use.
    pub parsers: &'a [&'a str],
    /// Value of the built-in `${nproc}`.
    pub nproc: usize,
    /// This machine's core classes, fastest first, each with its CPUs (what
    /// `schedlab_topology::classes` gives). The pipeline's `topology:` is laid
    /// over them, and the result is what `cpus: [P]`, `cpus: ["E:1"]` and `${nproc_P}` name: a
    /// class not in it is an error, never an empty set.
    pub classes: &'a [(String, Vec<u32>)],
    /// Compile the pipeline's short form (its `short:` values instead of its own), named
    /// `<name>-short` so that its runs have their own data directory.
    pub short: bool,
    /// Whether a text may be part of a directory name (the pipeline's name, a matrix variable
    /// or value); if not, the rule in words. The runner names the directories, so the rule is
    /// its own (`schedlab_runner::layout::check_name_part`, which also checks `--label`).
    pub name_part: fn(&str) -> Result<(), String>,
    /// Repetitions instead of the pipeline's `repeat` (the command line's `--repeat`). Run ids do
    /// not depend on it, so raising it adds the missing repetitions only.
    pub repeat: Option<u32>,
}

/// The most runs a pipeline may expand to (matrix × repeat): more is a typo, and expanding it
/// would exhaust memory before anything could say so.
const MOST_RUNS: usize = 10_000;

/// Parses and checks a pipeline. `file` is only used in messages.
pub fn compile(
    file: &str,
    source: &str,
    options: &CompileOptions<'_>,
) -> Result<Plan, Vec<Diagnostic>> {
    check(file, source, options, None)
}

/// Parses and checks a pipeline for `schedlab import`, whose command line names `workloads`
/// (`--workload NAME=SELECTOR`): they count as the pipeline's `import.workloads` (each replacing
/// one of the same name), so aggregate steps and expectations may name them, and a pipeline
/// with neither a `collect` nor an `import` section is taken as `import: {}`.
pub fn compile_for_import(
    file: &str,
    source: &str,
    options: &CompileOptions<'_>,
    workloads: &[WorkloadSelector],
) -> Result<Plan, Vec<Diagnostic>> {
    check(file, source, options, Some(workloads))
}

/// The pipeline's `name:`, read before (and whether or not) the rest compiles; `None` when the
/// text has none.
pub fn name_of(source: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Named {
        name: String,
    }
    serde_saphyr::from_str::<Named>(source).ok().map(|n| n.name)
}

fn check(
    file: &str,
    source: &str,
    options: &CompileOptions<'_>,
    importing: Option<&[WorkloadSelector]>,
) -> Result<Plan, Vec<Diagnostic>> {
    let raw: RawPipeline =
        serde_saphyr::from_str(source).map_err(|err| vec![serde_diagnostic(file, source, &err)])?;
    let mut checker = Checker {
        file,
        source,
        options,
        importing,
        positions: Positions::of(source),
        errors: Vec::new(),
        classes: Vec::new(),
        has_short: false,
        lacks_class: Cell::new(false),
    };
    let plan = checker.plan(raw);
    if checker.errors.is_empty() {
        return Ok(plan);
    }
    let mut errors = checker.errors;
    // A full form written for a hybrid machine, refused here: say what does run here.
    if checker.lacks_class.get() && checker.has_short && !options.short {
        let short = CompileOptions {
            short: true,
            ..options.clone()
        };
        if check(file, source, &short, importing).is_ok() {
            let runs_here =
                format!("its short form runs on this machine: `schedlab run {file} --short`");
            for error in errors
                .iter_mut()
                .filter(|e| e.message.contains(NOT_A_CLASS))
            {
                error.hint = Some(match &error.hint {
                    Some(hint) => format!("{runs_here}; or: {hint}"),
                    None => runs_here.clone(),
                });
            }
        }
    }
    Err(errors)
}

/// What the error about a class the machine lacks says (and how the hint about the short form
/// finds those errors).
const NOT_A_CLASS: &str = "is not a core class of this machine";

fn serde_diagnostic(file: &str, source: &str, err: &serde_saphyr::Error) -> Diagnostic {
    let plain = err.render_with_options(serde_saphyr::render_options! {
        snippets: serde_saphyr::SnippetMode::Off,
    });
    // An error serde-saphyr cannot place is about the document as a whole.
    let (line, column) = err
        .location()
        .map_or((1, 1), |l| (l.line().max(1), l.column().max(1)));
    let message = plain
        .rsplit_once(" at line ")
        .map(|(message, _)| message.to_owned())
        .unwrap_or(plain);
    let hint = hint_for_serde_message(&message);
    Diagnostic::at(file, source, line, column, message).with_hint(hint)
}

struct Checker<'a> {
    file: &'a str,
    source: &'a str,
    options: &'a CompileOptions<'a>,
    /// For `schedlab import`: the workloads its command line names.
    importing: Option<&'a [WorkloadSelector]>,
    positions: Positions,
    errors: Vec<Diagnostic>,
    /// The machine's classes with the pipeline's `topology:` laid over them.
    classes: Vec<(String, Vec<u32>)>,
    /// The pipeline has a `short:` section.
    has_short: bool,
    /// An error named a class this machine lacks.
    lacks_class: Cell<bool>,
}

impl Checker<'_> {
    fn error(&mut self, place: Place, message: String, hint: Option<String>) {
        self.errors.push(
            Diagnostic::at(self.file, self.source, place.line, place.column, message)
                .with_hint(hint),
        );
    }

    fn error_at<T>(&mut self, at: &Spanned<T>, message: String, hint: Option<String>) {
        self.error(Place::from(at.referenced), message, hint);
    }

    /// For errors about a key or a plain value, whose position serde does not keep: looked up
    /// by its YAML path.
    fn error_at_path(&mut self, at: &[Step], part: Part, message: String, hint: Option<String>) {
        self.error(self.positions.place(at, part), message, hint);
    }

    /// A count (`threads`, `instances`, `repeat`) of 0, which would run nothing.
    fn at_least_one(&mut self, at: &[Step], key: &str, count: Option<u32>) {
        if count == Some(0) {
            self.error_at_path(
                at,
                Part::Value,
                format!("`{key}` is 0, which runs nothing"),
                Some(format!("`{key}` is at least 1")),
            );
        }
    }

    /// A duration that means nothing when zero (a period, an interval, a time limit).
    fn longer_than_zero(&mut self, at: &[Step], key: &str, duration: Option<Duration>) {
        if duration.is_some_and(|d| d.is_zero()) {
            self.error_at_path(
                at,
                Part::Value,
                format!("`{key}` must be longer than 0"),
                None,
            );
        }
    }

    /// A text (at `place`) that becomes part of a directory name, checked against the
    /// runner's rule.
    fn directory_name_part(&mut self, place: Place, what: &str, text: &str) {
        if let Err(rule) = (self.options.name_part)(text) {
            let message = format!("{what} `{text}` is not usable in a directory name");
            self.error(place, message, Some(rule));
        }
    }

    /// The pipeline's name is its data directory's (`data/<name>/`), never part of a run
    /// directory's name, so `.` is allowed (`kernel-6.8`), but not a name of dots alone, which
    /// would leave `data/`.
    fn pipeline_name(&mut self, name: &Spanned<String>) {
        let text = &name.value;
        let allowed = |c: char| c.is_ascii_alphanumeric() || "-_.".contains(c);
        if text.chars().all(|c| c == '.') || !text.chars().all(allowed) {
            self.error_at(
                name,
                format!("pipeline name `{text}` is not usable as a directory name"),
                Some("use letters, digits, `-`, `_` and `.`".into()),
            );
        }
    }

    fn plan(&mut self, mut raw: RawPipeline) -> Plan {
        let short = self.short_form(&mut raw);
        let short_topology = short.topology;
        if let Some(repeat) = self.options.repeat {
            raw.repeat = Some(repeat);
        }
        let mut name = raw.name.value.clone();
        if self.options.short {
            name.push_str("-short");
        }
        self.pipeline_name(&raw.name);
        // The short form's topology is under `short`, and its errors point there.
        let topology_at = if short_topology {
            yaml_path!["short", "topology"].to_vec()
        } else {
            yaml_path!["topology"].to_vec()
        };
        let topology: Vec<(String, Vec<u32>)> = (raw.topology.iter().flatten())
            .map(|(class, items)| {
                let mut at = topology_at.clone();
                at.push(Step::from(class));
                let cpus = self.cpu_list(&at, items, &BTreeMap::new(), false);
                (class.clone(), cpus)
            })
            .collect();
        self.classes = laid_over(self.options.classes, &topology);
        self.aggregate(&raw);
        let class_order = self.class_order(&raw);
        let matrix = self.matrix(&raw.matrix, &self.base_vars(&raw));
        self.at_least_one(&yaml_path!["repeat"], "repeat", raw.repeat);
        let runs_count = (raw.matrix.values())
            .fold(1_usize, |count, values| count.saturating_mul(values.len()))
            .saturating_mul(raw.repeat.unwrap_or(1) as usize);
        let (variants, runs) = if runs_count > MOST_RUNS {
            let at = if raw.repeat.is_some() {
                yaml_path!["repeat"]
            } else {
                yaml_path!["matrix"]
            };
            self.error_at_path(
                &at,
                Part::Value,
                format!("the pipeline expands to {runs_count} runs (matrix × repeat)"),
                Some(format!("at most {MOST_RUNS}")),
            );
            (Vec::new(), Vec::new())
        } else {
            let variants = matrix_combinations(&matrix);
            let runs = self.runs(&raw, &variants);
            (variants, runs)
        };
        // `when` can leave a variant without workloads.
        if let Some(empty) = runs.iter().find(|r| r.collect.workloads.is_empty())
            && raw
                .collect
                .as_ref()
                .is_some_and(|c| !c.workloads.is_empty())
            && self.errors.is_empty()
        {
            self.error_at_path(
                &yaml_path!["collect", "workloads"],
                Part::Key,
                format!(
                    "no workload runs in variant `{}`",
                    variant_text(&empty.variant)
                ),
                Some("a run needs at least one workload whose `when` is true".into()),
            );
        }
        let mut import = self.import(&raw);
        for named in self.importing.unwrap_or_default() {
            import.retain(|w| w.workload != named.workload);
            import.push(named.clone());
        }
        // The short form's expectations are under `short`, and their errors point there.
        let expect_at = if short.expect {
            yaml_path!["short", "expect"].to_vec()
        } else {
            yaml_path!["expect"].to_vec()
        };
        let known = expect::Known::of(&raw, &matrix, &import);
        let expect = self.expectations(&raw.expect, &expect_at, &known);
        if raw.collect.is_none() && raw.import.is_none() && self.importing.is_none() {
            self.error_at(
                &raw.name,
                "the pipeline has neither a `collect` nor an `import` section".into(),
                Some(
                    "add `collect:` with the workloads to run, or `import:` to analyse \
                     recordings made by hand (`schedlab import`)"
                        .into(),
                ),
            );
        }
        Plan {
            name,
            description: raw.description,
            runs,
            variants,
            topology,
            class_order,
            import,
            aggregate: raw.aggregate.iter().map(AggregateStep::from).collect(),
            summarize: Summarize {
                expect,
                ..Summarize::from(raw.summarize)
            },
        }
    }
}
