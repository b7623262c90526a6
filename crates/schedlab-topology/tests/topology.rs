//! Detection on every real capture in the shared fixtures' sysfs/, checked against SOURCES.md;
//! declared overrides; CPU lists; the live machine.
//!
//! Not tested here: the two `cpuid-only/` captures (AMD Ryzen AI 9 HX 370, Intel Core Ultra 5
//! 225U). They are raw CPUID dumps with hwloc's XML output and hold no sysfs file, so there is
//! nothing for `detect` to read; the AMD rule is tested on a tree built to the HX 370's layout
//! as SOURCES.md describes it (L3 domains of 16 MB and 8 MB) instead.

mod util;

use std::fs;
use std::path::Path;

use schedlab_topology::{
    CpuInfo, TopologyError, apply_declared, class_order, classes, detect, format_cpu_list,
    parse_cpu_list, render_table,
};
use util::{Capture, put};

/// `(class, CPU list, class source)` for every class, fastest first.
type Expected<'a> = &'a [(&'a str, &'a str, &'a str)];

/// Groups CPUs by (class, source) in order of first appearance, as kernel CPU lists.
fn classes_of(cpus: &[CpuInfo]) -> Vec<(String, String, String)> {
    let mut groups: Vec<(String, String, Vec<u32>)> = Vec::new();
    for c in cpus {
        match groups
            .iter_mut()
            .find(|(class, source, _)| *class == c.class && *source == c.class_source)
        {
            Some(group) => group.2.push(c.cpu),
            None => groups.push((c.class.clone(), c.class_source.clone(), vec![c.cpu])),
        }
    }
    groups
        .into_iter()
        .map(|(class, source, members)| (class, format_cpu_list(&members), source))
        .collect()
}

/// Detects the tree at `root` and compares its classes with `expected` (in any order), and
/// their order by speed with `expected`'s.
fn check(root: &Path, expected: Expected) {
    let cpus = detect(root).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
    let mut fastest_first: Vec<&str> = (expected.iter())
        .map(|(class, ..)| *class)
        .filter(|class| !["offline", "unknown"].contains(class))
        .collect();
    fastest_first.dedup();
    assert_eq!(
        class_order(&cpus, &[]),
        fastest_first,
        "{}\n{}",
        root.display(),
        render_table(&cpus)
    );
    // `classes`: the same order, each class with every CPU the expected lists give it.
    let want_members: Vec<(&str, Vec<u32>)> = (fastest_first.iter())
        .map(|class| {
            let mut members: Vec<u32> = (expected.iter())
                .filter(|(name, ..)| name == class)
                .flat_map(|(_, list, _)| parse_cpu_list(list).unwrap())
                .collect();
            members.sort_unstable();
            (*class, members)
        })
        .collect();
    let listed = classes(&cpus);
    let listed: Vec<(&str, Vec<u32>)> = (listed.iter())
        .map(|(class, members)| (class.as_str(), members.clone()))
        .collect();
    assert_eq!(listed, want_members, "{}", root.display());
    let mut got = classes_of(&cpus);
    let mut want: Vec<_> = expected
        .iter()
        .map(|(class, list, source)| (class.to_string(), list.to_string(), source.to_string()))
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got, want, "{}\n{}", root.display(), render_table(&cpus));
}

/// Unpacks a capture, checks it, and returns it for further checks (`None`: the test is skipped,
/// the captures not being there).
fn check_capture(archive: &str, root: &str, expected: Expected) -> Option<Capture> {
    let capture = Capture::unpack(archive)?;
    check(&capture.path(root), expected);
    Some(capture)
}

/// Removes the hybrid PMU directories, as on a kernel or capture without them.
fn remove_pmu_lists(sys: &Path) {
    for pmu in ["cpu_core", "cpu_atom", "cpu_lowpower"] {
        let dir = sys.join("devices").join(pmu);
        if dir.exists() {
            fs::remove_dir_all(&dir).expect("remove PMU directory");
        }
    }
}

const FREQ: &str = "base_freq+max_freq";

// ---- Intel, hwloc captures: no PMU lists, so the frequency fallback decides -----------------

#[test]
fn raptorlake_i7_1370p() {
    // Favoured cores 4,5,8,9 reach 5.2 GHz, the other P-cores 5.0: still one class.
    check_capture(
        "intel-raptorlake-i7-1370P-6p8e-hwloc.tar.bz2",
        "20em64t-hybrid-1p6c2t+2ca4co1t",
        &[("P", "0-11", FREQ), ("E", "12-19", FREQ)],
    );
}

#[test]
fn lakefield_i5_l16g7() {
    // Max frequencies are 7 % apart; the base frequencies separate the classes. The E-cores
    // share the L3, so they are not LP E-cores.
    check_capture(
        "intel-lakefield-i5-L16G7-1p4e-hwloc.tar.bz2",
        "5intel64-hybrid-lakefield/fsroot",
        &[("P", "4", FREQ), ("E", "0-3", FREQ)],
    );
}

// ---- Intel, pepc captures: PMU lists, then again without them -------------------------------

/// Checks a pepc capture with its PMU lists, then with them removed (the fallback must agree).
fn check_pepc(name: &str, with_pmu: Expected, without_pmu: Expected) {
    let Some(capture) = check_capture(&format!("{name}.tar.xz"), name, with_pmu) else {
        return;
    };
    remove_pmu_lists(&capture.path(&format!("{name}/sys")));
    check(&capture.path(name), without_pmu);
}

#[test]
fn alderlake_i7_1260p() {
    check_pepc(
        "intel-alderlake-i7-1260P-4p8e-pepc",
        &[("P", "0-7", "pmu:cpu_core"), ("E", "8-15", "pmu:cpu_atom")],
        &[("P", "0-7", FREQ), ("E", "8-15", FREQ)],
    );
}

#[test]
fn raptorlake_i5_1340p() {
    check_pepc(
        "intel-raptorlake-i5-1340P-4p8e-pepc",
        &[("P", "0-7", "pmu:cpu_core"), ("E", "8-15", "pmu:cpu_atom")],
        &[("P", "0-7", FREQ), ("E", "8-15", FREQ)],
    );
}

#[test]
fn meteorlake_u7_164u() {
    // cpu_atom lists 4-13: E and LP E together; only 12-13 lack an L3.
    check_pepc(
        "intel-meteorlake-u7-164U-2p8e2lpe-pepc",
        &[
            ("P", "0-3", "pmu:cpu_core"),
            ("E", "4-11", "pmu:cpu_atom"),
            ("LPE", "12-13", "l3"),
        ],
        &[
            ("P", "0-3", FREQ),
            ("E", "4-11", FREQ),
            ("LPE", "12-13", "l3"),
        ],
    );
}

#[test]
fn lunarlake_u5_226v() {
    // No plain E-cores: the LP E-cores are the only atoms, and have no L3.
    check_pepc(
        "intel-lunarlake-u5-226V-4p4lpe-pepc",
        &[("P", "0-3", "pmu:cpu_core"), ("LPE", "4-7", "l3")],
        &[("P", "0-3", FREQ), ("LPE", "4-7", "l3")],
    );
}

#[test]
fn arrowlake_h() {
    // The one capture with a cpu_lowpower PMU.
    check_pepc(
        "intel-arrowlake-h-es-4p8e2lpe-pepc",
        &[
            ("P", "0-3", "pmu:cpu_core"),
            ("E", "4-11", "pmu:cpu_atom"),
            ("LPE", "12-13", "pmu:cpu_lowpower"),
        ],
        &[
            ("P", "0-3", FREQ),
            ("E", "4-11", FREQ),
            ("LPE", "12-13", "l3"),
        ],
    );
}

#[test]
fn pantherlake_h() {
    // E and LP E share 2.4 GHz, base 1.6 GHz and highest_perf 24: only the L3 tells them apart.
    check_pepc(
        "intel-pantherlake-h-es-2p4e4lpe-pepc",
        &[
            ("P", "0-1", "pmu:cpu_core"),
            ("E", "2-5", "pmu:cpu_atom"),
            ("LPE", "6-9", "l3"),
        ],
        &[("P", "0-1", FREQ), ("E", "2-5", FREQ), ("LPE", "6-9", "l3")],
    );
}

// ---- ARM ------------------------------------------------------------------------------------

#[test]
fn nvidia_gb10() {
    // Capacities 718/731 (A725) and 997/1017/1024 (X925): MIDR keeps each core type whole.
    let Some(capture) = check_capture(
        "arm-nvidia-gb10-10xX925-10xA725-hwloc.tar.bz2",
        "nvidia-dgx-gb10",
        &[
            ("big", "5-9,15-19", "cpu_capacity+midr"),
            ("little", "0-4,10-14", "cpu_capacity+midr"),
        ],
    ) else {
        return;
    };
    // Without MIDR, hwloc splits this machine into 5 kinds (the -nomidr.xml output); the 10 %
    // rule still finds the two core types. With no MIDR the names fall back to P/E.
    let cpus = capture.path("nvidia-dgx-gb10/sys/devices/system/cpu");
    for n in 0..20 {
        fs::remove_dir_all(cpus.join(format!("cpu{n}/regs"))).expect("remove regs");
    }
    check(
        &capture.path("nvidia-dgx-gb10"),
        &[
            ("P", "5-9,15-19", "cpu_capacity"),
            ("E", "0-4,10-14", "cpu_capacity"),
        ],
    );
}

#[test]
fn snapdragon_8_gen_2() {
    // A715 (3-4) and A710 (5-6) are two core types of equal capacity 855 in one cpufreq policy:
    // one class, as lscpu and the scheduler see them.
    check_capture(
        "arm-snapdragon-1xX3-2xA715-2xA710-3xA510-utillinux.tar.gz",
        "arm-A510-A710-A715-X3",
        &[
            ("big", "7", "cpu_capacity+midr"),
            ("mid", "3-6", "cpu_capacity+midr"),
            ("little", "0-2", "cpu_capacity+midr"),
        ],
    );
}

#[test]
fn every_archive_in_the_captures_folder_is_tested() {
    let tested = [
        "intel-raptorlake-i7-1370P-6p8e-hwloc.tar.bz2",
        "intel-lakefield-i5-L16G7-1p4e-hwloc.tar.bz2",
        "intel-alderlake-i7-1260P-4p8e-pepc.tar.xz",
        "intel-raptorlake-i5-1340P-4p8e-pepc.tar.xz",
        "intel-meteorlake-u7-164U-2p8e2lpe-pepc.tar.xz",
        "intel-lunarlake-u5-226V-4p4lpe-pepc.tar.xz",
        "intel-arrowlake-h-es-4p8e2lpe-pepc.tar.xz",
        "intel-pantherlake-h-es-2p4e4lpe-pepc.tar.xz",
        "arm-nvidia-gb10-10xX925-10xA725-hwloc.tar.bz2",
        "arm-snapdragon-1xX3-2xA715-2xA710-3xA510-utillinux.tar.gz",
    ];
    let Some(captures) = util::captures_dir() else {
        return;
    };
    let mut present: Vec<String> = fs::read_dir(captures)
        .expect("captures folder")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".tar."))
        .collect();
    present.sort();
    let mut tested: Vec<String> = tested.iter().map(|s| s.to_string()).collect();
    tested.sort();
    assert_eq!(
        present, tested,
        "a capture was added or renamed: give it a test"
    );
}

