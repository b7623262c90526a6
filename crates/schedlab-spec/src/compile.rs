//! Raw YAML model → checked [`Plan`]: every error at once, each with file:line:column.

mod expect;

use std::cell::Cell;
use std::collections::BTreeMap;
use std::time::Duration;

use schedlab_topology::LAST_CPU;
use serde_saphyr::Spanned;

use crate::diagnostic::{Diagnostic, closest, hint_for_serde_message};
use crate::duration::parse_duration;
use crate::locate::{Part, Place, Positions, Step, yaml_path};
use crate::plan::{
    AggregateStep, CollectPlan, CpuSamplerOptions, MonitorKind, MonitorPlan, PerfSchedOptions,
    PeriodicOptions, PlacementOptions, Plan, Program, RecordingWindow, RunPlan, Summarize,
    TurbostatOptions, WorkloadPlan, variant_text,
};
use crate::raw::{
    CpuItem, RawCollect, RawCount, RawDuration, RawMonitor, RawPerfSched, RawPeriodic, RawPipeline,
    RawStep, RawSummarize, RawWorkload, Scalar,
};
use crate::selector::{Select, WorkloadSelector};

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

/// Which of a pipeline's values its short form replaced (with `--short`).
#[derive(Default)]
struct ShortParts {
    topology: bool,
    expect: bool,
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

    /// The short form's values checked against what they replace (always, so that `validate`
    /// finds a typo in either form), and with `--short`, put in place of the pipeline's own.
    /// Returns which of the topology and the expectations are now the short form's.
    fn short_form(&mut self, raw: &mut RawPipeline) -> ShortParts {
        self.has_short = raw.short.is_some();
        let Some(short) = raw.short.take() else {
            if self.options.short {
                self.error_at(
                    &raw.name,
                    format!("pipeline `{}` has no short form", raw.name.value),
                    Some("add a `short:` section (`short: {}` when it is short already)".into()),
                );
            }
            return ShortParts::default();
        };
        let replaced = [
            (
                "vars",
                short.vars.keys().collect::<Vec<_>>(),
                raw.vars.keys().collect::<Vec<_>>(),
            ),
            (
                "matrix",
                short.matrix.keys().collect(),
                raw.matrix.keys().collect(),
            ),
        ];
        for (section, set, defined) in replaced {
            for key in set.into_iter().filter(|key| !defined.contains(key)) {
                let hint = closest(key, defined.iter().map(|k| k.as_str()))
                    .map(|best| format!("did you mean `{best}`?"))
                    .or_else(|| Some(format!("a short form only replaces values of `{section}`")));
                self.error_at_path(
                    &yaml_path!["short", section, key],
                    Part::Key,
                    format!("the short form sets `{key}`, which `{section}` does not define"),
                    hint,
                );
            }
        }
        if !self.options.short {
            return ShortParts::default();
        }
        raw.vars.extend(short.vars);
        raw.matrix.extend(short.matrix);
        raw.repeat = short.repeat.or(raw.repeat);
        let parts = ShortParts {
            topology: short.topology.is_some(),
            expect: short.expect.is_some(),
        };
        if parts.topology {
            raw.topology = short.topology;
        }
        if let Some(expect) = short.expect {
            raw.expect = expect;
        }
        parts
    }

    /// `class_order`: each class once, and only declared classes when the pipeline declares
    /// its topology (detected class names are known only at analysis).
    fn class_order(&mut self, raw: &RawPipeline) -> Vec<String> {
        let mut order: Vec<String> = Vec::new();
        for class in raw.class_order.iter().flatten() {
            if order.contains(&class.value) {
                self.error_at(
                    class,
                    format!("class `{}` is listed twice", class.value),
                    Some("list each class once, fastest first".into()),
                );
            } else if let Some(declared) = &raw.topology
                && !declared.contains_key(&class.value)
            {
                let hint = closest(&class.value, declared.keys().map(String::as_str))
                    .map(|best| format!("did you mean `{best}`?"));
                self.error_at(
                    class,
                    format!(
                        "`{}` is not a class of this pipeline's `topology`",
                        class.value
                    ),
                    hint,
                );
            }
            order.push(class.value.clone());
        }
        order
    }

