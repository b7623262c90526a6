//! `expect:` into [`Expectation`]s: each bound read in its column's unit, each selector checked
//! against what the pipeline runs and computes, every error at its line and column.

use std::collections::BTreeMap;

use serde_saphyr::Spanned;

use super::Checker;
use crate::diagnostic::closest;
use crate::duration::parse_duration;
use crate::locate::{Part, Step};
use crate::plan::{
    Bound, CompareExpectation, Direction, ExpectKind, Expectation, FigureExpectation, Op, Unit,
};
use crate::raw::{FigureParts, RawCompare, RawExpectation, RawPipeline, Scalar};
use crate::selector::WorkloadSelector;

/// What expectations are checked against: the pipeline's workloads, matrix and aggregate steps.
pub(super) struct Known<'a> {
    pub workloads: Vec<&'a str>,
    /// Each matrix variable's values, substituted.
    pub matrix: &'a BTreeMap<String, Vec<String>>,
    /// The aggregate steps, as kind name and workload (an empty list: every step for every
    /// workload, as `aggregate` computes a pipeline without steps).
    pub steps: Vec<(&'static str, Option<&'a str>)>,
}

impl<'a> Known<'a> {
    pub fn of(
        raw: &'a RawPipeline,
        matrix: &'a BTreeMap<String, Vec<String>>,
        import: &'a [WorkloadSelector],
    ) -> Known<'a> {
        let collected = raw.collect.iter().flat_map(|c| c.workloads.keys());
        let mut workloads: Vec<&str> = collected.map(String::as_str).collect();
        workloads.extend(import.iter().map(|w| w.workload.as_str()));
        let steps = (raw.aggregate.iter())
            .map(|s| {
                let workload = s.options().workload.as_ref().map(|w| w.value.as_str());
                (s.kind().name(), workload)
            })
            .collect();
        Known {
            workloads,
            matrix,
            steps,
        }
    }

    /// The workloads the steps named `step` are restricted to: `None` when some step (or the
    /// absence of steps) computes it for every workload, an empty list when no step computes it.
    fn step_workloads(&self, step: &str) -> Option<Vec<&'a str>> {
        if self.steps.is_empty() {
            return None;
        }
        let mut named = Vec::new();
        for (_, workload) in self.steps.iter().filter(|(kind, _)| *kind == step) {
            named.push((*workload)?);
        }
        Some(named)
    }
}