// ---- AMD: synthetic trees (no sysfs capture of a hybrid AMD exists) --------------------------

/// Builds a 24-CPU tree: CPUs in `fast` share a 16 MB L3 at ranking 236-221, the others an L3
/// of `slow_l3` at `slow_rank`-ish, with SMT sibling n+12 as on the HX 370.
fn amd_tree(root: &Path, slow_l3: &str, slow_rank: i64) {
    let fast = |cpu: u32| cpu % 12 < 4;
    for cpu in 0..24 {
        let dir = format!("devices/system/cpu/cpu{cpu}");
        let (l3, size, rank) = if fast(cpu) {
            ("0-3,12-15", "16384K", 236 - 5 * i64::from(cpu % 4))
        } else {
            ("4-11,16-23", slow_l3, slow_rank - 5 * i64::from(cpu % 4))
        };
        put(root, &format!("{dir}/cache/index3/level"), "3");
        put(root, &format!("{dir}/cache/index3/shared_cpu_list"), l3);
        put(root, &format!("{dir}/cache/index3/size"), size);
        put(
            root,
            &format!("{dir}/topology/core_id"),
            &(cpu % 12).to_string(),
        );
        let policy = format!("devices/system/cpu/cpufreq/policy{cpu}");
        put(root, &format!("{policy}/related_cpus"), &cpu.to_string());
        put(root, &format!("{policy}/cpuinfo_max_freq"), "5157000");
        put(
            root,
            &format!("{policy}/amd_pstate_prefcore_ranking"),
            &rank.to_string(),
        );
        put(root, &format!("{policy}/amd_pstate_highest_perf"), "196");
    }
}

