//! What every text parser needs: numbered lines, numbers without float drift, names in
//! snake_case, and one place that turns "lines I did not understand" into a quality row.
//!
//! The tools schedlab reads print whitespace-aligned tables whose alignment breaks (long names,
//! tabs expanded by a mail client, an indent added by a commit message). So parsers split on runs
//! of whitespace and read fixed-shape fields from the right where names may hold spaces; the
//! helpers for that live here so no parser grows its own copy.

use schedlab_tables::{QualityRow, Severity, WorkloadMetricRow};

use crate::{ParseContext, ParseError};

/// Lines of `text` with their 1-based numbers, `\r` stripped.
pub(crate) fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.strip_suffix('\r').unwrap_or(line)))
}

/// A plain decimal number (`12`, `-3.5`, `1e3`), rejecting `inf`/`nan` words.
pub(crate) fn number(token: &str) -> Option<f64> {
    let token = token.trim();
    let first = token.chars().next()?;
    if !(first.is_ascii_digit() || first == '-' || first == '+' || first == '.') {
        return None;
    }
    token.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// A decimal string (`975758.720111`, `0.004`) times `scale`, exactly: no float rounding, so
/// microsecond timestamps become the same nanoseconds perf computed.
pub(crate) fn decimal_scaled(token: &str, scale: i64) -> Option<i64> {
    let token = token.trim();
    let (negative, digits) = match token.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, token),
    };
    let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    if !int_part.bytes().all(|b| b.is_ascii_digit())
        || !frac_part.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let int_value: i64 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().ok()?
    };
    let mut frac_value: i64 = 0;
    let mut unit = scale;
    for digit in frac_part.bytes() {
        unit /= 10;
        if unit == 0 {
            break;
        }
        frac_value += i64::from(digit - b'0') * unit;
    }
    let value = int_value.checked_mul(scale)?.checked_add(frac_value)?;
    Some(if negative { -value } else { value })
}

/// `Busy%` → `busy_pct`, `RSS Max (KB)` → `rss_max_kb`: lower case, `%` spelled `pct`, every
/// other run of non-alphanumerics one `_`.
pub(crate) fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut pending_sep = false;
    for c in name.chars() {
        let piece: Option<&str> = if c == '%' { Some("pct") } else { None };
        if let Some(piece) = piece {
            if !out.is_empty() {
                out.push('_');
            }
            out.push_str(piece);
            pending_sep = true;
        } else if c.is_alphanumeric() {
            if pending_sep && !out.is_empty() {
                out.push('_');
            }
            pending_sep = false;
            out.extend(c.to_lowercase());
        } else {
            pending_sep = true;
        }
    }
    out
}

/// Splits `line` into its last `n` whitespace-separated tokens and the text before them
/// (trimmed), for rows whose leading name may contain spaces.
pub(crate) fn split_last_tokens(line: &str, n: usize) -> Option<(&str, Vec<&str>)> {
    let mut end = line.trim_end().len();
    let mut tokens = Vec::with_capacity(n);
    for _ in 0..n {
        let head = line[..end].trim_end();
        let start = head
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map_or(0, |(i, c)| i + c.len_utf8());
        if start >= head.len() {
            return None;
        }
        tokens.push(&head[start..]);
        end = start;
    }
    tokens.reverse();
    Some((line[..end].trim(), tokens))
}

/// A `QualityRow` about the run of `ctx`.
pub(crate) fn quality(
    ctx: &ParseContext,
    source: &str,
    severity: Severity,
    message: String,
) -> QualityRow {
    QualityRow {
        run_id: ctx.run_id.clone(),
        source: source.to_owned(),
        severity,
        message,
        time_ns: None,
        cpu: None,
    }
}

/// The error for text a parser cannot read at all.
pub(crate) fn text_error(source_name: &str, line: usize, message: impl Into<String>) -> ParseError {
    ParseError::Text {
        source_name: source_name.to_owned(),
        line,
        message: message.into(),
    }
}

/// Collects lines a parser skipped because it does not know their form, and reports them as
/// one warning (count, first line and its text) rather than one row per line.
pub(crate) struct Unrecognized {
    parser: &'static str,
    count: usize,
    first: Option<(usize, String)>,
}

impl Unrecognized {
    pub(crate) fn new(parser: &'static str) -> Unrecognized {
        Unrecognized {
            parser,
            count: 0,
            first: None,
        }
    }

    pub(crate) fn note(&mut self, line_no: usize, line: &str) {
        self.count += 1;
        if self.first.is_none() {
            let shown: String = line.trim().chars().take(120).collect();
            self.first = Some((line_no, shown));
        }
    }

    /// The line number of the first skipped line, if any.
    pub(crate) fn first_line(&self) -> Option<usize> {
        self.first.as_ref().map(|(line, _)| *line)
    }

