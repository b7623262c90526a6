//! The wakeup-delay CDF of each workload, from the `sched_delay_cdf` aggregate's points: what
//! share of its wakeups waited at most so long for a CPU. Delays span microseconds to
//! milliseconds, so the delay axis is logarithmic.

use std::collections::BTreeMap;

use plotters::prelude::*;
use schedlab_tables::SchedDelayCdfRow;

use crate::plots::{Frame, LegendEntry, Swatch, WIDTH, framed, plot_error};
use crate::style::{self, workload_color};

/// A line per workload (in its colour, `name (N wakeups)` in the legend beside the plot), delay in ms on a log
/// axis, share of wakeups in percent. `None` without points.
pub fn delay_cdf(
    title: &str,
    rows: &[&SchedDelayCdfRow],
    workloads: &[String],
) -> Result<Option<String>, String> {
    let mut lines: BTreeMap<&str, Vec<&SchedDelayCdfRow>> = BTreeMap::new();
    for r in rows {
        lines.entry(&r.workload).or_default().push(r);
    }
    let ms = |r: &SchedDelayCdfRow| (r.delay_ns.max(1)) as f64 / 1e6;
    let (Some(low), Some(high)) = (
        rows.iter().map(|r| ms(r)).reduce(f64::min),
        rows.iter().map(|r| ms(r)).reduce(f64::max),
    ) else {
        return Ok(None);
    };
    let legend: Vec<LegendEntry> = (lines.iter())
        .map(|(workload, points)| {
            let wakeups = points.first().map_or(0, |p| p.wakeups);
            let name = format!("{workload} ({wakeups} wakeups)");
            (name, workload_color(workloads, workload), Swatch::Line)
        })
        .collect();
    let frame = Frame {
        width: WIDTH,
        height: 480,
        title,
        legend: &legend,
        notes: &[],
    };
    let svg = framed(&frame, |plot| {
        let mut chart = ChartBuilder::on(plot)
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d((low * 0.8..high * 1.25).log_scale(), 0.0..100.0)
            .map_err(plot_error)?;
        style::readable(&mut chart.configure_mesh())
            .x_desc("wakeup delay, ms (log scale)")
            .y_desc("wakeups delayed at most this long, %")
            .x_label_formatter(&|x| format!("{x:.3}"))
            .draw()
            .map_err(plot_error)?;
        for (workload, points) in &lines {
            let mut points = points.clone();
            points.sort_by(|a, b| a.share.total_cmp(&b.share));
            let color = workload_color(workloads, workload);
            // A step per point: the share holds until the next delay.
            let mut path = Vec::new();
            for p in &points {
                if let Some(&(_, share)) = path.last() {
                    path.push((ms(p), share));
                }
                path.push((ms(p), p.share * 100.0));
            }
            chart
                .draw_series(LineSeries::new(path, color.stroke_width(2)))
                .map_err(plot_error)?;
        }
        Ok(())
    })?;
    Ok(Some(svg))
}
