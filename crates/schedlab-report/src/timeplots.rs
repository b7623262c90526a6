//! Plots over a run's time: what the CPUs did per interval (`activity`, from turbostat, the
//! `cpu` monitor, or a trace.dat's cpu_frequency and cpu_idle spans) and when the workload threads migrated between core classes (`migrations`).
//!
//! Both count seconds from the run's first workload start (where `power_step.after_start_s`
//! counts from) and mark each workload's lifetime, first start to last end, so that a change
//! can be read against what was running (seed page 8: package power falls about 35 s after the
//! foreground started). They draw persisted rows as they are: one line per CPU, each in its own
//! shade of its core class's hue (`style`), beside turbostat's own all-CPU row; a tick per migration. Only the drawing is
//! thinned: a line keeps at most [`MAX_POINTS`] points, and ticks closer than a pixel merge.

use std::collections::BTreeMap;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use schedlab_tables::turbostat::TurbostatSample;
use schedlab_tables::{
    CpuActivityIntervalRow, CpuFreqIdleRow, CpuRow, CpuSampleRow, MigrationRow, PowerStepRow,
    ProcessRow,
};

use crate::plots::{
    Frame, LegendEntry, Occupancy, RunContext, Swatch, WIDTH, framed, merged, plot_error,
};
use crate::style::{self, class_color, cpu_color, workload_color};

/// Points a line keeps at most (every k-th interval beyond it): the page stays small on a long
/// run, and a line of more points than half the plot's pixels draws no differently.
const MAX_POINTS: usize = WIDTH as usize / 2;

/// Height of one panel of the activity plot, in pixels.
const PANEL_HEIGHT: u32 = 210;

/// A workload from its first process start to its last end (on the run clock).
#[derive(Debug, Clone, PartialEq)]
pub struct Lifetime {
    pub workload: String,
    pub start_ns: i64,
    /// Null while a process has no end (it was still running when the run stopped).
    pub end_ns: Option<i64>,
}

/// Each workload's lifetime, in name order, from the run's `processes`.
pub fn lifetimes(processes: &[&ProcessRow]) -> Vec<Lifetime> {
    let mut by_workload: BTreeMap<&str, Lifetime> = BTreeMap::new();
    for p in processes {
        let life = by_workload.entry(&p.workload).or_insert_with(|| Lifetime {
            workload: p.workload.clone(),
            start_ns: p.start_ns,
            end_ns: p.end_ns,
        });
        life.start_ns = life.start_ns.min(p.start_ns);
        life.end_ns = match (life.end_ns, p.end_ns) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
    }
    by_workload.into_values().collect()
}

/// One line of a panel: a CPU (with its class) or, without a class, the whole machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub cpu: Option<i32>,
    pub class: Option<String>,
    /// `(time_ns, value)` in time order.
    pub points: Vec<(i64, f64)>,
}

/// One panel of the activity plot: a figure over time, its lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// The y axis: the figure and its unit (`Busy %`).
    pub axis: &'static str,
    pub lines: Vec<Line>,
    /// A vertical mark in this panel: where and what (the step in package power).
    pub mark: Option<(i64, String)>,
}