impl Checker<'_> {
    /// The expectations under `at` (`expect`, or `short.expect`), checked.
    pub(super) fn expectations(
        &mut self,
        raw: &[RawExpectation],
        at: &[Step],
        known: &Known<'_>,
    ) -> Vec<Expectation> {
        let mut out = Vec::new();
        for (index, expectation) in raw.iter().enumerate() {
            let mut here = at.to_vec();
            here.extend([Step::Index(index), Step::from(expectation.name())]);
            let checked = match expectation {
                RawExpectation::Compare(compare) => self
                    .compare_expectation(compare, known)
                    .map(Expectation::Compare),
                _ => {
                    let parts = expectation.figure_parts().expect("a figure expectation");
                    let kind = figure_kind(expectation);
                    self.figure_expectation(kind, &parts, &here, known)
                        .map(Expectation::Figure)
                }
            };
            out.extend(checked);
        }
        out
    }

    fn figure_expectation(
        &mut self,
        kind: ExpectKind,
        parts: &FigureParts<'_>,
        at: &[Step],
        known: &Known<'_>,
    ) -> Option<FigureExpectation> {
        let keys: Vec<&str> = kind.figures().iter().map(|(key, _, _)| *key).collect();
        let (key, written) = match parts.bounds[..] {
            [one] => one,
            [] => {
                self.error_at_path(
                    at,
                    Part::Key,
                    format!("this `{}` expectation has no bound", kind.name()),
                    Some(format!(
                        "give one of {}, e.g. `{}: \">= 0.95\"`",
                        keys.join(", "),
                        keys[0]
                    )),
                );
                return None;
            }
            _ => {
                let given: Vec<&str> = parts.bounds.iter().map(|(key, _)| *key).collect();
                self.error_at(
                    parts.bounds[1].1,
                    format!(
                        "an expectation has one bound; this one has {}",
                        given.join(" and ")
                    ),
                    Some("write one expectation per bound".into()),
                );
                return None;
            }
        };
        let (_, column, unit) = *(kind.figures().iter())
            .find(|(k, _, _)| *k == key)
            .expect("a key of the kind");
        // A bad bound is reported, and the selector checked all the same.
        let (bound, bound_read) = match parse_bound(&written.value.to_string(), unit) {
            Ok(bound) => (bound, true),
            Err((message, hint)) => {
                self.error_at(written, format!("`{key}`: {message}"), Some(hint));
                let none = Bound {
                    op: Op::AtLeast,
                    value: 0.0,
                    written: String::new(),
                };
                (none, false)
            }
        };
        let workload = parts
            .workload
            .and_then(|w| self.expected_workload(w, known));
        let variant = self.variant(parts.variant, at, known);
        let class = parts.class.and_then(|class| self.expected_class(class));
        let cpu = parts.cpu.filter(|cpu| {
            let fits = *cpu <= super::LAST_CPU;
            if !fits {
                let mut cpu_at = at.to_vec();
                cpu_at.push(Step::from("cpu"));
                let message = format!(
                    "CPU {cpu} is beyond the last CPU Linux has, {}",
                    super::LAST_CPU
                );
                self.error_at_path(&cpu_at, Part::Value, message, None);
            }
            fits
        });
        let cpu = cpu.map(|cpu| cpu as i32);
        let mut expectation = FigureExpectation {
            kind,
            key: key.to_owned(),
            column: column.to_owned(),
            unit,
            bound,
            workload,
            variant,
            scope: None,
            class,
            cpu,
            phase: None,
            reference: None,
            window: None,
        };
        if parts.class.is_some() && parts.cpu.is_some() {
            let mut cpu_at = at.to_vec();
            cpu_at.push(Step::from("cpu"));
            self.error_at_path(
                &cpu_at,
                Part::Key,
                "`class` and `cpu` pick different rows: give one of them".into(),
                None,
            );
        }
        match kind {
            ExpectKind::Residency => self.residency_selector(&mut expectation, parts, at),
            ExpectKind::CpuShare => self.cpu_share_selector(&mut expectation, parts, at, known),
            ExpectKind::CpuActivity => {
                self.cpu_activity_selector(&mut expectation, parts, at, known)
            }
            ExpectKind::Migrations | ExpectKind::SchedDelay | ExpectKind::CpuTime => {}
        }
        if let (Some(workload), Some(at_workload)) = (&expectation.workload, parts.workload) {
            self.computed_for(kind, workload, at_workload, known);
        }
        bound_read.then_some(expectation)
    }

    /// `residency`: a class or a CPU, of every thread, process or (the default) the workload.
    fn residency_selector(
        &mut self,
        expectation: &mut FigureExpectation,
        parts: &FigureParts<'_>,
        at: &[Step],
    ) {
        let scope = match parts.scope {
            None => "workload".to_owned(),
            Some(scope) if ["thread", "process", "workload"].contains(&scope.value.as_str()) => {
                scope.value.clone()
            }
            Some(scope) => {
                self.error_at(
                    scope,
                    format!("unknown scope `{}`", scope.value),
                    Some("`thread`, `process` or `workload` (the default)".into()),
                );
                "workload".to_owned()
            }
        };
        if parts.class.is_none() && parts.cpu.is_none() {
            self.error_at_path(
                at,
                Part::Key,
                "a `residency` expectation needs `class` or `cpu`: the share of what".into(),
                Some("e.g. `class: P` (the share on P-cores) or `cpu: 0`".into()),
            );
        }
        if scope == "thread" && parts.cpu.is_some() {
            let mut cpu_at = at.to_vec();
            cpu_at.push(Step::from("cpu"));
            self.error_at_path(
                &cpu_at,
                Part::Key,
                "`residency_rollup` has a thread's classes, not its CPUs".into(),
                Some("use `class`, or `scope: process` for a process's CPUs".into()),
            );
        }
        expectation.scope = Some(scope);
    }

    /// `cpu_share`: a phase of a reference workload's lifetime (or `run`), and a class (`all`
    /// without one).
    fn cpu_share_selector(
        &mut self,
        expectation: &mut FigureExpectation,
        parts: &FigureParts<'_>,
        at: &[Step],
        known: &Known<'_>,
    ) {
        // The references the cpu_share steps use (`None`: the whole run).
        let references: Vec<Option<&str>> = match known.steps.is_empty() {
            true => vec![None],
            false => (known.steps.iter())
                .filter(|(kind, _)| *kind == "cpu_share")
                .map(|(_, workload)| *workload)
                .collect(),
        };
        if references.is_empty() {
            self.not_computed(ExpectKind::CpuShare, at);
            return;
        }
        let reference = match parts.reference {
            Some(wanted) if references.contains(&Some(wanted.value.as_str())) => {
                Some(wanted.value.clone())
            }
            Some(wanted) => {
                let named: Vec<&str> = references.iter().flatten().copied().collect();
                self.error_at(
                    wanted,
                    format!("no `cpu_share` step has the reference `{}`", wanted.value),
                    Some(format!("the steps' references: {}", list_or_none(&named))),
                );
                return;
            }
            None if references.len() == 1 => references[0].map(str::to_owned),
            None => {
                self.error_at_path(
                    at,
                    Part::Key,
                    "the pipeline has several `cpu_share` steps: say which with `reference`".into(),
                    None,
                );
                return;
            }
        };
        let phases: &[&str] = match reference {
            Some(_) => &["before", "during", "after"],
            None => &["run"],
        };
        let phase = match parts.phase {
            Some(phase) if phases.contains(&phase.value.as_str()) => Some(phase.value.clone()),
            None if reference.is_none() => Some("run".to_owned()),
            Some(phase) => {
                self.error_at(
                    phase,
                    format!("`{}` is not a phase of this `cpu_share`", phase.value),
                    Some(format!("its phases: {}", phases.join(", "))),
                );
                None
            }
            None => {
                self.error_at_path(
                    at,
                    Part::Key,
                    "a `cpu_share` expectation with a reference workload needs `phase`".into(),
                    Some(format!("its phases: {}", phases.join(", "))),
                );
                None
            }
        };
        expectation.phase = phase;
        expectation.reference = reference;
        expectation.class = Some(expectation.class.take().unwrap_or_else(|| "all".into()));
    }

    /// `cpu_activity`: a window a `cpu_activity` step computes, and all CPUs, a class or a CPU.
    fn cpu_activity_selector(
        &mut self,
        expectation: &mut FigureExpectation,
        parts: &FigureParts<'_>,
        at: &[Step],
        known: &Known<'_>,
    ) {
        let windows: Vec<&str> = match known.steps.is_empty() {
            true => vec!["run"],
            false => (known.steps.iter())
                .filter(|(kind, _)| *kind == "cpu_activity")
                .map(|(_, workload)| workload.unwrap_or("run"))
                .collect(),
        };
        let window = match parts.window {
            _ if windows.is_empty() => {
                self.not_computed(ExpectKind::CpuActivity, at);
                None
            }
            Some(wanted) if windows.contains(&wanted.value.as_str()) => Some(wanted.value.clone()),
            Some(wanted) => {
                self.error_at(
                    wanted,
                    format!(
                        "no `cpu_activity` step computes the window `{}`",
                        wanted.value
                    ),
                    Some(format!("its windows: {}", windows.join(", "))),
                );
                None
            }
            None if windows.len() == 1 => Some(windows[0].to_owned()),
            None => {
                self.error_at_path(
                    at,
                    Part::Key,
                    "the pipeline computes several `cpu_activity` windows: say which with \
                     `window`"
                        .into(),
                    Some(format!("its windows: {}", windows.join(", "))),
                );
                None
            }
        };
        let scope = match (parts.class, parts.cpu) {
            (Some(_), _) => "class",
            (None, Some(_)) => "cpu",
            (None, None) => "all",
        };
        expectation.scope = Some(scope.to_owned());
        expectation.window = window;
    }

    /// A workload of this pipeline; `None`, with an error, for another name.
    fn expected_workload(
        &mut self,
        workload: &Spanned<String>,
        known: &Known<'_>,
    ) -> Option<String> {
        if known.workloads.contains(&workload.value.as_str()) {
            return Some(workload.value.clone());
        }
        let hint = closest(&workload.value, known.workloads.iter().copied())
            .map(|best| format!("did you mean `{best}`?"));
        self.error_at(
            workload,
            format!("`{}` names no workload of this pipeline", workload.value),
            hint,
        );
        None
    }

    /// A class of this machine (with the pipeline's `topology:`).
    fn expected_class(&mut self, class: &Spanned<String>) -> Option<String> {
        if self.classes.iter().any(|(name, _)| *name == class.value) {
            return Some(class.value.clone());
        }
        let (message, hint) = self.missing_class(&class.value);
        self.error_at(class, message, hint);
        None
    }

    /// An aggregate step computes `kind` for `workload`, else an error at the workload.
    fn computed_for(
        &mut self,
        kind: ExpectKind,
        workload: &str,
        at: &Spanned<String>,
        known: &Known<'_>,
    ) {
        // cpu_share's step names its reference, not the workloads it has rows for.
        if kind == ExpectKind::CpuShare {
            return;
        }
        let step = kind.name();
        match known.step_workloads(step) {
            None => {}
            Some(named) if named.contains(&workload) => {}
            Some(named) => {
                let message = if named.is_empty() {
                    format!(
                        "`{}` expectations read `{}`, which no aggregate step computes",
                        kind.name(),
                        kind.table()
                    )
                } else {
                    format!(
                        "the `{step}` step computes `{}` for {} only, not `{workload}`",
                        kind.table(),
                        named.join(", ")
                    )
                };
                let hint = format!("add `- {step}: {{ workload: {workload} }}` under `aggregate:`");
                self.error_at(at, message, Some(hint));
            }
        }
    }

    /// The expectation's aggregate is computed by no step.
    fn not_computed(&mut self, kind: ExpectKind, at: &[Step]) {
        self.error_at_path(
            at,
            Part::Key,
            format!(
                "`{}` expectations read `{}`, which no aggregate step computes",
                kind.name(),
                kind.table()
            ),
            Some(format!("add `- {}: {{}}` under `aggregate:`", kind.name())),
        );
    }

    /// `variant: { pin: any }`: matrix variables and values of this pipeline.
    fn variant(
        &mut self,
        variant: &BTreeMap<String, Scalar>,
        at: &[Step],
        known: &Known<'_>,
    ) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for (variable, value) in variant {
            let mut here = at.to_vec();
            here.extend([Step::from("variant"), Step::from(variable)]);
            let Some(values) = known.matrix.get(variable) else {
                let hint = closest(variable, known.matrix.keys().map(String::as_str))
                    .map(|best| format!("did you mean `{best}`?"))
                    .or_else(|| Some("`variant` picks runs by the values of `matrix:`".into()));
                self.error_at_path(
                    &here,
                    Part::Key,
                    format!("`{variable}` is not a matrix variable of this pipeline"),
                    hint,
                );
                continue;
            };
            let value = value.to_string();
            if !values.contains(&value) {
                self.error_at_path(
                    &here,
                    Part::Value,
                    format!("`{variable}` has no value `{value}`"),
                    Some(format!("its values: {}", values.join(", "))),
                );
                continue;
            }
            out.insert(variable.clone(), value);
        }
        out
    }

    fn compare_expectation(
        &mut self,
        raw: &RawCompare,
        known: &Known<'_>,
    ) -> Option<CompareExpectation> {
        let by = raw.by.as_ref().map_or("label", |by| by.value.as_str());
        let grouping = ["label", "variant", "repetition"].contains(&by);
        if let Some(written) = &raw.by
            && !grouping
            && !known.matrix.contains_key(by)
        {
            let mut choices = vec!["label", "variant", "repetition"];
            choices.extend(known.matrix.keys().map(String::as_str));
            let hint = closest(by, choices.iter().copied())
                .map(|best| format!("did you mean `{best}`?"))
                .unwrap_or_else(|| format!("`by` is one of {}", choices.join(", ")));
            self.error_at(
                written,
                format!("`{by}` is neither label, variant, repetition nor a matrix variable"),
                Some(hint),
            );
        }
        let mut group_name = |written: &Option<Spanned<Scalar>>, what: &str| {
            let written = written.as_ref()?;
            let text = written.value.to_string();
            if let Some(values) = known.matrix.get(by) {
                let value = text.strip_prefix(&format!("{by}=")).unwrap_or(&text);
                if !values.iter().any(|v| v == value) {
                    self.error_at(
                        written,
                        format!("`{by}` has no value `{text}` for the {what}"),
                        Some(format!("its values: {}", values.join(", "))),
                    );
                }
            }
            Some(text)
        };
        let baseline = group_name(&raw.baseline, "baseline");
        let group = group_name(&raw.group, "group");
        let workload = raw
            .workload
            .as_ref()
            .and_then(|w| self.expected_workload(w, known));
        if raw.figure.value.trim().is_empty() {
            self.error_at(
                &raw.figure,
                "`figure` is empty".into(),
                Some("part of a figure's name, e.g. `cpu_time` or `time/wall_time_s`".into()),
            );
        }
        let not = match raw.not.value.as_str() {
            "higher" => Direction::Higher,
            "lower" => Direction::Lower,
            other => {
                self.error_at(
                    &raw.not,
                    format!("`not: {other}`: the verdict ruled out is `higher` or `lower`"),
                    None,
                );
                return None;
            }
        };
        Some(CompareExpectation {
            by: by.to_owned(),
            baseline,
            group,
            workload,
            figure: raw.figure.value.trim().to_owned(),
            not,
        })
    }
}

