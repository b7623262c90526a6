//! The `traces` row of each recording against what `perf report --header-only` prints for it
//! (`X.header.txt`), and the clock check.

use schedlab_perf::Severity;

use crate::util::{fixture, read};

/// The value of `# key : value` in perf's header listing.
fn header(stem: &str, key: &str) -> String {
    let text = std::fs::read_to_string(fixture(&format!("{stem}.header.txt"))).unwrap();
    let prefix = format!("# {key}");
    let line = (text.lines())
        .find(|l| l.starts_with(&prefix) && l[prefix.len()..].trim_start().starts_with(':'))
        .unwrap_or_else(|| panic!("{stem}.header.txt has no `{key}`"));
    line.split_once(':').unwrap().1.trim().to_string()
}

/// perf prints sample times as seconds with six decimals.
fn seconds_to_ns(text: &str) -> i64 {
    let (s, us) = text.split_once('.').unwrap();
    s.parse::<i64>().unwrap() * 1_000_000_000 + us.parse::<i64>().unwrap() * 1_000
}

#[test]
fn each_trace_row_says_what_perf_says_about_its_recording() {
    for stem in ["bursty", "contended", "allsched", "lossy", "default-clock"] {
        let tables = read(&format!("{stem}.data"));
        let trace = tables.trace.expect("a trace row");
        assert_eq!(trace.run_id, "test");
        assert!(
            trace.file.ends_with(&format!("{stem}.data")),
            "{}",
            trace.file
        );
        assert_eq!(trace.hostname.unwrap(), header(stem, "hostname"), "{stem}");
        assert_eq!(
            trace.os_release.unwrap(),
            header(stem, "os release"),
            "{stem}"
        );
        assert_eq!(
            trace.perf_version.unwrap(),
            header(stem, "perf version"),
            "{stem}"
        );
        assert_eq!(trace.arch.unwrap(), header(stem, "arch"), "{stem}");
        assert_eq!(trace.cpu_desc.unwrap(), header(stem, "cpudesc"), "{stem}");
        assert_eq!(trace.cmdline.unwrap(), header(stem, "cmdline"), "{stem}");
        let online: i32 = header(stem, "nrcpus online").parse().unwrap();
        assert_eq!(trace.nr_cpus_online, Some(online), "{stem}");
        let avail: i32 = header(stem, "nrcpus avail").parse().unwrap();
        assert_eq!(trace.nr_cpus_available, Some(avail), "{stem}");
        assert_eq!(trace.hybrid_pmus, None, "this VM is not hybrid");

        // perf's first and last sample cover every event; the sched events lie within them.
        let (first, last) = (trace.first_ns.unwrap(), trace.last_ns.unwrap());
        let perf_first = seconds_to_ns(&header(stem, "time of first sample"));
        let perf_last = seconds_to_ns(&header(stem, "time of last sample"));
        assert!(
            perf_first <= first && first < perf_first + 1_000_000,
            "{stem}: {first}"
        );
        assert!(
            last <= perf_last + 1_000 && last > perf_last - 50_000_000,
            "{stem}: {last}"
        );
        let (start, end) = (trace.window_start_ns.unwrap(), trace.window_end_ns.unwrap());
        assert!(first <= start && start <= end && end <= last, "{stem}");
        assert_eq!(Some((start, end)), tables.window);
    }
}

#[test]
fn a_trace_recorded_without_k_clock_monotonic_is_flagged() {
    let monotonic = read("bursty.data");
    assert_eq!(header("bursty", "clockid"), "monotonic (1)");
    assert_eq!(monotonic.trace.unwrap().clock, "CLOCK_MONOTONIC");
    assert!(
        !monotonic
            .quality
            .iter()
            .any(|q| q.message.contains("clock"))
    );

    // Recorded without -k: perf's header has no clockid line, and the times are perf's own.
    let text = std::fs::read_to_string(fixture("default-clock.header.txt")).unwrap();
    assert!(!text.contains("# clockid:"));
    let default = read("default-clock.data");
    assert_eq!(default.trace.unwrap().clock, "perf");
    let flagged: Vec<_> = (default.quality.iter())
        .filter(|q| q.message.contains("not CLOCK_MONOTONIC"))
        .collect();
    assert_eq!(flagged.len(), 1, "{:?}", default.quality);
    assert_eq!(flagged[0].severity, Severity::Warning);
    assert!(flagged[0].message.contains("-k CLOCK_MONOTONIC"));
}

#[test]
fn lost_events_in_the_trace_row_match_the_quality_rows() {
    let lossy = read("lossy.data");
    let lost = lossy.trace.unwrap().lost_events;
    assert!(lost > 0);
    let summary = (lossy.quality.iter())
        .find(|q| q.message.contains("events lost in"))
        .unwrap();
    assert!(
        summary
            .message
            .contains(&format!(": {lost} events lost in")),
        "{}",
        summary.message
    );
    assert_eq!(read("bursty.data").trace.unwrap().lost_events, 0);
}

#[test]
fn each_overflow_is_a_loss_row_with_the_span_it_hides() {
    let lossy = read("lossy.data");
    let per_cpu_notes = (lossy.quality.iter())
        .filter(|q| q.message.contains("its ring buffer overflowed"))
        .count();
    assert_eq!(lossy.losses.len(), per_cpu_notes);
    let total: i64 = lossy.losses.iter().map(|l| l.events).sum();
    assert_eq!(total, lossy.trace.as_ref().unwrap().lost_events);
    let (first, last) = {
        let t = lossy.trace.as_ref().unwrap();
        (t.first_ns.unwrap(), t.last_ns.unwrap())
    };
    for loss in &lossy.losses {
        let until = loss.until_ns.expect("LOST records carry a time here");
        let since = loss
            .since_ns
            .expect("every overflow came after a first switch");
        assert!(
            first <= since && since <= until && until <= last + 1_000_000_000,
            "{loss:?}"
        );
        // No slice of that CPU ends inside the hidden span: its events there are missing.
        let hidden = (lossy.sched_slices.iter())
            .filter(|s| s.cpu == loss.cpu && s.end_ns > since && s.end_ns < until)
            .count();
        assert_eq!(hidden, 0, "{loss:?}");
    }
    assert!(read("bursty.data").losses.is_empty());
}
