use arrow_array::{Array, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch};
use schedlab_parse::ParserKind;
use schedlab_parse::turbostat::{TurbostatConfig, concat_turbostat, normalise_column, parse_with};

use crate::util::{START_NS, all_tested, ctx, parse, quality, real_dir};

const DIR: &str = "turbostat";

fn batch(file: &str) -> RecordBatch {
    let parsed = parse(ParserKind::Turbostat, DIR, file);
    assert_eq!(parsed.turbostat.len(), 1);
    parsed.turbostat[0].clone()
}

fn ints64(batch: &RecordBatch, name: &str) -> Vec<Option<i64>> {
    let column = batch
        .column_by_name(name)
        .unwrap()
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    column.iter().collect()
}

/// The row of `sample` for `cpu` (None: the summary row).
fn row(batch: &RecordBatch, sample: i64, cpu: Option<i32>) -> usize {
    let samples = ints64(batch, "sample");
    let cpus = batch
        .column_by_name("cpu")
        .unwrap()
        .as_any()
        .downcast_ref::<Int32Array>()
        .unwrap();
    let summary = batch
        .column_by_name("summary")
        .unwrap()
        .as_any()
        .downcast_ref::<BooleanArray>()
        .unwrap();
    (0..batch.num_rows())
        .find(|&i| {
            samples[i] == Some(sample)
                && if cpu.is_none() {
                    summary.value(i)
                } else {
                    cpus.is_valid(i) && Some(cpus.value(i)) == cpu
                }
        })
        .unwrap_or_else(|| panic!("no row for sample {sample} cpu {cpu:?}"))
}

fn value(batch: &RecordBatch, sample: i64, cpu: Option<i32>, name: &str) -> Option<f64> {
    let i = row(batch, sample, cpu);
    let column = batch
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"));
    let column = column.as_any().downcast_ref::<Float64Array>().unwrap();
    column.is_valid(i).then(|| column.value(i))
}

fn samples(batch: &RecordBatch) -> i64 {
    ints64(batch, "sample")
        .iter()
        .flatten()
        .max()
        .map_or(0, |s| s + 1)
}

/// (file, rows, samples, summary Busy% of the first sample, per-CPU checks (cpu, column, value)).
type Case = (
    &'static str,
    usize,
    i64,
    f64,
    &'static [(i32, &'static str, Option<f64>)],
);

