//! SVG plots of a run: which workload ran on which CPU when (`cpu_timeline`), and how many
//! seconds each CPU gave each workload (`residency`).
//!
//! The timeline draws [`Occupancy`] spans: a perf trace's slices (exact), or, without a trace,
//! the stretch between two /proc placement samples in which a thread gained CPU time, on the
//! CPU of the later sample (where it ran, at the sampling interval; not how much). It merges a
//! workload's spans on a CPU that lie closer than a pixel, so a trace of millions of slices
//! draws as a few thousand rectangles. The residency plot draws the `residency_rollup`
//! aggregate's rows per workload and CPU: the same figures as the summary.
//!
//! Every plot of a run shares a [`RunContext`]: a workload keeps its colour and every time axis
//! counts from the first workload start. A plot's legend and notes sit in its [`Frame`], beside
//! and under the data, never over it.

use std::collections::{BTreeMap, BTreeSet};

use plotters::coord::Shift;
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use schedlab_tables::{CpuRow, CpuTimelineRow, PlacementRow, ResidencyRollupRow, SchedSliceRow};

use crate::style::{self, workload_color};
use crate::timeplots::Lifetime;

/// Width of every plot, in pixels; spans closer than one of them are drawn as one.
pub(crate) const WIDTH: u32 = 1200;

/// Time a workload held a CPU, the workload named by `W`: its name, borrowed from the table (a
/// trace has millions of slices), or while reading, an index into the names read so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span<W> {
    pub cpu: i32,
    pub start_ns: i64,
    pub end_ns: i64,
    pub workload: W,
}

/// A span named by its workload (or its background entry), as the plots draw it.
pub type Occupancy<'a> = Span<&'a str>;

/// A workload's slice on a CPU, its workload an index into the names its reader collected.
pub(crate) type TracedSpan = Span<usize>;

/// The workloads' slices of a run's `sched_slices` (`names[span.workload]` names each span's
/// workload), read as the four columns drawn, never as rows. A span that starts within
/// `gap_ns` of the end of the last one of its CPU and workload extends it instead: the drawing
/// merges spans closer than a pixel anyway, and a trace of millions of slices is held as the
/// few thousand the plot can show.
pub(crate) fn traced_spans(
    tables: &(impl schedlab_tables::TableDir + ?Sized),
    gap_ns: i64,
) -> Result<(Vec<TracedSpan>, Vec<String>), schedlab_tables::TableError> {
    let mut names: Vec<String> = Vec::new();
    let mut spans: Vec<TracedSpan> = Vec::new();
    let mut last: BTreeMap<(i32, usize), usize> = BTreeMap::new();
    let columns = ["cpu", "start_ns", "end_ns", "workload"];
    schedlab_tables::read_columns::<SchedSliceRow>(tables, &columns, |batch| {
        let (cpu, start, end) = (
            batch.i32s("cpu")?,
            batch.i64s("start_ns")?,
            batch.i64s("end_ns")?,
        );
        let workload = batch.texts("workload")?;
        // The batch's dictionary, as indexes into `names`.
        let index: Vec<usize> = (workload.dictionary())
            .map(|name| match names.iter().position(|n| n == name) {
                Some(i) => i,
                None => {
                    names.push(name.to_owned());
                    names.len() - 1
                }
            })
            .collect();
        for row in 0..batch.rows() {
            let Some(key) = workload.key(row) else {
                continue;
            };
            let span = TracedSpan {
                cpu: cpu.value(row),
                start_ns: start.value(row),
                end_ns: end.value(row),
                workload: index[key],
            };
            match last.get(&(span.cpu, span.workload)).map(|&i| &mut spans[i]) {
                Some(previous)
                    if span.start_ns - previous.end_ns <= gap_ns
                        && span.start_ns >= previous.start_ns =>
                {
                    previous.end_ns = previous.end_ns.max(span.end_ns);
                }
                _ => {
                    last.insert((span.cpu, span.workload), spans.len());
                    spans.push(span);
                }
            }
        }
        Ok(())
    })?;
    Ok((spans, names))
}

/// The spans of one run: its trace slices when it has any (`traced`, naming workloads from
/// `names`), its placement samples otherwise.
pub fn occupancy<'a>(
    traced: &[TracedSpan],
    names: &'a [String],
    placement: &[&'a PlacementRow],
) -> Vec<Occupancy<'a>> {
    if !traced.is_empty() {
        return (traced.iter())
            .map(|s| Occupancy {
                cpu: s.cpu,
                start_ns: s.start_ns,
                end_ns: s.end_ns,
                workload: &names[s.workload],
            })
            .collect();
    }
    let samples = placement.iter().copied().filter(|p| p.workload.is_some());
    let mut spans = Vec::new();
    for gain in schedlab_tables::placement::gains(samples) {
        // A counter that went down is a reused thread id, not CPU time.
        if let Some(previous) = gain.previous
            && gain.sample.cpu_time_ns > previous.cpu_time_ns
        {
            spans.push(Occupancy {
                cpu: gain.sample.cpu,
                start_ns: previous.time_ns,
                end_ns: gain.sample.time_ns,
                workload: gain.sample.workload.as_deref().unwrap_or_default(),
            });
        }
    }
    spans
}