#[test]
fn amd_zen5_and_zen5c_split_by_ranking_and_l3() {
    let root = tempfile::tempdir().expect("tempdir");
    amd_tree(root.path(), "8192K", 150);
    check(
        root.path(),
        &[
            ("P", "0-3,12-15", "amd-pstate+l3"),
            ("E", "4-11,16-23", "amd-pstate+l3"),
        ],
    );
}

#[test]
fn amd_identical_ccds_ranked_apart_stay_one_class() {
    // Like a 9950X: two CCDs with the same L3 size whose preferred-core rankings differ by more
    // than 10 %. The ranking alone does not make them different kinds of core.
    let root = tempfile::tempdir().expect("tempdir");
    amd_tree(root.path(), "16384K", 190);
    check(root.path(), &[("P", "0-23", "uniform")]);
}

// ---- errors ---------------------------------------------------------------------------------

#[test]
fn a_malformed_file_is_an_error_naming_it() {
    let root = tempfile::tempdir().expect("tempdir");
    put(root.path(), "devices/system/cpu/cpu0/topology/core_id", "0");
    put(root.path(), "devices/system/cpu/cpu0/cpu_capacity", "fast");
    let err = detect(root.path()).expect_err("garbage capacity");
    assert!(matches!(err, TopologyError::Parse { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("cpu0/cpu_capacity: expected an integer, found \"fast\""),
        "{message}"
    );
}

#[test]
fn a_root_without_cpus_is_an_error() {
    let root = tempfile::tempdir().expect("tempdir");
    let err = detect(root.path()).expect_err("empty root");
    assert!(matches!(err, TopologyError::NoCpuDir { .. }), "{err:?}");
    assert!(
        err.to_string().contains("no devices/system/cpu here"),
        "{err}"
    );
}

#[test]
fn missing_optional_files_are_not_errors() {
    // Two CPUs with nothing but their directories: detected, one class, every fact absent.
    let root = tempfile::tempdir().expect("tempdir");
    for cpu in 0..2 {
        fs::create_dir_all(root.path().join(format!("sys/devices/system/cpu/cpu{cpu}")))
            .expect("mkdir");
    }
    let cpus = detect(root.path()).expect("bare tree");
    assert_eq!(
        classes_of(&cpus),
        [("P".into(), "0-1".into(), "uniform".into())]
    );
    assert_eq!(cpus[0].max_khz, None);
    assert_eq!(cpus[0].core_id, None);
}

#[test]
fn offline_cpus_are_set_aside() {
    let Some(capture) = Capture::unpack("intel-alderlake-i7-1260P-4p8e-pepc.tar.xz") else {
        return;
    };
    let root = capture.path("intel-alderlake-i7-1260P-4p8e-pepc");
    put(&root, "sys/devices/system/cpu/cpu15/online", "0");
    check(
        &root,
        &[
            ("P", "0-7", "pmu:cpu_core"),
            ("E", "8-14", "pmu:cpu_atom"),
            ("offline", "15", "offline"),
        ],
    );
}

#[test]
fn a_cpu_in_no_pmu_list_is_unknown_not_guessed() {
    let Some(capture) = Capture::unpack("intel-alderlake-i7-1260P-4p8e-pepc.tar.xz") else {
        return;
    };
    let root = capture.path("intel-alderlake-i7-1260P-4p8e-pepc");
    put(&root, "sys/devices/cpu_atom/cpus", "8-14");
    check(
        &root,
        &[
            ("P", "0-7", "pmu:cpu_core"),
            ("E", "8-14", "pmu:cpu_atom"),
            ("unknown", "15", "pmu:unlisted"),
        ],
    );
}

// ---- declared classes -----------------------------------------------------------------------

#[test]
fn declared_classes_override_the_live_machine() {
    let mut cpus = detect(Path::new("/sys")).expect("live /sys");
    assert!(cpus.len() >= 2, "this test needs two CPUs");
    let declared = [("P".to_owned(), vec![0]), ("E".to_owned(), vec![1])];
    apply_declared(&mut cpus, &declared).expect("CPUs 0 and 1 exist");
    assert_eq!(
        (cpus[0].class.as_str(), cpus[0].class_source.as_str()),
        ("P", "declared")
    );
    assert_eq!(
        (cpus[1].class.as_str(), cpus[1].class_source.as_str()),
        ("E", "declared")
    );
}

#[test]
fn declared_classes_are_ordered_as_declared_and_before_detected_ones() {
    // Meteor Lake's detected order is P, E, LPE; declaring its LP E-cores `slow` and its
    // E-cores `fast`, in that order, puts them first as written, then the undeclared P.
    let Some(capture) = Capture::unpack("intel-meteorlake-u7-164U-2p8e2lpe-pepc.tar.xz") else {
        return;
    };
    let mut cpus = detect(&capture.path("intel-meteorlake-u7-164U-2p8e2lpe-pepc")).expect("detect");
    let declared = [
        ("slow".to_owned(), vec![12, 13]),
        ("fast".to_owned(), (4..12).collect()),
        ("absent".to_owned(), vec![]),
    ];
    apply_declared(&mut cpus, &declared).expect("the CPUs exist");
    assert_eq!(class_order(&cpus, &declared), ["slow", "fast", "P"]);
}

#[test]
fn declaring_a_cpu_the_machine_lacks_is_an_error() {
    let mut cpus = detect(Path::new("/sys")).expect("live /sys");
    let before = cpus.clone();
    let declared = [("P".to_owned(), vec![0]), ("LPE".to_owned(), vec![4096])];
    let err = apply_declared(&mut cpus, &declared).expect_err("no CPU 4096");
    assert!(
        matches!(err, TopologyError::UnknownCpu { cpu: 4096, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("\"LPE\" names CPU 4096"), "{err}");
    assert_eq!(cpus, before, "nothing changes on error");
}

#[test]
fn declaring_a_cpu_twice_is_an_error() {
    let mut cpus = detect(Path::new("/sys")).expect("live /sys");
    let declared = [("P".to_owned(), vec![0]), ("E".to_owned(), vec![0])];
    let err = apply_declared(&mut cpus, &declared).expect_err("CPU 0 twice");
    assert_eq!(
        err.to_string(),
        "CPU 0 is declared both \"P\" and \"E\" (hint: give each CPU one class)"
    );
}

// ---- the live machine -----------------------------------------------------------------------

#[test]
fn the_live_machine_is_detected() {
    let cpus = detect(Path::new("/sys")).expect("live /sys");
    let online = fs::read_to_string("/sys/devices/system/cpu/online").expect("online");
    let online = parse_cpu_list(&online).expect("kernel CPU list");
    for cpu in &online {
        let info = cpus
            .iter()
            .find(|c| c.cpu == *cpu)
            .expect("every online CPU listed");
        assert!(
            !info.class.is_empty() && info.class != "offline",
            "{info:?}"
        );
    }
    let table = render_table(&cpus);
    assert_eq!(
        table.lines().count(),
        cpus.len() + 3 + classes_of(&cpus).len(),
        "{table}"
    );
}

// ---- CPU lists and the table ----------------------------------------------------------------

#[test]
fn cpu_lists_parse() {
    let ok = |s: &str| parse_cpu_list(s).expect(s);
    assert_eq!(ok("0,2-3"), [0, 2, 3]);
    assert_eq!(ok("0-3,12-15\n"), [0, 1, 2, 3, 12, 13, 14, 15]);
    assert_eq!(ok(" 7 "), [7]);
    assert_eq!(ok("3,1,1-2"), [1, 2, 3]);
    assert_eq!(ok(""), Vec::<u32>::new());
    assert_eq!(ok("\n"), Vec::<u32>::new());
}

#[test]
fn bad_cpu_lists_say_what_is_wrong() {
    let err = |s: &str| parse_cpu_list(s).expect_err(s).to_string();
    assert_eq!(
        err("3-1"),
        "CPU list \"3-1\": range \"3-1\" runs backwards (hint: use the kernel's format, e.g. \"0,2-3\")"
    );
    assert!(err("0,x").contains("\"x\" is not a CPU number"));
    assert!(err("0,,1").contains("\"\" is not a CPU number"));
    assert!(err("0-4000000000").contains("above the largest possible"));
    assert!(err("-1").contains("is not a CPU number"));
}

#[test]
fn cpu_lists_format() {
    assert_eq!(format_cpu_list(&[]), "");
    assert_eq!(format_cpu_list(&[5]), "5");
    assert_eq!(format_cpu_list(&[0, 1]), "0-1");
    assert_eq!(
        format_cpu_list(&[15, 0, 1, 2, 3, 12, 13, 14, 3]),
        "0-3,12-15"
    );
    assert_eq!(format_cpu_list(&[0, 2, 4]), "0,2,4");
    assert_eq!(
        format_cpu_list(&[u32::MAX - 1, u32::MAX]),
        "4294967294-4294967295"
    );
}

#[test]
fn cpu_lists_round_trip() {
    for list in ["", "0", "0-1", "0,2-3", "0-4,10-14", "1,3,5-9,11"] {
        assert_eq!(format_cpu_list(&parse_cpu_list(list).expect(list)), list);
    }
}

#[test]
fn the_table_lists_cpus_then_classes_fastest_first() {
    let Some(capture) = Capture::unpack("intel-lunarlake-u5-226V-4p4lpe-pepc.tar.xz") else {
        return;
    };
    let cpus = detect(&capture.path("intel-lunarlake-u5-226V-4p4lpe-pepc")).expect("detect");
    let expected = "\
CPU  CLASS  SOURCE        CORE  PKG  CAPACITY  MAX_MHZ  BASE_MHZ
  0  P      pmu:cpu_core     -    -         -     4500      2100
  1  P      pmu:cpu_core     -    -         -     4500      2100
  2  P      pmu:cpu_core     -    -         -     4500      2100
  3  P      pmu:cpu_core     -    -         -     4500      2100
  4  LPE    l3               -    -         -     3500      2100
  5  LPE    l3               -    -         -     3500      2100
  6  LPE    l3               -    -         -     3500      2100
  7  LPE    l3               -    -         -     3500      2100

CLASS  COUNT  CPUS  MAX_MHZ
P          4  0-3      4500
LPE        4  4-7      3500
";
    assert_eq!(render_table(&cpus), expected);
}