const CASES: &[Case] = &[
    // Fork mode on a hybrid Alder Lake: P-core CPU 0 has core columns, its sibling CPU 1 stops
    // after CPU%c1, E-core CPU 8 has its own core; package columns only on CPU 0.
    (
        "alderlake-p-hybrid-oneshot-sleep1-v2024.12.03.txt",
        17,
        1,
        13.68,
        &[
            (0, "c6_pct", Some(4.57)),
            (0, "core_tmp_c", Some(24.0)),
            (0, "pkg_watt", Some(11.33)),
            (1, "c1_pct", Some(16.85)),
            (1, "c6_pct", None),
            (8, "busy_pct", Some(38.27)),
            (8, "c6_pct", Some(34.60)),
            (8, "pkg_watt", None),
        ],
    ),
    (
        "alderlake-p-hybrid-summary-S-c0-v2024.12.03.txt",
        1,
        1,
        38.75,
        &[],
    ),
    (
        "alderlake-p-hybrid-tod-interval5s-debughdr-v2024.12.03.txt",
        391,
        23,
        0.14,
        &[
            (0, "time_of_day_s", Some(1737461761.717459)),
            (0, "c7_pct", Some(97.79)),
        ],
    ),
    (
        "amd-epyc-7h12-2s-usec-tod-topology-pkgwatt.txt",
        129,
        1,
        0.02,
        &[
            (0, "usec", Some(7.0)),
            (0, "pkg_watt", Some(89.68)),
            (1, "core_watt", Some(0.16)),
            (1, "pkg_watt", None),
        ],
    ),
    (
        "amd-epyc-9374f-2s-usec-tod-loaded.txt",
        65,
        1,
        80.63,
        &[(0, "busy_pct", Some(81.84)), (0, "pkg_watt", Some(228.88))],
    ),
    ("amd-genoa-summary-S-c0-v2024.12.03.txt", 1, 1, 41.87, &[]),
    (
        "amd-genoa-tod-interval5s-v2024.12.03.txt",
        2967,
        23,
        0.21,
        &[
            (0, "c2_req_pct", Some(98.74)),
            (0, "pkg_watt", Some(100.44)),
        ],
    ),
    (
        "amd-milan-tod-interval5s-discovery-v2024.12.03.txt",
        129,
        1,
        0.08,
        &[(0, "c2_req_pct", Some(99.84))],
    ),
    // Tabs expanded to spaces; 2 blocks with a repeated header; CPU 8 is CPU 0's sibling.
    (
        "amd-ryzen7-9700x-usec-cstates-space-separated.txt",
        34,
        2,
        1.20,
        &[
            (0, "busy_pct", Some(1.09)),
            (8, "c3_req_pct", Some(93.47)),
            (8, "core_watt", None),
        ],
    ),
    (
        "arrowlake-hybrid-show-frequency-v2025.02.02-indented2-tabs-expanded-lkml.txt",
        25,
        1,
        0.20,
        &[],
    ),
    (
        "intel-broadwell-up-tod-interval5s-v2024.12.03.txt",
        207,
        23,
        0.79,
        &[(0, "c6_pct", Some(98.51)), (4, "c6_pct", None)],
    ),
    (
        "intel-knl-xeonphi-tod-interval5s-discovery-v2024.12.03.txt",
        273,
        1,
        0.00,
        &[(0, "ipc", Some(407.13))],
    ),
    (
        "intel-sierraforest-tod-interval5s-discovery-v2024.12.03.txt",
        225,
        1,
        0.21,
        &[(0, "mod_c6_pct", Some(91.63))],
    ),
    (
        "intel-snowridge-tod-interval5s-v2024.12.03.txt",
        600,
        24,
        0.77,
        &[(0, "c1e_req_pct", Some(99.75))],
    ),
    (
        "intel-xeon-2s-default-uncmhz.txt",
        49,
        1,
        0.04,
        &[(0, "unc_mhz", Some(2800.0)), (24, "c6_pct", None)],
    ),
    (
        "intel-xeon-6126-2s-usec-tod-apic.txt",
        25,
        1,
        0.05,
        &[(0, "usec", Some(372.0)), (0, "unc_mhz", Some(2400.0))],
    ),
    (
        "legacy-2015-space-aligned-pctbusy-default-mozilla-doc.txt",
        9,
        1,
        21.63,
        &[(0, "c7_pct", Some(62.96)), (4, "c3_pct", None)],
    ),
    (
        "legacy-2015-space-aligned-pctbusy-summary-S-mozilla-doc.txt",
        1,
        1,
        97.83,
        &[],
    ),
    (
        "lkp-xeon-2s-96cpu-padded-tab-fields-oneshot.txt",
        97,
        1,
        3.64,
        &[(0, "irq", Some(225543.0)), (48, "irq", Some(219188.0))],
    ),
    (
        "raptorlake-hybrid-oneshot-sleep1-v2024.12.03.txt",
        17,
        1,
        11.78,
        &[(0, "c7_pct", Some(58.90))],
    ),
    (
        "raptorlake-hybrid-tod-interval5s-discovery-v2024.12.03.txt",
        17,
        1,
        0.18,
        &[(0, "c10_req_pct", Some(98.39))],
    ),
    (
        "skylake-sp-6130-2s-64cpu-fork-J-joules-pkg-ram-lkml.txt",
        65,
        1,
        2.95,
        &[
            (0, "pkg_j", Some(2266.04)),
            (0, "ram_j", Some(1346.09)),
            (32, "c6_pct", None),
        ],
    ),
    (
        "t14-intel-4c8t-quiet-show18-interval10-n6-8x-yes-loaded.txt",
        54,
        6,
        99.77,
        &[(0, "pkg_watt", Some(30.24))],
    ),
    (
        "t14-intel-4c8t-quiet-show22-interval10-n6-idle.txt",
        54,
        6,
        0.11,
        &[(0, "c7_pct", Some(100.42)), (0, "pkg_pc10_pct", Some(0.0))],
    ),
];

