//! The collect section into runs: each run's workloads, programs, monitors and recording
//! window, with its durations and counts checked.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_saphyr::Spanned;

use crate::diagnostic::closest;
use crate::duration::parse_duration;
use crate::locate::{Part, Step, yaml_path};
use crate::plan::{
    CollectPlan, CpuSamplerOptions, MonitorKind, MonitorPlan, PerfSchedOptions, PeriodicOptions,
    PlacementOptions, Program, RecordingWindow, RunPlan, TurbostatOptions, WorkloadPlan,
    variant_text,
};
use crate::raw::{
    CpuItem, RawCollect, RawCount, RawDuration, RawMonitor, RawPerfSched, RawPeriodic, RawPipeline,
    RawWorkload, Scalar,
};

use super::Checker;
use super::matrix::substitute;

impl Checker<'_> {
    /// Expands matrix × repeat, interleaving variants: rep 1 of every variant, then rep 2, …
    pub(super) fn runs(
        &mut self,
        raw: &RawPipeline,
        variants: &[BTreeMap<String, String>],
    ) -> Vec<RunPlan> {
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

    pub(super) fn collect_plan(
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
    pub(super) fn record_pattern(
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

    pub(super) fn monitor(
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

    pub(super) fn workload(
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
    pub(super) fn program(
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
    pub(super) fn periodic(&mut self, workload: &[Step], periodic: &RawPeriodic) {
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

    pub(super) fn parser(&mut self, name: &Spanned<String>) -> Option<String> {
        if self.options.parsers.contains(&name.value.as_str()) {
            return Some(name.value.clone());
        }
        let hint = closest(&name.value, self.options.parsers.iter().copied())
            .map(|best| format!("did you mean `{best}`?"))
            .or_else(|| Some(format!("parsers: {}", self.options.parsers.join(", "))));
        self.error_at(name, format!("unknown parser `{}`", name.value), hint);
        None
    }

    pub(super) fn argv(
        &mut self,
        items: &[Spanned<String>],
        vars: &BTreeMap<String, String>,
    ) -> Vec<String> {
        (items.iter())
            .map(|item| self.substituted(item, &item.value, vars))
            .collect()
    }

    /// A duration at `at` as this run resolves it: written with `${vars}`, substituted and read
    /// now, an undefined variable or malformed result being an error at the value.
    pub(super) fn duration(
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
    pub(super) fn count(
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

    /// Whether a workload with this `when` runs in a run with these variables: `true`, `on`,
    /// `yes` or `false`, `off`, `no`, usually through a matrix variable.
    pub(super) fn runs_when(
        &mut self,
        when: &Spanned<Scalar>,
        vars: &BTreeMap<String, String>,
    ) -> bool {
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
