//! `report/index.html` in a real browser: headless Chromium renders the page of a real run to
//! PNG; every plot the run drew is in the page, the browser parsed all of its elements, its
//! region of the screenshot is drawn on, and the page loaded nothing (no file, no network).

use std::path::Path;
use std::process::Command;

use crate::util::{Need, Sandbox, can_run};

const PIPELINE: &str = "\
name: browser
collect:
  monitors:
    sched: { perf-sched: {} }
    load: { cpu: { interval: 100ms } }
  workloads:
    tick:
      periodic: { threads: 3, period: 20ms, busy: 8ms, duration: 1500ms }
aggregate:
  - residency: {}
  - migrations: {}
  - sched_delay: {}
  - cpu_time: {}
  - cpu_timeline: {}
summarize:
  report: [markdown, html]
  plots: [cpu_timeline, residency]
";

/// Width of the browser window, in CSS pixels (one pixel each in the screenshot).
const WINDOW_WIDTH: u32 = 1300;

/// What the probe script saw of the page: its height, each `<svg>`'s box and element count,
/// and every resource the page fetched.
#[derive(Debug, Default)]
struct Probe {
    height: u32,
    /// `(left, top, width, height, elements below the <svg>)` in page pixels, in page order.
    svgs: Vec<(u32, u32, u32, u32, usize)>,
    resources: Vec<String>,
    /// The smallest text on the page as drawn, in CSS pixels, and what it says.
    smallest_text: (f64, String),
    /// Per `<svg>`, in page order, the colours of its data lines.
    line_colours: Vec<Vec<String>>,
}

/// Added to a copy of the page (the report has no script), after everything it measures, so
/// the plots' places do not move: writes what [`Probe`] reads into a `<pre>` for `--dump-dom`.
const PROBE_SCRIPT: &str = "<script>
const lines = ['height ' + document.documentElement.scrollHeight];
for (const svg of document.querySelectorAll('svg')) {
  const r = svg.getBoundingClientRect();
  const box = [r.left + scrollX, r.top + scrollY, r.width, r.height].map(Math.round);
  lines.push('svg ' + box.join(' ') + ' ' + svg.querySelectorAll('*').length);
}
for (const e of performance.getEntriesByType('resource')) lines.push('resource ' + e.name);
// Each text's size as drawn: its font size in the SVG's units times the SVG's scale on screen
// (the length of the transform's x axis, so that a rotated axis name counts too).
let smallest = [Infinity, ''];
for (const t of document.querySelectorAll('svg text')) {
  const m = t.getScreenCTM();
  const size = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
  if (size < smallest[0]) smallest = [size, t.textContent.trim().replace(/\\s+/g, '_')];
}
lines.push('text ' + smallest[0].toFixed(2) + ' ' + smallest[1]);
// The colours of each plot's data lines (plotters draws them 2 wide or more; its mesh 1 wide).
document.querySelectorAll('svg').forEach((svg, i) => {
  const strokes = new Set();
  for (const l of svg.querySelectorAll('polyline, path')) {
    if (parseFloat(l.getAttribute('stroke-width') || '1') >= 2) strokes.add(l.getAttribute('stroke'));
  }
  lines.push('lines ' + i + ' ' + [...strokes].join(' '));
});
const pre = document.createElement('pre');
pre.id = 'probe';
pre.textContent = lines.join('\\n');
document.body.appendChild(pre);
</script>
";

