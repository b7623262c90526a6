//! Lost events and the window in which every CPU has data.

use crate::util::{listing, read, us};

#[test]
fn lost_events_become_quality_rows_per_cpu_and_time() {
    let t = read("lossy.data");
    let (_, perf_lost) = listing("lossy.timehist.txt");
    assert!(!perf_lost.is_empty());
    let ours: Vec<_> = t
        .quality
        .iter()
        .filter(|q| q.message.starts_with("perf lost") && q.time_ns.is_some())
        .collect();
    assert_eq!(ours.len(), perf_lost.len());
    for (q, p) in ours.iter().zip(&perf_lost) {
        assert_eq!(
            (q.source.as_str(), q.severity.as_str()),
            ("perf-sched", "warning")
        );
        assert_eq!((us(q.time_ns.unwrap()), q.cpu), (p.time_us, Some(p.cpu)));
        let expected = format!("perf lost {} events on cpu {}", p.count, p.cpu);
        assert!(
            q.message.starts_with(&expected),
            "{} vs {expected}",
            q.message
        );
    }
    let total: u64 = perf_lost.iter().map(|l| l.count).sum();
    assert!(
        t.quality
            .iter()
            .any(|q| q.message.contains(&format!("{total} events lost"))),
        "{:#?}",
        t.quality
    );
}

#[test]
fn clean_trace_has_no_quality_rows() {
    assert_eq!(read("bursty.data").quality, vec![]);
}

#[test]
fn window_is_where_every_cpu_has_data() {
    for stem in ["bursty", "contended", "allsched", "lossy"] {
        let t = read(&format!("{stem}.data"));
        let (start, end) = t.window.expect("window");
        assert!(start < end, "{stem}");
        let spans: Vec<(i64, i64)> = (0..2)
            .map(|cpu| {
                let on: Vec<i64> = t
                    .sched_slices
                    .iter()
                    .filter(|s| s.cpu == cpu)
                    .map(|s| s.end_ns)
                    .collect();
                (on[0], *on.last().unwrap())
            })
            .collect();
        let first = spans.iter().map(|s| s.0).max().unwrap();
        let last = spans.iter().map(|s| s.1).min().unwrap();
        assert_eq!((start, end), (first, last), "{stem}");
    }
}
