use schedlab_parse::{ParseContext, ParserKind};
use schedlab_tables::{MigrationRow, SchedSliceRow, TimehistSummaryRow, WakeupRow};

use crate::util::{all_tested, ctx, parse, quality};

const DIR: &str = "perf-sched";

/// (cpu, tid, pid, comm, start_ns, end_ns, run_ns, wait_ns, sched_delay_ns, prev_state).
type Slice<'a> = (i32, i32, i32, &'a str, i64, i64, i64, i64, i64, &'a str);

fn slice(row: &SchedSliceRow) -> Slice<'_> {
    (
        row.cpu,
        row.tid,
        row.pid,
        &*row.comm,
        row.start_ns,
        row.end_ns,
        row.run_ns,
        row.wait_ns,
        row.sched_delay_ns,
        &*row.prev_state,
    )
}

/// (time_ns, tid, pid, comm, from_cpu, to_cpu).
fn migration(row: &MigrationRow) -> (i64, i32, i32, &str, i32, i32) {
    (
        row.time_ns,
        row.tid,
        row.pid,
        &*row.comm,
        row.from_cpu,
        row.to_cpu,
    )
}

/// (time_ns, tid, pid, comm, target_cpu, waker_tid).
fn wakeup(row: &WakeupRow) -> (i64, i32, i32, &str, i32, Option<i32>) {
    (
        row.time_ns,
        row.tid,
        row.pid,
        &*row.comm,
        row.target_cpu,
        row.waker_tid,
    )
}

/// (tid, pid, comm, parent, sched_in, run_ns, min, avg, max, stddev %, migrations, terminated).
type Summary<'a> = (
    i32,
    i32,
    &'a str,
    i32,
    i64,
    i64,
    i64,
    i64,
    i64,
    f64,
    i64,
    bool,
);

fn summary(row: &TimehistSummaryRow) -> Summary<'_> {
    (
        row.tid,
        row.pid,
        row.comm.as_str(),
        row.parent_pid,
        row.sched_in,
        row.run_ns,
        row.min_run_ns,
        row.avg_run_ns,
        row.max_run_ns,
        row.stddev_pct,
        row.migrations,
        row.terminated,
    )
}

#[test]
fn rhel7_migrated_and_awakened_rows() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = parse(
        ParserKind::Timehist,
        DIR,
        "timehist-M-V-w-3cpu-migrated-awakened-rhel7-head.txt",
    );
    let slices: Vec<Slice<'_>> = parsed.sched_slices.iter().map(slice).collect();
    assert_eq!(
        slices,
        [
            (
                1,
                14569,
                14569,
                "perf",
                975758720113000,
                975758720113000,
                0,
                0,
                0,
                ""
            ),
            (
                1,
                14570,
                14570,
                "perf",
                975758720113000,
                975758720221000,
                108000,
                0,
                1000,
                ""
            ),
            (
                1,
                13,
                13,
                "migration/1",
                975758720222000,
                975758720230000,
                8000,
                0,
                1000,
                ""
            ),
            (
                1,
                14569,
                14569,
                "perf",
                975758720230000,
                975758720275000,
                45000,
                116000,
                0,
                ""
            ),
        ]
    );
    let migrations: Vec<_> = parsed.migrations.iter().map(migration).collect();
    assert_eq!(migrations, [(975758720223000, 14570, 14570, "perf", 1, 0)]);
    let wakeups: Vec<_> = parsed.wakeups.iter().map(wakeup).collect();
    assert_eq!(
        wakeups,
        [
            (975758720111000, 14570, 14570, "perf", -1, Some(14569)),
            (975758720220000, 13, 13, "migration/1", -1, Some(14570)),
        ]
    );
    assert!(parsed.quality.is_empty());
}

#[test]
fn rhel7_tid_filter_with_shifted_markers_and_swapper_waker() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = parse(
        ParserKind::Timehist,
        DIR,
        "timehist-M-V-w-tid-filter-3cpu-rhel7-head.txt",
    );
    let migrations: Vec<_> = parsed.migrations.iter().map(migration).collect();
    assert_eq!(
        migrations,
        [
            (975758725127000, 14571, 14571, "stress-ng", 0, 1),
            (975758725252000, 14572, 14572, "stress-ng", 0, 0),
        ]
    );
    let last_wakeup = parsed.wakeups.last().map(wakeup);
    assert_eq!(
        last_wakeup,
        Some((975758725426000, 14571, 14571, "stress-ng-cpu", -1, Some(0)))
    );
    assert_eq!(parsed.sched_slices.len(), 2);
    assert_eq!(
        slice(&parsed.sched_slices[1]),
        (
            0,
            14572,
            14572,
            "stress-ng-cpu",
            975758725300000,
            975758725461000,
            161000,
            0,
            46000,
            ""
        )
    );
}

