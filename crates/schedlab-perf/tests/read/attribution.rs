//! The `workload` column follows fork events from the processes the runner started.

use schedlab_perf::{SchedOptions, SchedTables, read_sched};

use crate::util::fixture;

fn read_with(name: &str, roots: &[(i32, &str)]) -> SchedTables {
    let opts = SchedOptions {
        run_id: "r".into(),
        workloads: (roots.iter())
            .map(|(p, n)| schedlab_perf::WorkloadSelector::tree(*p, *n))
            .collect(),
        ..Default::default()
    };
    read_sched(&fixture(name), &opts).unwrap()
}

fn workload_of(t: &SchedTables, tid: i32) -> Option<&str> {
    let rows: Vec<_> = t.threads.iter().filter(|r| r.tid == tid).collect();
    assert_eq!(rows.len(), 1, "tid {tid}: {rows:?}");
    rows[0].workload.as_deref()
}

/// contended.data: `sh` (10235) started two `stress-ng --cpu 2`, 10237 (workers 10239, 10240)
/// and 10238 (workers 10241, 10242). Same command names on both sides.
#[test]
fn same_names_different_workloads() {
    let t = read_with("contended.data", &[(10237, "left"), (10238, "right")]);
    for (tid, w) in [
        (10237, "left"),
        (10239, "left"),
        (10240, "left"),
        (10238, "right"),
        (10241, "right"),
        (10242, "right"),
    ] {
        assert_eq!(workload_of(&t, tid), Some(w), "tid {tid}");
    }
    assert_eq!(workload_of(&t, 10235), None);
    for s in &t.sched_slices {
        let expected = match s.tid {
            10237 | 10239 | 10240 => Some("left"),
            10238 | 10241 | 10242 => Some("right"),
            _ => None,
        };
        assert_eq!(s.workload.as_deref(), expected, "{s:?}");
        assert_eq!(&*s.run_id, "r");
    }
    assert!(
        t.migrations
            .iter()
            .any(|m| m.workload.as_deref() == Some("left"))
    );
    let right_wakeups = t
        .wakeups
        .iter()
        .filter(|w| w.workload.as_deref() == Some("right"));
    assert!(right_wakeups.clone().count() > 0);
    assert!(
        right_wakeups
            .into_iter()
            .all(|w| [10238, 10241, 10242].contains(&w.tid))
    );
}

#[test]
fn descendants_inherit_from_an_ancestor() {
    let t = read_with("contended.data", &[(10235, "pair")]);
    for tid in [10235, 10237, 10238, 10239, 10240, 10241, 10242] {
        assert_eq!(workload_of(&t, tid), Some("pair"), "tid {tid}");
    }
    let stress = t.threads.iter().find(|r| r.tid == 10239).unwrap();
    assert_eq!(
        (stress.pid, stress.parent_tid, &*stress.comm),
        (10239, Some(10237), "stress-ng-cpu")
    );
    assert!(stress.start_ns.is_some() && stress.end_ns.is_some());
}