/// Runs headless Chromium on `page` with every host unresolvable and a dead proxy, so that
/// any fetch off the machine fails; `args` says what to produce.
fn chromium(page: &Path, window_height: u32, profile: &Path, args: &[&str]) -> String {
    let output = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--force-device-scale-factor=1",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--proxy-server=127.0.0.1:9",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={WINDOW_WIDTH},{window_height}"))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(
        output.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn probe(dom: &str) -> Probe {
    let start = dom.find("<pre id=\"probe\">").expect(dom) + "<pre id=\"probe\">".len();
    let end = start + dom[start..].find("</pre>").expect(dom);
    let mut probe = Probe::default();
    for line in dom[start..end].lines() {
        let (kind, rest) = line.split_once(' ').expect(line);
        match kind {
            "text" => {
                let (size, what) = rest.split_once(' ').expect(line);
                probe.smallest_text = (size.parse().expect(line), what.to_owned());
                continue;
            }
            "lines" => {
                let colours = rest.split(' ').skip(1).filter(|c| !c.is_empty());
                probe
                    .line_colours
                    .push(colours.map(str::to_owned).collect());
                continue;
            }
            _ => {}
        }
        let numbers: Vec<f64> = rest
            .split(' ')
            .map(|n| n.parse().unwrap_or(f64::NAN))
            .collect();
        match kind {
            "height" => probe.height = numbers[0] as u32,
            "svg" => probe.svgs.push((
                numbers[0] as u32,
                numbers[1] as u32,
                numbers[2] as u32,
                numbers[3] as u32,
                numbers[4] as usize,
            )),
            "resource" => probe.resources.push(rest.to_owned()),
            _ => panic!("probe line {line}"),
        }
    }
    probe
}

/// Elements below the root of an SVG document as plotters writes it: its start tags but the
/// `<svg>`'s own.
fn elements_below_root(svg: &str) -> usize {
    let starts = svg
        .as_bytes()
        .windows(2)
        .filter(|w| w[0] == b'<' && w[1].is_ascii_alphabetic())
        .count();
    starts - 1
}

/// Of the screenshot `png`'s region `(left, top, width, height)`: the share of pixels that are
/// not white, and how many colours it has.
fn ink(png: &Path, (left, top, width, height): (u32, u32, u32, u32)) -> (f64, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let channels = info.color_type.samples();
    assert!(
        left + width <= info.width && top + height <= info.height,
        "the region {:?} lies outside the {}x{} screenshot",
        (left, top, width, height),
        info.width,
        info.height
    );
    let mut colours = std::collections::BTreeSet::new();
    let mut inked = 0usize;
    for y in top..top + height {
        for x in left..left + width {
            let at = (y as usize * info.width as usize + x as usize) * channels;
            let rgb = [pixels[at], pixels[at + 1], pixels[at + 2]];
            if rgb.iter().any(|&c| c < 235) {
                inked += 1;
            }
            colours.insert(rgb);
        }
    }
    (inked as f64 / (width * height) as f64, colours.len())
}

/// `#rrggbb` as its three channels.
fn hex_rgb(colour: &str) -> [f64; 3] {
    let hex = colour.trim_start_matches('#');
    let channel = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).expect(colour) as f64;
    [channel(0), channel(2), channel(4)]
}

