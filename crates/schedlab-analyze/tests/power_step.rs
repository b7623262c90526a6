//! power_step on real turbostat captures: a ThinkPad T14 loaded with eight `yes` processes,
//! whose package power falls from its turbo budget to the sustained limit, and two machines
//! whose power only wobbles.

mod util;

use std::collections::BTreeMap;

use schedlab_analyze::power_step::{power_series, power_steps};

#[test]
fn the_t14_leaves_its_turbo_budget_between_20_and_40_seconds() {
    // PkgWatt of the six 10 s intervals: 30.24 30.73 27.20 19.62 19.85 19.92.
    let Some(samples) = util::turbostat_fixture(
        "t14-intel-4c8t-quiet-show18-interval10-n6-8x-yes-loaded.txt",
        "t14",
        10_000_000_000,
    ) else {
        return;
    };
    let series = power_series(&samples, &[]);
    let processes = [util::workload("t14", "yes", 0, 60_000_000_000)];
    let steps = power_steps(&series, &processes, Some("yes"));
    assert_eq!(steps.len(), 1);
    let step = &steps[0];
    assert!(step.significant, "{step:#?}");
    assert_eq!((step.samples_before, step.samples_after), (3, 3));
    assert_eq!(step.after_start_s, 30.0);
    assert!((step.before_watt - (30.24 + 30.73 + 27.20) / 3.0).abs() < 1e-9);
    assert!((step.after_watt - (19.62 + 19.85 + 19.92) / 3.0).abs() < 1e-9);
    let pct = step.step_pct.unwrap();
    assert!((pct + 32.6).abs() < 0.1, "{pct}");
    assert_eq!(step.source, "turbostat");
}

#[test]
fn power_that_only_wobbles_has_no_significant_step() {
    // Snow Ridge idles at 28.0-28.4 W; the Broadwell laptop starts at 8.45 W for one interval
    // and then holds 6.5-7.0 W.
    for (file, run) in [
        ("intel-snowridge-tod-interval5s-v2024.12.03.txt", "snr"),
        ("intel-broadwell-up-tod-interval5s-v2024.12.03.txt", "bdw"),
    ] {
        let Some(samples) = util::turbostat_fixture(file, run, 5_000_000_000) else {
            return;
        };
        let series = power_series(&samples, &[]);
        let processes = [util::workload(run, "sleep", 0, 200_000_000_000)];
        let steps = power_steps(&series, &processes, None);
        assert_eq!(steps.len(), 1, "{file}");
        assert!(!steps[0].significant, "{file}: {:#?}", steps[0]);
    }
    assert!(power_steps(&BTreeMap::new(), &[], None).is_empty());
}

#[test]
fn without_a_reference_only_the_runs_processes_lifetime_is_searched() {
    // The T14's step, but the run's only process ends at 25 s: three intervals, too few for two
    // levels of two.
    let Some(samples) = util::turbostat_fixture(
        "t14-intel-4c8t-quiet-show18-interval10-n6-8x-yes-loaded.txt",
        "t14",
        10_000_000_000,
    ) else {
        return;
    };
    let series = power_series(&samples, &[]);
    let processes = [util::workload("t14", "yes", 0, 25_000_000_000)];
    assert!(power_steps(&series, &processes, None).is_empty());
    let processes = [util::workload("t14", "yes", 5_000_000_000, 60_000_000_000)];
    let steps = power_steps(&series, &processes, None);
    assert_eq!(
        steps[0].after_start_s, 25.0,
        "counted from the process's start"
    );
}
