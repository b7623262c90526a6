//! cpu_activity on a real turbostat capture: an Alder Lake-P laptop (P-cores 0-7 with
//! Hyper-Threading, E-cores 8-15), 23 intervals of 5 s, parsed by schedlab's own parser.
//! turbostat's summary row, which turbostat computes itself, is the independent check.

mod util;

use schedlab_analyze::cpu_activity::{RUN_WINDOW, activity, class_intervals};
use schedlab_tables::turbostat::TurbostatSample;
use schedlab_tables::{CpuActivityRow, CpuRow, ProcessRow};

const INTERVAL_NS: i64 = 5_000_000_000;

fn alder_lake() -> Option<Vec<TurbostatSample>> {
    util::turbostat_fixture(
        "alderlake-p-hybrid-tod-interval5s-debughdr-v2024.12.03.txt",
        "adl",
        INTERVAL_NS,
    )
}

/// The classes the capture's machine has, declared (SOURCES.md: P-cores 0-7, E-cores 8-15).
fn declared_classes() -> Vec<CpuRow> {
    (0..16)
        .map(|cpu| {
            let (class, rank) = if cpu < 8 { ("P", 0) } else { ("E", 1) };
            CpuRow {
                package_id: Some(0),
                ..CpuRow::declared("adl", cpu, class, Some(rank))
            }
        })
        .collect()
}

fn workload(name: &str, start_ns: i64, end_ns: i64) -> ProcessRow {
    util::workload("adl", name, start_ns, end_ns)
}

fn scope<'a>(rows: &'a [CpuActivityRow], window: &str, scope: &str) -> Vec<&'a CpuActivityRow> {
    (rows.iter())
        .filter(|r| r.window == window && r.scope == scope)
        .collect()
}

#[test]
fn every_interval_agrees_with_turbostats_own_summary_row() {
    let Some(samples) = alder_lake() else { return };
    let summaries: Vec<&TurbostatSample> = samples.iter().filter(|s| s.summary).collect();
    assert_eq!(summaries.len(), 23);
    // One window around the middle of each interval: exactly that interval.
    let processes: Vec<ProcessRow> = (0..23)
        .map(|k| {
            let middle = k * INTERVAL_NS + INTERVAL_NS / 2;
            workload(&format!("i{k}"), middle - 1_000_000, middle + 1_000_000)
        })
        .collect();
    let names: Vec<String> = processes.iter().map(|p| p.workload.clone()).collect();
    let rows = activity(&samples, &declared_classes(), &processes, &names);
    for (k, summary) in summaries.iter().enumerate() {
        let all = scope(&rows, &format!("i{k}"), "all");
        assert_eq!(all.len(), 1);
        let all = all[0];
        assert_eq!(all.samples, 1, "interval {k}");
        // turbostat rounds each CPU's Busy% and its own mean to 0.01.
        let busy = (all.busy_pct.unwrap(), summary.busy_pct.unwrap());
        assert!(
            (busy.0 - busy.1).abs() <= 0.011,
            "interval {k}: Busy% {busy:?}"
        );
        // Busy frequency weighted by busy time, as turbostat weighs it (its inputs are rounded
        // Busy% values as small as 0.01, hence 2 %).
        let bzy = (all.bzy_mhz.unwrap(), summary.bzy_mhz.unwrap());
        assert!(
            (bzy.0 - bzy.1).abs() <= 0.02 * bzy.1,
            "interval {k}: Bzy_MHz {bzy:?}"
        );
        assert_eq!(
            all.pkg_watt, summary.pkg_watt,
            "interval {k}: the summary row's PkgWatt"
        );
    }
}

#[test]
fn classes_windows_and_core_scoped_fields() {
    let Some(samples) = alder_lake() else { return };
    let cpus = declared_classes();
    // A workload from the start of interval 5 to the end of interval 9.
    let processes = [workload("burst", 5 * INTERVAL_NS, 10 * INTERVAL_NS)];
    let names = [RUN_WINDOW.to_owned(), "burst".to_owned()];
    let rows = activity(&samples, &cpus, &processes, &names);

    let run = scope(&rows, RUN_WINDOW, "all")[0];
    assert_eq!((run.samples, run.window_start_ns), (23, None));
    let burst = scope(&rows, "burst", "all")[0];
    assert_eq!(burst.samples, 5);
    assert_eq!(burst.window_start_ns, Some(5 * INTERVAL_NS));

    let classes: Vec<(&str, i64)> = (scope(&rows, "burst", "class").iter())
        .map(|r| (r.class.as_deref().unwrap(), r.samples))
        .collect();
    assert_eq!(classes, [("E", 5), ("P", 5)]);
    // On this machine the idle P-cores sit in C7 and the E-cores in C6: CPU%c6 is about 66 %
    // in turbostat's summary, the E-cores' share of it.
    let class = |name: &str| {
        *scope(&rows, RUN_WINDOW, "class")
            .iter()
            .find(|r| r.class.as_deref() == Some(name))
            .unwrap()
    };
    assert!(class("E").c6_pct.unwrap() > 95.0, "{:?}", class("E"));
    assert!(class("P").c6_pct.unwrap() < 5.0, "{:?}", class("P"));
    // CPU%c6 is core-scoped: printed on the first thread of a P-core only. CPU 1 (the second
    // thread of core 0) has no C6 figure; CPU 0 has one.
    let cpu = |n: i32| {
        *scope(&rows, RUN_WINDOW, "cpu")
            .iter()
            .find(|r| r.cpu == Some(n))
            .unwrap()
    };
    assert_eq!(cpu(1).c6_pct, None);
    assert!(cpu(0).c6_pct.is_some());
    assert_eq!(cpu(9).class.as_deref(), Some("E"));
    assert_eq!(scope(&rows, RUN_WINDOW, "cpu").len(), 16);
}

#[test]
fn each_interval_per_class_adds_up_to_turbostats_summary_row() {
    let Some(samples) = alder_lake() else { return };
    let rows = class_intervals(&samples, &declared_classes());
    assert_eq!(rows.len(), 23 * 2, "a row per interval and class");
    for summary in samples.iter().filter(|s| s.summary) {
        let class = |name: &str| {
            (rows.iter())
                .find(|r| r.sample == summary.sample && r.class == name)
                .unwrap()
        };
        let (p, e) = (class("P"), class("E"));
        assert_eq!((p.cpus, e.cpus, p.time_ns), (8, 8, summary.time_ns));
        // Eight CPUs each: the machine's Busy% is the two classes' mean, to turbostat's 0.01.
        let busy = (p.busy_pct.unwrap() + e.busy_pct.unwrap()) / 2.0;
        assert!(
            (busy - summary.busy_pct.unwrap()).abs() <= 0.011,
            "interval {}: {busy} vs {:?}",
            summary.sample,
            summary.busy_pct
        );
    }
}