/// The panels of turbostat's per-interval rows (its table `turbostat`, and the class means of
/// the `cpu_activity_intervals` aggregate): Busy%, Bzy_MHz, C6% and core temperature per CPU,
/// per class and for the machine, package power for the machine. A field turbostat did not
/// print gives no panel.
pub fn turbostat_panels(
    samples: &[TurbostatSample],
    intervals: &[&CpuActivityIntervalRow],
    cpus: &[&CpuRow],
) -> Vec<Panel> {
    type Field = fn(&TurbostatSample) -> Option<f64>;
    type ClassField = Option<fn(&CpuActivityIntervalRow) -> Option<f64>>;
    let fields: [(&'static str, Field, bool, ClassField); 5] = [
        (
            "Busy % (turbostat Busy%)",
            |s| s.busy_pct,
            true,
            Some(|r| r.busy_pct),
        ),
        (
            "MHz while busy (Bzy_MHz)",
            |s| s.bzy_mhz,
            true,
            Some(|r| r.bzy_mhz),
        ),
        ("C6 % (CPU%c6)", |s| s.c6_pct, true, Some(|r| r.c6_pct)),
        ("package power, W (PkgWatt)", |s| s.pkg_watt, false, None),
        (
            "core temperature, °C (CoreTmp)",
            |s| s.core_tmp_c,
            true,
            Some(|r| r.core_tmp_c_max),
        ),
    ];
    let class_of = class_map(cpus);
    (fields.into_iter())
        .map(|(axis, field, per_cpu, class_field)| {
            let mut lines: BTreeMap<Option<i32>, Vec<(i64, f64)>> = BTreeMap::new();
            for s in samples {
                let (Some(time_ns), Some(value)) = (s.time_ns, field(s)) else {
                    continue;
                };
                let key = if s.summary { None } else { s.cpu };
                if s.summary || (per_cpu && s.cpu.is_some()) {
                    lines.entry(key).or_default().push((time_ns, value));
                }
            }
            let mut lines = to_lines(lines, &class_of);
            let mut classes: BTreeMap<&str, Vec<(i64, f64)>> = BTreeMap::new();
            for r in intervals {
                if let (Some(time_ns), Some(value)) = (r.time_ns, class_field.and_then(|f| f(r))) {
                    classes.entry(&r.class).or_default().push((time_ns, value));
                }
            }
            for (class, mut points) in classes {
                points.sort_by_key(|p| p.0);
                lines.push(Line {
                    cpu: None,
                    class: Some(class.to_owned()),
                    points,
                });
            }
            // CPUs first, then the classes over them, the machine on top.
            lines.sort_by_key(|l| match (l.cpu, &l.class) {
                (Some(_), _) => 0,
                (None, Some(_)) => 1,
                (None, None) => 2,
            });
            Panel {
                axis,
                lines,
                mark: None,
            }
        })
        .filter(|p| !p.lines.is_empty())
        .collect()
}

/// The panels of the `cpu` monitor's rows (table `cpu_samples`) per CPU: Busy %, frequency
/// (scaling_cur_freq) and time in idle states deeper than polling.
pub fn cpu_sample_panels(samples: &[&CpuSampleRow], cpus: &[&CpuRow]) -> Vec<Panel> {
    type Field = fn(&CpuSampleRow) -> Option<f64>;
    let fields: [(&'static str, Field); 3] = [
        ("Busy % (cpu monitor)", |s| s.busy_pct),
        ("MHz (scaling_cur_freq)", |s| {
            s.freq_khz.map(|khz| khz as f64 / 1000.0)
        }),
        ("deep idle % (cpuidle)", |s| s.idle_state_pct),
    ];
    let class_of = class_map(cpus);
    (fields.into_iter())
        .map(|(axis, field)| {
            let mut lines: BTreeMap<Option<i32>, Vec<(i64, f64)>> = BTreeMap::new();
            for s in samples {
                if let Some(value) = field(s) {
                    lines
                        .entry(Some(s.cpu))
                        .or_default()
                        .push((s.time_ns, value));
                }
            }
            Panel {
                axis,
                lines: to_lines(lines, &class_of),
                mark: None,
            }
        })
        .filter(|p| !p.lines.is_empty())
        .collect()
}

/// The panels of a trace.dat's frequency and idle spans (table `cpu_freq_idle`) per CPU, each
/// drawn as steps: the frequency cpu_frequency set, and the idle state cpu_idle entered (-1
/// while running).
pub fn freq_idle_panels(spans: &[&CpuFreqIdleRow], cpus: &[&CpuRow]) -> Vec<Panel> {
    type Field = fn(&CpuFreqIdleRow) -> Option<f64>;
    let fields: [(&'static str, Field); 2] = [
        ("MHz (cpu_frequency)", |s| {
            s.freq_khz.map(|khz| khz as f64 / 1000.0)
        }),
        ("idle state (cpu_idle, -1 running)", |s| {
            s.idle_state.map(f64::from)
        }),
    ];
    let class_of = class_map(cpus);
    (fields.into_iter())
        .map(|(axis, field)| {
            let mut lines: BTreeMap<Option<i32>, Vec<(i64, f64)>> = BTreeMap::new();
            for s in spans {
                if let Some(value) = field(s) {
                    let line = lines.entry(Some(s.cpu)).or_default();
                    line.extend([(s.start_ns, value), (s.end_ns, value)]);
                }
            }
            Panel {
                axis,
                lines: to_lines(lines, &class_of),
                mark: None,
            }
        })
        .filter(|p| !p.lines.is_empty())
        .collect()
}

fn class_map(cpus: &[&CpuRow]) -> BTreeMap<i32, String> {
    (cpus.iter()).map(|c| (c.cpu, c.class.clone())).collect()
}

fn to_lines(
    lines: BTreeMap<Option<i32>, Vec<(i64, f64)>>,
    class_of: &BTreeMap<i32, String>,
) -> Vec<Line> {
    (lines.into_iter())
        .map(|(cpu, mut points)| {
            points.sort_by_key(|p| p.0);
            Line {
                cpu,
                class: cpu.map(|c| class_of.get(&c).cloned().unwrap_or_else(|| "?".into())),
                points,
            }
        })
        .collect()
}

/// Marks the run's significant power step (`power_step`) in the panel of package power.
pub fn mark_power_step(panels: &mut [Panel], steps: &[&PowerStepRow]) {
    let Some(step) = steps.iter().find(|s| s.significant) else {
        return;
    };
    let change = match step.step_pct {
        Some(pct) => format!("{pct:+.1} %"),
        None => format!("{:+.2} W", step.step_watt),
    };
    let text = format!(
        "power step {change} ({:.1} → {:.1} W)",
        step.before_watt, step.after_watt
    );
    let watts = panels.iter_mut().find(|p| p.axis.contains(", W"));
    if let Some(panel) = watts {
        panel.mark = Some((step.time_ns, text));
    }
}

/// Every `k`-th point of `points` (and the last), so that at most [`MAX_POINTS`] remain.
fn thinned(points: &[(i64, f64)]) -> Vec<(i64, f64)> {
    let k = points.len().div_ceil(MAX_POINTS).max(1);
    let mut out: Vec<(i64, f64)> = points.iter().step_by(k).copied().collect();
    if let Some(last) = points.last()
        && out.last() != Some(last)
    {
        out.push(*last);
    }
    out
}

/// Seconds from `t0_ns`.
fn seconds(t0_ns: i64) -> impl Fn(i64) -> f64 {
    move |ns| (ns - t0_ns) as f64 / 1e9
}

/// The x range of a time plot: over `times` and the lifetimes' starts and ends.
fn time_range(times: impl Iterator<Item = i64>, lifetimes: &[Lifetime]) -> Option<(i64, i64)> {
    let all: Vec<i64> = times
        .chain(lifetimes.iter().map(|l| l.start_ns))
        .chain(lifetimes.iter().filter_map(|l| l.end_ns))
        .collect();
    Some((*all.iter().min()?, *all.iter().max()?))
}

/// The workloads' lifetimes as bars on a strip above the panels, in their colours, each
/// labelled with its name.
fn draw_lifetimes(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    lifetimes: &[Lifetime],
    x: std::ops::Range<f64>,
    t0_ns: i64,
    t1_ns: i64,
) -> Result<(), String> {
    let names: Vec<String> = lifetimes.iter().map(|l| l.workload.clone()).collect();
    let s = seconds(t0_ns);
    let mut chart = ChartBuilder::on(area)
        .margin_left(12)
        .margin_right(12)
        .y_label_area_size(Y_LABELS)
        .build_cartesian_2d(x, lane_range(lifetimes.len()))
        .map_err(plot_error)?;
    let label = |v: &f64| lane_label(&names, *v);
    style::readable(&mut chart.configure_mesh())
        .disable_mesh()
        .disable_x_axis()
        .y_labels(lifetimes.len() + 1)
        .y_label_formatter(&label)
        .y_desc("lifetime")
        .draw()
        .map_err(plot_error)?;
    for (i, life) in lifetimes.iter().enumerate() {
        let color = workload_color(&names, &life.workload);
        let end = life.end_ns.unwrap_or(t1_ns);
        let (bottom, top) = lane_band(i);
        chart
            .draw_series([Rectangle::new(
                [(s(life.start_ns), bottom), (s(end), top)],
                color.filled(),
            )])
            .map_err(plot_error)?;
    }
    Ok(())
}

/// The y range of `count` lanes, lane `i` centred on `i`: with `count + 1` labels asked,
/// plotters puts one on each lane's centre (a step of 1), where [`lane_label`] names it.
pub(crate) fn lane_range(count: usize) -> std::ops::Range<f64> {
    -0.5..count as f64 - 0.5
}

/// A lane's name at its centre, nothing between lanes.
pub(crate) fn lane_label(names: &[String], y: f64) -> String {
    let index = y.round();
    if (y - index).abs() > 0.01 || index < 0.0 {
        return String::new();
    }
    names.get(index as usize).cloned().unwrap_or_default()
}

/// The band lane `i` is drawn in, with a gap to the next.
fn lane_band(i: usize) -> (f64, f64) {
    (i as f64 - 0.4, i as f64 + 0.4)
}

/// Thin vertical lines at each workload's start and end, in its colour.
fn draw_lifetime_edges<'a, Y: Ranged<ValueType = f64>>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, Y>>,
    lifetimes: &[Lifetime],
    t0_ns: i64,
    (low, high): (f64, f64),
) -> Result<(), String> {
    let names: Vec<String> = lifetimes.iter().map(|l| l.workload.clone()).collect();
    let s = seconds(t0_ns);
    for life in lifetimes {
        let color = workload_color(&names, &life.workload);
        let edges = std::iter::once(life.start_ns).chain(life.end_ns);
        chart
            .draw_series(
                edges.map(|t| {
                    PathElement::new(vec![(s(t), low), (s(t), high)], color.stroke_width(1))
                }),
            )
            .map_err(plot_error)?;
    }
    Ok(())
}

/// The activity plot: a strip of the workloads' lifetimes, then one panel per figure, a line
/// per CPU in its class's colour and turbostat's all-CPU row in black. `None` without panels.
pub fn activity(
    title: &str,
    panels: &[Panel],
    lifetimes: &[Lifetime],
) -> Result<Option<String>, String> {
    let times = (panels.iter())
        .flat_map(|p| &p.lines)
        .flat_map(|l| l.points.iter().map(|p| p.0));
    let Some((first_ns, last_ns)) = time_range(times, lifetimes) else {
        return Ok(None);
    };
    if panels.is_empty() {
        return Ok(None);
    }
    let (t0_ns, x_axis) = RunContext::new(lifetimes).origin(first_ns, "interval");
    let s = seconds(t0_ns);
    let x = s(first_ns)..s(last_ns).max(s(first_ns) + 1e-9);
    let strip = if lifetimes.is_empty() {
        0
    } else {
        30 + 26 * lifetimes.len() as u32
    };
    let colors = cpu_colors(panels);
    let legend = activity_legend(panels, lifetimes, &colors);
    let frame = Frame {
        width: WIDTH,
        height: 40 + strip + PANEL_HEIGHT * panels.len() as u32 + X_AXIS_NAME,
        title,
        legend: &legend,
        notes: &[],
    };
    let svg = framed(&frame, |plot| {
        let (top, mut rest) = plot.split_vertically(strip);
        if !lifetimes.is_empty() {
            draw_lifetimes(&top, lifetimes, x.clone(), t0_ns, last_ns)?;
        }
        for (index, panel) in panels.iter().enumerate() {
            let last = index + 1 == panels.len();
            let height = PANEL_HEIGHT + if last { X_AXIS_NAME } else { 0 };
            let (area, below) = rest.split_vertically(height);
            rest = below;
            let x_desc = last.then_some(x_axis.as_str());
            let lines = Lines {
                colors: &colors,
                lifetimes,
                t0_ns,
            };
            draw_panel(&area, panel, x.clone(), &lines, x_desc)?;
        }
        Ok(())
    })?;
    Ok(Some(svg))
}

/// Height of the x axis's name under the last panel.
const X_AXIS_NAME: u32 = 24;

/// Width of the area left of a plot for its y labels and axis name.
const Y_LABELS: u32 = 100;

/// How a panel draws its lines: each CPU's colour, the lifetimes' edges, the time origin.
struct Lines<'a> {
    colors: &'a BTreeMap<i32, RGBAColor>,
    lifetimes: &'a [Lifetime],
    t0_ns: i64,
}

fn draw_panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    panel: &Panel,
    x: std::ops::Range<f64>,
    lines: &Lines<'_>,
    x_desc: Option<&str>,
) -> Result<(), String> {
    let s = seconds(lines.t0_ns);
    let values = (panel.lines.iter()).flat_map(|l| l.points.iter().map(|p| p.1));
    let high = values.fold(0.0, f64::max);
    // A percentage up to 105, so that a CPU at 100 % is not drawn on the frame.
    let high = if panel.axis.contains('%') {
        high.max(105.0)
    } else {
        high * 1.1
    }
    .max(1e-9);
    let mut chart = ChartBuilder::on(area)
        .margin_left(12)
        .margin_right(12)
        .margin_top(8)
        .x_label_area_size(if x_desc.is_some() {
            30 + X_AXIS_NAME
        } else {
            30
        })
        .y_label_area_size(Y_LABELS)
        .build_cartesian_2d(x, 0.0..high)
        .map_err(plot_error)?;
    let mut mesh = chart.configure_mesh();
    style::readable(&mut mesh)
        .y_desc(panel.axis)
        .light_line_style(WHITE);
    if let Some(x_desc) = x_desc {
        mesh.x_desc(x_desc);
    }
    mesh.draw().map_err(plot_error)?;
    draw_lifetime_edges(&mut chart, lines.lifetimes, lines.t0_ns, (0.0, high))?;
    for line in &panel.lines {
        let points: Vec<(f64, f64)> = (thinned(&line.points).into_iter())
            .map(|(t, v)| (s(t), v))
            .collect();
        let (color, width) = line_style(line, lines.colors);
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(width)))
            .map_err(plot_error)?;
    }
    if let Some((at, _)) = &panel.mark {
        chart
            .draw_series([PathElement::new(
                vec![(s(*at), 0.0), (s(*at), high)],
                MARK.stroke_width(2),
            )])
            .map_err(plot_error)?;
    }
    Ok(())
}