    /// A warning row naming `source_name`, or nothing when every line was understood.
    pub(crate) fn into_quality(self, ctx: &ParseContext, source_name: &str) -> Option<QualityRow> {
        let (line, text) = self.first?;
        let message = format!(
            "{source_name}:{line}: skipped {} line(s) of a form the {} parser does not know, first: {text:?}",
            self.count, self.parser
        );
        Some(quality(ctx, self.parser, Severity::Warning, message))
    }
}

/// Builds `WorkloadMetricRow`s for one tool and one run/workload instance.
pub(crate) struct Metrics<'a> {
    ctx: &'a ParseContext,
    tool: &'static str,
    pub(crate) rows: Vec<WorkloadMetricRow>,
}

impl<'a> Metrics<'a> {
    pub(crate) fn new(ctx: &'a ParseContext, tool: &'static str) -> Metrics<'a> {
        Metrics {
            ctx,
            tool,
            rows: Vec::new(),
        }
    }

    /// Adds `metric = value unit` for instance `ctx.instance + record`.
    pub(crate) fn push(&mut self, record: u32, metric: String, value: f64, unit: &str) {
        self.rows.push(WorkloadMetricRow {
            run_id: self.ctx.run_id.clone(),
            workload: self.ctx.workload.clone().unwrap_or_default(),
            instance: self.ctx.instance.saturating_add(record),
            tid: None,
            tool: self.tool.to_owned(),
            metric,
            value,
            unit: unit.to_owned(),
        });
    }
}

/// Seconds from a duration as the tools print it: `2.00s`, `60.06`, `1 min, 10.23 secs`,
/// `4 mins, 7.66 secs`, `1 hour, 2 mins, 3.00 secs`, `0m2.017s`, `1h2m3.5s`.
pub(crate) fn duration_seconds(text: &str) -> Option<f64> {
    let text = text.trim();
    if let Some(value) = number(text) {
        return Some(value);
    }
    let mut total = 0.0;
    let mut seen = false;
    // Word form: "N unit[, N unit]".
    if text.contains(' ') {
        for part in text.split(',') {
            let mut words = part.split_whitespace();
            let value = number(words.next()?)?;
            let unit = words.next()?;
            let factor = match unit.trim_end_matches('s') {
                "sec" | "second" => 1.0,
                "min" | "minute" => 60.0,
                "hour" | "hr" => 3600.0,
                "day" => 86400.0,
                _ => return None,
            };
            total += value * factor;
            seen = true;
        }
        return seen.then_some(total);
    }
    // Compact form: "1h2m3.5s", "0m2.017s", "2.00s".
    let mut start = 0;
    for (i, c) in text.char_indices() {
        let factor = match c {
            'h' => 3600.0,
            'm' => 60.0,
            's' => 1.0,
            _ => continue,
        };
        total += number(&text[start..i])? * factor;
        start = i + 1;
        seen = true;
    }
    (seen && start == text.len()).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_scale_exactly() {
        assert_eq!(
            decimal_scaled("975758.720111", 1_000_000_000),
            Some(975_758_720_111_000)
        );
        assert_eq!(decimal_scaled("0.004", 1_000_000), Some(4_000));
        assert_eq!(decimal_scaled("-1.5", 1_000), Some(-1_500));
        assert_eq!(decimal_scaled("1.2345", 1_000), Some(1_234));
        assert_eq!(decimal_scaled("x1", 1_000), None);
        assert_eq!(decimal_scaled(".", 1_000), None);
    }

    #[test]
    fn names_become_snake_case() {
        assert_eq!(snake_case("Busy%"), "busy_pct");
        assert_eq!(snake_case("RSS Max (KB)"), "rss_max_kb");
        assert_eq!(snake_case("Totl%C0"), "totl_pct_c0");
        assert_eq!(snake_case("write128 MB/sec"), "write128_mb_sec");
    }

    #[test]
    fn durations_in_every_spelling() {
        assert_eq!(duration_seconds("2.00s"), Some(2.0));
        assert_eq!(duration_seconds("1 min, 10.23 secs"), Some(70.23));
        assert_eq!(duration_seconds("4 mins, 7.66 secs"), Some(247.66));
        assert_eq!(duration_seconds("0m2.017s"), Some(2.017));
        assert_eq!(duration_seconds("1h2m3s"), Some(3723.0));
        assert_eq!(duration_seconds("2 bananas"), None);
        assert_eq!(duration_seconds("2x"), None);
    }

    #[test]
    fn last_tokens_leave_names_with_spaces() {
        let (name, tokens) = split_last_tokens("aes-128 cbc   1.5k  2.5k ", 2).unwrap();
        assert_eq!((name, tokens), ("aes-128 cbc", vec!["1.5k", "2.5k"]));
        assert!(split_last_tokens("one", 2).is_none());
        let (name, tokens) = split_last_tokens("a\u{a0}b", 1).unwrap();
        assert_eq!((name, tokens), ("a", vec!["b"]));
    }
}
