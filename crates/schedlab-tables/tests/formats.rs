//! The run formats of the contract read what earlier schedlab versions wrote, and write it back
//! byte for byte: a moved or edited field would show up here before it breaks old data
//! directories (fixtures/README.md says how the files were made).

use std::path::Path;

use schedlab_tables::manifest::{Manifest, RunStatus};
use schedlab_tables::periodic_report::Report;

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

#[test]
fn a_manifest_written_by_the_collector_reads_and_writes_back_to_the_same_bytes() {
    let bytes = std::fs::read(fixture("manifest.json")).unwrap();
    let manifest: Manifest = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(manifest.status, RunStatus::Completed);
    assert_eq!(
        manifest.processes[0].report.as_deref(),
        Some("raw/tick.0.periodic.json")
    );
    assert_eq!(manifest.monitors[0].files, ["raw/where.placement.parquet"]);
    // Written before schedlab recorded the scheduler configuration: none, and no settings.
    assert_eq!(manifest.host.sched_config, None);
    assert_eq!(manifest.host.sched_settings(), None);
    assert_eq!(
        String::from_utf8(serde_json::to_vec_pretty(&manifest).unwrap()).unwrap(),
        String::from_utf8(bytes).unwrap()
    );
}

#[test]
fn a_periodic_report_reads_and_writes_back_to_the_same_bytes() {
    let path = fixture("periodic.json");
    let report = Report::read(&path).unwrap();
    assert_eq!((report.period_ns, report.threads.len()), (50_000_000, 1));
    let out = tempfile::tempdir().unwrap();
    let written = out.path().join("periodic.json");
    report.write(&written).unwrap();
    assert_eq!(
        std::fs::read_to_string(written).unwrap(),
        std::fs::read_to_string(path).unwrap()
    );
}

#[test]
fn a_file_that_is_not_a_periodic_report_is_an_error_naming_it() {
    let path = fixture("manifest.json");
    let err = Report::read(&path).unwrap_err();
    assert!(
        err.starts_with(&format!("{}: not a periodic report:", path.display())),
        "{err}"
    );
}
