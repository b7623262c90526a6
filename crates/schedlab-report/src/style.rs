//! How every plot draws its text and its colours, so that the plots read alike on the page and
//! pasted into an article: text sizes, a colour per workload (the same in every plot of a run),
//! a hue per core class and a shade of it per CPU, and the mesh's fonts.
//!
//! Sizes are in SVG units; a plot is at most [`crate::plots::WIDTH`] wide and the page never
//! draws it wider, so a unit is a CSS pixel or more at any window of at least that width, and
//! the smallest text ([`TICK`]) stays readable there.

use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;
use plotters::style::FontDesc;

/// Tick labels, lane names and legend entries.
pub(crate) const TICK: f64 = 14.0;
/// Axis names and notes under a plot.
pub(crate) const AXIS: f64 = 15.0;
/// A plot's title.
pub(crate) const TITLE: f64 = 18.0;

/// The font of text of `size`.
pub(crate) fn font(size: f64) -> FontDesc<'static> {
    FontDesc::new(FontFamily::SansSerif, size, FontStyle::Normal)
}

/// Gives a mesh the plots' text sizes: [`TICK`] for its labels, [`AXIS`] for its axis names
/// (plotters' defaults scale with the label area, down to unreadable in a short panel).
pub(crate) fn readable<'m, 'a, 'b, X, Y, DB>(
    mesh: &'m mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>
where
    X: Ranged<ValueType: std::fmt::Debug> + ValueFormatter<X::ValueType>,
    Y: Ranged<ValueType: std::fmt::Debug> + ValueFormatter<Y::ValueType>,
    DB: DrawingBackend,
{
    mesh.label_style(font(TICK)).axis_desc_style(font(AXIS))
}

/// Workload colours, in order: distinct from each other, from the greys of other tasks and
/// from black, dark enough to read against white.
const WORKLOADS: [RGBColor; 8] = [
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(23, 190, 207),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(188, 189, 34),
    RGBColor(31, 119, 180),
];

/// The colour of the `index`-th workload of a run (its place in name order among the run's
/// workloads): every plot of a run passes the same names, so a workload keeps its colour.
pub(crate) fn workload_color_at(index: usize) -> RGBAColor {
    match WORKLOADS.get(index) {
        Some(color) => color.to_rgba(),
        None => Palette99::pick(index).to_rgba(),
    }
}

/// The colour of `workload` among the run's `names` (in name order).
pub fn workload_color(names: &[String], workload: &str) -> RGBAColor {
    let index = names
        .iter()
        .position(|n| n == workload)
        .unwrap_or(names.len());
    workload_color_at(index)
}

/// The hue of a core class, in degrees: the usual names of the fastest classes get fixed
/// hues (blue, orange, green), another class purple.
fn class_hue(class: &str) -> f64 {
    match class {
        "P" => 210.0,
        "E" => 28.0,
        "LPE" => 120.0,
        _ => 280.0,
    }
}

/// The colour of a core class as a whole (its mean line, its bar): its hue, full.
pub(crate) fn class_color(class: &str) -> RGBAColor {
    hsl(class_hue(class), 0.75, 0.38)
}

/// The colour of the `index`-th of `count` CPUs of `class`: its class's hue, each CPU a
/// different lightness and a slight turn of hue, so that two CPUs of a class differ and any CPU
/// reads as its class.
pub(crate) fn cpu_color(class: &str, index: usize, count: usize) -> RGBAColor {
    let t = if count > 1 {
        index as f64 / (count - 1) as f64
    } else {
        0.5
    };
    hsl(class_hue(class) + 24.0 * (t - 0.5), 0.8, 0.28 + 0.4 * t)
}

/// `hue` in degrees, `saturation` and `lightness` in 0..1.
fn hsl(hue: f64, saturation: f64, lightness: f64) -> RGBAColor {
    let hue = hue.rem_euclid(360.0) / 360.0;
    HSLColor(hue, saturation, lightness).to_rgba()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn distance(a: RGBAColor, b: RGBAColor) -> i32 {
        let (a, b) = (a.rgb(), b.rgb());
        (i32::from(a.0) - i32::from(b.0)).abs()
            + (i32::from(a.1) - i32::from(b.1)).abs()
            + (i32::from(a.2) - i32::from(b.2)).abs()
    }

    #[test]
    fn the_cpus_of_a_class_differ_and_stay_nearer_their_class_than_another() {
        let p: Vec<RGBAColor> = (0..8).map(|i| cpu_color("P", i, 8)).collect();
        let e: Vec<RGBAColor> = (0..8).map(|i| cpu_color("E", i, 8)).collect();
        for (i, a) in p.iter().enumerate() {
            for b in &p[i + 1..] {
                assert!(distance(*a, *b) >= 20, "{a:?} {b:?}");
            }
            // Blue stays blue: more blue than red, where an E-core is more red than blue.
            let (rgb_p, rgb_e) = (a.rgb(), e[i].rgb());
            assert!(
                rgb_p.2 > rgb_p.0 && rgb_e.0 > rgb_e.2,
                "{rgb_p:?} {rgb_e:?}"
            );
        }
    }

    #[test]
    fn a_workload_keeps_its_colour_whatever_the_plot_draws_of_it() {
        let names = ["a".to_owned(), "b".to_owned(), "c".to_owned()];
        assert_eq!(workload_color(&names, "c"), workload_color_at(2));
        assert_ne!(workload_color(&names, "a"), workload_color(&names, "b"));
    }
}
