//! Each plot as a PNG beside its SVG, for pasting into an article or a slide, where an SVG may
//! not be taken.
//!
//! resvg renders the plot's own SVG, so the two never differ but in pixels. It is given one
//! font, DejaVu Sans, bundled in the crate (`fonts/`, with its licence) and named for every
//! family the plots ask for, never the machine's fonts: a PNG drawn on a server without fonts
//! has its text, and two machines draw the same PNG.

use std::sync::OnceLock;

use resvg::{tiny_skia, usvg};

/// The one font the PNGs are drawn with.
const FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");
const FONT_FAMILY: &str = "DejaVu Sans";

/// Pixels per SVG unit: twice the page's, sharp when an article scales the picture down.
pub const SCALE: f32 = 2.0;

/// Parsing options holding the bundled font, loaded once per process.
fn options() -> &'static usvg::Options<'static> {
    static OPTIONS: OnceLock<usvg::Options<'static>> = OnceLock::new();
    OPTIONS.get_or_init(|| {
        let mut options = usvg::Options {
            font_family: FONT_FAMILY.to_owned(),
            ..usvg::Options::default()
        };
        let fonts = options.fontdb_mut();
        fonts.load_font_data(FONT.to_vec());
        fonts.set_sans_serif_family(FONT_FAMILY);
        fonts.set_serif_family(FONT_FAMILY);
        fonts.set_monospace_family(FONT_FAMILY);
        options
    })
}

/// The PNG of a plot's SVG document, at [`SCALE`] pixels per unit.
pub fn png_of(svg: &str) -> Result<Vec<u8>, String> {
    encode(&render(svg)?).map_err(|e| format!("encoding the PNG: {e}"))
}

/// The pixels of a plot's SVG document drawn onto white, at [`SCALE`] pixels per unit.
fn render(svg: &str) -> Result<tiny_skia::Pixmap, String> {
    let tree = usvg::Tree::from_str(svg, options()).map_err(|e| format!("reading the SVG: {e}"))?;
    let size = tree.size().to_int_size();
    let (width, height) = (
        (size.width() as f32 * SCALE).ceil() as u32,
        (size.height() as f32 * SCALE).ceil() as u32,
    );
    let mut pixmap = tiny_skia::Pixmap::new(width, height)
        .ok_or_else(|| format!("a plot of {width}x{height} pixels cannot be drawn"))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(SCALE, SCALE),
        &mut pixmap.as_mut(),
    );
    Ok(pixmap)
}

/// The pixels as a PNG, compressed fast (fdeflate, made for PNG): tiny-skia's own `encode_png`
/// deflates at the default level, which took about a quarter of the report's time. The same
/// pixels, lossless either way. Every row is filtered by Paeth's predictor rather than by png's
/// adaptive choice, which tries each filter on each row for files hardly smaller (the fastest
/// setting's Up filter makes them several times larger). No alpha channel: the picture is
/// drawn onto white, so every pixel is opaque.
fn encode(pixmap: &tiny_skia::Pixmap) -> Result<Vec<u8>, png::EncodingError> {
    // tiny-skia holds premultiplied alpha, which on opaque pixels is the colour itself.
    let rgb: Vec<u8> = (pixmap.pixels().iter())
        .flat_map(|pixel| [pixel.red(), pixel.green(), pixel.blue()])
        .collect();
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, pixmap.width(), pixmap.height());
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_deflate_compression(png::DeflateCompression::FdeflateUltraFast);
    encoder.set_filter(png::Filter::Paeth);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&rgb)?;
    writer.finish()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Of a decoded RGBA picture: the share of pixels in `columns` that are not white.
    fn inked(png: &[u8], columns: std::ops::Range<u32>) -> f64 {
        let pixmap = tiny_skia::Pixmap::decode_png(png).unwrap();
        let (w, h) = (pixmap.width(), pixmap.height());
        let pixels = pixmap.pixels();
        let mut inked = 0;
        for y in 0..h {
            for x in columns.clone() {
                let p = pixels[(y * w + x) as usize];
                if p.red() < 200 || p.green() < 200 || p.blue() < 200 {
                    inked += 1;
                }
            }
        }
        inked as f64 / (h * columns.len() as u32) as f64
    }

    #[test]
    fn a_plot_becomes_a_png_twice_its_size_with_its_text_drawn_in_the_bundled_font() {
        let text = |s: &str| {
            format!(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"200\" height=\"50\" \
                 viewBox=\"0 0 200 50\"><rect x=\"0\" y=\"0\" width=\"10\" height=\"50\" \
                 fill=\"#0000FF\"/><text x=\"20\" y=\"35\" font-family=\"sans-serif\" \
                 font-size=\"30\">{s}</text></svg>"
            )
        };
        let png = png_of(&text("cpu 1 (E)")).unwrap();
        let pixmap = tiny_skia::Pixmap::decode_png(&png).unwrap();
        assert_eq!((pixmap.width(), pixmap.height()), (400, 100));
        // The text is drawn (the font was found for `sans-serif`): ink right of the bar, none
        // where the text is empty.
        assert!(inked(&png, 40..400) > 0.02, "the text is drawn");
        assert_eq!(inked(&png_of(&text("")).unwrap(), 40..400), 0.0);
        assert!(inked(&png, 0..20) > 0.99, "the bar fills its columns");
        assert!(png_of("<svg").is_err());
    }

    #[test]
    fn the_png_holds_the_colours_tiny_skia_would_encode_with_alpha() {
        // Translucent shapes over each other and over the white page.
        let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"60\" height=\"20\" \
                   viewBox=\"0 0 60 20\"><rect x=\"0\" y=\"0\" width=\"40\" height=\"20\" \
                   fill=\"#3366CC\" fill-opacity=\"0.4\"/><rect x=\"20\" y=\"5\" width=\"40\" \
                   height=\"10\" fill=\"#DC3912\" fill-opacity=\"0.7\"/></svg>";
        let pixmap = render(svg).unwrap();
        let ours = tiny_skia::Pixmap::decode_png(&encode(&pixmap).unwrap()).unwrap();
        let theirs = tiny_skia::Pixmap::decode_png(&pixmap.encode_png().unwrap()).unwrap();
        assert!(
            (ours.pixels().iter()).any(|p| (p.red(), p.green(), p.blue()) != (255, 255, 255)),
            "something is drawn"
        );
        assert_eq!(ours.pixels(), theirs.pixels());
    }
}
