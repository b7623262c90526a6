//! Run ids: what names a run directory, and which directories on disk are runs of the pipeline
//! as it is now.
//!
//! A run id is `<identity>-[<label>-][<matrix values>-]r<repetition>`, e.g.
//! `3fa2c1d0-kernel-b-workers_4-r2`. `<identity>` is the first 8 hex digits of the digest of
//! [`RunPlan::identity`]: what the run does (its matrix values, duration, monitors, workloads),
//! never how often or when runs are collected. So raising `repeat`, `--repeat 7`, or the same
//! `--label` after a reboot finds the runs collected before and collects only the missing ones,
//! and an edited workload makes new runs beside the old ones. The matrix values are written into
//! the name only to be read by people: any text is allowed in a value (`0.5`, `a/b`), so it is
//! made safe (letters, digits, `-`, `_`) and the manifest keeps it as written; two values that
//! read alike still differ in `<identity>`, which covers the values exactly. The name holds no
//! `.` (the mark of a partial or interrupted run) and no `=` or `/`, so it is usable as a Hive
//! partition value (`run_id=<id>`) by every engine.

use std::collections::BTreeMap;

use schedlab_spec::{Plan, RunPlan};

use crate::{Layout, digest};

/// How many characters of a matrix value a run id keeps.
const VALUE_CHARS: usize = 24;

/// The run ids of one pipeline, for runs collected under one `--label` (or none).
#[derive(Debug, Clone)]
pub struct RunIds {
    /// Each matrix variant's identity digest prefix.
    identities: Vec<(BTreeMap<String, String>, String)>,
    label: Option<String>,
    /// The prefix the first schedlab versions gave every run of this pipeline as compiled now
    /// (a digest of all runs, `repeat` included): runs named so are renamed once.
    legacy_set: String,
}

impl RunIds {
    pub fn new(plan: &Plan, label: Option<&str>) -> RunIds {
        let mut identities: Vec<(BTreeMap<String, String>, String)> = Vec::new();
        for run in &plan.runs {
            if !identities
                .iter()
                .any(|(variant, _)| *variant == run.variant)
            {
                let prefix = digest::of_json(&run.identity())[..8].to_owned();
                identities.push((run.variant.clone(), prefix));
            }
        }
        RunIds {
            identities,
            label: label.map(str::to_owned),
            legacy_set: digest::of_json(&plan.collect_section())[..8].to_owned(),
        }
    }

    /// The id of `run` under this command's label.
    pub fn id(&self, run: &RunPlan) -> String {
        self.id_for(&run.variant, self.label.as_deref(), run.repetition)
            .expect("every run's variant has an identity")
    }

    /// The id of repetition `repetition` of `variant` under `label`; `None` when the pipeline
    /// has no such variant.
    pub fn id_for(
        &self,
        variant: &BTreeMap<String, String>,
        label: Option<&str>,
        repetition: u32,
    ) -> Option<String> {
        let (_, identity) = self.identities.iter().find(|(v, _)| v == variant)?;
        let mut id = identity.clone();
        if let Some(label) = label {
            id.push('-');
            id.push_str(label);
        }
        for (variable, value) in variant {
            id.push('-');
            id.push_str(variable);
            id.push('_');
            id.push_str(&safe_text(value));
        }
        id.push_str(&format!("-r{repetition}"));
        Some(id)
    }

    /// Whether the directory `name` under `runs/` is a complete run of the pipeline as it is now
    /// (any label), or an imported run.
    pub fn is_current(&self, name: &str) -> bool {
        if crate::import::is_imported_run(name) {
            // An import is not made by the collect section, so no edit of it dates one.
            return true;
        }
        Layout::is_complete_run_name(name)
            && (self.identities.iter()).any(|(_, identity)| {
                name.strip_prefix(identity.as_str())
                    .is_some_and(|rest| rest.starts_with('-'))
            })
    }

    /// Whether `name` is a complete run named by the first schedlab versions for the pipeline as
    /// it is now.
    pub fn is_legacy(&self, name: &str) -> bool {
        Layout::is_complete_run_name(name)
            && name
                .strip_prefix(self.legacy_set.as_str())
                .is_some_and(|rest| rest.starts_with('-'))
    }
}

/// A matrix value (its first [`VALUE_CHARS`] characters) as a run id writes it.
pub(crate) fn safe_text(value: &str) -> String {
    value.chars().take(VALUE_CHARS).map(safe_char).collect()
}

/// A matrix value's character as a run id writes it.
fn safe_char(c: char) -> char {
    if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
        c
    } else {
        '_'
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_spec::{CompileOptions, compile};

    fn plan(matrix: &str, repeat: u32) -> Plan {
        let yaml = format!(
            "name: p\nmatrix: {{ t: {matrix} }}\nrepeat: {repeat}\ncollect:\n  workloads:\n    \
             w: {{ run: [sleep, \"${{t}}\"] }}\n"
        );
        let options = CompileOptions {
            parsers: &[],
            nproc: 2,
            name_part: crate::layout::check_name_part,
            repeat: None,
            classes: &[],
            short: false,
        };
        compile("p.yaml", &yaml, &options).unwrap()
    }

    #[test]
    fn any_matrix_value_gives_a_safe_unique_id_that_repeat_does_not_change() {
        let values = r#"[0.5, "0_5", "a/b", "with space", "1.2GHz"]"#;
        let few = plan(values, 1);
        let ids = RunIds::new(&few, Some("c"));
        let names: Vec<String> = few.runs.iter().map(|r| ids.id(r)).collect();
        for name in &names {
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c)),
                "{name}"
            );
            assert!(ids.is_current(name), "{name}");
            assert!(name.contains("-c-t_") && name.ends_with("-r1"), "{name}");
        }
        // `0.5` and `0_5` read alike but are different runs.
        let distinct: std::collections::BTreeSet<&String> = names.iter().collect();
        assert_eq!(distinct.len(), names.len(), "{names:?}");
        // Three repetitions: the first is named as before.
        let more = plan(values, 3);
        let more_ids = RunIds::new(&more, Some("c"));
        let first: Vec<String> = (more.runs.iter())
            .filter(|r| r.repetition == 1)
            .map(|r| more_ids.id(r))
            .collect();
        assert_eq!(first, names);
        assert!(!ids.is_current(&format!("{}.partial", names[0])));
        assert!(!ids.is_current("0123abcd-r1"));
    }
}
