use schedlab_parse::ParserKind;
use schedlab_tables::PerfStatRow;

use crate::util::{START_NS, all_tested, ctx, parse, quality};

const DIR: &str = "perf-stat";

fn perf_stat(dir: &str, file: &str) -> Vec<PerfStatRow> {
    parse(ParserKind::PerfStat, dir, file).perf_stat
}

/// (offset_ns, cpu, pmu, event, value, unit, run_pct, metric_value, metric_unit) of row `i`.
type Shown<'a> = (
    Option<i64>,
    Option<i32>,
    Option<&'a str>,
    &'a str,
    Option<f64>,
    &'a str,
    Option<f64>,
    Option<f64>,
    Option<&'a str>,
);

fn shown(row: &PerfStatRow) -> Shown<'_> {
    (
        row.offset_ns,
        row.cpu,
        row.pmu.as_deref(),
        row.event.as_str(),
        row.value,
        row.unit.as_str(),
        row.run_pct,
        row.metric_value,
        row.metric_unit.as_deref(),
    )
}

#[test]
fn recorded_default_human_output() {
    let rows = perf_stat("local", "perf-stat-default-stress-ng.txt");
    let all: Vec<Shown<'_>> = rows.iter().map(shown).collect();
    assert_eq!(
        all,
        [
            (
                None,
                None,
                None,
                "task-clock",
                Some(400.51),
                "msec",
                None,
                Some(0.197),
                Some("CPUs utilized")
            ),
            (
                None,
                None,
                None,
                "context-switches",
                Some(77.0),
                "",
                None,
                Some(192.254),
                Some("/sec")
            ),
            (
                None,
                None,
                None,
                "cpu-migrations",
                Some(2.0),
                "",
                None,
                Some(4.994),
                Some("/sec")
            ),
            (
                None,
                None,
                None,
                "page-faults",
                Some(1618.0),
                "",
                None,
                Some(4.040),
                Some("K/sec")
            ),
            (
                None,
                None,
                None,
                "time_elapsed",
                Some(2.033825260),
                "s",
                None,
                None,
                None
            ),
            (
                None,
                None,
                None,
                "time_user",
                Some(0.402171),
                "s",
                None,
                None,
                None
            ),
            (
                None,
                None,
                None,
                "time_sys",
                Some(0.0),
                "s",
                None,
                None,
                None
            ),
        ]
    );
    assert!(
        rows.iter()
            .all(|r| r.time_ns.is_none() && r.workload.as_deref() == Some("w"))
    );
}

#[test]
fn recorded_csv_output_after_the_workload_lines() {
    let parsed = parse(
        ParserKind::PerfStat,
        "local",
        "perf-stat-x-comma-stress-ng.txt",
    );
    assert_eq!(
        shown(&parsed.perf_stat[0]),
        (
            None,
            None,
            None,
            "task-clock",
            Some(395.81),
            "msec",
            Some(100.0),
            Some(0.196),
            Some("CPUs utilized")
        )
    );
    assert_eq!(parsed.perf_stat.len(), 3);
    assert_eq!(
        quality(&parsed),
        [
            "warning: perf-stat-x-comma-stress-ng.txt:1: skipped 3 line(s) of a form the perf-stat parser does not know, first: \"stress-ng: info:  [7310] setting to a 2 second run per stressor\""
        ]
    );
}

#[test]
fn recorded_per_cpu_intervals_are_placed_on_the_run_clock() {
    let rows = perf_stat("local", "perf-stat-a-A-x-comma-I500-sleep.txt");
    assert_eq!(rows.len(), 12);
    assert_eq!(
        shown(&rows[3]),
        (
            Some(500_593_215),
            Some(1),
            None,
            "context-switches",
            Some(118.0),
            "",
            Some(100.0),
            Some(234.049),
            Some("/sec")
        )
    );
    assert_eq!(rows[11].time_ns, Some(START_NS + 1_202_739_546));
}

#[test]
fn recorded_human_intervals_with_not_counted() {
    let rows = perf_stat("local", "perf-stat-I500-human-sleep.txt");
    let all: Vec<Shown<'_>> = rows.iter().map(shown).collect();
    assert_eq!(
        all,
        [
            (
                Some(500_566_045),
                None,
                None,
                "task-clock",
                Some(0.83),
                "msec",
                None,
                Some(0.002),
                Some("CPUs utilized")
            ),
            (
                Some(500_566_045),
                None,
                None,
                "context-switches",
                Some(1.0),
                "",
                None,
                Some(1.209),
                Some("K/sec")
            ),
            (
                Some(1_001_281_702),
                None,
                None,
                "task-clock",
                None,
                "msec",
                None,
                None,
                None
            ),
            (
                Some(1_001_281_702),
                None,
                None,
                "context-switches",
                None,
                "",
                None,
                None,
                None
            ),
            (
                Some(1_200_209_072),
                None,
                None,
                "task-clock",
                Some(0.05),
                "msec",
                None,
                Some(0.0),
                Some("CPUs utilized")
            ),
            (
                Some(1_200_209_072),
                None,
                None,
                "context-switches",
                Some(0.0),
                "",
                None,
                Some(0.0),
                Some("/sec")
            ),
        ]
    );
    assert_eq!(rows[4].time_ns, Some(START_NS + 1_200_209_072));
}