/// The colour of a mark (the power step).
const MARK: RGBColor = RGBColor(200, 0, 0);

/// Each CPU's colour: a shade of its class's hue, by its place among the class's CPUs drawn.
fn cpu_colors(panels: &[Panel]) -> BTreeMap<i32, RGBAColor> {
    let mut by_class: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for line in panels.iter().flat_map(|p| &p.lines) {
        if let (Some(cpu), Some(class)) = (line.cpu, &line.class) {
            by_class.entry(class).or_default().push(cpu);
        }
    }
    let mut colors = BTreeMap::new();
    for (class, mut cpus) in by_class {
        cpus.sort();
        cpus.dedup();
        for (i, cpu) in cpus.iter().enumerate() {
            colors.insert(*cpu, cpu_color(class, i, cpus.len()));
        }
    }
    colors
}

/// The colour and width of a line: a CPU's thin in its own shade of its class's hue, a class's
/// mean thick in the class's colour, the machine's black.
fn line_style(line: &Line, colors: &BTreeMap<i32, RGBAColor>) -> (RGBAColor, u32) {
    match (line.cpu, &line.class) {
        (Some(cpu), _) => (colors.get(&cpu).copied().unwrap_or(BLACK.mix(0.5)), 1),
        (None, Some(class)) => (class_color(class), 3),
        _ => (BLACK.mix(1.0), 2),
    }
}

