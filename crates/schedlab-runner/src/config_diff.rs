//! What differs between the configurations of compared groups of runs: the lines `schedlab
//! compare` opens with.
//!
//! A comparison of kernels means something only when the kernels are all that differs. Each
//! run's configuration is a map of settings (`runs.sched_config`, with the kernel release, build
//! and config digest); this module diffs the maps, group against baseline group, and says when
//! runs of one group disagree among themselves. Settings that move scheduler figures whatever
//! the kernel (everything but the kernel's release and config) get a warning line when groups
//! differ in them: the label may not name all that changed.

use std::collections::{BTreeMap, BTreeSet};

use schedlab_tables::RunRow;
use schedlab_tables::sched_config::parse_settings;

/// A setting a group's runs do not have.
const ABSENT: &str = "absent";

/// A group whose runs disagree on a setting (its own line lists the runs).
const MIXED: &str = "mixed";

/// One run's settings and the group it was compared in.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSettings {
    pub run_id: String,
    pub group: String,
    /// `None` for a run collected before schedlab recorded its configuration.
    pub settings: Option<BTreeMap<String, String>>,
}

impl RunSettings {
    /// A run's settings from its `runs` row: `sched_config` with the columns of its own that
    /// name the kernel (`kernel`, `kernel_build`, `kernel_config_digest`).
    pub fn of(run: &RunRow, group: &str) -> RunSettings {
        let settings = run.sched_config.as_deref().map(|text| {
            let mut settings = parse_settings(text);
            settings.insert("kernel".into(), run.kernel.clone());
            let own = [
                ("kernel_build", &run.kernel_build),
                ("kernel_config_digest", &run.kernel_config_digest),
            ];
            for (key, value) in own {
                if let Some(value) = value {
                    settings.insert(key.into(), value.clone());
                }
            }
            settings
        });
        RunSettings {
            run_id: run.run_id.clone(),
            group: group.to_owned(),
            settings,
        }
    }
}

/// Whether a setting moves scheduler figures on its own, beside a kernel change: all but the
/// kernel's identity (release, config options and digest), which is what a kernel label names.
/// The build string counts: the same release built twice is worth a warning.
fn moves_figures(key: &str) -> bool {
    !(key.starts_with("CONFIG_")
        || matches!(key, "kernel" | "kernel_config" | "kernel_config_digest"))
}

/// The lines saying how the groups' configurations differ, `groups` in order, each other group
/// against `baseline`; `by` names what the groups are (`label`, a matrix variable), for the
/// warning. Never empty: with nothing to say, one line says the configuration is the same.
pub fn differences(
    runs: &[RunSettings],
    groups: &[String],
    baseline: &str,
    by: &str,
) -> Vec<String> {
    let mut lines = Vec::new();
    let unrecorded: Vec<&str> = (runs.iter())
        .filter(|r| r.settings.is_none())
        .map(|r| r.run_id.as_str())
        .collect();
    if unrecorded.len() == runs.len() {
        return vec![
            "configuration: not recorded (the runs were collected before schedlab recorded it)"
                .to_owned(),
        ];
    }
    if !unrecorded.is_empty() {
        lines.push(format!(
            "configuration: not recorded for {} (collected before schedlab recorded it), left out",
            unrecorded.join(", ")
        ));
    }
    let recorded: Vec<(&RunSettings, &BTreeMap<String, String>)> = (runs.iter())
        .filter_map(|r| Some((r, r.settings.as_ref()?)))
        .collect();
    let keys: BTreeSet<&str> = (recorded.iter())
        .flat_map(|(_, s)| s.keys().map(String::as_str))
        .collect();

    // Each group's value per key, and the runs behind each value when they disagree.
    let mut value_of: BTreeMap<&str, BTreeMap<&str, &str>> = BTreeMap::new();
    for group in groups {
        let members: Vec<_> = recorded.iter().filter(|(r, _)| r.group == *group).collect();
        if members.is_empty() {
            continue;
        }
        let values = value_of.entry(group).or_default();
        for &key in &keys {
            let mut runs_by_value: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for (run, settings) in &members {
                let value = settings.get(key).map_or(ABSENT, String::as_str);
                runs_by_value.entry(value).or_default().push(&run.run_id);
            }
            if runs_by_value.len() == 1 {
                values.insert(key, runs_by_value.into_keys().next().unwrap_or(ABSENT));
                continue;
            }
            values.insert(key, MIXED);
            let each: Vec<String> = (runs_by_value.iter())
                .map(|(value, ids)| format!("{value} ({})", ids.join(", ")))
                .collect();
            lines.push(format!(
                "{group}: its runs differ in {key}: {}",
                each.join(", ")
            ));
        }
    }

    let Some(base) = value_of.get(baseline) else {
        return finish(lines, keys.len());
    };
    let mut warnings = Vec::new();
    for group in groups.iter().filter(|g| *g != baseline) {
        let Some(values) = value_of.get(group.as_str()) else {
            continue;
        };
        let differing: Vec<&str> = (keys.iter().copied())
            .filter(|key| values.get(key) != base.get(key))
            .collect();
        for key in &differing {
            let (mine, theirs) = (values[key], base[key]);
            lines.push(format!(
                "{group} vs {baseline}: {key} {mine} ({baseline}: {theirs})"
            ));
        }
        let moving: Vec<&str> = differing.into_iter().filter(|k| moves_figures(k)).collect();
        if !moving.is_empty() {
            warnings.push(format!(
                "warning: {group} vs {baseline} also differ in {}: settings that move scheduler \
                 figures besides what the {by} names",
                moving.join(", ")
            ));
        }
    }
    lines.extend(warnings);
    finish(lines, keys.len())
}

