use schedlab_parse::ParserKind;

use crate::util::{all_tested, check_metrics, ctx, metric, parse, quality};

const DIR: &str = "stress-ng";

fn stress_ng(dir: &str, file: &str) -> schedlab_parse::Parsed {
    parse(ParserKind::StressNg, dir, file)
}

#[test]
fn recorded_metrics_brief_cpu_at_20_percent() {
    // The seed's bursty worker: usr+sys time ≈ 20 % of the 2 s run.
    let parsed = stress_ng("local", "stress-ng-cpu1-load20-t2-metrics-brief.txt");
    check_metrics(
        &parsed,
        &[
            ("cpu/bogo_ops", 623.0, "ops"),
            ("cpu/real_time_s", 2.00, "s"),
            ("cpu/usr_time_s", 0.40, "s"),
            ("cpu/sys_time_s", 0.00, "s"),
            ("cpu/bogo_ops_per_s_real", 311.49, "ops/s"),
            ("cpu/bogo_ops_per_s_cpu", 1551.51, "ops/s"),
            ("completed_in_s", 2.00, "s"),
        ],
    );
    assert_eq!(parsed.workload_metrics.len(), 7);
    assert!(parsed.quality.is_empty());
    let row = &parsed.workload_metrics[0];
    assert_eq!(
        (
            row.run_id.as_str(),
            row.workload.as_str(),
            row.tool.as_str()
        ),
        ("r1", "w", "stress-ng")
    );
}

#[test]
fn recorded_metrics_full_adds_cpu_used_and_rss() {
    let parsed = stress_ng("local", "stress-ng-cpu1-load20-t2-metrics.txt");
    check_metrics(
        &parsed,
        &[
            ("cpu/usr_time_s", 0.41, "s"),
            ("cpu/bogo_ops_per_s_cpu", 1510.19, "ops/s"),
            ("cpu/cpu_used_per_instance_pct", 20.62, "%"),
            ("cpu/rss_max_kib", 6560.0, "KiB"),
        ],
    );
}

#[test]
fn old_header_with_three_spaces_and_rows_from_three_runs() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = stress_ng(
        DIR,
        "lkml-2020-metrics-brief-aio-old-header-3space-excerpt.txt",
    );
    let usr: Vec<f64> = parsed
        .workload_metrics
        .iter()
        .filter(|m| m.metric == "aio/usr_time_s")
        .map(|m| m.value)
        .collect();
    let sys: Vec<f64> = parsed
        .workload_metrics
        .iter()
        .filter(|m| m.metric == "aio/sys_time_s")
        .map(|m| m.value)
        .collect();
    assert_eq!(
        (usr, sys),
        (vec![0.89, 1.00, 1.08], vec![27.61, 26.80, 26.79])
    );
}

#[test]
fn failure_without_a_table_is_an_error_quality_row() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = stress_ng(DIR, "lkp-2021-fail-sigaction-no-table.txt");
    assert!(parsed.workload_metrics.is_empty());
    assert_eq!(
        quality(&parsed),
        [
            "error: lkp-2021-fail-sigaction-no-table.txt:2: stress-ng: sigaction signal 6 'SIGABRT': errno=22 (Invalid argument)",
            "warning: lkp-2021-fail-sigaction-no-table.txt:1: skipped 1 line(s) of a form the stress-ng parser does not know, first: \"2021-11-01 20:03:36 stress-ng --timeout 60 --times --verify --metrics-brief --vm-rw 9\"",
        ]
    );
}

#[test]
fn completion_before_the_table_and_memrate_sub_metrics() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = stress_ng(DIR, "lkp-2021-metrics-brief-memrate-info-tag.txt");
    check_metrics(
        &parsed,
        &[
            ("completed_in_s", 60.06, "s"),
            ("memrate/bogo_ops", 3159.0, "ops"),
            ("memrate/usr_time_s", 5597.27, "s"),
            ("memrate/write128_mb_per_sec", 1656.82, "MB/s"),
            ("memrate/read8_mb_per_sec", 1078.30, "MB/s"),
            ("times/run_time_s", 60.06, "s"),
            ("times/available_cpu_s", 5765.35, "s"),
            ("times/user_s", 5597.73, "s"),
            ("times/system_s", 18.41, "s"),
            ("times/total_s", 5616.14, "s"),
        ],
    );
}

