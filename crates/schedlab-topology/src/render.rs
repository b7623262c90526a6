//! The text `schedlab topology` prints.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::{CpuInfo, format_cpu_list};

/// Renders one line per CPU, then one line per class with its CPUs in kernel list form.
///
/// Classes are listed fastest first (by their highest max frequency, then capacity), so `P` or
/// `big` leads whatever the CPU numbering; missing values print as `-`.
pub fn render_table(cpus: &[CpuInfo]) -> String {
    let mut out = String::new();
    let header = [
        "CPU", "CLASS", "SOURCE", "CORE", "PKG", "CAPACITY", "MAX_MHZ", "BASE_MHZ",
    ];
    let mut rows: Vec<[String; 8]> = vec![header.map(str::to_owned)];
    for c in cpus {
        rows.push([
            c.cpu.to_string(),
            c.class.clone(),
            c.class_source.clone(),
            opt(c.core_id),
            opt(c.package_id),
            opt(c.capacity),
            opt(c.max_khz.map(|k| k / 1000)),
            opt(c.base_khz.map(|k| k / 1000)),
        ]);
    }
    let left = [false, true, true, false, false, false, false, false];
    write_aligned(&mut out, &rows, left);

    let mut classes: BTreeMap<&str, ClassSummary> = BTreeMap::new();
    for (i, c) in cpus.iter().enumerate() {
        let summary = classes.entry(&c.class).or_insert(ClassSummary {
            cpus: Vec::new(),
            max_khz: None,
            capacity: None,
            first: i,
        });
        summary.cpus.push(c.cpu);
        summary.max_khz = summary.max_khz.max(c.max_khz);
        summary.capacity = summary.capacity.max(c.capacity);
    }
    let mut summaries: Vec<_> = classes.into_iter().collect();
    summaries.sort_by_key(|(_, s)| {
        (
            std::cmp::Reverse(s.max_khz),
            std::cmp::Reverse(s.capacity),
            s.first,
        )
    });
    let mut rows: Vec<[String; 4]> = vec![["CLASS", "COUNT", "CPUS", "MAX_MHZ"].map(str::to_owned)];
    for (class, s) in summaries {
        rows.push([
            class.to_owned(),
            s.cpus.len().to_string(),
            format_cpu_list(&s.cpus),
            opt(s.max_khz.map(|k| k / 1000)),
        ]);
    }
    out.push('\n');
    write_aligned(&mut out, &rows, [true, false, true, false]);
    out
}

/// One class's line of the summary, and what orders it.
struct ClassSummary {
    cpus: Vec<u32>,
    max_khz: Option<i64>,
    capacity: Option<i64>,
    /// Position of the class's first CPU, the last tie-breaker.
    first: usize,
}

fn opt<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

/// Writes rows as columns two spaces apart, text left-aligned (`left[i]`) and numbers
/// right-aligned, with no trailing spaces.
fn write_aligned<const N: usize>(out: &mut String, rows: &[[String; N]], left: [bool; N]) {
    let mut widths = [0; N];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in rows {
        let mut line = String::new();
        for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            // Writing to a String cannot fail.
            let _ = if left[i] {
                write!(line, "{cell:<w$}")
            } else {
                write!(line, "{cell:>w$}")
            };
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}