/// The lines, or the one that says there is no difference.
fn finish(lines: Vec<String>, settings: usize) -> Vec<String> {
    if lines.is_empty() {
        return vec![format!(
            "configuration: the same in every run ({settings} settings)"
        )];
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, group: &str, settings: &[(&str, &str)]) -> RunSettings {
        RunSettings {
            run_id: id.into(),
            group: group.into(),
            settings: Some(
                (settings.iter())
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
        }
    }

    fn groups(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn a_config_option_differs_and_the_kernel_is_what_the_label_names() {
        let a = [("CONFIG_SCHED_CACHE", "not set"), ("kernel_build", "#1")];
        let b = [("CONFIG_SCHED_CACHE", "y"), ("kernel_build", "#1")];
        let runs = [
            run("a-r1", "a", &a),
            run("a-r2", "a", &a),
            run("b-r1", "b", &b),
        ];
        assert_eq!(
            differences(&runs, &groups(&["a", "b"]), "a", "label"),
            ["b vs a: CONFIG_SCHED_CACHE y (a: not set)"]
        );
    }

    #[test]
    fn a_governor_and_a_build_give_a_warning_and_a_missing_option_is_absent() {
        let a = [("governor.P", "powersave"), ("kernel_build", "#1 SMP")];
        let b = [
            ("governor.P", "performance"),
            ("kernel_build", "#2 SMP"),
            ("CONFIG_SCHED_CACHE", "y"),
        ];
        let runs = [run("a1", "a", &a), run("b1", "b", &b)];
        assert_eq!(
            differences(&runs, &groups(&["a", "b"]), "a", "label"),
            [
                "b vs a: CONFIG_SCHED_CACHE y (a: absent)",
                "b vs a: governor.P performance (a: powersave)",
                "b vs a: kernel_build #2 SMP (a: #1 SMP)",
                "warning: b vs a also differ in governor.P, kernel_build: settings that move \
                 scheduler figures besides what the label names",
            ]
        );
    }

    #[test]
    fn runs_of_one_group_that_disagree_are_named_and_the_group_reads_mixed() {
        let runs = [
            run("a1", "a", &[("turbo", "on")]),
            run("b1", "b", &[("turbo", "on")]),
            run("b2", "b", &[("turbo", "off")]),
            run("b3", "b", &[("turbo", "on")]),
        ];
        assert_eq!(
            differences(&runs, &groups(&["a", "b"]), "a", "ops"),
            [
                "b: its runs differ in turbo: off (b2), on (b1, b3)",
                "b vs a: turbo mixed (a: on)",
                "warning: b vs a also differ in turbo: settings that move scheduler figures \
                 besides what the ops names",
            ]
        );
    }

    #[test]
    fn every_group_is_compared_with_the_baseline_not_the_one_before() {
        let runs = [
            run("a1", "a", &[("smt", "on")]),
            run("b1", "b", &[("smt", "off")]),
            run("c1", "c", &[("smt", "off")]),
        ];
        assert_eq!(
            differences(&runs, &groups(&["a", "b", "c"]), "b", "label"),
            [
                "a vs b: smt on (b: off)",
                "warning: a vs b also differ in smt: settings that move scheduler figures \
                 besides what the label names",
            ]
        );
    }

    #[test]
    fn the_same_configuration_and_unrecorded_runs_are_said_too() {
        let same = [("smt", "on"), ("turbo", "on")];
        let mut runs = vec![run("a1", "a", &same), run("b1", "b", &same)];
        assert_eq!(
            differences(&runs, &groups(&["a", "b"]), "a", "label"),
            ["configuration: the same in every run (2 settings)"]
        );
        runs.push(RunSettings {
            run_id: "b0".into(),
            group: "b".into(),
            settings: None,
        });
        assert_eq!(
            differences(&runs, &groups(&["a", "b"]), "a", "label"),
            [
                "configuration: not recorded for b0 (collected before schedlab recorded it), \
                 left out"
            ]
        );
        assert_eq!(
            differences(&runs[2..], &groups(&["a", "b"]), "a", "label"),
            ["configuration: not recorded (the runs were collected before schedlab recorded it)"]
        );
    }

    #[test]
    fn a_runs_row_gives_its_settings_with_the_kernel_columns() {
        let row = RunRow {
            run_id: "r1".into(),
            pipeline: "p".into(),
            label: None,
            variant: String::new(),
            repetition: 1,
            host: "h".into(),
            kernel: "6.1.0".into(),
            cpu_model: "c".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            status: schedlab_tables::manifest::RunStatus::Completed,
            duration_ns: 1,
            trace_window_start_ns: None,
            trace_window_end_ns: None,
            kernel_build: Some("#1 SMP".into()),
            kernel_config_digest: None,
            sched_config: Some("CONFIG_HZ=250\nsmt=on".into()),
            imported: false,
        };
        let settings = RunSettings::of(&row, "g").settings.unwrap();
        let pairs: Vec<(&str, &str)> = (settings.iter())
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("CONFIG_HZ", "250"),
                ("kernel", "6.1.0"),
                ("kernel_build", "#1 SMP"),
                ("smt", "on")
            ]
        );
        let old = RunRow {
            sched_config: None,
            imported: false,
            ..row
        };
        assert_eq!(RunSettings::of(&old, "g").settings, None);
    }
}