    /// `import.workloads`: each a selector.
    fn import(&mut self, raw: &RawPipeline) -> Vec<WorkloadSelector> {
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

    fn aggregate(&mut self, raw: &RawPipeline) {
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

    /// Matrix variables become part of run directory names, and a variable without values would
    /// leave the pipeline without runs. Values may be any text (`0.5`, `1.2GHz`, `a/b`): the
    /// runner makes them safe for a directory name and the manifest keeps them as written. A
    /// value may use the pipeline's `vars` and `${nproc}` (`workers: [1, 2, "${nproc}"]`); one
    /// that comes out equal to another value of its variable is an error, since both would be
    /// the same runs. Returns the values, substituted.
    fn matrix(
        &mut self,
        matrix: &BTreeMap<String, Vec<Scalar>>,
        vars: &BTreeMap<String, String>,
    ) -> BTreeMap<String, Vec<String>> {
        let mut substituted = BTreeMap::new();
        for (variable, values) in matrix {
            let at = yaml_path!["matrix", variable];
            let place = self.positions.place(&at, Part::Key);
            self.directory_name_part(place, "matrix variable", variable);
            if values.is_empty() {
                self.error_at_path(
                    &at,
                    Part::Value,
                    format!("matrix variable `{variable}` has no values"),
                    Some(format!("list one or more: `{variable}: [1, 2]`")),
                );
            }
            let mut texts: Vec<String> = Vec::new();
            for (index, value) in values.iter().enumerate() {
                let written = value.to_string();
                let at = yaml_path!["matrix", variable, index];
                let text = match substitute(&written, vars) {
                    Ok(text) => text,
                    Err(unknown) => {
                        let (message, hint) = self.undefined_variable(
                            &unknown,
                            vars,
                            "matrix values may use `vars:` and `${nproc}`",
                        );
                        self.error_at_path(&at, Part::Value, message, hint);
                        continue;
                    }
                };
                if texts.contains(&text) {
                    let message = if text == written {
                        format!("matrix value `{text}` is listed twice")
                    } else {
                        format!(
                            "matrix value `{written}` is `{text}` here, which `{variable}` already lists"
                        )
                    };
                    self.error_at_path(&at, Part::Value, message, None);
                    continue;
                }
                texts.push(text);
            }
            substituted.insert(variable.clone(), texts);
        }
        substituted
    }

    /// The variables every run has: the pipeline's `vars`, `nproc`, and per core class `C`,
    /// `nproc_C` (its CPUs) and `nproc_except_C` (the CPUs of every other class).
    fn base_vars(&self, raw: &RawPipeline) -> BTreeMap<String, String> {
        let mut vars: BTreeMap<String, String> = (raw.vars.iter())
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect();
        vars.insert("nproc".into(), self.options.nproc.to_string());
        let every: usize = self.classes.iter().map(|(_, cpus)| cpus.len()).sum();
        for (class, cpus) in &self.classes {
            vars.insert(format!("nproc_{class}"), cpus.len().to_string());
            vars.insert(
                format!("nproc_except_{class}"),
                (every - cpus.len()).to_string(),
            );
        }
        vars
    }

    /// What to say about `${name}`, which `vars` does not define: a `nproc_` name is about a
    /// core class the machine lacks; otherwise the closest name, or `otherwise`.
    fn undefined_variable(
        &self,
        name: &str,
        vars: &BTreeMap<String, String>,
        otherwise: &str,
    ) -> (String, Option<String>) {
        let class = (name.strip_prefix("nproc_except_")).or_else(|| name.strip_prefix("nproc_"));
        if let Some(class) = class {
            return self.missing_class(class);
        }
        let hint = closest(name, vars.keys().map(String::as_str))
            .map(|best| format!("did you mean `${{{best}}}`?"))
            .unwrap_or_else(|| otherwise.to_owned());
        (format!("undefined variable `${{{name}}}`"), Some(hint))
    }

    /// A core class this machine (with the pipeline's `topology:`) does not have.
    fn missing_class(&self, class: &str) -> (String, Option<String>) {
        self.lacks_class.set(true);
        let names: Vec<&str> = self.classes.iter().map(|(name, _)| name.as_str()).collect();
        let has = if names.is_empty() {
            "no known classes".to_owned()
        } else {
            names.join(", ")
        };
        let message = format!("`{class}` {NOT_A_CLASS} (it has {has})");
        let hint = (names.iter())
            .find(|name| name.eq_ignore_ascii_case(class))
            .map(|name| format!("did you mean `{name}`?"))
            .unwrap_or_else(|| {
                "`schedlab topology` lists the classes; a pipeline can declare its own, \
                 e.g. `topology: { P: [0], E: [1] }`"
                    .into()
            });
        (message, Some(hint))
    }

    /// Expands matrix × repeat, interleaving variants: rep 1 of every variant, then rep 2, …
    fn runs(&mut self, raw: &RawPipeline, variants: &[BTreeMap<String, String>]) -> Vec<RunPlan> {
        let Some(section) = &raw.collect else {
            return Vec::new();
        };
        let repeat = raw.repeat.unwrap_or(1);
        let mut runs = Vec::new();
        let mut rng = raw.shuffle.map(fastrand::Rng::with_seed);
        for repetition in 1..=repeat {
            let mut order: Vec<&BTreeMap<String, String>> = variants.iter().collect();
            if let Some(rng) = &mut rng {
                rng.shuffle(&mut order);
            }
            for variant in order {
                let mut vars = self.base_vars(raw);
                vars.extend(variant.clone());
                let errors_before = self.errors.len();
                let collect = self.collect_plan(section, &vars);
                // The same error from every run is reported once; an error only some variants
                // make (a `when` or CPU list that a matrix value breaks) is kept.
                let new = self.errors.split_off(errors_before);
                for error in new {
                    if !self.errors.contains(&error) {
                        self.errors.push(error);
                    }
                }
                let key = if variant.is_empty() {
                    format!("r{repetition}")
                } else {
                    format!("{}-r{repetition}", variant_text(variant))
                };
                runs.push(RunPlan {
                    key,
                    variant: variant.clone(),
                    repetition,
                    collect,
                });
            }
        }
        runs
    }

    fn collect_plan(
        &mut self,
        collect: &RawCollect,
        vars: &BTreeMap<String, String>,
    ) -> CollectPlan {
        let duration_at = yaml_path!["collect", "duration"];
        let duration = self.duration(&duration_at, collect.duration.as_ref(), vars);
        self.longer_than_zero(&duration_at, "duration", duration);
        let cooldown_at = yaml_path!["collect", "cooldown"];
        let cooldown = self.duration(&cooldown_at, collect.cooldown.as_ref(), vars);
        let monitors = (collect.monitors.iter())
            .filter_map(|(name, monitor)| self.monitor(name, monitor, vars))
            .collect();
        let mut workloads = Vec::new();
        for (name, workload) in &collect.workloads {
            if let Some(when) = &workload.when
                && !self.runs_when(when, vars)
            {
                continue;
            }
            workloads.extend(self.workload(name, workload, vars, collect.duration.is_some()));
        }
        if collect.workloads.is_empty() {
            self.error_at_path(
                &yaml_path!["collect", "workloads"],
                Part::Key,
                "a pipeline needs at least one workload".into(),
                None,
            );
        }
        let record = (collect.record.iter().enumerate())
            .filter_map(|(index, pattern)| self.record_pattern(index, pattern, vars))
            .collect();
        CollectPlan {
            duration,
            cooldown,
            monitors,
            workloads,
            record,
        }
    }

    /// One of `collect.record`: a glob (its `${vars}` substituted) of files to record with the
    /// configuration in force.
    fn record_pattern(
        &mut self,
        index: usize,
        pattern: &Spanned<String>,
        vars: &BTreeMap<String, String>,
    ) -> Option<String> {
        let text = self.substituted(pattern, &pattern.value, vars);
        let at = yaml_path!["collect", "record", index];
        if text.trim().is_empty() {
            let message = "an empty path to record".to_owned();
            self.error_at_path(&at, Part::Value, message, None);
            return None;
        }
        if let Err(err) = glob::Pattern::new(&text) {
            self.error_at(
                pattern,
                format!("`{text}` is not a glob pattern: {}", err.msg),
                Some("a path, with `*`, `?` or `[...]` for any file name part".into()),
            );
            return None;
        }
        Some(text)
    }

    fn monitor(
        &mut self,
        name: &str,
        raw: &RawMonitor,
        vars: &BTreeMap<String, String>,
    ) -> Option<MonitorPlan> {
        let at = yaml_path!["collect", "monitors", name];
        let interval_at = |kind: &str| yaml_path!["collect", "monitors", name, kind, "interval"];
        let mut kinds = Vec::new();
        if let Some(o) = &raw.perf_sched {
            let window = o.window.as_ref().and_then(|w| w.duration).map(|d| d.0);
            let at = yaml_path![
                "collect",
                "monitors",
                name,
                "perf-sched",
                "window",
                "duration"
            ];
            self.longer_than_zero(&at, "duration", window);
            kinds.push(MonitorKind::PerfSched(o.into()));
        }
        // A sampling interval may come from `vars` (a short form samples a short workload
        // more often); an unresolved one has been reported, and the monitor is dropped.
        let mut interval = |kind: &str, raw: &RawDuration| -> Option<Duration> {
            let at = interval_at(kind);
            let duration = self.duration(&at, Some(raw), vars);
            self.longer_than_zero(&at, "interval", duration);
            duration
        };
        if let Some(o) = &raw.placement {
            let interval = interval("placement", &o.interval)?;
            kinds.push(MonitorKind::Placement(PlacementOptions { interval }));
        }
        if let Some(o) = &raw.turbostat {
            let interval = interval("turbostat", &o.interval)?;
            let show = o.show.clone();
            kinds.push(MonitorKind::Turbostat(TurbostatOptions { interval, show }));
        }
        if let Some(o) = &raw.cpu {
            let interval = interval("cpu", &o.interval)?;
            kinds.push(MonitorKind::Cpu(CpuSamplerOptions { interval }));
        }
        if let Some(o) = &raw.command {
            if o.run.is_empty() {
                let at = yaml_path!["collect", "monitors", name, "command", "run"];
                let message = format!("monitor `{name}` has an empty `run`");
                self.error_at_path(&at, Part::Value, message, None);
            }
            let argv = self.argv(&o.run, vars);
            let parse = o.parse.as_ref().and_then(|p| self.parser(p));
            kinds.push(MonitorKind::Command { argv, parse });
        }
        if kinds.len() != 1 {
            let message = format!(
                "monitor `{name}` must have exactly one kind, found {}",
                kinds.len()
            );
            self.error_at_path(
                &at,
                Part::Key,
                message,
                Some("kinds: perf-sched, placement, turbostat, cpu, command".into()),
            );
            return None;
        }
        Some(MonitorPlan {
            name: name.to_owned(),
            kind: kinds.remove(0),
            optional: raw.optional,
        })
    }

    fn workload(
        &mut self,
        name: &str,
        raw: &RawWorkload,
        vars: &BTreeMap<String, String>,
        has_duration: bool,
    ) -> Option<WorkloadPlan> {
        let at = |key: &str| yaml_path!["collect", "workloads", name, key];
        let program = self.program(name, raw, vars)?;
        let nice = raw.nice.unwrap_or(0);
        if !(-20..=19).contains(&nice) {
            let message = format!("nice {nice} is outside -20..=19");
            self.error_at_path(&at("nice"), Part::Value, message, None);
        }
        let instances = self.count(&at("instances"), raw.instances.as_ref(), vars);
        self.at_least_one(&at("instances"), "instances", instances);
        let timeout = self.duration(&at("timeout"), raw.timeout.as_ref(), vars);
        self.longer_than_zero(&at("timeout"), "timeout", timeout);
        let start_after = self.duration(&at("start_after"), raw.start_after.as_ref(), vars);
        // `"any"` (usually through a matrix variable) leaves the workload unpinned.
        let unpinned = |items: &Vec<CpuItem>| matches!(&items[..], [CpuItem::Range(text)] if substitute(text, vars).is_ok_and(|t| t == "any"));
        let cpus = (raw.cpus.as_ref())
            .filter(|items| !unpinned(items))
            .map(|items| self.cpu_list(&at("cpus"), items, vars, true));
        let parse = raw.parse.as_ref().and_then(|p| self.parser(p));
        let repeat_until_end = match &raw.repeat_until {
            Some(until) if until.value == "monitors" => {
                if !has_duration {
                    self.error_at(
                        until,
                        "`repeat_until: monitors` needs a collection `duration`".into(),
                        Some("set `collect.duration`, e.g. `duration: 70s`".into()),
                    );
                }
                true
            }
            Some(until) => {
                self.error_at(
                    until,
                    format!("unknown `repeat_until` value `{}`", until.value),
                    Some("the only value is `monitors`: restart until the monitors stop".into()),
                );
                false
            }
            None => false,
        };
        let stop_expected = match &raw.stop {
            Some(stop) if stop.value == "expected" => true,
            Some(stop) => {
                self.error_at(
                    stop,
                    format!("unknown `stop` value `{}`", stop.value),
                    Some(
                        "the only value is `expected`: schedlab stopping the workload (at the \
                         collection's end, or its timeout) is part of the experiment"
                            .into(),
                    ),
                );
                false
            }
            None => false,
        };
        Some(WorkloadPlan {
            name: name.to_owned(),
            program,
            start_after: start_after.unwrap_or(Duration::ZERO),
            nice,
            cpus,
            timeout,
            instances: instances.unwrap_or(1),
            parse,
            repeat_until_end,
            stop_expected,
        })
    }

    /// What a workload runs: its `run` argv or its `periodic` load, exactly one of them.
    fn program(
        &mut self,
        name: &str,
        raw: &RawWorkload,
        vars: &BTreeMap<String, String>,
    ) -> Option<Program> {
        let at = yaml_path!["collect", "workloads", name];
        match (&raw.run, &raw.periodic) {
            (Some(run), None) if run.is_empty() => {
                let at = yaml_path!["collect", "workloads", name, "run"];
                let message = format!("workload `{name}` has an empty `run`");
                self.error_at_path(&at, Part::Value, message, None);
                None
            }
            (Some(run), None) => Some(Program::External {
                argv: self.argv(run, vars),
            }),
            (None, Some(periodic)) => {
                self.periodic(&at, periodic);
                Some(Program::Periodic(periodic.into()))
            }
            _ => {
                let message = format!(
                    "workload `{name}` needs exactly one of `run` (an argv list) and `periodic`"
                );
                self.error_at_path(&at, Part::Key, message, None);
                None
            }
        }
    }

    /// The periodic load's options, under the workload at `workload`.
    fn periodic(&mut self, workload: &[Step], periodic: &RawPeriodic) {
        let at = |key: &str| {
            let mut at = workload.to_vec();
            at.extend(yaml_path!["periodic", key]);
            at
        };
        if periodic.busy.is_some() == periodic.duty.is_some() {
            let mut at = workload.to_vec();
            at.push(Step::from("periodic"));
            self.error_at_path(
                &at,
                Part::Key,
                "a periodic workload needs exactly one of `busy` and `duty`".into(),
                None,
            );
        }
        if periodic.duty.is_some_and(|d| !(0.0..=100.0).contains(&d)) {
            self.error_at_path(
                &at("duty"),
                Part::Value,
                "`duty` is a percentage between 0 and 100".into(),
                None,
            );
        }
        if periodic.busy.is_some_and(|b| b > periodic.period) {
            self.error_at_path(
                &at("busy"),
                Part::Key,
                "`busy` is longer than `period`".into(),
                None,
            );
        }
        self.at_least_one(&at("threads"), "threads", Some(periodic.threads));
        self.longer_than_zero(&at("period"), "period", Some(periodic.period.0));
        self.longer_than_zero(&at("duration"), "duration", Some(periodic.duration.0));
    }

    fn parser(&mut self, name: &Spanned<String>) -> Option<String> {
        if self.options.parsers.contains(&name.value.as_str()) {
            return Some(name.value.clone());
        }
        let hint = closest(&name.value, self.options.parsers.iter().copied())
            .map(|best| format!("did you mean `{best}`?"))
            .or_else(|| Some(format!("parsers: {}", self.options.parsers.join(", "))));
        self.error_at(name, format!("unknown parser `{}`", name.value), hint);
        None
    }

    fn argv(&mut self, items: &[Spanned<String>], vars: &BTreeMap<String, String>) -> Vec<String> {
        (items.iter())
            .map(|item| self.substituted(item, &item.value, vars))
            .collect()
    }

    /// `text` (the value at `at`) with its `${vars}` replaced; an undefined one is an error at
    /// `at`, and the text is kept as it is.
    fn substituted<T>(
        &mut self,
        at: &Spanned<T>,
        text: &str,
        vars: &BTreeMap<String, String>,
    ) -> String {
        match substitute(text, vars) {
            Ok(text) => text,
            Err(unknown) => {
                let (message, hint) =
                    self.undefined_variable(&unknown, vars, "define it under `vars:` or `matrix:`");
                self.error_at(at, message, hint);
                text.to_owned()
            }
        }
    }

    /// A duration at `at` as this run resolves it: written with `${vars}`, substituted and read
    /// now, an undefined variable or malformed result being an error at the value.
    fn duration(
        &mut self,
        at: &[Step],
        raw: Option<&RawDuration>,
        vars: &BTreeMap<String, String>,
    ) -> Option<Duration> {
        let text = match raw? {
            RawDuration::Known(span) => return Some(span.0),
            RawDuration::WithVars(text) => text,
        };
        let resolved = self.substituted_at(at, text, vars)?;
        match parse_duration(&resolved) {
            Ok(duration) => Some(duration),
            Err(message) => {
                let message = format!("`{text}` is `{resolved}` here: {message}");
                self.error_at_path(at, Part::Value, message, None);
                None
            }
        }
    }

    /// A count at `at` (`instances`), a number or a text with `${vars}` that comes out as one.
    fn count(
        &mut self,
        at: &[Step],
        raw: Option<&RawCount>,
        vars: &BTreeMap<String, String>,
    ) -> Option<u32> {
        let text = match raw? {
            RawCount::Number(count) => return Some(*count),
            RawCount::Text(text) => text,
        };
        let resolved = self.substituted_at(at, text, vars)?;
        let count = resolved.trim().parse().ok();
        if count.is_none() {
            let message = format!("`{text}` is `{resolved}` here, not a count");
            let hint = Some("a whole number, e.g. 4 or \"${nproc_except_P}\"".into());
            self.error_at_path(at, Part::Value, message, hint);
        }
        count
    }

    /// `text` (a plain value at `at`) with its `${vars}` replaced; None, with an error at `at`,
    /// when one is undefined.
    fn substituted_at(
        &mut self,
        at: &[Step],
        text: &str,
        vars: &BTreeMap<String, String>,
    ) -> Option<String> {
        match substitute(text, vars) {
            Ok(text) => Some(text),
            Err(unknown) => {
                let (message, hint) =
                    self.undefined_variable(&unknown, vars, "define it under `vars:` or `matrix:`");
                self.error_at_path(at, Part::Value, message, hint);
                None
            }
        }
    }

    /// Whether a workload with this `when` runs in a run with these variables: `true`, `on`,
    /// `yes` or `false`, `off`, `no`, usually through a matrix variable.
    fn runs_when(&mut self, when: &Spanned<Scalar>, vars: &BTreeMap<String, String>) -> bool {
        let text = self.substituted(when, &when.value.to_string(), vars);
        match text.to_ascii_lowercase().as_str() {
            "true" | "on" | "yes" => true,
            "false" | "off" | "no" => false,
            _ => {
                let message = format!("`when` is `{text}`, not true/false, on/off or yes/no");
                self.error_at(
                    when,
                    message,
                    Some(
                        "e.g. `when: \"${foreground}\"` with `matrix: { foreground: [on, off] }`"
                            .into(),
                    ),
                );
                true
            }
        }
    }

    /// CPU items (at `at`) as a sorted list; text items may use `${vars}` and commas
    /// (`"${cpu}"`, `"0,2-3"`), and where `classes` is true, core classes: `P` (every CPU of the
    /// class) and `E:2` (its first two CPUs).
    fn cpu_list(
        &mut self,
        at: &[Step],
        items: &[CpuItem],
        vars: &BTreeMap<String, String>,
        classes: bool,
    ) -> Vec<u32> {
        if items.is_empty() {
            self.error_at_path(
                at,
                Part::Value,
                "an empty CPU list".into(),
                Some("list one or more CPUs, e.g. `[0, \"2-3\"]`".into()),
            );
        }
        let mut cpus = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let mut at = at.to_vec();
            at.push(Step::Index(index));
            let text = match item {
                CpuItem::One(cpu) => cpu.to_string(),
                CpuItem::Range(text) => match self.substituted_at(&at, text, vars) {
                    Some(text) => text,
                    None => continue,
                },
            };
            for part in text.split(',') {
                let part = part.trim();
                let error = if let Some(range) = parse_range(part) {
                    cpus.extend(range);
                    continue;
                } else if classes && part.starts_with(|c: char| c.is_ascii_alphabetic()) {
                    match self.class_cpus(part) {
                        Ok(members) => {
                            cpus.extend(members);
                            continue;
                        }
                        // Through a variable (a matrix value, usually): say which value.
                        Err((message, hint)) => match item {
                            CpuItem::Range(written) if *written != text => {
                                (format!("`{written}` is `{text}` here: {message}"), hint)
                            }
                            _ => (message, hint),
                        },
                    }
                } else {
                    let classes = if classes {
                        ", a class (P, \"E:1\")"
                    } else {
                        ""
                    };
                    (
                        format!("`{text}` is not a CPU list"),
                        Some(format!(
                            "write CPUs (0 to {LAST_CPU}) as 3, \"4-11\"{classes}, \"any\" or \"${{var}}\" (a defined variable)"
                        )),
                    )
                };
                self.error_at_path(&at, Part::Value, error.0, error.1);
            }
        }
        cpus.sort_unstable();
        cpus.dedup();
        cpus
    }
}

impl Checker<'_> {
    /// The CPUs a class item names: `P`, every CPU of the class; `P:2`, its first two.
    fn class_cpus(&self, item: &str) -> Result<Vec<u32>, (String, Option<String>)> {
        let (class, count) = match item.split_once(':') {
            Some((class, count)) => (class, Some(count)),
            None => (item, None),
        };
        let Some((_, members)) = self.classes.iter().find(|(name, _)| name == class) else {
            return Err(self.missing_class(class));
        };
        let Some(count) = count else {
            return Ok(members.clone());
        };
        match count.parse::<usize>() {
            Ok(n) if n >= 1 && n <= members.len() => Ok(members[..n].to_vec()),
            Ok(n) if n >= 1 => Err((
                format!(
                    "`{item}` asks for {n} CPUs of class {class}, which has {} here",
                    members.len()
                ),
                Some(format!("`{class}` alone is every CPU of the class")),
            )),
            _ => Err((
                format!("`{item}` needs a count of CPUs after the colon"),
                Some(format!("`{class}:1` is the class's first CPU")),
            )),
        }
    }
}

