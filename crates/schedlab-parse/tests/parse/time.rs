use schedlab_parse::ParserKind;

use crate::util::{all_tested, check_metrics, ctx, parse, quality};

const DIR: &str = "time-v";

fn time(dir: &str, file: &str) -> schedlab_parse::Parsed {
    parse(ParserKind::Time, dir, file)
}

/// The values of `metric` per record (instance).
fn per_record(parsed: &schedlab_parse::Parsed, metric: &str) -> Vec<(u32, f64)> {
    parsed
        .workload_metrics
        .iter()
        .filter(|m| m.metric == metric)
        .map(|m| (m.instance, m.value))
        .collect()
}

#[test]
fn recorded_gnu_time_of_stress_ng() {
    let parsed = time("local", "time-v-stress-ng-cpu1-load20-t2.txt");
    check_metrics(
        &parsed,
        &[
            ("user_time_s", 0.36, "s"),
            ("sys_time_s", 0.01, "s"),
            ("cpu_pct", 18.0, "%"),
            ("wall_time_s", 2.06, "s"),
            ("max_rss_kib", 10152.0, "KiB"),
            ("voluntary_ctx_switches", 25.0, "count"),
            ("involuntary_ctx_switches", 71.0, "count"),
            ("exit_status", 0.0, "code"),
        ],
    );
    assert_eq!(parsed.workload_metrics.len(), 22);
    assert!(
        parsed.quality.is_empty(),
        "stress-ng's own lines are not time's to judge"
    );
}

#[test]
fn recorded_bash_time_keyword() {
    let parsed = time("local", "bash-time-stress-ng-cpu1-load20-t2.txt");
    check_metrics(
        &parsed,
        &[
            ("wall_time_s", 2.017, "s"),
            ("user_time_s", 0.394, "s"),
            ("sys_time_s", 0.008, "s"),
        ],
    );
}

#[test]
fn four_appended_records_with_hms_elapsed() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = time(DIR, "gnu-time-v-four-records-appended-hms-elapsed-bgmp.txt");
    let wall = per_record(&parsed, "wall_time_s");
    assert_eq!(wall.len(), 4);
    assert_eq!(wall[0], (0, 7143.0), "1:59:03");
    assert_eq!(wall[1].0, 1);
    assert!((wall[1].1 - 839.52).abs() < 1e-9, "13:59.52");
    assert_eq!(
        per_record(&parsed, "user_time_s")[..2],
        [(0, 7124.24), (1, 832.23)]
    );
    assert_eq!(per_record(&parsed, "max_rss_kib")[1], (1, 65092.0));
}

#[test]
fn nonzero_exit_after_the_program_traceback() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = time(DIR, "gnu-time-v-nonzero-exit-with-program-stderr-bgmp.txt");
    check_metrics(
        &parsed,
        &[
            ("exit_status", 1.0, "code"),
            ("cpu_pct", 242.0, "%"),
            ("wall_time_s", 0.41, "s"),
            ("max_rss_kib", 60008.0, "KiB"),
        ],
    );
    assert_eq!(
        quality(&parsed),
        [
            "warning: gnu-time-v-nonzero-exit-with-program-stderr-bgmp.txt:8: the timed command exited with status 1"
        ]
    );
}

#[test]
fn cpu_above_100_percent() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = time(DIR, "gnu-time-v-cpu-198pct-cryptoline.txt");
    check_metrics(
        &parsed,
        &[
            ("user_time_s", 0.95, "s"),
            ("sys_time_s", 0.40, "s"),
            ("cpu_pct", 198.0, "%"),
            ("wall_time_s", 0.68, "s"),
            ("minor_page_faults", 93603.0, "count"),
            ("fs_outputs", 552.0, "count"),
        ],
    );
}

#[test]
fn posix_time_p_and_repeated_shell_reports() {
    let text = "real 1.50\nuser 1.00\nsys 0.25\nreal\t1m0.500s\nuser\t0m59.000s\nsys\t0m1.000s\n";
    let parsed = schedlab_parse::parse(ParserKind::Time, "t.txt", text.as_bytes(), &ctx()).unwrap();
    assert_eq!(per_record(&parsed, "wall_time_s"), [(0, 1.5), (1, 60.5)]);
    assert_eq!(per_record(&parsed, "sys_time_s"), [(0, 0.25), (1, 1.0)]);
}

#[test]
fn unreadable_values_are_warnings_and_no_record_is_an_error() {
    let text = "\tUser time (seconds): lots\n\tSystem time (seconds): 0.5\n";
    let parsed = schedlab_parse::parse(ParserKind::Time, "t.txt", text.as_bytes(), &ctx()).unwrap();
    assert_eq!(parsed.workload_metrics.len(), 1);
    assert_eq!(
        quality(&parsed),
        [
            "warning: t.txt:1: skipped 1 line(s) of a form the time parser does not know, first: \"User time (seconds): lots\""
        ]
    );
    let err = schedlab_parse::parse(ParserKind::Time, "t.txt", b"hello\n", &ctx()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "t.txt:1: no `time -v` record and no `real`/`user`/`sys` lines (hint: was the command run under /usr/bin/time -v?)"
    );
}

#[test]
fn every_time_fixture_is_tested() {
    schedlab_testkit::shared_fixtures_or_skip!();
    all_tested(DIR, &["time-v-", "bash-time-"], include_str!("time.rs"));
}