#[test]
fn wide_cpu_visual_state_column_and_overflowing_names() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = parse(
        ParserKind::Timehist,
        DIR,
        "timehist-V-w-state-81cpu-visual-scx-devguide.txt",
    );
    assert_eq!((parsed.sched_slices.len(), parsed.wakeups.len()), (14, 10));
    let states: String = parsed.sched_slices.iter().map(|s| &*s.prev_state).collect();
    assert_eq!(states, "DDSISISISISISI");
    let thrift = parsed
        .sched_slices
        .iter()
        .find(|s| &*s.comm == "ThriftSrv.N2104")
        .unwrap();
    assert_eq!(
        slice(thrift),
        (
            1,
            1635036,
            2683498,
            "ThriftSrv.N2104",
            960264508079000,
            960264508108000,
            29000,
            0,
            0,
            "S"
        )
    );
    let idle = parsed
        .sched_slices
        .iter()
        .find(|s| &*s.comm == "<idle>")
        .unwrap();
    assert_eq!((idle.tid, idle.pid, idle.run_ns), (0, 0, 1579000));
    // The wakee's name was cut before its `]`.
    let cut = parsed
        .wakeups
        .iter()
        .find(|w| &*w.comm == "GlobalCPUThread")
        .unwrap();
    assert_eq!(
        (cut.tid, cut.pid, cut.waker_tid),
        (1635186, 1635080, Some(1635235))
    );
}

#[test]
fn default_listing_with_trailing_spaces() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = parse(
        ParserKind::Timehist,
        DIR,
        "timehist-default-head-stressng-load-hw1perf.txt",
    );
    assert_eq!(parsed.sched_slices.len(), 36);
    let worker = parsed
        .sched_slices
        .iter()
        .find(|s| &*s.comm == "stress-ng-cpu")
        .unwrap();
    assert_eq!(
        slice(worker),
        (
            1,
            76704,
            76704,
            "stress-ng-cpu",
            1642308224808000,
            1642308228164000,
            3356000,
            0,
            0,
            ""
        )
    );
    let perf = &parsed.sched_slices[9];
    assert_eq!(
        (&*perf.comm, perf.wait_ns, perf.sched_delay_ns, perf.run_ns),
        ("perf", 1639000, 1639000, 64000)
    );
}

#[test]
fn recorded_listing_with_names_holding_spaces_and_dead_threads() {
    let parsed = parse(
        ParserKind::Timehist,
        "local",
        "perf-sched-timehist-M-V-w-stress-ng-cpu1-load20-head150.txt",
    );
    assert_eq!(
        (
            parsed.sched_slices.len(),
            parsed.migrations.len(),
            parsed.wakeups.len()
        ),
        (80, 4, 62)
    );
    let worker = parsed.sched_slices.iter().find(|s| s.tid == 7443).unwrap();
    assert_eq!(
        slice(worker),
        (
            1,
            7443,
            7443,
            "stress-ng-cpu",
            457391176000,
            457391433000,
            257000,
            0,
            3357000,
            ""
        )
    );
    let dead = parsed.sched_slices.iter().find(|s| s.tid == -1).unwrap();
    assert_eq!((&*dead.comm, dead.pid, dead.run_ns), (":-1", 7364, 328000));
    let migrations: Vec<_> = parsed.migrations.iter().take(2).map(migration).collect();
    assert_eq!(
        migrations,
        [
            (457380095000, 7391, 7391, "perf", 0, 1),
            (457384040000, 7438, 7364, "opt 3b33dvpbig4", 1, 0),
        ]
    );
}

#[test]
fn recorded_default_listing() {
    let parsed = parse(
        ParserKind::Timehist,
        "local",
        "perf-sched-timehist-default-stress-ng-cpu1-load20-head60.txt",
    );
    assert_eq!(parsed.sched_slices.len(), 56);
    assert!(parsed.migrations.is_empty() && parsed.wakeups.is_empty());
}

#[test]
fn recorded_summary_with_terminated_tasks_and_idle_stats() {
    let parsed = parse(
        ParserKind::Timehist,
        "local",
        "perf-sched-timehist-M-s-stress-ng-cpu1-load20.txt",
    );
    assert_eq!(
        parsed.timehist_summary.len(),
        67,
        "Total number of unique tasks: 67"
    );
    let worker = parsed
        .timehist_summary
        .iter()
        .find(|s| s.tid == 7443)
        .unwrap();
    assert_eq!(
        summary(worker),
        (
            7443,
            7443,
            "stress-ng-cpu",
            7413,
            34,
            1337641000,
            19000,
            39342000,
            177988000,
            24.69,
            0,
            true
        )
    );
    let rcu = parsed
        .timehist_summary
        .iter()
        .find(|s| s.comm == "rcu_preempt")
        .unwrap();
    assert_eq!(
        summary(rcu),
        (
            15,
            15,
            "rcu_preempt",
            2,
            47,
            40151000,
            4000,
            854000,
            8016000,
            38.98,
            6,
            false
        )
    );
    let terminated = parsed
        .timehist_summary
        .iter()
        .filter(|s| s.terminated)
        .count();
    assert_eq!(terminated, 49, "rows under `Terminated tasks:`");
    assert!(parsed.quality.is_empty());
}