/// The activity plot's legend: the workloads' colours, a line per CPU, per class and the
/// machine's, the marks.
fn activity_legend(
    panels: &[Panel],
    lifetimes: &[Lifetime],
    colors: &BTreeMap<i32, RGBAColor>,
) -> Vec<LegendEntry> {
    let names: Vec<String> = lifetimes.iter().map(|l| l.workload.clone()).collect();
    let mut legend: Vec<LegendEntry> = (names.iter())
        .map(|name| (name.clone(), workload_color(&names, name), Swatch::Fill))
        .collect();
    let mut kinds: Vec<(u8, Option<i32>, Option<&str>)> = (panels.iter())
        .flat_map(|p| &p.lines)
        .map(|l| (u8::from(l.cpu.is_none()), l.cpu, l.class.as_deref()))
        .collect();
    kinds.sort();
    kinds.dedup();
    for (_, cpu, class) in kinds {
        let line = Line {
            cpu,
            class: class.map(str::to_owned),
            points: Vec::new(),
        };
        let name = match (cpu, class) {
            (Some(cpu), Some(class)) => format!("cpu {cpu} ({class})"),
            (Some(cpu), None) => format!("cpu {cpu}"),
            (None, Some(class)) => format!("class {class}: mean (°C: max)"),
            _ => "all CPUs (turbostat's row)".to_owned(),
        };
        legend.push((name, line_style(&line, colors).0, Swatch::Line));
    }
    for panel in panels {
        if let Some((_, text)) = &panel.mark {
            legend.push((text.clone(), MARK.to_rgba(), Swatch::Line));
        }
    }
    legend
}

