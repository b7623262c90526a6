//! `schedlab compare`'s charts: per figure, each group's mean with its 95 % interval, the
//! baseline's mean across as a line, the verdict under each group. They draw the `comparison`
//! rows as they are.

use std::collections::BTreeMap;

use plotters::prelude::*;
use schedlab_tables::{ComparisonRow, Verdict};

use crate::plots::{Frame, LEGEND_WIDTH, LegendEntry, Swatch, WIDTH, framed, plot_error};
use crate::style;
use crate::timeplots::{lane_label, lane_range};

const BASELINE: RGBColor = RGBColor(90, 90, 90);
const GROUP: RGBColor = RGBColor(31, 119, 180);

/// `higher +3.10 %` under a group: its verdict, and the difference when there is one.
fn verdict_text(r: &ComparisonRow) -> String {
    match r.diff_pct {
        Some(d) if r.verdict != Verdict::Baseline => format!("{} {d:+.2} %", r.verdict),
        _ => r.verdict.to_string(),
    }
}

/// A figure's context, workload and name.
type Figure<'a> = (&'a str, &'a str, &'a str);

/// One chart per context, workload and figure of `rows` (in their order).
pub fn comparison_charts(rows: &[ComparisonRow]) -> Result<Vec<String>, String> {
    let mut figures: Vec<(Figure<'_>, Vec<&ComparisonRow>)> = Vec::new();
    let mut index: BTreeMap<Figure<'_>, usize> = BTreeMap::new();
    for r in rows {
        let key = (r.context.as_str(), r.workload.as_str(), r.metric.as_str());
        let at = *index.entry(key).or_insert_with(|| {
            figures.push((key, Vec::new()));
            figures.len() - 1
        });
        figures[at].1.push(r);
    }
    (figures.iter())
        .map(|((context, workload, metric), rows)| {
            let title = if context.is_empty() {
                format!("{workload}: {metric}")
            } else {
                format!("{workload}: {metric} ({context})")
            };
            chart(&title, rows)
        })
        .collect()
}

/// One figure's chart: a group per column, its mean as a dot and its interval as a bar.
fn chart(title: &str, rows: &[&ComparisonRow]) -> Result<String, String> {
    let values =
        (rows.iter()).flat_map(|r| [Some(r.mean), r.ci_low, r.ci_high].into_iter().flatten());
    let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let pad = ((high - low) * 0.15).max(high.abs() * 0.01).max(1e-9);
    let names: Vec<String> = (rows.iter())
        .map(|r| format!("{} ({} runs): {}", r.group, r.runs, verdict_text(r)))
        .collect();
    let unit = rows.first().map_or("", |r| r.unit.as_str());
    let axis = if unit.is_empty() {
        "mean (95 % interval)".to_owned()
    } else {
        format!("mean, {unit} (95 % interval)")
    };
    let mut legend: Vec<LegendEntry> = Vec::new();
    if rows.iter().any(|r| r.verdict == Verdict::Baseline) {
        legend.push(("baseline mean".into(), BASELINE.to_rgba(), Swatch::Line));
    }
    legend.push((
        "group mean, 95 % interval".into(),
        GROUP.to_rgba(),
        Swatch::Line,
    ));
    let frame = Frame {
        width: (LEGEND_WIDTH + 200 + 260 * rows.len() as u32).min(WIDTH),
        height: 360,
        title,
        legend: &legend,
        notes: &[],
    };
    framed(&frame, |plot| {
        let mut chart = ChartBuilder::on(plot)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(100)
            .build_cartesian_2d(lane_range(rows.len()), (low - pad)..(high + pad))
            .map_err(plot_error)?;
        let label = |x: &f64| lane_label(&names, *x);
        style::readable(&mut chart.configure_mesh())
            .disable_x_mesh()
            .x_labels(rows.len() + 1)
            .x_label_formatter(&label)
            .y_desc(axis)
            .draw()
            .map_err(plot_error)?;
        if let Some(base) = rows.iter().find(|r| r.verdict == Verdict::Baseline) {
            let span = [(-0.5, base.mean), (rows.len() as f64 - 0.5, base.mean)];
            chart
                .draw_series([PathElement::new(
                    span.to_vec(),
                    BASELINE.mix(0.5).stroke_width(1),
                )])
                .map_err(plot_error)?;
        }
        for (i, r) in rows.iter().enumerate() {
            let x = i as f64;
            let color = if r.verdict == Verdict::Baseline {
                BASELINE
            } else {
                GROUP
            };
            if let (Some(lo), Some(hi)) = (r.ci_low, r.ci_high) {
                let bar = [
                    PathElement::new(vec![(x, lo), (x, hi)], color.stroke_width(2)),
                    PathElement::new(vec![(x - 0.08, lo), (x + 0.08, lo)], color.stroke_width(2)),
                    PathElement::new(vec![(x - 0.08, hi), (x + 0.08, hi)], color.stroke_width(2)),
                ];
                chart.draw_series(bar).map_err(plot_error)?;
            }
            chart
                .draw_series([Circle::new((x, r.mean), 5, color.filled())])
                .map_err(plot_error)?;
        }
        Ok(())
    })
}