#[test]
fn sequential_memory_class_many_stressors() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = stress_ng(
        DIR,
        "lkp-2021-metrics-brief-sequential-class-memory-info-tag.txt",
    );
    check_metrics(
        &parsed,
        &[
            ("completed_in_s", 247.66, "s"),
            ("pipe/bogo_ops", 114699197.0, "ops"),
            ("vm-rw/sys_time_s", 140.14, "s"),
            ("zlib/bogo_ops_per_s_cpu", 28.33, "ops/s"),
            ("pipeherd/context_switches_per_bogo_op", 1.01, "1"),
            ("stream/memory_rate_mb_per_sec", 5372.21, "MB/s"),
        ],
    );
    let stressors = parsed
        .workload_metrics
        .iter()
        .filter(|m| m.metric.ends_with("/bogo_ops"))
        .count();
    assert_eq!(stressors, 30);
}

#[test]
fn per_instance_info_lines_are_not_metrics() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = stress_ng(DIR, "lkp-2021-metrics-brief-signest-times.txt");
    check_metrics(
        &parsed,
        &[
            ("signest/bogo_ops", 64943005.0, "ops"),
            ("signest/sys_time_s", 120.61, "s"),
        ],
    );
    assert!(
        parsed
            .workload_metrics
            .iter()
            .all(|m| !m.metric.starts_with("stress-ng-signest"))
    );
}

#[test]
fn misc_metrics_section_and_completion_after_the_table() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = stress_ng(DIR, "lkp-2022-metrics-brief-longjmp-misc-metrics.txt");
    check_metrics(
        &parsed,
        &[
            ("longjmp/usr_time_s", 2843.29, "s"),
            ("longjmp/nanoseconds_per_longjmp_call", 53.66, "ns"),
            ("completed_in_s", 60.12, "s"),
        ],
    );
    let parsed = stress_ng(DIR, "lkp-2022-metrics-brief-memrate-geomean-misc.txt");
    check_metrics(
        &parsed,
        &[
            ("memrate/write128nt_mb_per_sec", 2190.96, "MB/s"),
            ("memrate/sys_time_s", 33.98, "s"),
        ],
    );
}

#[test]
fn metrc_tag_and_pass_fail_trailer() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = stress_ng(DIR, "lkp-2023-metrics-brief-udp-flood-metrc-tag.txt");
    check_metrics(
        &parsed,
        &[
            ("udp-flood/bogo_ops", 9904436.0, "ops"),
            ("udp-flood/usr_time_s", 8559.15, "s"),
            ("udp-flood/pct_sendto_calls_succeeded", 100.0, "%"),
            ("udp-flood/sendto_calls_per_sec", 1097.62, "1/s"),
            ("stressors_passed", 128.0, "stressors"),
            ("stressors_failed", 0.0, "stressors"),
            ("stressors_untrustworthy", 0.0, "stressors"),
            ("completed_in_s", 70.23, "s"),
        ],
    );
}

#[test]
fn metrics_full_flock() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = stress_ng(DIR, "lkp-2024-metrics-full-flock-cpu-used-rss-max.txt");
    check_metrics(
        &parsed,
        &[
            ("flock/usr_time_s", 44.80, "s"),
            ("flock/sys_time_s", 771.49, "s"),
            ("flock/cpu_used_per_instance_pct", 226.75, "%"),
            ("flock/rss_max_kib", 2564.0, "KiB"),
            ("flock/nanosecs_per_flock_lock_call", 5678.91, "ns"),
            ("completed_in_s", 60.0, "s"),
        ],
    );
}

#[test]
fn failed_stressors_in_the_trailer_are_errors() {
    let text = "stress-ng: info:  [1] failed: 2: cpu (2)\n";
    let parsed =
        schedlab_parse::parse(ParserKind::StressNg, "s.txt", text.as_bytes(), &ctx()).unwrap();
    assert_eq!(metric(&parsed, "stressors_failed").0, 2.0);
    assert_eq!(
        quality(&parsed),
        ["error: s.txt:1: stress-ng reports failed: 2: cpu (2)"]
    );
}

#[test]
fn text_without_stress_ng_lines_is_an_error() {
    let err =
        schedlab_parse::parse(ParserKind::StressNg, "s.txt", b"\nhello\n", &ctx()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "s.txt:2: no `stress-ng: <tag>: [pid]` line (hint: is this stress-ng output?)"
    );
}

#[test]
fn every_stress_ng_fixture_is_tested() {
    schedlab_testkit::shared_fixtures_or_skip!();
    all_tested(DIR, &["stress-ng-"], include_str!("stress_ng.rs"));
}
