//! The matrix and `${vars}`: variants expanded, every text substituted, every undefined name
//! reported where it is written.

use std::collections::BTreeMap;

use serde_saphyr::Spanned;

use crate::diagnostic::closest;
use crate::locate::{Part, Step, yaml_path};
use crate::raw::{RawPipeline, Scalar};

use super::Checker;

impl Checker<'_> {
    /// Matrix variables become part of run directory names, and a variable without values would
    /// leave the pipeline without runs. Values may be any text (`0.5`, `1.2GHz`, `a/b`): the
    /// runner makes them safe for a directory name and the manifest keeps them as written. A
    /// value may use the pipeline's `vars` and `${nproc}` (`workers: [1, 2, "${nproc}"]`); one
    /// that comes out equal to another value of its variable is an error, since both would be
    /// the same runs. Returns the values, substituted.
    pub(super) fn matrix(
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
    pub(super) fn base_vars(&self, raw: &RawPipeline) -> BTreeMap<String, String> {
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
    pub(super) fn undefined_variable(
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

    /// `text` (the value at `at`) with its `${vars}` replaced; an undefined one is an error at
    /// `at`, and the text is kept as it is.
    pub(super) fn substituted<T>(
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

    /// `text` (a plain value at `at`) with its `${vars}` replaced; None, with an error at `at`,
    /// when one is undefined.
    pub(super) fn substituted_at(
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
pub(super) fn matrix_combinations(
    matrix: &BTreeMap<String, Vec<String>>,
) -> Vec<BTreeMap<String, String>> {
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