/// The machine's `classes` with `declared` laid over them, as the parse stage lays a pipeline's
/// `topology:` over the detected CPUs (`schedlab_topology::apply_declared`): declared CPUs
/// belong to their declared class, every other CPU keeps its class, declared classes come
/// first, and a class left without CPUs is gone. Each class's CPUs are sorted.
fn laid_over(
    classes: &[(String, Vec<u32>)],
    declared: &[(String, Vec<u32>)],
) -> Vec<(String, Vec<u32>)> {
    let is_declared = |cpu: &u32| declared.iter().any(|(_, cpus)| cpus.contains(cpu));
    let mut merged = declared.to_vec();
    for (class, cpus) in classes {
        let kept: Vec<u32> = cpus
            .iter()
            .copied()
            .filter(|cpu| !is_declared(cpu))
            .collect();
        match merged.iter_mut().find(|(name, _)| name == class) {
            Some((_, members)) => members.extend(kept),
            None => merged.push((class.clone(), kept)),
        }
    }
    merged.retain(|(_, cpus)| !cpus.is_empty());
    for (_, cpus) in &mut merged {
        cpus.sort_unstable();
        cpus.dedup();
    }
    merged
}

impl From<&RawPerfSched> for PerfSchedOptions {
    fn from(raw: &RawPerfSched) -> Self {
        PerfSchedOptions {
            buffer: raw.buffer.clone(),
            window: raw.window.as_ref().map(|w| RecordingWindow {
                start: w.start.map(|d| d.0),
                duration: w.duration.map(|d| d.0),
            }),
        }
    }
}