/// Spans of the same workload on the same CPU that lie closer than `gap_ns` become one.
pub(crate) fn merged<'a>(spans: &[Occupancy<'a>], gap_ns: i64) -> Vec<Occupancy<'a>> {
    let mut sorted: Vec<&Occupancy> = spans.iter().collect();
    sorted.sort_by(|a, b| (a.cpu, a.workload, a.start_ns).cmp(&(b.cpu, b.workload, b.start_ns)));
    let mut out: Vec<Occupancy> = Vec::new();
    for span in sorted {
        match out.last_mut() {
            Some(last)
                if last.cpu == span.cpu
                    && last.workload == span.workload
                    && span.start_ns <= last.end_ns + gap_ns =>
            {
                last.end_ns = last.end_ns.max(span.end_ns);
            }
            _ => out.push(*span),
        }
    }
    out
}

/// Rectangles a CPU timeline draws at most (about 90 bytes of SVG each): a 16-CPU trace of
/// millions of slices stays a page of a few megabytes.
const MAX_RECTANGLES: usize = 30_000;

/// The span lists (workloads, other tasks) as drawn: each span at least one resolution wide, so
/// that a slice shorter than a pixel shows, and spans of the same state on the same CPU closer
/// than the resolution merged. The resolution starts at a pixel of `(t0, t1)` and doubles until
/// the lists have at most [`MAX_RECTANGLES`] together. Only the drawing is thinned: figures
/// come from the aggregates.
fn for_drawing<'a, const N: usize>(
    lists: [&[Occupancy<'a>]; N],
    (t0, t1): (i64, i64),
) -> [Vec<Occupancy<'a>>; N] {
    let mut resolution = ((t1 - t0) / i64::from(WIDTH)).max(1);
    loop {
        let drawn = lists.map(|spans| {
            let widened: Vec<Occupancy> = (spans.iter())
                .map(|s| Occupancy {
                    end_ns: s.end_ns.max((s.start_ns + resolution).min(t1)),
                    ..*s
                })
                .collect();
            merged(&widened, resolution)
        });
        let count: usize = drawn.iter().map(Vec::len).sum();
        if count <= MAX_RECTANGLES || resolution >= t1 - t0 {
            return drawn;
        }
        resolution *= 2;
    }
}

/// The CPUs to draw a lane for, with their label (`cpu 3 (E)`, marked [`IDLE_BLIND_MARK`] where
/// the trace missed the CPU's idle): every CPU of the run's `cpus` table, and any CPU the data
/// names that the table lacks.
fn lanes(
    cpus: &[&CpuRow],
    named: impl Iterator<Item = i32>,
    run: &RunContext,
) -> Vec<(i32, String)> {
    let mut lanes: BTreeMap<i32, &str> = (cpus.iter()).map(|c| (c.cpu, c.class.as_str())).collect();
    for cpu in named {
        lanes.entry(cpu).or_insert("?");
    }
    (lanes.into_iter())
        .map(|(cpu, class)| {
            let mark = if run.idle_blind.contains(&cpu) {
                IDLE_BLIND_MARK
            } else {
                ""
            };
            (cpu, format!("cpu {cpu} ({class}){mark}"))
        })
        .collect()
}

/// Marks a CPU's label where the trace is idle-blind there, pointing at the plot's note.
const IDLE_BLIND_MARK: &str = " *";

/// The note under a plot that draws idle-blind CPUs among `lanes` (none when it draws none):
/// what the mark means, and `drawn`, what the plot shows there.
fn idle_blind_notes(lanes: &[(i32, String)], run: &RunContext, drawn: &str) -> Vec<String> {
    let blind: Vec<String> = (lanes.iter())
        .filter(|(cpu, _)| run.idle_blind.contains(cpu))
        .map(|(cpu, _)| cpu.to_string())
        .collect();
    if blind.is_empty() {
        return Vec::new();
    }
    let cpus = blind.join(", ");
    vec![
        format!(
            "* cpu {cpus}: the trace never shows it leaving idle (idle-context events not traced),"
        ),
        format!("  so a slice there runs on through the idle time before it: {drawn}."),
    ]
}

pub(crate) fn sorted_unique<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut names: Vec<String> = names.map(str::to_owned).collect();
    names.sort();
    names.dedup();
    names
}

pub(crate) fn plot_error(err: impl std::fmt::Display) -> String {
    format!("drawing the plot: {err}")
}

/// A CPU's label beside its segment.
fn lane_label(lanes: &[(i32, String)], value: &SegmentValue<i32>) -> String {
    match value {
        SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => (lanes.get(*i as usize))
            .map(|(_, label)| label.clone())
            .unwrap_or_default(),
        SegmentValue::Last => String::new(),
    }
}