fn figure_kind(expectation: &RawExpectation) -> ExpectKind {
    match expectation {
        RawExpectation::Residency(_) => ExpectKind::Residency,
        RawExpectation::Migrations(_) => ExpectKind::Migrations,
        RawExpectation::SchedDelay(_) => ExpectKind::SchedDelay,
        RawExpectation::CpuTime(_) => ExpectKind::CpuTime,
        RawExpectation::CpuShare(_) => ExpectKind::CpuShare,
        RawExpectation::CpuActivity(_) => ExpectKind::CpuActivity,
        RawExpectation::Compare(_) => unreachable!("compare has no figure kind"),
    }
}

fn list_or_none(names: &[&str]) -> String {
    if names.is_empty() {
        "none (the whole run)".to_owned()
    } else {
        names.join(", ")
    }
}

/// `">= 0.95"`, `"<= 5ms"`, `"< 2/s"`: an operator, a number and the unit `unit` is written in,
/// as the column's value. Errors are a message and a hint.
pub(crate) fn parse_bound(text: &str, unit: Unit) -> Result<Bound, (String, String)> {
    let text = text.trim();
    let how = || format!("an operator (<, <=, >, >=) and {}", unit.how_written());
    let (op, rest) = [
        ("<=", Op::AtMost),
        (">=", Op::AtLeast),
        ("<", Op::Less),
        (">", Op::Greater),
    ]
    .into_iter()
    .find_map(|(symbol, op)| Some((op, text.strip_prefix(symbol)?)))
    .ok_or_else(|| (format!("`{text}` has no comparison operator"), how()))?;
    let rest = rest.trim();
    let split = rest
        .find(|c: char| !(c.is_ascii_digit() || ".-+eE".contains(c)))
        .unwrap_or(rest.len());
    // An exponent's `e` is a number's only when digits follow (`1e9`), not the `e` of a unit.
    let (number, suffix) = rest.split_at(split);
    let suffix = suffix.trim();
    let value: f64 = number
        .parse()
        .map_err(|_| (format!("`{text}` has no number after its operator"), how()))?;
    let wrong = || {
        (
            format!("`{text}`: `{suffix}` is not how this figure is written"),
            how(),
        )
    };
    let value = match (unit, suffix) {
        (Unit::Share, "") => value,
        (Unit::Share, "%") => value / 100.0,
        (Unit::Ns, _) => {
            let duration = parse_duration(&format!("{number}{suffix}")).map_err(|e| (e, how()))?;
            duration.as_nanos() as f64
        }
        (Unit::Count | Unit::Cpus, "") => value,
        (Unit::PerSecond, "" | "/s") => value,
        (Unit::Percent, "%") => value,
        (Unit::Megahertz, "MHz") => value,
        (Unit::Megahertz, "GHz") => value * 1000.0,
        (Unit::Watts, "W") => value,
        (Unit::Watts, "mW") => value / 1000.0,
        (Unit::Celsius, "C" | "°C") => value,
        _ => return Err(wrong()),
    };
    if !value.is_finite() || (unit == Unit::Share && !(0.0..=1.0).contains(&value)) {
        return Err((format!("`{text}` is out of range"), how()));
    }
    Ok(Bound {
        op,
        value,
        written: format!("{} {number}{suffix}", op.symbol()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_read_in_their_columns_unit() {
        let bound = |text, unit| parse_bound(text, unit).map(|b| (b.op, b.value, b.written));
        assert_eq!(
            bound(">= 0.95", Unit::Share),
            Ok((Op::AtLeast, 0.95, ">= 0.95".into()))
        );
        assert_eq!(bound(">=95%", Unit::Share).unwrap().1, 0.95);
        assert_eq!(
            bound("<= 5ms", Unit::Ns),
            Ok((Op::AtMost, 5e6, "<= 5ms".into()))
        );
        assert_eq!(bound("< 2/s", Unit::PerSecond).unwrap().1, 2.0);
        assert_eq!(bound("> 1.2GHz", Unit::Megahertz).unwrap().1, 1200.0);
        assert_eq!(bound("<= 500 mW", Unit::Watts).unwrap().1, 0.5);
        assert_eq!(bound("< 1e3", Unit::Count).unwrap().1, 1000.0);
        let message = |text, unit| parse_bound(text, unit).unwrap_err().0;
        assert_eq!(
            message("0.95", Unit::Share),
            "`0.95` has no comparison operator"
        );
        assert_eq!(
            message("<= 5", Unit::Ns),
            "invalid duration `5`: unknown unit ``; write a number and a unit with no space: \
             500ms, 70s, 2m (units: ns, us, ms, s, m, h)"
        );
        assert_eq!(
            message(">= 90", Unit::Percent),
            "`>= 90`: `` is not how this figure is written"
        );
        assert_eq!(message(">= 1.5", Unit::Share), "`>= 1.5` is out of range");
        assert_eq!(
            message(">= many", Unit::Count),
            "`>= many` has no number after its operator"
        );
    }
}
