//! Raw YAML model → checked [`Plan`]: every error at once, each with file:line:column.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_saphyr::Spanned;

use crate::diagnostic::{Diagnostic, closest, hint_for_serde_message};
use crate::plan::{
    CollectPlan, MonitorKind, MonitorPlan, Plan, Program, RunPlan, WorkloadPlan, variant_text,
};
use crate::raw::{CpuItem, RawMonitor, RawPipeline, RawWorkload, Scalar};

/// What compilation needs from the rest of schedlab.
#[derive(Debug, Clone)]
pub struct CompileOptions<'a> {
    /// Parser names a workload's `parse:` may use.
    pub parsers: &'a [&'a str],
    /// Value of the built-in `${nproc}`.
    pub nproc: usize,
}

/// Parses and checks a pipeline. `file` is only used in messages.
pub fn compile(
    file: &str,
    source: &str,
    options: &CompileOptions<'_>,
) -> Result<Plan, Vec<Diagnostic>> {
    let raw: RawPipeline =
        serde_saphyr::from_str(source).map_err(|err| vec![serde_diagnostic(file, source, &err)])?;
    let mut checker = Checker {
        file,
        source,
        options,
        errors: Vec::new(),
    };
    let plan = checker.plan(raw);
    if checker.errors.is_empty() {
        Ok(plan)
    } else {
        Err(checker.errors)
    }
}

fn serde_diagnostic(file: &str, source: &str, err: &serde_saphyr::Error) -> Diagnostic {
    let plain = err.render_with_options(serde_saphyr::render_options! {
        snippets: serde_saphyr::SnippetMode::Off,
    });
    let (line, column) = err
        .location()
        .map(|l| (l.line(), l.column()))
        .unwrap_or((0, 0));
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
    errors: Vec<Diagnostic>,
}