/// Width of a legend drawn beside a plot rather than over it.
pub(crate) const LEGEND_WIDTH: u32 = 270;

/// How a legend entry shows its series: a filled swatch (rectangles) or a line.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Swatch {
    Fill,
    Line,
}

/// A legend in its own `area` (right of the plot, so that it hides no data): a swatch and a
/// name per entry, from the top.
pub(crate) fn side_legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    entries: &[LegendEntry],
) -> Result<(), String> {
    for (i, (name, color, swatch)) in entries.iter().enumerate() {
        let y = 40 + LEGEND_LINE as i32 * i as i32;
        match swatch {
            Swatch::Fill => area.draw(&Rectangle::new([(8, y - 5), (20, y + 5)], color.filled())),
            Swatch::Line => area.draw(&PathElement::new(
                vec![(5, y), (23, y)],
                color.stroke_width(2),
            )),
        }
        .map_err(plot_error)?;
        let text = Text::new(
            name.clone(),
            (28, y),
            TextStyle::from(style::font(style::TICK)).pos(Pos::new(HPos::Left, VPos::Center)),
        );
        area.draw(&text).map_err(plot_error)?;
    }
    Ok(())
}

/// Height of a legend entry.
const LEGEND_LINE: u32 = 20;

/// The height a legend of `entries` needs beside a plot.
pub(crate) fn legend_height(entries: usize) -> u32 {
    60 + LEGEND_LINE * entries as u32
}

/// Height of a line of notes under a plot.
const NOTE_LINE: u32 = 22;

/// A legend entry: its name, its colour, how it shows.
pub(crate) type LegendEntry = (String, RGBAColor, Swatch);

/// The frame of a plot: the SVG's size, the title across its top, the legend in a column on
/// its right, notes under it (what a reader must know to read it right).
pub(crate) struct Frame<'a> {
    pub width: u32,
    /// At least this high (more when the legend or the notes need it).
    pub height: u32,
    pub title: &'a str,
    pub legend: &'a [LegendEntry],
    pub notes: &'a [String],
}

impl<'a> Frame<'a> {
    /// The frame of a bar chart of `bars` bars.
    pub(crate) fn of_bars(title: &'a str, legend: &'a [LegendEntry], bars: usize) -> Self {
        Frame {
            width: bar_chart_width(bars),
            height: 440,
            title,
            legend,
            notes: &[],
        }
    }

    /// The frame of a plot of `lanes` horizontal lanes (a CPU or a workload each), 30 px a lane.
    pub(crate) fn of_lanes(title: &'a str, legend: &'a [LegendEntry], lanes: usize) -> Self {
        Frame {
            width: WIDTH,
            height: 110 + 30 * lanes as u32,
            title,
            legend,
            notes: &[],
        }
    }
}