#[test]
fn csv_interval_with_padded_timestamps() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let rows = perf_stat(
        DIR,
        "lkp-perf-5.13-stat-a-I1000-x-comma-csv-interval-indented.txt",
    );
    assert_eq!(rows.len(), 69);
    assert_eq!(
        shown(&rows[0]),
        (
            Some(1_000_659_830),
            None,
            None,
            "cpu-cycles",
            Some(4100064372.0),
            "",
            Some(16.66),
            Some(0.042),
            Some("GHz")
        )
    );
    let task_clock = rows.iter().find(|r| r.event == "task-clock").unwrap();
    assert_eq!(
        (task_clock.value, task_clock.unit.as_str()),
        (Some(96844.69), "msec")
    );
}

#[test]
fn csv_interval_older_perf() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let rows = perf_stat(DIR, "lkp-perf-stat-a-I1000-x-comma-csv-interval.txt");
    assert_eq!(rows.len(), 39);
    let last = rows.last().unwrap();
    assert_eq!(
        shown(last),
        (
            Some(2_144_260_360),
            None,
            None,
            "node-store-misses",
            Some(0.0),
            "",
            Some(16.64),
            Some(0.0),
            Some("K/sec")
        )
    );
}

#[test]
fn hybrid_pmus_are_split_from_the_event_name() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let rows = perf_stat(
        DIR,
        "lkp-perf-6.17-stat-hybrid-cpu_atom-cpu_core-csv-interval.txt",
    );
    assert_eq!(rows.len(), 57);
    let instructions: Vec<(Option<&str>, Option<f64>, Option<f64>)> = rows
        .iter()
        .filter(|r| r.event == "instructions" && r.offset_ns == Some(1_001_092_774))
        .map(|r| (r.pmu.as_deref(), r.value, r.metric_value))
        .collect();
    assert_eq!(
        instructions,
        [
            (Some("cpu_atom"), Some(244499732.0), Some(0.72)),
            (Some("cpu_core"), Some(21005840710.0), Some(1.56))
        ]
    );
    let cycles = &rows[0];
    assert_eq!(
        (cycles.metric_value, cycles.metric_unit.as_deref()),
        (None, None),
        "empty metric fields are null"
    );
}

#[test]
fn per_cpu_human_output_with_thousands_separators() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let rows = perf_stat(DIR, "perf-stat-a-A-msr-aperf-mperf-smi-tsc-t14.txt");
    assert_eq!(rows.len(), 33);
    assert_eq!(
        shown(&rows[1]),
        (
            None,
            Some(1),
            Some("msr"),
            "aperf",
            Some(181130722.0),
            "",
            None,
            None,
            None
        )
    );
    assert_eq!(
        shown(&rows[31]),
        (
            None,
            Some(7),
            Some("msr"),
            "tsc",
            Some(145157356567.0),
            "",
            None,
            None,
            None
        )
    );
    assert_eq!(
        (rows[32].event.as_str(), rows[32].value),
        ("time_elapsed", Some(60.002902881))
    );
}

#[test]
fn human_output_without_separators_or_comments() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = parse(
        ParserKind::PerfStat,
        DIR,
        "perf-stat-human-no-thousands-sep-lat_pipe-hw1perf.txt",
    );
    let values: Vec<(&str, Option<f64>)> = parsed
        .perf_stat
        .iter()
        .map(|r| (r.event.as_str(), r.value))
        .collect();
    assert_eq!(
        values,
        [
            ("task-clock", Some(28749.27)),
            ("cycles", Some(73484767995.0)),
            ("instructions", Some(26922915348.0)),
            ("ref-cycles", Some(54567480720.0)),
            ("context-switches", Some(33982.0)),
            ("cpu-migrations", Some(6.0)),
            ("time_elapsed", Some(29.746661716)),
            ("time_user", Some(27.719841)),
            ("time_sys", Some(1.001958)),
        ]
    );
}

#[test]
fn not_counted_and_multiplexed_human_rows() {
    let text = "     <not counted>      cpu_atom/cycles/                                  (0.00%)\n  1,234,567      cpu_core/instructions/u  #  1.50  insn per cycle  (49.95%)\n";
    let parsed =
        schedlab_parse::parse(ParserKind::PerfStat, "p.txt", text.as_bytes(), &ctx()).unwrap();
    let all: Vec<Shown<'_>> = parsed.perf_stat.iter().map(shown).collect();
    assert_eq!(
        all,
        [
            (
                None,
                None,
                Some("cpu_atom"),
                "cycles",
                None,
                "",
                Some(0.0),
                None,
                None
            ),
            (
                None,
                None,
                Some("cpu_core"),
                "instructions:u",
                Some(1234567.0),
                "",
                Some(49.95),
                Some(1.5),
                Some("insn per cycle")
            ),
        ]
    );
}

#[test]
fn text_without_counters_is_an_error() {
    let err = schedlab_parse::parse(ParserKind::PerfStat, "p.txt", b"hello\n", &ctx()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "p.txt:1: no counter line (hint: is this the stderr of `perf stat`?)"
    );
}

#[test]
fn every_perf_stat_fixture_is_tested() {
    schedlab_testkit::shared_fixtures_or_skip!();
    all_tested(DIR, &["perf-stat-"], include_str!("perf_stat.rs"));
}