impl Checker<'_> {
    fn error_at<T>(&mut self, at: &Spanned<T>, message: String, hint: Option<String>) {
        let loc = at.referenced;
        self.errors.push(
            Diagnostic::at(self.file, self.source, loc.line(), loc.column(), message)
                .with_hint(hint),
        );
    }

    /// For errors about a map key, whose position serde does not keep: the first line that
    /// starts with `key:` (or `- key:`, a list item).
    fn error_at_key(&mut self, key: &str, message: String, hint: Option<String>) {
        let needle = format!("{key}:");
        let (line, column) = self
            .source
            .lines()
            .enumerate()
            .find_map(|(i, text)| {
                let trimmed = text.trim_start();
                let trimmed = trimmed.strip_prefix("- ").map_or(trimmed, str::trim_start);
                trimmed
                    .starts_with(&needle)
                    .then(|| (i as u64 + 1, (text.len() - trimmed.len()) as u64 + 1))
            })
            .unwrap_or((0, 0));
        self.errors
            .push(Diagnostic::at(self.file, self.source, line, column, message).with_hint(hint));
    }

    fn plan(&mut self, raw: RawPipeline) -> Plan {
        let name = raw.name.value.clone();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            self.error_at(
                &raw.name,
                format!("pipeline name `{name}` is not usable as a directory name"),
                Some("use letters, digits, `-`, `_` and `.`".into()),
            );
        }
        let topology = raw
            .topology
            .iter()
            .flatten()
            .map(|(class, items)| (class.clone(), self.cpu_list(class, items, &BTreeMap::new())))
            .collect();
        let workload_names: Vec<String> = raw.collect.workloads.keys().cloned().collect();
        for step in &raw.aggregate {
            if step.options().window.is_some() && !step.takes_window() {
                self.error_at_key(
                    step.name(),
                    format!("`window` does not apply to `{}`", step.name()),
                    Some("it applies to residency, migrations, sched_delay and cpu_time".into()),
                );
            }
            if let Some(workload) = &step.options().workload
                && !workload_names.contains(&workload.value)
            {
                let hint = closest(&workload.value, workload_names.iter().map(String::as_str))
                    .map(|best| format!("did you mean `{best}`?"));
                self.error_at(
                    workload,
                    format!("`{}` names no workload of this pipeline", workload.value),
                    hint,
                );
            }
        }
        let variants = matrix_combinations(&raw.matrix);
        let runs = self.runs(&raw, &variants);
        // `when` can leave a variant without workloads.
        if let Some(empty) = runs.iter().find(|r| r.collect.workloads.is_empty())
            && !raw.collect.workloads.is_empty()
            && self.errors.is_empty()
        {
            self.error_at_key(
                "workloads",
                format!(
                    "no workload runs in variant `{}`",
                    variant_text(&empty.variant)
                ),
                Some("a run needs at least one workload whose `when` is true".into()),
            );
        }
        Plan {
            name,
            description: raw.description,
            runs,
            variants,
            topology,
            aggregate: raw.aggregate,
            summarize: raw.summarize,
        }
    }

    /// Expands matrix × repeat, interleaving variants: rep 1 of every variant, then rep 2, …
    fn runs(&mut self, raw: &RawPipeline, variants: &[BTreeMap<String, String>]) -> Vec<RunPlan> {
        let repeat = raw.repeat.unwrap_or(1).max(1);
        let mut runs = Vec::new();
        let mut rng = raw.shuffle.map(fastrand::Rng::with_seed);
        for repetition in 1..=repeat {
            let mut order: Vec<&BTreeMap<String, String>> = variants.iter().collect();
            if let Some(rng) = &mut rng {
                rng.shuffle(&mut order);
            }
            for variant in order {
                let mut vars: BTreeMap<String, String> = raw
                    .vars
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_string()))
                    .collect();
                vars.insert("nproc".into(), self.options.nproc.to_string());
                vars.extend(variant.clone());
                let errors_before = self.errors.len();
                let collect = self.collect_plan(raw, &vars);
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

    fn collect_plan(&mut self, raw: &RawPipeline, vars: &BTreeMap<String, String>) -> CollectPlan {
        let monitors = raw
            .collect
            .monitors
            .iter()
            .filter_map(|(name, monitor)| self.monitor(name, monitor, vars))
            .collect();
        let mut workloads = Vec::new();
        for (name, workload) in &raw.collect.workloads {
            if let Some(when) = &workload.when
                && !self.runs_when(when, vars)
            {
                continue;
            }
            workloads.extend(self.workload(name, workload, vars, raw.collect.duration.is_some()));
        }
        if raw.collect.workloads.is_empty() {
            self.error_at_key(
                "workloads",
                "a pipeline needs at least one workload".into(),
                None,
            );
        }
        CollectPlan {
            duration: raw.collect.duration.map(|d| d.0),
            cooldown: raw.collect.cooldown.map(|d| d.0),
            monitors,
            workloads,
        }
    }

    fn monitor(
        &mut self,
        name: &str,
        raw: &RawMonitor,
        vars: &BTreeMap<String, String>,
    ) -> Option<MonitorPlan> {
        let mut kinds = Vec::new();
        if let Some(o) = &raw.perf_sched {
            kinds.push(MonitorKind::PerfSched(o.clone()));
        }
        if let Some(o) = &raw.placement {
            kinds.push(MonitorKind::Placement(o.clone()));
        }
        if let Some(o) = &raw.turbostat {
            kinds.push(MonitorKind::Turbostat(o.clone()));
        }
        if let Some(o) = &raw.cpu {
            kinds.push(MonitorKind::Cpu(o.clone()));
        }
        if let Some(o) = &raw.command {
            let argv = self.argv(&o.run, vars);
            let parse = o.parse.as_ref().and_then(|p| self.parser(p));
            kinds.push(MonitorKind::Command { argv, parse });
        }
        if kinds.len() != 1 {
            let message = format!(
                "monitor `{name}` must have exactly one kind, found {}",
                kinds.len()
            );
            self.error_at_key(
                name,
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
        let program = match (&raw.run, &raw.periodic) {
            (Some(run), None) if run.is_empty() => {
                self.error_at_key(name, format!("workload `{name}` has an empty `run`"), None);
                return None;
            }
            (Some(run), None) => Program::External {
                argv: self.argv(run, vars),
            },
            (None, Some(periodic)) => {
                if periodic.busy.is_some() == periodic.duty.is_some() {
                    self.error_at_key(
                        "periodic",
                        "a periodic workload needs exactly one of `busy` and `duty`".into(),
                        None,
                    );
                }
                if periodic.duty.is_some_and(|d| !(0.0..=100.0).contains(&d)) {
                    self.error_at_key(
                        "duty",
                        "`duty` is a percentage between 0 and 100".into(),
                        None,
                    );
                }
                if periodic.busy.is_some_and(|b| b > periodic.period) {
                    self.error_at_key("busy", "`busy` is longer than `period`".into(), None);
                }
                Program::Periodic(periodic.clone())
            }
            _ => {
                let message = format!(
                    "workload `{name}` needs exactly one of `run` (an argv list) and `periodic`"
                );
                self.error_at_key(name, message, None);
                return None;
            }
        };
        let nice = raw.nice.unwrap_or(0);
        if !(-20..=19).contains(&nice) {
            self.error_at_key("nice", format!("nice {nice} is outside -20..=19"), None);
        }
        // `"any"` (usually through a matrix variable) leaves the workload unpinned.
        let unpinned = |items: &Vec<CpuItem>| matches!(&items[..], [CpuItem::Range(text)] if substitute(text, vars).is_ok_and(|t| t == "any"));
        let cpus = raw
            .cpus
            .as_ref()
            .filter(|items| !unpinned(items))
            .map(|items| self.cpu_list(name, items, vars));
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
        Some(WorkloadPlan {
            name: name.to_owned(),
            program,
            start_after: raw.start_after.map(|d| d.0).unwrap_or(Duration::ZERO),
            nice,
            cpus,
            timeout: raw.timeout.map(|d| d.0),
            instances: raw.instances.unwrap_or(1).max(1),
            parse,
            repeat_until_end,
        })
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
                let hint = closest(&unknown, vars.keys().map(String::as_str))
                    .map(|best| format!("did you mean `${{{best}}}`?"))
                    .or_else(|| Some("define it under `vars:` or `matrix:`".into()));
                self.error_at(at, format!("undefined variable `${{{unknown}}}`"), hint);
                text.to_owned()
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

    /// CPU items as a sorted list; text items may use `${vars}` and commas (`"${cpu}"`, `"0,2-3"`).
    fn cpu_list(
        &mut self,
        owner: &str,
        items: &[CpuItem],
        vars: &BTreeMap<String, String>,
    ) -> Vec<u32> {
        let mut cpus = Vec::new();
        for item in items {
            match item {
                CpuItem::One(cpu) => cpus.push(*cpu),
                CpuItem::Range(text) => {
                    let text = substitute(text, vars).unwrap_or_else(|_| text.clone());
                    for part in text.split(',') {
                        match parse_range(part) {
                            Some(range) => cpus.extend(range),
                            None => self.error_at_key(
                                owner,
                                format!("`{text}` is not a CPU list"),
                                Some("write CPUs as 3, \"4-11\", \"any\" or \"${var}\" (a defined variable)".into()),
                            ),
                        }
                    }
                }
            }
        }
        cpus.sort_unstable();
        cpus.dedup();
        cpus
    }
}

fn parse_range(text: &str) -> Option<std::ops::RangeInclusive<u32>> {
    let (a, b) = text.split_once('-').unwrap_or((text, text));
    let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    (a <= b).then_some(a..=b)
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
fn matrix_combinations(matrix: &BTreeMap<String, Vec<Scalar>>) -> Vec<BTreeMap<String, String>> {
    matrix
        .iter()
        .fold(vec![BTreeMap::new()], |combos, (key, values)| {
            combos
                .iter()
                .flat_map(|combo| {
                    values.iter().map(move |value| {
                        let mut next = combo.clone();
                        next.insert(key.clone(), value.to_string());
                        next
                    })
                })
                .collect()
        })
}
