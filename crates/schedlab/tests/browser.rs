//! `report/index.html` in a real browser: headless Chromium renders the page of a real run to
//! PNG; every plot the run drew is in the page, the browser parsed all of its elements, its
//! region of the screenshot is drawn on, and the page loaded nothing (no file, no network).

mod util;

use std::path::Path;
use std::process::Command;

use util::{Need, Sandbox, can_run};

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
    for kind in ["activity", "cpu_timeline", "residency", "sched_delay"] {
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
