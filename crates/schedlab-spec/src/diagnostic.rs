//! Errors that point into the YAML: `file:line:column`, the line itself, a caret, a hint.

use std::fmt;

/// One problem found in a pipeline file, with its position (1-based) when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    pub line: u64,
    pub column: u64,
    pub message: String,
    pub hint: Option<String>,
    /// The source line the position points into, for the caret display.
    pub source_line: Option<String>,
}

impl Diagnostic {
    pub fn at(file: &str, source: &str, line: u64, column: u64, message: String) -> Diagnostic {
        let source_line = (line > 0)
            .then(|| source.lines().nth((line - 1) as usize).map(str::to_owned))
            .flatten();
        Diagnostic {
            file: file.to_owned(),
            line,
            column,
            message,
            hint: None,
            source_line,
        }
    }

    pub fn with_hint(mut self, hint: Option<String>) -> Diagnostic {
        self.hint = hint;
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: error: {}",
            self.file, self.line, self.column, self.message
        )?;
        if let Some(text) = &self.source_line {
            let gutter = self.line.to_string().len();
            let pad = " ".repeat(gutter);
            let caret = " ".repeat(self.column.saturating_sub(1) as usize);
            write!(f, "\n{pad} |\n{} | {text}\n{pad} | {caret}^", self.line)?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "\n  = hint: {hint}")?;
        }
        Ok(())
    }
}

/// The candidate closest to `word` by edit distance, if it is close enough to be a typo.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|candidate| (strsim::levenshtein(word, candidate), candidate))
        .filter(|(distance, candidate)| *distance <= (candidate.len().max(word.len()) / 3).max(1))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// A hint for serde's "unknown field `x`, expected one of a, b" and "unknown variant" messages.
pub fn hint_for_serde_message(message: &str) -> Option<String> {
    let (word, rest) = message
        .strip_prefix("unknown field `")
        .or_else(|| message.strip_prefix("unknown variant `"))?
        .split_once('`')?;
    let list = rest
        .split_once("expected one of ")
        .map(|(_, l)| l)
        .or_else(|| rest.split_once("expected ").map(|(_, l)| l))?;
    let candidates: Vec<&str> = list
        .split([',', ' '])
        .map(|c| c.trim_matches('`'))
        .filter(|c| !c.is_empty() && *c != "or")
        .collect();
    closest(word, candidates.iter().copied()).map(|best| format!("did you mean `{best}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_field() {
        assert_eq!(
            closest("start_afer", ["run", "start_after", "nice"]),
            Some("start_after")
        );
        assert_eq!(closest("zzz", ["run", "start_after"]), None);
        assert_eq!(
            hint_for_serde_message(
                "unknown field `start_afer`, expected one of `start_after`, `run`"
            )
            .as_deref(),
            Some("did you mean `start_after`?")
        );
    }

    #[test]
    fn display_points_at_the_column() {
        let d = Diagnostic::at("p.yaml", "a: 1\n  nice: x\n", 2, 9, "bad nice".into())
            .with_hint(Some("use a number".into()));
        assert_eq!(
            d.to_string(),
            "p.yaml:2:9: error: bad nice\n  |\n2 |   nice: x\n  |         ^\n  = hint: use a number"
        );
    }
}