#[test]
fn every_plot_of_index_html_draws_in_chromium_and_the_page_loads_nothing() {
    let test = "every_plot_of_index_html_draws_in_chromium_and_the_page_loads_nothing";
    if !can_run(test, &[Need::Program("chromium"), Need::TraceAllCpus]) {
        return;
    }
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write("browser.yaml", PIPELINE);
    let run = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Drawing is silent: the rasterizer's notes on what it skips (a trace's spans shorter than
    // a pixel are zero-width rectangles) are not the user's.
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
    let run_id = &sandbox.runs("browser")[0];
    let report = sandbox.data("browser", "report");
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();

    // The plots the run drew (each also kept as its own file, so that only a changed run is
    // drawn again), and at least those its data gives: activity from the cpu monitor, the
    // CPU timeline and residency, the wakeup-delay CDF of the periodic threads.
    let mut drawn: Vec<(String, String)> = std::fs::read_dir(&report)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".svg"))
        .map(|name| {
            let svg = std::fs::read_to_string(report.join(&name)).unwrap();
            (name, svg)
        })
        .collect();
    drawn.sort();
    let names: Vec<&str> = drawn.iter().map(|(name, _)| name.as_str()).collect();
    for kind in [
        "activity",
        "class_residency",
        "cpu_timeline",
        "residency",
        "sched_delay",
    ] {
        let file = format!("{kind}-{run_id}.svg");
        assert!(names.contains(&file.as_str()), "no {file} in {names:?}");
    }
    for (name, svg) in &drawn {
        assert!(
            html.contains(svg.trim_end()),
            "{name} is not inline in the page"
        );
    }

    // Nothing to fetch: no reference to another file or address, no script, no style sheet.
    for needle in [
        "src=", "href=", "url(", "@import", "<link", "<script", "<iframe",
    ] {
        assert!(!html.contains(needle), "the page has `{needle}`");
    }

    let page = sandbox.write(
        "probed.html",
        &html.replace("</body>", &format!("{PROBE_SCRIPT}</body>")),
    );
    let profile = sandbox.path("chromium-profile");
    let probe = probe(&chromium(&page, 1000, &profile, &["--dump-dom"]));
    assert!(
        probe.resources.is_empty(),
        "the page fetched {:?}",
        probe.resources
    );
    // The browser parsed every plot whole: as many <svg> as plots, each with its file's
    // elements (in page order, which is not the files' name order: compared as multisets).
    let mut in_page: Vec<usize> = probe.svgs.iter().map(|s| s.4).collect();
    let mut in_files: Vec<usize> = drawn
        .iter()
        .map(|(_, svg)| elements_below_root(svg))
        .collect();
    in_page.sort();
    in_files.sort();
    assert_eq!(
        in_page, in_files,
        "elements per plot, in the page and in the files"
    );

    // Readable at the page's width: no text under 11 px (plotters shrinks a label that does not
    // fit its area, so a crowded axis shows here).
    let (size, what) = &probe.smallest_text;
    assert!(*size >= 11.0, "text drawn at {size} px: {what}");
    // Every data line of a plot has a colour of its own (each CPU's shade of its class's hue,
    // each workload its colour), and a legend can tell each apart: no two closer than a step
    // a reader sees.
    for (i, colours) in probe.line_colours.iter().enumerate() {
        let rgb: Vec<[f64; 3]> = colours.iter().map(|c| hex_rgb(c)).collect();
        for (a, first) in rgb.iter().enumerate() {
            for (b, second) in rgb.iter().enumerate().skip(a + 1) {
                let distance = (0..3)
                    .map(|k| (first[k] - second[k]).powi(2))
                    .sum::<f64>()
                    .sqrt();
                assert!(
                    distance >= 40.0,
                    "plot {i}: lines {} and {} are {distance:.0} apart in RGB",
                    colours[a],
                    colours[b]
                );
            }
        }
    }
    let activity = probe.line_colours.iter().map(Vec::len).max().unwrap_or(0);
    let cpus: Vec<schedlab_tables::CpuRow> =
        schedlab_tables::read_table(&sandbox.data("browser", "tables")).unwrap();
    assert!(
        activity >= cpus.len(),
        "the activity plot draws a line per CPU, each its own colour: {:?}",
        probe.line_colours
    );

    // A CPU whose idle the trace missed is marked where its slices are drawn, with a note.
    let traces: Vec<schedlab_tables::TraceRow> =
        schedlab_tables::read_table(&sandbox.data("browser", "tables")).unwrap();
    let timeline = &drawn
        .iter()
        .find(|(n, _)| n.starts_with("cpu_timeline"))
        .unwrap()
        .1;
    for cpu in &cpus {
        let blind = (traces.iter()).any(|t| {
            let list = schedlab_topology::parse_cpu_list(&t.idle_blind_cpus).unwrap();
            list.contains(&(cpu.cpu as u32))
        });
        let marked = timeline.contains(&format!("\ncpu {} ({}) *\n", cpu.cpu, cpu.class));
        assert_eq!(
            marked, blind,
            "cpu {}: idle-blind {blind}, marked {marked}",
            cpu.cpu
        );
    }
    let any_blind = traces.iter().any(|t| !t.idle_blind_cpus.is_empty());
    assert_eq!(timeline.contains("never shows it leaving idle"), any_blind);

    let screenshot = sandbox.path("page.png");
    chromium(
        &page,
        probe.height,
        &profile,
        &[&format!("--screenshot={}", screenshot.display())],
    );
    for &(left, top, width, height, _) in &probe.svgs {
        assert!(width > 200 && height > 100, "a plot drawn {width}x{height}");
        let (share, colours) = ink(&screenshot, (left, top, width, height));
        assert!(
            share > 0.005 && colours >= 3,
            "the plot at {:?} is blank in the screenshot: {:.4} of its pixels inked, {colours} \
             colours",
            (left, top, width, height),
            share
        );
    }
}