#[test]
fn every_real_turbostat_file() {
    schedlab_testkit::shared_fixtures_or_skip!();
    for (file, rows, sample_count, summary_busy, checks) in CASES {
        let batch = batch(file);
        assert_eq!(batch.num_rows(), *rows, "{file}");
        assert_eq!(samples(&batch), *sample_count, "{file}");
        assert_eq!(
            value(&batch, 0, None, "busy_pct"),
            Some(*summary_busy),
            "{file}"
        );
        for (cpu, column, expected) in *checks {
            assert_eq!(
                value(&batch, 0, Some(*cpu), column),
                *expected,
                "{file}: CPU {cpu} {column}"
            );
        }
    }
    all_tested(DIR, &[], include_str!("turbostat.rs"));
}

#[test]
fn summary_rows_have_no_cpu_and_core_columns_are_ints() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let batch = batch("alderlake-p-hybrid-oneshot-sleep1-v2024.12.03.txt");
    let i = row(&batch, 0, Some(8));
    let core = batch
        .column_by_name("core")
        .unwrap()
        .as_any()
        .downcast_ref::<Int32Array>()
        .unwrap();
    assert_eq!(core.value(i), 16);
    let summary = row(&batch, 0, None);
    let cpu = batch.column_by_name("cpu").unwrap();
    assert!(cpu.is_null(summary));
}

#[test]
fn fork_mode_time_is_start_plus_the_sec_line() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let batch = batch("alderlake-p-hybrid-oneshot-sleep1-v2024.12.03.txt");
    assert!(
        ints64(&batch, "time_ns")
            .iter()
            .all(|t| *t == Some(START_NS + 1_003_369_000))
    );
}

#[test]
fn interval_mode_time_follows_the_measurement_interval_banner() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let batch = batch("alderlake-p-hybrid-tod-interval5s-debughdr-v2024.12.03.txt");
    let i = row(&batch, 22, Some(0));
    assert_eq!(
        ints64(&batch, "time_ns")[i],
        Some(START_NS + 23 * 5_000_000_000)
    );
}

#[test]
fn quiet_output_has_no_time_unless_the_interval_is_given() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let file = "t14-intel-4c8t-quiet-show22-interval10-n6-idle.txt";
    assert!(ints64(&batch(file), "time_ns").iter().all(Option::is_none));
    let text = std::fs::read_to_string(real_dir(DIR).join(file)).unwrap();
    let config = TurbostatConfig {
        interval_ns: Some(10_000_000_000),
    };
    let parsed = parse_with(&text, file, &ctx(), &config).unwrap();
    let batch = &parsed.turbostat[0];
    let i = row(batch, 5, Some(7));
    assert_eq!(ints64(batch, "time_ns")[i], Some(START_NS + 60_000_000_000));
}

#[test]
fn header_without_data_is_a_warning_not_an_error() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = parse(ParserKind::Turbostat, DIR, "lkp-header-only-no-data.txt");
    assert_eq!(parsed.turbostat[0].num_rows(), 0);
    assert_eq!(
        quality(&parsed),
        [
            "warning: lkp-header-only-no-data.txt:1: turbostat printed a header but no data rows (interrupted run?)"
        ]
    );
}

#[test]
fn text_without_a_header_is_an_error_at_its_first_line() {
    let err = schedlab_parse::parse(ParserKind::Turbostat, "x.txt", b"\nhello world\n", &ctx())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "x.txt:2: no turbostat header line (hint: expected columns such as `CPU Avg_MHz Busy% Bzy_MHz`)"
    );
}

#[test]
fn unknown_lines_inside_the_table_become_one_warning() {
    let text = "CPU\tBusy%\n-\t5.00\n0\t5.00\nthis is not a row\n";
    let parsed =
        schedlab_parse::parse(ParserKind::Turbostat, "t.txt", text.as_bytes(), &ctx()).unwrap();
    assert_eq!(parsed.turbostat[0].num_rows(), 2);
    assert_eq!(
        quality(&parsed),
        [
            "warning: t.txt:4: skipped 1 line(s) of a form the turbostat parser does not know, first: \"this is not a row\""
        ]
    );
}

