//! The collector's built-in parts on this machine, for real: the `cpu` sampler against a spinning
//! thread, and the host facts against the tools installed here.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schedlab_collect::monitor::{self, MonitorContext};
use schedlab_spec::{CpuSamplerOptions, MonitorKind, MonitorPlan};
use schedlab_tables::CpuSampleRow;
use schedlab_tables::manifest::{MonitorRecord, MonitorStatus, RAW_DIR};

/// Runs the `cpu` monitor for `run_for` while one thread spins; returns its rows and what it
/// said on stopping.
fn sample_while_spinning(run_for: Duration) -> (Vec<CpuSampleRow>, MonitorRecord, Vec<String>) {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join(RAW_DIR)).expect("raw dir");
    let plan = MonitorPlan {
        name: "load".into(),
        kind: MonitorKind::Cpu(CpuSamplerOptions {
            interval: Duration::from_millis(200),
        }),
        optional: false,
    };
    let ctx = MonitorContext {
        run_id: "test-r1",
        run_dir: dir.path(),
        tracked: &Arc::new(Mutex::new(Vec::new())),
    };
    let mut record = MonitorRecord {
        name: plan.name.clone(),
        kind: plan.kind.name().into(),
        argv: Vec::new(),
        status: MonitorStatus::Ran,
        reason: None,
        files: Vec::new(),
        parse: None,
        start_ns: None,
        end_ns: None,
        self_cpu_ns: None,
    };
    let running = monitor::start(&plan, &ctx, &mut record).expect("the cpu sampler always starts");
    let done = AtomicBool::new(false);
    let stopped = std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        std::thread::sleep(run_for);
        let stopped = running.stop();
        done.store(true, Ordering::Relaxed);
        stopped
    })
    .expect("the cpu sampler stops cleanly");
    record.self_cpu_ns = stopped.self_cpu_ns;
    assert_eq!(record.files, ["raw/load.cpu_samples.parquet"]);
    let rows = schedlab_tables::read_rows::<CpuSampleRow>(&dir.path().join(&record.files[0]))
        .expect("cpu samples read back");
    (rows, record, stopped.notes)
}

fn online_cpus() -> Vec<i32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").expect("online CPUs");
    schedlab_topology::parse_cpu_list(&text)
        .expect("cpu list")
        .into_iter()
        .map(|cpu| cpu as i32)
        .collect()
}

#[test]
fn cpu_sampler_sees_a_spinning_thread() {
    let (rows, record, notes) = sample_while_spinning(Duration::from_millis(1100));

    for cpu in online_cpus() {
        let mine: Vec<&CpuSampleRow> = rows.iter().filter(|r| r.cpu == cpu).collect();
        assert!(
            mine.len() >= 3,
            "CPU {cpu}: {} rows in 1.1 s at 200 ms",
            mine.len()
        );
        for row in mine {
            assert_eq!(row.run_id, "test-r1");
            let busy = row.busy_pct.expect("/proc/stat is always there");
            assert!((0.0..=100.0).contains(&busy), "{row:?}");
            if let Some(idle) = row.idle_state_pct {
                assert!((0.0..=100.0).contains(&idle), "{row:?}");
            }
        }
    }
    let busiest = rows.iter().filter_map(|r| r.busy_pct).fold(0.0, f64::max);
    assert!(
        busiest >= 50.0,
        "a spinning thread, yet at most {busiest:.1} % busy"
    );
    assert!(rows.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));

    // What the machine lacks is null in every row and said once.
    let said = |column: &str| notes.iter().filter(|n| n.contains(column)).count();
    let cpu0 = Path::new("/sys/devices/system/cpu/cpu0");
    let has_freq = cpu0.join("cpufreq/scaling_cur_freq").exists();
    assert_eq!(
        rows.iter().all(|r| r.freq_khz.is_some()),
        has_freq,
        "{notes:?}"
    );
    assert_eq!(said("freq_khz"), usize::from(!has_freq), "{notes:?}");
    let has_idle = cpu0.join("cpuidle").exists();
    assert_eq!(rows.iter().all(|r| r.idle_state_pct.is_some()), has_idle);
    assert_eq!(said("idle_state_pct"), usize::from(!has_idle), "{notes:?}");
    let has_energy = rows.iter().any(|r| r.package_energy_uj.is_some());
    assert_eq!(
        said("package_energy_uj"),
        usize::from(!has_energy),
        "{notes:?}"
    );

    let cost = record.self_cpu_ns.expect("the sampler measures itself");
    assert!(
        (0..100_000_000).contains(&cost),
        "sampler used {cost} ns of CPU"
    );
}