/// An SVG in `frame`; `draw` draws the plot in the area left of the legend and above the notes.
pub(crate) fn framed(
    frame: &Frame<'_>,
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), String>,
) -> Result<String, String> {
    let mut svg = String::new();
    {
        let notes_height = NOTE_LINE * frame.notes.len() as u32;
        let height = frame.height.max(legend_height(frame.legend.len())) + notes_height;
        let root = SVGBackend::with_string(&mut svg, (frame.width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let root = (root.titled(frame.title, style::font(style::TITLE))).map_err(plot_error)?;
        let (_, inner_height) = root.dim_in_pixel();
        let (main, notes) = root.split_vertically(inner_height - notes_height);
        let (plot, key) = main.split_horizontally(frame.width - LEGEND_WIDTH);
        draw(&plot)?;
        side_legend(&key, frame.legend)?;
        for (i, note) in frame.notes.iter().enumerate() {
            let y = (NOTE_LINE * i as u32 + NOTE_LINE / 2) as i32;
            let text = Text::new(
                note.clone(),
                (16, y),
                TextStyle::from(style::font(style::AXIS)).pos(Pos::new(HPos::Left, VPos::Center)),
            );
            notes.draw(&text).map_err(plot_error)?;
        }
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

/// The lane of a CPU as a y range: from its segment's start to the next one's.
fn lane_span(index: usize, count: usize) -> (SegmentValue<i32>, SegmentValue<i32>) {
    let top = if index + 1 < count {
        SegmentValue::Exact(index as i32 + 1)
    } else {
        SegmentValue::Last
    };
    (SegmentValue::Exact(index as i32), top)
}

/// What else a CPU did, drawn under the workloads: other tasks in greys by priority (darker
/// runs first), and in black the idle time while a workload thread that may run there waited
/// (black and grey are no workload's colour).
const BACKGROUND: [(&str, RGBColor); 5] = [
    ("other task: real-time", RGBColor(70, 70, 70)),
    ("other task: nice < 0", RGBColor(120, 120, 120)),
    ("other task: nice 0", RGBColor(170, 170, 170)),
    ("other task: nice > 0", RGBColor(215, 215, 215)),
    ("idle while a workload waited", RGBColor(0, 0, 0)),
];

/// The [`BACKGROUND`] entry of a `cpu_timeline` stretch of `state` (`prio`, and whether a
/// workload thread waited through it), if it is drawn.
fn background_of(state: &str, prio: Option<i32>, waiting: bool) -> Option<&'static str> {
    let index = match (state, prio) {
        ("other", Some(prio)) if prio < 100 => 0,
        ("other", Some(prio)) if prio < 120 => 1,
        ("other", Some(120) | None) => 2,
        ("other", Some(_)) => 3,
        ("idle", _) if waiting => 4,
        _ => return None,
    };
    Some(BACKGROUND[index].0)
}

/// The stretches of the `cpu_timeline` aggregate that the timeline draws under the workloads
/// (other tasks, idle while a workload waited), each named by its [`BACKGROUND`] entry, read as
/// the columns drawn; like [`traced_spans`], a stretch within `gap_ns` of the last of its CPU
/// and entry extends it.
pub(crate) fn background_spans(
    aggregates: &(impl schedlab_tables::TableDir + ?Sized),
    gap_ns: i64,
) -> Result<Vec<Occupancy<'static>>, schedlab_tables::TableError> {
    let mut spans: Vec<Occupancy<'static>> = Vec::new();
    let mut last: BTreeMap<(i32, &'static str), usize> = BTreeMap::new();
    let columns = ["cpu", "start_ns", "end_ns", "state", "prio", "waiting"];
    schedlab_tables::read_columns::<CpuTimelineRow>(aggregates, &columns, |batch| {
        let (cpu, start, end) = (
            batch.i32s("cpu")?,
            batch.i64s("start_ns")?,
            batch.i64s("end_ns")?,
        );
        let (state, prio, waiting) = (
            batch.texts("state")?,
            batch.i32s("prio")?,
            batch.texts("waiting")?,
        );
        let states: Vec<&str> = state.dictionary().collect();
        for row in 0..batch.rows() {
            let Some(state) = state.key(row).map(|k| states[k]) else {
                continue;
            };
            let Some(kind) = background_of(state, prio.get(row), waiting.key(row).is_some()) else {
                continue;
            };
            let span = Occupancy {
                cpu: cpu.value(row),
                start_ns: start.value(row),
                end_ns: end.value(row),
                workload: kind,
            };
            extend_or_push(&mut spans, &mut last, span, gap_ns);
        }
        Ok(())
    })?;
    Ok(spans)
}

/// Adds `span` to `spans`, or extends the last span of its CPU and workload with it where it
/// starts no more than `gap_ns` after that one ends (and not before it starts).
fn extend_or_push<W: Copy + Ord>(
    spans: &mut Vec<Span<W>>,
    last: &mut BTreeMap<(i32, W), usize>,
    span: Span<W>,
    gap_ns: i64,
) {
    match last.get(&(span.cpu, span.workload)).map(|&i| &mut spans[i]) {
        Some(previous)
            if span.start_ns - previous.end_ns <= gap_ns && span.start_ns >= previous.start_ns =>
        {
            previous.end_ns = previous.end_ns.max(span.end_ns);
        }
        _ => {
            last.insert((span.cpu, span.workload), spans.len());
            spans.push(span);
        }
    }
}

/// What every plot of a run shares: its workloads in name order (each keeps its colour across
/// the plots), the first workload start (where every time axis counts from), and the CPUs
/// whose idle the trace missed (`traces.idle_blind_cpus`), marked wherever a plot draws them.
#[derive(Debug, Clone, Default)]
pub struct RunContext {
    pub workloads: Vec<String>,
    pub first_start_ns: Option<i64>,
    /// The last workload end (none while one had not ended when the run stopped).
    pub last_end_ns: Option<i64>,
    pub idle_blind: BTreeSet<i32>,
}

impl RunContext {
    /// The context of a run whose workloads lived as `lifetimes` say.
    pub fn new(lifetimes: &[Lifetime]) -> RunContext {
        RunContext {
            workloads: lifetimes.iter().map(|l| l.workload.clone()).collect(),
            first_start_ns: lifetimes.iter().map(|l| l.start_ns).min(),
            last_end_ns: lifetimes.iter().filter_map(|l| l.end_ns).max(),
            idle_blind: BTreeSet::new(),
        }
    }

    /// A pixel of a plot of the workloads' lifetimes, in nanoseconds (0 where they are not
    /// known): a plot of the run spans at least that, so spans closer than this merge unseen.
    pub(crate) fn pixel_ns(&self) -> i64 {
        match (self.first_start_ns, self.last_end_ns) {
            (Some(start), Some(end)) if end > start => (end - start) / i64::from(WIDTH),
            _ => 0,
        }
    }

    /// The same context, with `cpus` marked idle-blind.
    pub fn with_idle_blind(mut self, cpus: impl IntoIterator<Item = i32>) -> RunContext {
        self.idle_blind.extend(cpus);
        self
    }

    /// The origin of a time axis and its name: the first workload start, else `first_ns` (the
    /// first time the plot draws), named by `what` (`slice`).
    pub(crate) fn origin(&self, first_ns: i64, what: &str) -> (i64, String) {
        match self.first_start_ns {
            Some(start) => (start, "seconds from the first workload start".to_owned()),
            None => (first_ns, format!("seconds from the first {what}")),
        }
    }
}

/// A lane per CPU (labelled `cpu 3 (E)`), time in seconds from the first workload start, a
/// colour per workload over the `cpu_timeline` aggregate's other tasks and marked idle time
/// (see [`BACKGROUND`]; none without that aggregate). `None` when there is nothing to draw.
pub fn cpu_timeline(
    title: &str,
    spans: &[Occupancy<'_>],
    background: &[Occupancy<'static>],
    cpus: &[&CpuRow],
    run: &RunContext,
) -> Result<Option<String>, String> {
    let (Some(first_ns), Some(t1)) = (
        spans.iter().map(|s| s.start_ns).min(),
        spans.iter().map(|s| s.end_ns).max(),
    ) else {
        return Ok(None);
    };
    let (origin_ns, x_axis) = run.origin(first_ns, "slice");
    let t0 = first_ns.min(origin_ns);
    let lanes = lanes(cpus, spans.iter().map(|s| s.cpu), run);
    let names = sorted_unique(spans.iter().map(|s| s.workload));
    let index_of: BTreeMap<i32, usize> = (lanes.iter().enumerate())
        .map(|(i, (cpu, _))| (*cpu, i))
        .collect();
    let background: Vec<Occupancy> = (background.iter())
        .filter(|r| index_of.contains_key(&r.cpu))
        .map(|r| Occupancy {
            start_ns: r.start_ns.max(t0),
            end_ns: r.end_ns.min(t1),
            ..*r
        })
        .filter(|o| o.end_ns > o.start_ns)
        .collect();
    let [spans, background] = for_drawing([spans, &background], (t0, t1));
    let seconds = |ns: i64| (ns - origin_ns) as f64 / 1e9;
    let drawn_background: Vec<(&str, RGBColor)> = (BACKGROUND.iter())
        .filter(|(name, _)| background.iter().any(|s| s.workload == *name))
        .copied()
        .collect();
    let mut legend: Vec<LegendEntry> = (names.iter())
        .map(|name| {
            (
                name.clone(),
                workload_color(&run.workloads, name),
                Swatch::Fill,
            )
        })
        .collect();
    legend.extend(
        (drawn_background.iter())
            .map(|(name, color)| (name.to_string(), color.to_rgba(), Swatch::Fill)),
    );
    let notes = idle_blind_notes(&lanes, run, "its spans here are too long");
    let frame = Frame {
        notes: &notes,
        ..Frame::of_lanes(title, &legend, lanes.len())
    };
    let svg = framed(&frame, |plot| {
        let mut chart = ChartBuilder::on(plot)
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(110)
            .build_cartesian_2d(
                seconds(t0)..seconds(t1).max(seconds(t0) + 1e-9),
                (0..lanes.len() as i32 - 1).into_segmented(),
            )
            .map_err(plot_error)?;
        let label = |value: &SegmentValue<i32>| lane_label(&lanes, value);
        style::readable(&mut chart.configure_mesh())
            .disable_y_mesh()
            .y_labels(lanes.len())
            .y_label_formatter(&label)
            .x_desc(x_axis)
            .draw()
            .map_err(plot_error)?;
        // A span shorter than a pixel of the plot is drawn a pixel wide: drawn to scale, it
        // would round to no width and not show (and the PNG's renderer warns of each).
        let pixels = chart
            .plotting_area()
            .get_pixel_range()
            .0
            .len()
            .saturating_sub(1)
            .max(1);
        let pixel_ns = (t1 - t0).max(0).unsigned_abs().div_ceil(pixels as u64) as i64;
        let rectangle = |s: &Occupancy, color: RGBAColor| {
            let (bottom, top) = lane_span(index_of[&s.cpu], lanes.len());
            let end_ns = s.end_ns.max(s.start_ns + pixel_ns);
            Rectangle::new(
                [(seconds(s.start_ns), bottom), (seconds(end_ns), top)],
                color.filled(),
            )
        };
        for (name, color) in &drawn_background {
            let rects = (background.iter())
                .filter(|s| s.workload == *name)
                .map(|s| rectangle(s, color.to_rgba()));
            chart.draw_series(rects).map_err(plot_error)?;
        }
        for name in &names {
            let color = workload_color(&run.workloads, name);
            let rects = (spans.iter())
                .filter(|s| s.workload == name)
                .map(|s| rectangle(s, color));
            chart.draw_series(rects).map_err(plot_error)?;
        }
        Ok(())
    })?;
    Ok(Some(svg))
}

/// Seconds of each workload on each CPU, stacked, one bar per CPU (labelled with its class),
/// from the run's `residency_rollup` rows of a workload and a CPU: the figures the summary
/// shows. `None` when there is nothing to draw.
pub fn residency(
    title: &str,
    rows: &[&ResidencyRollupRow],
    cpus: &[&CpuRow],
    run: &RunContext,
) -> Result<Option<String>, String> {
    let seconds: BTreeMap<(i32, &str), f64> = (rows.iter())
        .filter(|r| r.scope == "workload")
        .filter_map(|r| Some(((r.cpu?, r.workload.as_str()), r.run_ns as f64 / 1e9)))
        .collect();
    if seconds.is_empty() {
        return Ok(None);
    }
    let lanes = lanes(cpus, seconds.keys().map(|(cpu, _)| *cpu), run);
    let names = sorted_unique(seconds.keys().map(|(_, workload)| *workload));
    let bars: Vec<(String, Vec<(f64, RGBAColor)>)> = (lanes.iter())
        .map(|(cpu, label)| {
            let parts = (names.iter())
                .map(|n| {
                    let height = seconds.get(&(*cpu, n.as_str())).copied().unwrap_or(0.0);
                    (height, workload_color(&run.workloads, n))
                })
                .collect();
            (label.clone(), parts)
        })
        .collect();
    let legend: Vec<LegendEntry> = (names.iter())
        .map(|name| {
            (
                name.clone(),
                workload_color(&run.workloads, name),
                Swatch::Fill,
            )
        })
        .collect();
    let sources: BTreeSet<&str> = (rows.iter())
        .filter(|r| r.scope == "workload" && r.cpu.is_some_and(|c| run.idle_blind.contains(&c)))
        .map(|r| r.source.as_str())
        .collect();
    let drawn = if sources.iter().all(|s| *s == "slices") {
        "its seconds here, from slices, are too high".to_owned()
    } else {
        let whose: Vec<&str> = (sources.into_iter())
            .map(|s| match s {
                "kernel" => "the kernel's accounting",
                "proc" => "/proc's accounting",
                _ => "slices",
            })
            .collect();
        format!("its seconds here are {} instead", whose.join(" or "))
    };
    let notes = idle_blind_notes(&lanes, run, &drawn);
    let frame = Frame {
        // The notes are a line of text each, wider than a chart of a few bars.
        width: if notes.is_empty() {
            bar_chart_width(lanes.len())
        } else {
            WIDTH
        },
        notes: &notes,
        ..Frame::of_bars(title, &legend, lanes.len())
    };
    stacked_bars(&frame, &bars, "seconds on the CPU").map(Some)
}

/// Width of a bar chart of `bars` bars and a legend.
pub(crate) fn bar_chart_width(bars: usize) -> u32 {
    (LEGEND_WIDTH + 180 + 120 * bars as u32).min(WIDTH)
}

/// A bar per `(name, parts)`, its parts (`(height, colour)`) stacked from the bottom in order;
/// `axis` names the height.
pub(crate) fn stacked_bars(
    frame: &Frame<'_>,
    bars: &[(String, Vec<(f64, RGBAColor)>)],
    axis: &str,
) -> Result<String, String> {
    let tallest = (bars.iter())
        .map(|(_, parts)| parts.iter().map(|p| p.0).sum::<f64>())
        .fold(0.0, f64::max);
    let names: Vec<String> = bars.iter().map(|(name, _)| name.clone()).collect();
    framed(frame, |plot| {
        let mut chart = ChartBuilder::on(plot)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(
                crate::timeplots::lane_range(bars.len()),
                0.0..(tallest * 1.1).max(1e-9),
            )
            .map_err(plot_error)?;
        let label = |x: &f64| crate::timeplots::lane_label(&names, *x);
        style::readable(&mut chart.configure_mesh())
            .disable_x_mesh()
            .x_labels(bars.len() + 1)
            .x_label_formatter(&label)
            .y_desc(axis)
            .draw()
            .map_err(plot_error)?;
        for (i, (_, parts)) in bars.iter().enumerate() {
            let mut base = 0.0;
            let mut rects = Vec::new();
            for &(height, color) in parts {
                rects.push(Rectangle::new(
                    [(i as f64 - 0.35, base), (i as f64 + 0.35, base + height)],
                    color.filled(),
                ));
                base += height;
            }
            chart.draw_series(rects).map_err(plot_error)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(cpu: i32, start_ns: i64, end_ns: i64, workload: &str) -> Occupancy<'_> {
        Occupancy {
            cpu,
            start_ns,
            end_ns,
            workload,
        }
    }

    #[test]
    fn spans_closer_than_a_pixel_merge_per_cpu_and_workload() {
        let spans = [
            span(0, 0, 10, "a"),
            span(0, 12, 20, "a"),
            span(0, 30, 40, "a"),
            span(0, 11, 12, "b"),
            span(1, 20, 25, "a"),
        ];
        assert_eq!(
            merged(&spans, 2),
            [
                span(0, 0, 20, "a"),
                span(0, 30, 40, "a"),
                span(0, 11, 12, "b"),
                span(1, 20, 25, "a")
            ]
        );
    }

    #[test]
    fn a_slice_shorter_than_a_pixel_shows_and_the_drawing_stays_within_its_budget() {
        let short = [span(0, 100, 101, "a"), span(0, 5000, 9000, "a")];
        // A pixel of 0..12000 is 10 ns: the 1 ns slice is drawn 10 wide.
        let [drawn] = for_drawing([&short], (0, 12_000));
        assert_eq!(drawn, [span(0, 100, 110, "a"), span(0, 5000, 9000, "a")]);
        // Slices 3 ns long every 10 ns on 40 CPUs: 40 × 100,000 spans, a pixel merges them.
        let many: Vec<Occupancy> = (0..40)
            .flat_map(|cpu| (0..100_000).map(move |i| span(cpu, i * 10, i * 10 + 3, "a")))
            .collect();
        let [drawn] = for_drawing([&many], (0, 1_000_000));
        assert_eq!(drawn.len(), 40, "one per CPU");
        // Two states taking turns every 20 µs on 40 CPUs for 40 ms: 80,000 spans, none within a
        // pixel (33 µs) of its state's next. The resolution doubles until the budget holds.
        let alternating: Vec<Occupancy> = (0..40)
            .flat_map(|cpu| {
                (0..2_000).map(move |i| {
                    let start = i * 20_000;
                    span(cpu, start, start + 5_000, ["a", "b"][i as usize % 2])
                })
            })
            .collect();
        let range = (0, 40_000_000);
        assert!(merged(&alternating, 33_333).len() > MAX_RECTANGLES);
        let [drawn] = for_drawing([&alternating], range);
        assert!(drawn.len() <= MAX_RECTANGLES, "{}", drawn.len());
    }

    fn sample(time_ns: i64, cpu: i32, cpu_time_ns: i64) -> PlacementRow {
        PlacementRow {
            run_id: "r".into(),
            time_ns,
            pid: 1,
            tid: 1,
            comm: "w".into(),
            cpu,
            cpu_time_ns,
            workload: Some("w".into()),
        }
    }

    #[test]
    fn without_a_trace_a_thread_holds_the_later_samples_cpu_while_it_gained_cpu_time() {
        let samples = [
            sample(0, 0, 0),
            sample(200, 1, 50),
            sample(400, 1, 50),
            sample(600, 0, 90),
            // The thread id is reused by a new thread: its counter starts again.
            sample(800, 1, 10),
        ];
        assert_eq!(
            occupancy(&[], &[], &samples.iter().collect::<Vec<_>>()),
            [span(1, 0, 200, "w"), span(0, 400, 600, "w")]
        );
    }

    fn cpu(cpu: i32, class: &str) -> CpuRow {
        CpuRow::declared("r", cpu, class, None)
    }

    fn residency_row(cpu: i32, source: &str, run_ns: i64) -> ResidencyRollupRow {
        ResidencyRollupRow {
            run_id: "r".into(),
            workload: "w".into(),
            scope: "workload".into(),
            pid: None,
            tid: None,
            cpu: Some(cpu),
            class: "P".into(),
            run_ns,
            share: 0.5,
            source: source.into(),
            lost_events: None,
        }
    }

    #[test]
    fn an_idle_blind_cpu_is_marked_on_the_timeline_and_residency_with_what_its_figures_are() {
        let cpus = [cpu(0, "P"), cpu(1, "E")];
        let cpus: Vec<&CpuRow> = cpus.iter().collect();
        let spans = [span(0, 0, 1_000_000, "w"), span(1, 0, 2_000_000, "w")];
        let plain = RunContext::default();
        let blind = RunContext::default().with_idle_blind([1]);
        let timeline = |run| cpu_timeline("t", &spans, &[], &cpus, run).unwrap().unwrap();
        let (plain_svg, blind_svg) = (timeline(&plain), timeline(&blind));
        assert!(
            plain_svg.contains("\ncpu 1 (E)\n") && !plain_svg.contains("idle-context"),
            "{plain_svg}"
        );
        assert!(blind_svg.contains("\ncpu 1 (E) *\n"), "{blind_svg}");
        assert!(
            blind_svg.contains("\ncpu 0 (P)\n"),
            "the traced CPU is not marked"
        );
        assert!(blind_svg.contains("* cpu 1: the trace never shows it leaving idle"));
        assert!(blind_svg.contains("its spans here are too long"));

        let rows = [residency_row(0, "slices", 1), residency_row(1, "kernel", 2)];
        let rows: Vec<&ResidencyRollupRow> = rows.iter().collect();
        let svg = residency("r", &rows, &cpus, &blind).unwrap().unwrap();
        assert!(svg.contains("\ncpu 1 (E) *\n"), "{svg}");
        assert!(
            svg.contains("its seconds here are the kernel&apos;s accounting instead"),
            "{svg}"
        );
        let rows = [residency_row(1, "slices", 2)];
        let rows: Vec<&ResidencyRollupRow> = rows.iter().collect();
        let svg = residency("r", &rows, &cpus, &blind).unwrap().unwrap();
        assert!(
            svg.contains("its seconds here, from slices, are too high"),
            "{svg}"
        );
    }

    #[test]
    fn a_span_shorter_than_a_pixel_is_drawn_a_pixel_wide() {
        let cpus = [cpu(0, "P")];
        let cpus: Vec<&CpuRow> = cpus.iter().collect();
        // A second on the axis and 10 ns spans in it, wherever they fall in their pixel: to
        // scale, far under a pixel, and widened to a pixel of the whole picture, still under
        // one of the plot.
        let mut spans = vec![span(0, 0, 1_000_000_000, "w")];
        spans.extend((1..25).map(|i| span(0, i * 37_000_000, i * 37_000_000 + 10, "v")));
        let svg = cpu_timeline("t", &spans, &[], &cpus, &RunContext::default())
            .unwrap()
            .unwrap();
        let widths: Vec<&str> = (svg.lines())
            .filter(|line| {
                line.starts_with("<rect") && line.contains("height=\"") && line.contains("x=\"")
            })
            .filter_map(|line| line.split("width=\"").nth(1)?.split('"').next())
            .collect();
        assert!(!widths.is_empty(), "{svg}");
        assert!(!widths.contains(&"0"), "a rectangle of no width in {svg}");
    }

    fn slice_row(cpu: i32, start_ns: i64, end_ns: i64, workload: Option<&str>) -> SchedSliceRow {
        SchedSliceRow {
            run_id: "r".into(),
            cpu,
            pid: 1,
            tid: 1,
            comm: "c".into(),
            start_ns,
            end_ns,
            run_ns: end_ns - start_ns,
            wait_ns: 0,
            sched_delay_ns: 0,
            preempt_wait_ns: 0,
            prev_state: "S".into(),
            workload: workload.map(Into::into),
            prio: Some(120),
        }
    }

    #[test]
    fn the_timeline_reads_the_workloads_slices_as_columns_merging_within_a_pixel() {
        let dir = tempfile::tempdir().unwrap();
        let rows = [
            slice_row(0, 0, 10, Some("a")),
            slice_row(0, 12, 20, Some("a")),
            slice_row(0, 20, 30, None),
            slice_row(1, 5, 8, Some("b")),
            slice_row(0, 40, 50, Some("a")),
            slice_row(0, 21, 25, Some("b")),
        ];
        schedlab_tables::write_table(dir.path(), &rows).unwrap();
        let (spans, names) = traced_spans(dir.path(), 2).unwrap();
        let named: Vec<(i32, i64, i64, &str)> = (spans.iter())
            .map(|s| (s.cpu, s.start_ns, s.end_ns, names[s.workload].as_str()))
            .collect();
        assert_eq!(
            named,
            [
                (0, 0, 20, "a"),
                (1, 5, 8, "b"),
                (0, 40, 50, "a"),
                (0, 21, 25, "b")
            ],
            "the slice of no workload is not read; a gap of 2 merges, one of 10 does not"
        );
        let occupancy = occupancy(&spans, &names, &[]);
        assert_eq!(occupancy[0], span(0, 0, 20, "a"));
        assert_eq!(
            traced_spans(dir.path().join("none").as_path(), 2)
                .unwrap()
                .0,
            []
        );
    }

    fn stretch(
        cpu: i32,
        start_ns: i64,
        end_ns: i64,
        state: &str,
        prio: Option<i32>,
        waiting: bool,
    ) -> CpuTimelineRow {
        CpuTimelineRow {
            run_id: "r".into(),
            cpu,
            class: "P".into(),
            start_ns,
            end_ns,
            state: state.into(),
            workload: None,
            tid: None,
            comm: None,
            prio,
            slices: 1,
            waiting: waiting.then(|| "w".into()),
        }
    }

    #[test]
    fn the_background_is_read_as_columns_and_keeps_what_the_timeline_draws() {
        let dir = tempfile::tempdir().unwrap();
        let rows = [
            stretch(0, 0, 10, "other", Some(120), false),
            stretch(0, 11, 20, "other", Some(120), false),
            stretch(0, 20, 30, "idle", None, false),
            stretch(0, 30, 40, "idle", None, true),
            stretch(1, 0, 5, "other", Some(50), false),
            stretch(1, 5, 9, "workload", Some(120), false),
            stretch(1, 9, 12, "other", Some(139), false),
        ];
        schedlab_tables::write_table(dir.path(), &rows).unwrap();
        let spans = background_spans(dir.path(), 2).unwrap();
        let b = |i: usize| BACKGROUND[i].0;
        assert_eq!(
            spans,
            [
                span(0, 0, 20, b(2)),
                span(0, 30, 40, b(4)),
                span(1, 0, 5, b(0)),
                span(1, 9, 12, b(3)),
            ],
            "idle without a waiting workload and the workload's own stretches are not drawn"
        );
    }
}
