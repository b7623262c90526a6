//! The summary's per-worker table on real openssl workers (seed page 4's table): each line's
//! pid is the runner's, and its throughput is what openssl printed.

use crate::util::{Need, Sandbox, can_run};
use schedlab_tables::{ProcessRow, read_table};

const PIPELINE: &str = "\
name: workers
collect:
  monitors:
    where: { placement: { interval: 100ms } }
  workloads:
    background:
      instances: 2
      nice: 19
      run: [openssl, speed, -seconds, \"1\", -bytes, \"16384\", sha256]
      parse: openssl
aggregate:
  - residency: {}
  - migrations: {}
  - throughput: {}
";

#[test]
fn each_worker_shows_its_placement_and_the_throughput_openssl_printed() {
    if !can_run(
        "each_worker_shows_its_placement_and_the_throughput_openssl_printed",
        &[Need::Program("openssl")],
    ) {
        return;
    }
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write("workers.yaml", PIPELINE);
    let run = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run_id = &sandbox.runs("workers")[0];
    let summary = std::fs::read_to_string(sandbox.data("workers", "report/summary.md")).unwrap();
    let section = summary.split("## Per worker").nth(1).expect(&summary);
    let processes: Vec<ProcessRow> = read_table(&sandbox.data("workers", "tables")).unwrap();
    for process in &processes {
        // openssl's own line: `sha256   1734196.24k`.
        let stdout = std::fs::read_to_string(sandbox.data(
            "workers",
            &format!(
                "runs/{run_id}/raw/background.{}.stdout.txt",
                process.instance
            ),
        ))
        .unwrap();
        let printed = (stdout.lines())
            .find_map(|l| l.strip_prefix("sha256"))
            .map(str::trim)
            .expect(&stdout);
        // Above 10,000 B/s openssl prints kB/s with a `k`, below it B/s (a starved nice-19
        // worker on a busy machine): the report shows kB/s either way.
        let kilobytes = match printed.strip_suffix('k') {
            Some(kilobytes) => kilobytes.to_owned(),
            None => format!("{:.2}", printed.parse::<f64>().expect(&stdout) / 1000.0),
        };
        let (whole, fraction) = kilobytes.split_once('.').expect(&stdout);
        let digits: Vec<char> = whole.chars().collect();
        let grouped: Vec<String> = (digits.rchunks(3).rev())
            .map(|c| c.iter().collect())
            .collect();
        let expected = format!("{}.{fraction}", grouped.join(","));
        let line = (section.lines())
            .find(|l| l.contains(&format!("| background#{} |", process.instance)))
            .expect(section);
        assert!(line.contains(&format!("| {} |", process.pid)), "{line}");
        assert!(
            line.contains(&format!("| {expected} |")),
            "{line} vs openssl's {printed}"
        );
        assert!(
            line.contains("% |") && line.contains("CPU "),
            "placement shown: {line}"
        );
    }
    assert_eq!(processes.len(), 2);
}

#[test]
fn a_workload_with_many_threads_gets_one_summary_line() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "many.yaml",
        "name: many\ncollect:\n  monitors:\n    where: { placement: { interval: 100ms } }\n  \
         workloads:\n    pool:\n      periodic: { threads: 20, period: 50ms, busy: 2ms, duration: 600ms }\n    \
         one:\n      periodic: { threads: 1, period: 50ms, busy: 2ms, duration: 600ms }\n\
         aggregate:\n  - residency: {}\n  - cpu_time: {}\n",
    );
    let run = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let cpu_time: Vec<schedlab_tables::CpuTimeRow> =
        read_table(&sandbox.data("many", "aggregates")).unwrap();
    let pool: Vec<_> = cpu_time.iter().filter(|r| r.workload == "pool").collect();
    assert!(pool.len() > 16, "{} pool threads sampled", pool.len());
    let lines: Vec<&str> = (run.stdout.lines())
        .filter(|l| l.contains("| pool |"))
        .collect();
    assert_eq!(lines.len(), 1, "{}", run.stdout);
    let total: i64 = pool.iter().map(|r| r.cpu_time_ns).sum();
    assert!(
        lines[0].contains(&format!(
            "| – | {} threads | {:.3} s |",
            pool.len(),
            total as f64 / 1e9
        )),
        "{}",
        lines[0]
    );
    // The one-thread workload (its process's main thread and its worker) keeps a line per thread.
    let one: Vec<&str> = (run.stdout.lines())
        .filter(|l| l.contains("| one |"))
        .collect();
    assert!(
        !one.is_empty() && one.iter().all(|l| !l.contains(" threads |")),
        "{}",
        run.stdout
    );
}