#[test]
fn host_facts_record_tool_versions_and_power_settings() {
    let facts = schedlab_collect::host_facts();
    if schedlab_collect::process::find_program("perf").is_some() {
        let perf = facts.tool_versions.get("perf").map(String::as_str);
        assert!(
            perf.is_some_and(|v| v.starts_with("perf version ")),
            "{perf:?}"
        );
    }
    for tool in facts.tool_versions.keys() {
        assert!(
            schedlab_collect::process::find_program(tool).is_some(),
            "{tool}"
        );
    }
    let sysfs = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .map(|t| t.trim().to_owned())
    };
    assert_eq!(facts.smt, sysfs("/sys/devices/system/cpu/smt/control"));
    let cpufreq = "/sys/devices/system/cpu/cpu0/cpufreq";
    assert_eq!(
        facts.cpufreq_driver,
        sysfs(&format!("{cpufreq}/scaling_driver"))
    );
    assert_eq!(
        facts.energy_performance_preference,
        sysfs(&format!("{cpufreq}/energy_performance_preference"))
    );
    let turbo_files = [
        "/sys/devices/system/cpu/intel_pstate/no_turbo",
        "/sys/devices/system/cpu/cpufreq/boost",
    ];
    assert_eq!(
        facts.turbo.is_some(),
        turbo_files.iter().any(|f| Path::new(f).exists())
    );
}

/// What a shell command prints, `None` when it fails: the tests' own view of the machine.
fn shell(command: &str) -> Option<Vec<u8>> {
    let out = std::process::Command::new("sh")
        .args(["-c", command])
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

#[test]
fn host_facts_record_the_scheduler_configuration_in_force() {
    let facts = schedlab_collect::host_facts();
    let config = facts.sched_config.as_ref().expect("always recorded now");
    let uname_v = shell("uname -v").expect("uname runs");
    assert!(!config.kernel_build.is_empty());
    assert_eq!(
        config.kernel_build,
        String::from_utf8_lossy(&uname_v).trim()
    );

    // The config as the shell reads it: the kernel's own, else /boot's for this release.
    let text = shell("zcat /proc/config.gz 2>/dev/null || cat /boot/config-$(uname -r)");
    match (&config.kernel_config, text) {
        (Some(kernel), Some(text)) => {
            assert_eq!(kernel.blake3, blake3::hash(&text).to_hex().to_string());
            let text = String::from_utf8(text).unwrap();
            let hz = text.lines().find_map(|l| l.strip_prefix("CONFIG_HZ="));
            assert_eq!(kernel.options.get("CONFIG_HZ").map(String::as_str), hz);
            assert!(kernel.options.keys().all(|k| k.starts_with("CONFIG_")));
            println!("kernel config from {}: {}", kernel.source, kernel.blake3);
        }
        (None, None) => {
            println!(
                "skip the config digest: neither /proc/config.gz nor /boot/config-<release> \
                 is here ({:?})",
                config.unreadable.get("kernel_config")
            );
            assert!(config.unreadable.contains_key("kernel_config"));
        }
        (mine, shells) => panic!("schedlab read {mine:?}, the shell {:?}", shells.is_some()),
    }

    // Every source is either read or said to be unreadable.
    let rr = "/proc/sys/kernel/sched_rr_timeslice_ms";
    if let Ok(text) = std::fs::read_to_string(rr) {
        let got = config.sysctls.get("kernel.sched_rr_timeslice_ms");
        assert_eq!(got.map(String::as_str), Some(text.trim()));
    }
    let features = std::fs::read_to_string("/sys/kernel/debug/sched/features");
    assert_eq!(
        config.sched_features.is_some(),
        features.is_ok(),
        "{:?}",
        config.unreadable
    );
    assert_eq!(
        config.sched_features.is_none(),
        config.unreadable.contains_key("sched_features")
    );
    let microcode = shell("grep -c '^microcode' /proc/cpuinfo").is_some();
    assert_eq!(!config.microcode.is_empty(), microcode);
    let settings = facts.sched_settings().unwrap();
    println!(
        "{}\nunreadable: {:#?}",
        schedlab_tables::sched_config::settings_text(&settings),
        config.unreadable
    );
}
