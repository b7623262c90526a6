//! The `short:` section: a pipeline's short form, laid into the sections it stands for.

use crate::diagnostic::closest;
use crate::locate::{Part, yaml_path};
use crate::raw::RawPipeline;

use super::Checker;

impl Checker<'_> {
    /// The short form's values checked against what they replace (always, so that `validate`
    /// finds a typo in either form), and with `--short`, put in place of the pipeline's own.
    /// Returns which of the topology and the expectations are now the short form's.
    pub(super) fn short_form(&mut self, raw: &mut RawPipeline) -> ShortParts {
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
}

/// Which of a pipeline's values its short form replaced (with `--short`).
#[derive(Default)]
pub(super) struct ShortParts {
    pub(super) topology: bool,
    pub(super) expect: bool,
}