#[test]
fn html_and_plots_show_every_cpu_and_workload_of_the_run() {
    let sandbox = Sandbox::new();
    let pipeline = sandbox.write(
        "plots.yaml",
        "name: plots\ncollect:\n  monitors:\n    where: { placement: { interval: 50ms } }\n  \
         workloads:\n    tick:\n      periodic: { threads: 2, period: 50ms, busy: 20ms, duration: 800ms }\n\
         aggregate:\n  - residency: {}\n  - cpu_time: {}\n\
         summarize:\n  report: [markdown, html]\n  plots: [cpu_timeline, residency]\n",
    );
    let run = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run_id = &sandbox.runs("plots")[0];
    let cpus: Vec<schedlab_tables::CpuRow> = read_table(&sandbox.data("plots", "tables")).unwrap();
    assert!(!cpus.is_empty());
    for kind in ["cpu_timeline", "residency"] {
        let svg =
            std::fs::read_to_string(sandbox.data("plots", &format!("report/{kind}-{run_id}.svg")))
                .unwrap();
        assert!(svg.starts_with("<svg"), "{kind}");
        for cpu in &cpus {
            let label = format!("cpu {} ({})", cpu.cpu, cpu.class);
            assert!(svg.contains(&label), "{kind} has no lane {label}");
        }
        assert!(
            svg.contains("tick"),
            "{kind}: the workload is in the legend"
        );
        // Its PNG beside it, for an article: twice the SVG's width, drawn on.
        let png = sandbox.data("plots", &format!("report/{kind}-{run_id}.png"));
        let decoder =
            png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
        let reader = decoder.read_info().unwrap();
        let svg_width: u32 = svg
            .split("width=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .and_then(|w| w.parse().ok())
            .unwrap();
        assert_eq!(reader.info().width, 2 * svg_width, "{kind}");
    }
    let html = std::fs::read_to_string(sandbox.data("plots", "report/index.html")).unwrap();
    let timeline = std::fs::read_to_string(
        sandbox.data("plots", &format!("report/cpu_timeline-{run_id}.svg")),
    )
    .unwrap();
    assert!(
        html.contains(timeline.trim_end()) && !html.contains("<img"),
        "the plot is inline: {html}"
    );
    assert!(
        html.contains("<td>tick</td>"),
        "the summary table is in the page: {html}"
    );

    // The plots are outputs of summarize, per run: deleting one draws that run's plots again.
    std::fs::remove_file(sandbox.data("plots", &format!("report/residency-{run_id}.svg"))).unwrap();
    let again = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert!(
        again.stderr.contains(&format!(
            "summarize: plots: 1 of 1 runs to compute: {run_id} (output \
             report/residency-{run_id}.svg is missing or was modified)"
        )),
        "{}",
        again.stderr
    );
    assert!(
        sandbox
            .data("plots", &format!("report/residency-{run_id}.svg"))
            .exists()
    );
}

#[test]
fn a_comm_with_markup_reaches_summary_md_escaped_and_index_html_as_text() {
    let test = "a_comm_with_markup_reaches_summary_md_escaped_and_index_html_as_text";
    if !can_run(test, &[Need::Program("openssl")]) {
        return;
    }
    let openssl = schedlab_collect::process::find_program("openssl").unwrap();
    let sandbox = Sandbox::new();
    // A process's comm is the name it was executed by: a link's name, markup and all.
    let link = sandbox.path("bin/a|<script>");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&openssl, &link).unwrap();
    let pipeline = sandbox.write(
        "markup.yaml",
        &format!(
            "name: markup\ncollect:\n  monitors:\n    where: {{ placement: {{ interval: 50ms }} }}\n  \
             workloads:\n    spin:\n      run: [\"{}\", speed, -seconds, \"1\", sha256]\n\
             aggregate:\n  - residency: {{}}\n  - cpu_time: {{}}\n\
             summarize:\n  report: [markdown, html]\n",
            link.display()
        ),
    );
    let run = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let summary = std::fs::read_to_string(sandbox.data("markup", "report/summary.md")).unwrap();
    let line = (summary.lines())
        .find(|l| l.contains("| spin |"))
        .expect(&summary);
    assert!(line.contains(r"| a\|\<script\> |"), "{line}");
    let html = std::fs::read_to_string(sandbox.data("markup", "report/index.html")).unwrap();
    assert!(html.contains("<td>a|&lt;script&gt;</td>"), "{html}");
    assert!(!html.contains("<script"), "{html}");
}