#[test]
fn column_names_are_normalised() {
    let names = [
        ("Busy%", "busy_pct"),
        ("%Busy", "busy_pct"),
        ("Bzy_MHz", "bzy_mhz"),
        ("Avg_MHz", "avg_mhz"),
        ("CPU%c6", "c6_pct"),
        ("CPU%c1", "c1_pct"),
        ("CoreTmp", "core_tmp_c"),
        ("PkgWatt", "pkg_watt"),
        ("Pkg%pc2", "pkg_pc2_pct"),
        ("Pk%pc10", "pkg_pc10_pct"),
        ("C6%", "c6_req_pct"),
        ("C1E", "c1e_count"),
        ("POLL%", "poll_req_pct"),
        ("Pkg_J", "pkg_j"),
        ("UMHz0.0", "umhz0_0"),
        ("SAMMHz", "sam_mhz"),
    ];
    for (raw, normal) in names {
        assert_eq!(normalise_column(raw), normal, "{raw}");
    }
}

#[test]
fn batches_with_different_columns_concatenate_with_nulls() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let amd = batch("amd-genoa-summary-S-c0-v2024.12.03.txt");
    let intel = batch("legacy-2015-space-aligned-pctbusy-summary-S-mozilla-doc.txt");
    let both = concat_turbostat(&[amd, intel]);
    assert_eq!(both.num_rows(), 2);
    let c2 = both
        .column_by_name("c2_req_pct")
        .unwrap()
        .as_any()
        .downcast_ref::<Float64Array>()
        .unwrap();
    assert_eq!((c2.value(0), c2.is_null(1)), (0.0, true));
    let gfx = both
        .column_by_name("gfx_watt")
        .unwrap()
        .as_any()
        .downcast_ref::<Float64Array>()
        .unwrap();
    assert_eq!((gfx.is_null(0), gfx.value(1)), (true, 0.46));
    assert_eq!(concat_turbostat(&[]).num_columns(), 8);
}

#[test]
fn write_to_puts_all_turbostat_files_in_one_parquet_table() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let mut parsed = parse(
        ParserKind::Turbostat,
        DIR,
        "amd-genoa-summary-S-c0-v2024.12.03.txt",
    );
    parsed.extend(parse(
        ParserKind::Turbostat,
        DIR,
        "t14-intel-4c8t-quiet-show22-interval10-n6-idle.txt",
    ));
    let dir = tempfile::tempdir().unwrap();
    let written = parsed
        .write_to(dir.path(), &[ParserKind::Turbostat])
        .unwrap();
    let names: Vec<String> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["turbostat.parquet", "quality.parquet"]);
    let batches = schedlab_tables::read_batches(&dir.path().join("turbostat.parquet")).unwrap();
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    assert_eq!(rows, 1 + 54);
    let schema = batches[0].schema();
    assert!(
        schema.field_with_name("c2_req_pct").is_ok()
            && schema.field_with_name("pkg_pc10_pct").is_ok()
    );
}

#[test]
fn show_sets_without_a_cpu_column_are_told_apart_by_row_position() {
    schedlab_testkit::shared_fixtures_or_skip!();
    // `--show frequency` on Arrow Lake: a summary row, then 24 CPU rows; only the first two
    // carry the package columns (GFXMHz … UncMHz).
    let batch =
        batch("arrowlake-hybrid-show-frequency-v2025.02.02-indented2-tabs-expanded-lkml.txt");
    let rows = batch
        .column_by_name("row")
        .unwrap()
        .as_any()
        .downcast_ref::<Int32Array>()
        .unwrap();
    assert_eq!(rows.values().to_vec(), (0..25).collect::<Vec<i32>>());
    let summary = batch
        .column_by_name("summary")
        .unwrap()
        .as_any()
        .downcast_ref::<BooleanArray>()
        .unwrap();
    assert_eq!(summary.true_count(), 1);
    assert!(summary.value(0));
    let unc = batch
        .column_by_name("unc_mhz")
        .unwrap()
        .as_any()
        .downcast_ref::<Float64Array>()
        .unwrap();
    assert_eq!(
        (unc.value(0), unc.value(1), unc.is_null(2)),
        (1800.0, 1800.0, true)
    );
    let avg = batch
        .column_by_name("avg_mhz")
        .unwrap()
        .as_any()
        .downcast_ref::<Float64Array>()
        .unwrap();
    assert_eq!((avg.value(15), avg.value(24)), (14.0, 3.0));
    assert!(batch.column_by_name("cpu").unwrap().null_count() == 25);
}
