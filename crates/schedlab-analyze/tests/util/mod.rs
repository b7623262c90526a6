//! Real turbostat captures (the shared fixtures' `turbostat/`, beside the repository), parsed by schedlab's own parser
//! onto a run clock that starts at 0, and read back through Parquet as the aggregate stage
//! reads them.

use schedlab_parse::ParseContext;
use schedlab_parse::turbostat::{TurbostatConfig, parse_with};
use schedlab_tables::turbostat::{TURBOSTAT_ENCODINGS, TurbostatSample, read_turbostat};
use schedlab_tables::{ProcessRow, write_batch};

/// `file` under the real turbostat fixtures, run `run_id`, sampled every `interval_ns`; `None`
/// once the running test is reported skipped because the shared fixtures are not there.
pub fn turbostat_fixture(
    file: &str,
    run_id: &str,
    interval_ns: i64,
) -> Option<Vec<TurbostatSample>> {
    let test = schedlab_testkit::test_name();
    let path = schedlab_testkit::shared_fixtures(&test, "turbostat")?.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let ctx = ParseContext {
        run_id: run_id.into(),
        start_ns: Some(0),
        ..ParseContext::default()
    };
    let config = TurbostatConfig {
        interval_ns: Some(interval_ns),
    };
    let parsed = parse_with(&text, "turbostat.txt", &ctx, &config).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("turbostat.parquet");
    write_batch(&path, &parsed.turbostat[0], TURBOSTAT_ENCODINGS).unwrap();
    Some(read_turbostat(dir.path()).unwrap())
}

/// A workload process of run `run_id` alive from `start_ns` to `end_ns`.
pub fn workload(run_id: &str, name: &str, start_ns: i64, end_ns: i64) -> ProcessRow {
    ProcessRow {
        run_id: run_id.into(),
        workload: name.into(),
        instance: 0,
        pid: 1,
        start_ns,
        end_ns: Some(end_ns),
        exit_code: Some(0),
        nice: 0,
        affinity: None,
        argv: vec![],
    }
}
