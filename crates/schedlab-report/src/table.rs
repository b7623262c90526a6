//! The one table printer: a Markdown table, which is both what `summary.md` (and so
//! `index.html`) holds and what the terminal shows.
//!
//! Cell text comes from the outside world (a comm is whatever a process called itself), so every
//! cell is escaped: a `|` must not split a cell, and `<script>` must reach the HTML page as text,
//! not as markup.

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    /// Numbers, so their digits line up in the HTML page.
    Right,
}

/// A table being filled, one row at a time.
pub struct Table {
    columns: Vec<(&'static str, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(columns: &[(&'static str, Align)]) -> Table {
        Table {
            columns: columns.to_vec(),
            rows: Vec::new(),
        }
    }

    /// Appends a row: one cell per column, as plain text (the printer escapes it).
    pub fn row(&mut self, cells: Vec<String>) {
        debug_assert_eq!(cells.len(), self.columns.len(), "one cell per column");
        self.rows.push(cells);
    }

    /// The table in Markdown (GitHub's tables, which pulldown-cmark reads).
    pub fn markdown(&self) -> String {
        let line = |cells: &mut dyn Iterator<Item = String>| {
            let cells: Vec<String> = cells.collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let mut out = line(&mut self.columns.iter().map(|(name, _)| escape(name)));
        let rule: Vec<&str> = (self.columns.iter())
            .map(|(_, align)| match align {
                Align::Left => "---",
                Align::Right => "---:",
            })
            .collect();
        out.push_str(&format!("|{}|\n", rule.join("|")));
        for row in &self.rows {
            out.push_str(&line(&mut row.iter().map(|cell| escape(cell))));
        }
        out
    }
}

/// `text` as Markdown that reads back as exactly `text`: backslashes before the characters that
/// would make markup (HTML, links, code, emphasis, a table's cell border), and line breaks as
/// spaces (a table row is one line). An underscore inside a word (`rcu_preempt`) cannot start
/// emphasis, so it is left alone for the terminal's sake.
pub fn escape(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        let in_word = |j: Option<usize>| {
            j.and_then(|j| chars.get(j))
                .is_some_and(|c| c.is_alphanumeric())
        };
        let markup = match c {
            '\\' | '`' | '*' | '[' | ']' | '<' | '>' | '&' | '|' => true,
            '_' => !(in_word(i.checked_sub(1)) && in_word(Some(i + 1))),
            _ => false,
        };
        if markup {
            out.push('\\');
        }
        out.push(if c == '\n' || c == '\r' { ' ' } else { c });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_cells_is_escaped_and_plain_text_is_left_alone() {
        let mut table = Table::new(&[("comm", Align::Left), ("CPU time", Align::Right)]);
        table.row(vec!["a|<script>".into(), "0.368 s".into()]);
        table.row(vec![
            "rcu_preempt _x_ *y* [z](u) `c` &amp; \\".into(),
            "".into(),
        ]);
        table.row(vec!["two\nlines".into(), "1: 71.2%, 0: 28.8%".into()]);
        assert_eq!(
            table.markdown(),
            "| comm | CPU time |\n|---|---:|\n\
             | a\\|\\<script\\> | 0.368 s |\n\
             | rcu_preempt \\_x\\_ \\*y\\* \\[z\\](u) \\`c\\` \\&amp; \\\\ |  |\n\
             | two lines | 1: 71.2%, 0: 28.8% |\n"
        );
    }
}