#[test]
fn pid_filtered_summaries_without_idle_stats() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = parse(
        ParserKind::Timehist,
        DIR,
        "timehist-summary-s-pid-filtered-2workers-bitcoin-bench.txt",
    );
    let rows: Vec<Summary<'_>> = parsed.timehist_summary.iter().map(summary).collect();
    assert_eq!(
        rows[1],
        (
            28933,
            28930,
            "b-scriptch.00",
            -1,
            345,
            14984809000,
            0,
            43434000,
            72218000,
            2.51,
            0,
            false
        )
    );
    assert_eq!(rows.len(), 3);
    let parsed = parse(
        ParserKind::Timehist,
        DIR,
        "timehist-summary-s-pid-filtered-12workers-bitcoin-bench.txt",
    );
    let run_ns: i64 = parsed.timehist_summary.iter().map(|s| s.run_ns).sum();
    // perf prints `Total run time (msec): 290007.825`; the 13 rounded rows sum to 5 µs less.
    assert_eq!((parsed.timehist_summary.len(), run_ns), (13, 290007820000));
}

#[test]
fn other_perf_sched_outputs_are_errors_naming_their_first_line() {
    schedlab_testkit::shared_fixtures_or_skip!();
    for (file, line) in [
        ("latency-count-column-stressng-load-hw1perf.txt", 3),
        ("latency-legacy-max-at-column-rhel7-head.txt", 3),
        (
            "latency-switches-maxstart-maxend-sched-messaging-snip-indented2-lkml.txt",
            3,
        ),
        ("map-16cpu-sched-messaging-snip-indented2-lkml.txt", 1),
    ] {
        let err = crate::util::try_parse(ParserKind::Timehist, DIR, file).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{file}:{line}: no timehist row (hint: expected the output of `perf sched timehist` with its header)"
            )
        );
    }
}

#[test]
fn workload_threads_are_attributed_by_pid() {
    let ctx = ParseContext {
        workloads: vec![schedlab_parse::WorkloadSelector::tree(7443, "burst")],
        ..ctx()
    };
    let bytes = std::fs::read(
        crate::util::local_dir()
            .join("perf-sched-timehist-M-V-w-stress-ng-cpu1-load20-head150.txt"),
    )
    .unwrap();
    let parsed = schedlab_parse::parse(ParserKind::Timehist, "t.txt", &bytes, &ctx).unwrap();
    assert!(
        parsed
            .sched_slices
            .iter()
            .all(|s| (s.workload.as_deref() == Some("burst")) == (s.tid == 7443))
    );
}

#[test]
fn unknown_rows_under_the_header_become_a_warning() {
    let text = "           time    cpu  task name                       wait time  sch delay   run time\n\
                  1.000001 [0000]  a[1]   0.000  0.000  0.001\n\
                  garbage here\n";
    let parsed =
        schedlab_parse::parse(ParserKind::Timehist, "t.txt", text.as_bytes(), &ctx()).unwrap();
    assert_eq!(parsed.sched_slices.len(), 1);
    assert_eq!(
        quality(&parsed),
        [
            "warning: t.txt:3: skipped 1 line(s) of a form the timehist parser does not know, first: \"garbage here\""
        ]
    );
}

#[test]
fn perf_data_is_not_read_from_bytes() {
    let err =
        schedlab_parse::parse(ParserKind::PerfSched, "x.data", b"PERFILE2", &ctx()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("x.data: at byte 0: perf-sched files are read by `parse_file(path)`"),
        "{err}"
    );
}

#[test]
fn every_perf_sched_fixture_is_tested() {
    schedlab_testkit::shared_fixtures_or_skip!();
    all_tested(DIR, &["perf-sched-"], include_str!("timehist.rs"));
}

#[test]
fn grepped_rows_without_the_header_are_read() {
    // Seed page 8 kept `perf sched timehist -M -V | grep -E 'openssl|stress-ng-cpu'`.
    let path = crate::util::local_dir()
        .join("perf-sched-timehist-M-V-w-stress-ng-cpu1-load20-head150.txt");
    let full = std::fs::read_to_string(path).unwrap();
    let grepped: String = full
        .lines()
        .filter(|l| l.contains("stress-ng-cpu"))
        .map(|l| format!("{l}\n"))
        .collect();
    let parsed =
        schedlab_parse::parse(ParserKind::Timehist, "g.txt", grepped.as_bytes(), &ctx()).unwrap();
    let all = parse(
        ParserKind::Timehist,
        "local",
        "perf-sched-timehist-M-V-w-stress-ng-cpu1-load20-head150.txt",
    );
    let worker = |slices: &[SchedSliceRow]| -> Vec<SchedSliceRow> {
        slices.iter().filter(|s| s.tid == 7443).cloned().collect()
    };
    assert_eq!(worker(&parsed.sched_slices), worker(&all.sched_slices));
    assert_eq!(
        (parsed.sched_slices.len(), parsed.wakeups.len()),
        (2, 1),
        "the 3 grepped lines"
    );
    assert_eq!(parsed.wakeups[0].waker_tid, Some(7443));
    assert!(parsed.quality.is_empty(), "{:?}", quality(&parsed));
}