impl From<&RawPeriodic> for PeriodicOptions {
    fn from(raw: &RawPeriodic) -> Self {
        PeriodicOptions {
            threads: raw.threads,
            period: raw.period.0,
            busy: raw.busy.map(|d| d.0),
            duty: raw.duty,
            duration: raw.duration.0,
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

/// `3` or `4-11`, CPUs up to [`LAST_CPU`], in the kernel's cpulist syntax.
fn parse_range(text: &str) -> Option<Vec<u32>> {
    (!text.trim().is_empty())
        .then(|| schedlab_topology::parse_cpu_list(text).ok())
        .flatten()
}

/// Replaces every `${name}`; returns the first undefined name on failure.
pub fn substitute(text: &str, vars: &BTreeMap<String, String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let name = &after[..end];
        out.push_str(vars.get(name).ok_or_else(|| name.to_owned())?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Every combination of the matrix values, keys in name order (one empty combination without a
/// matrix).
fn matrix_combinations(matrix: &BTreeMap<String, Vec<String>>) -> Vec<BTreeMap<String, String>> {
    matrix
        .iter()
        .fold(vec![BTreeMap::new()], |combos, (key, values)| {
            combos
                .iter()
                .flat_map(|combo| {
                    values.iter().map(move |value| {
                        let mut next = combo.clone();
                        next.insert(key.clone(), value.clone());
                        next
                    })
                })
                .collect()
        })
}