/// The colour of the `i`-th class transition (in name order): distinct, dark enough on white.
fn transition_color(i: usize) -> RGBAColor {
    const COLORS: [RGBColor; 6] = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
    ];
    match COLORS.get(i) {
        Some(color) => color.to_rgba(),
        None => Palette99::pick(i).to_rgba(),
    }
}

/// The class transition of a migration: `P→E`, `?` for a CPU the `cpus` table lacks.
fn transition(class_of: &BTreeMap<i32, String>, m: &MigrationRow) -> String {
    let class = |cpu: i32| class_of.get(&cpu).map_or("?", String::as_str);
    format!("{}→{}", class(m.from_cpu), class(m.to_cpu))
}

/// The migrations plot: a lane per workload and class transition (`burst P→E`), a tick per
/// migration of a workload thread coloured by its transition; ticks closer than a pixel draw
/// as one bar. `None` without workload migrations.
pub fn migrations(
    title: &str,
    rows: &[&MigrationRow],
    cpus: &[&CpuRow],
    lifetimes: &[Lifetime],
) -> Result<Option<String>, String> {
    let class_of = class_map(cpus);
    let events: Vec<(String, String, i64)> = (rows.iter())
        .filter_map(|m| {
            Some((
                m.workload.as_deref()?.to_owned(),
                transition(&class_of, m),
                m.time_ns,
            ))
        })
        .collect();
    let Some((first_ns, last_ns)) = time_range(events.iter().map(|e| e.2), lifetimes) else {
        return Ok(None);
    };
    if events.is_empty() {
        return Ok(None);
    }
    let mut lanes: Vec<(String, String)> = (events.iter())
        .map(|(w, t, _)| (w.clone(), t.clone()))
        .collect();
    lanes.sort();
    lanes.dedup();
    let mut transitions: Vec<&str> = lanes.iter().map(|(_, t)| t.as_str()).collect();
    transitions.sort();
    transitions.dedup();
    let names: Vec<String> = lanes.iter().map(|(w, t)| format!("{w} {t}")).collect();
    let (t0_ns, x_axis) = RunContext::new(lifetimes).origin(first_ns, "migration");
    let s = seconds(t0_ns);
    // A pixel; a tick is two wide, to be seen.
    let gap_ns = ((last_ns - first_ns) / i64::from(WIDTH)).max(1);
    let ticks: Vec<Occupancy> = (events.iter())
        .map(|(w, t, time)| {
            let lane = lanes
                .iter()
                .position(|(lw, lt)| lw == w && lt == t)
                .unwrap_or(0);
            Occupancy {
                cpu: lane as i32,
                start_ns: *time,
                end_ns: time + 2 * gap_ns,
                workload: transitions[transitions.binary_search(&t.as_str()).unwrap_or(0)],
            }
        })
        .collect();
    let ticks = merged(&ticks, gap_ns);
    let legend: Vec<LegendEntry> = (transitions.iter().enumerate())
        .map(|(i, name)| (name.to_string(), transition_color(i), Swatch::Fill))
        .collect();
    let frame = Frame::of_lanes(title, &legend, lanes.len());
    let svg = framed(&frame, |plot| {
        let mut chart = ChartBuilder::on(plot)
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(180)
            .build_cartesian_2d(
                s(first_ns)..s(last_ns).max(s(first_ns) + 1e-9),
                lane_range(lanes.len()),
            )
            .map_err(plot_error)?;
        let label = |v: &f64| lane_label(&names, *v);
        style::readable(&mut chart.configure_mesh())
            .disable_mesh()
            .y_labels(lanes.len() + 1)
            .y_label_formatter(&label)
            .x_desc(format!("{x_axis} (a tick per migration)"))
            .draw()
            .map_err(plot_error)?;
        for (i, name) in transitions.iter().enumerate() {
            let color = transition_color(i);
            let rects = (ticks.iter()).filter(|t| t.workload == *name).map(|t| {
                let (bottom, top) = lane_band(t.cpu as usize);
                Rectangle::new(
                    [(s(t.start_ns), bottom), (s(t.end_ns), top)],
                    color.filled(),
                )
            });
            chart.draw_series(rects).map_err(plot_error)?;
        }
        Ok(())
    })?;
    Ok(Some(svg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_tables::turbostat::{TURBOSTAT_ENCODINGS, read_turbostat};

    #[test]
    fn a_long_line_is_thinned_to_every_kth_point_and_keeps_its_last() {
        let points: Vec<(i64, f64)> = (0..1000).map(|i| (i, i as f64)).collect();
        let thin = thinned(&points);
        assert_eq!(thin.len(), 501, "every second point and the last");
        assert_eq!(
            (thin[0], thin[1], thin[500]),
            ((0, 0.0), (2, 2.0), (999, 999.0))
        );
        let short = &points[..10];
        assert_eq!(thinned(short), short);
    }

    fn process(workload: &str, start_ns: i64, end_ns: Option<i64>) -> ProcessRow {
        ProcessRow {
            run_id: "r".into(),
            workload: workload.into(),
            instance: 0,
            pid: 1,
            start_ns,
            end_ns,
            exit_code: None,
            nice: 0,
            affinity: None,
            argv: Vec::new(),
        }
    }

    #[test]
    fn a_workload_lives_from_its_first_start_to_its_last_end() {
        let rows = [
            process("b", 50, Some(90)),
            process("a", 20, Some(70)),
            process("a", 10, Some(80)),
            process("b", 40, None),
        ];
        let rows: Vec<&ProcessRow> = rows.iter().collect();
        assert_eq!(
            lifetimes(&rows),
            [
                Lifetime {
                    workload: "a".into(),
                    start_ns: 10,
                    end_ns: Some(80)
                },
                Lifetime {
                    workload: "b".into(),
                    start_ns: 40,
                    end_ns: None
                },
            ]
        );
    }

    fn cpu(cpu: i32, class: &str) -> CpuRow {
        CpuRow::declared("r", cpu, class, None)
    }

    /// A trace.dat's spans draw as steps per CPU: the frequency panel from the spans that have
    /// one, the idle panel from those that have a state.
    #[test]
    fn frequency_and_idle_spans_draw_as_steps_per_cpu() {
        let span = |cpu, start_ns, end_ns, freq_khz, idle_state| CpuFreqIdleRow {
            run_id: "r".into(),
            cpu,
            start_ns,
            end_ns,
            freq_khz,
            idle_state,
        };
        let spans = [
            span(0, 0, 10, Some(1_000_000), None),
            span(0, 10, 30, Some(2_000_000), Some(-1)),
            span(1, 5, 30, None, Some(2)),
        ];
        let cpus = [cpu(0, "big"), cpu(1, "LITTLE")];
        let panels = freq_idle_panels(
            &spans.iter().collect::<Vec<_>>(),
            &cpus.iter().collect::<Vec<_>>(),
        );
        let axes: Vec<&str> = panels.iter().map(|p| p.axis).collect();
        assert_eq!(
            axes,
            ["MHz (cpu_frequency)", "idle state (cpu_idle, -1 running)"]
        );
        let freq = &panels[0].lines;
        assert_eq!(freq.len(), 1, "cpu 1 has no frequency");
        assert_eq!(
            freq[0].points,
            [(0, 1000.0), (10, 1000.0), (10, 2000.0), (30, 2000.0)]
        );
        assert_eq!(freq[0].class.as_deref(), Some("big"));
        let idle: Vec<(Option<i32>, usize)> = (panels[1].lines.iter())
            .map(|l| (l.cpu, l.points.len()))
            .collect();
        assert_eq!(idle, [(Some(0), 2), (Some(1), 2)]);
    }

    /// turbostat's real output on a hybrid Alder Lake-P (16 CPUs: P-cores 0-7 with HT, E-cores
    /// 8-15; 23 intervals of 5 s), through the parser and the table as the parse stage writes
    /// them.
    #[test]
    fn turbostat_draws_a_panel_per_figure_with_a_line_per_cpu_and_the_machines_row() {
        let fixture = schedlab_testkit::shared_fixtures_or_skip!("turbostat")
            .join("alderlake-p-hybrid-tod-interval5s-debughdr-v2024.12.03.txt");
        let text = std::fs::read_to_string(&fixture).unwrap();
        let ctx = schedlab_parse::ParseContext {
            run_id: "r".into(),
            start_ns: Some(1_000_000_000),
            ..Default::default()
        };
        let parsed = schedlab_parse::turbostat::parse(&text, "turbostat.txt", &ctx).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let batch = schedlab_parse::turbostat::concat_turbostat(&parsed.turbostat);
        let path = dir.path().join("turbostat.parquet");
        schedlab_tables::write_batch(&path, &batch, TURBOSTAT_ENCODINGS).unwrap();
        let samples = read_turbostat(dir.path()).unwrap();
        let cpus: Vec<CpuRow> = (0..16)
            .map(|c| cpu(c, if c < 8 { "P" } else { "E" }))
            .collect();
        let cpus: Vec<&CpuRow> = cpus.iter().collect();
        let owned: Vec<CpuRow> = cpus.iter().map(|c| (*c).clone()).collect();
        let intervals = schedlab_analyze::cpu_activity::class_intervals(&samples, &owned);
        let intervals: Vec<&CpuActivityIntervalRow> = intervals.iter().collect();
        let panels = turbostat_panels(&samples, &intervals, &cpus);
        let shape: Vec<(&str, usize, usize)> = (panels.iter())
            .map(|p| (p.axis, p.lines.len(), p.lines[0].points.len()))
            .collect();
        // A line per CPU, per class and for the machine. CPU%c6 and CoreTmp are core figures,
        // printed on each core's first thread: the P-cores' CPUs 0, 2, 4, 6 and the 8 E-cores.
        assert_eq!(
            shape,
            [
                ("Busy % (turbostat Busy%)", 19, 23),
                ("MHz while busy (Bzy_MHz)", 19, 23),
                ("C6 % (CPU%c6)", 15, 23),
                ("package power, W (PkgWatt)", 1, 23),
                ("core temperature, °C (CoreTmp)", 15, 23),
            ]
        );
        let classes: Vec<Option<&str>> =
            panels[0].lines.iter().map(|l| l.class.as_deref()).collect();
        let last = classes.len() - 1;
        assert_eq!(
            (
                classes[0],
                classes[8],
                classes[16],
                classes[17],
                classes[last]
            ),
            (Some("P"), Some("E"), Some("E"), Some("P"), None),
            "CPUs, then classes, then the machine on top"
        );
        let svg = activity("t", &panels, &[]).unwrap().unwrap();
        let hex = |c: RGBAColor| {
            let (r, g, b) = c.rgb();
            format!("#{r:02X}{g:02X}{b:02X}")
        };
        // A thin line per CPU row in its own shade of its class's hue: each of the 16 CPUs
        // in a colour of its own, a P-core's in every panel it has, an E-core's in all four.
        let thin = |color: &str| {
            let stroke = format!("stroke=\"{color}\" stroke-width=\"1\" points");
            svg.matches(&stroke).count()
        };
        let mut per_cpu: Vec<usize> = (0..16)
            .map(|c| {
                thin(&hex(cpu_color(
                    if c < 8 { "P" } else { "E" },
                    c as usize % 8,
                    8,
                )))
            })
            .collect();
        assert_eq!(per_cpu.iter().sum::<usize>(), 8 + 8 + 4 + 4 + 8 * 4);
        per_cpu.sort();
        assert_eq!(
            (per_cpu[0], per_cpu[15]),
            (2, 4),
            "every CPU drawn, in its own colour"
        );
        // A thick one per class and panel, in the class's colour.
        let thick = |class: &str| {
            let stroke = format!(
                "stroke=\"{}\" stroke-width=\"3\" points",
                hex(class_color(class))
            );
            svg.matches(&stroke).count()
        };
        assert_eq!((thick("P"), thick("E")), (4, 4));
        for cpu in 0..16 {
            let class = if cpu < 8 { "P" } else { "E" };
            assert!(
                // plotters writes a legend's text on a line of its own.
                svg.contains(&format!(">\ncpu {cpu} ({class})\n</text>")),
                "cpu {cpu} in the legend"
            );
        }
    }

    fn step(significant: bool, time_ns: i64) -> PowerStepRow {
        PowerStepRow {
            run_id: "r".into(),
            reference: Some("foreground".into()),
            time_ns,
            after_start_s: 35.0,
            before_watt: 30.24,
            after_watt: 19.8,
            step_watt: 19.8 - 30.24,
            step_pct: Some(-34.5),
            samples_before: 35,
            samples_after: 15,
            significant,
            source: "turbostat".into(),
        }
    }

    #[test]
    fn a_significant_power_step_is_marked_in_the_power_panel_only() {
        let panel = |axis| Panel {
            axis,
            lines: Vec::new(),
            mark: None,
        };
        let mut panels = [
            panel("Busy % (turbostat Busy%)"),
            panel("package power, W (PkgWatt)"),
        ];
        mark_power_step(&mut panels, &[&step(false, 1), &step(true, 42)]);
        assert_eq!(panels[0].mark, None);
        assert_eq!(
            panels[1].mark,
            Some((42, "power step -34.5 % (30.2 → 19.8 W)".to_owned()))
        );
        let mut unmarked = [panel("package power, W (PkgWatt)")];
        mark_power_step(&mut unmarked, &[&step(false, 1)]);
        assert_eq!(unmarked[0].mark, None, "wobble is not a step");
    }
}
