//! The compact path (`stream_sched_compact`, batches built from the reader's own rows, text by key)
//! gives exactly the rows of the row path (`read_sched`) on every recording.

use schedlab_perf::{SchedOptions, read_sched, stream_sched_compact};
use schedlab_tables::{
    MigrationRow, SchedSliceRow, Table, TableWriter, WakeupRow, read_rows, schema_of,
};

use crate::util::fixture;

#[test]
fn compact_batches_hold_the_rows_of_the_row_path_on_every_fixture() {
    let dir = tempfile::tempdir().unwrap();
    for stem in ["bursty", "contended", "allsched", "lossy", "default-clock"] {
        let path = fixture(&format!("{stem}.data"));
        // The workload: the process of the busiest thread (so the workload column is filled).
        let plain = read_sched(&path, &SchedOptions::default()).unwrap();
        let busiest = (plain.sched_slices.iter())
            .filter(|s| s.tid > 0)
            .max_by_key(|s| s.run_ns)
            .unwrap();
        let opts = SchedOptions {
            run_id: "r9".into(),
            workloads: vec![schedlab_perf::WorkloadSelector::tree(busiest.pid, "busy")],
            ..Default::default()
        };
        let file = |t: &str| dir.path().join(format!("{stem}-{t}.parquet"));
        let mut slices = TableWriter::<SchedSliceRow>::create(&file("s")).unwrap();
        let mut migrations = TableWriter::<MigrationRow>::create(&file("m")).unwrap();
        let mut wakeups = TableWriter::<WakeupRow>::create(&file("w")).unwrap();
        let mut batches = 0;
        stream_sched_compact(&path, &opts, |b| {
            batches += 1;
            let s = b
                .sched_slices
                .table_batch(schema_of::<SchedSliceRow>())
                .unwrap();
            slices.write_table(&s).unwrap();
            let m = b
                .migrations
                .table_batch(schema_of::<MigrationRow>())
                .unwrap();
            migrations.write_table(&m).unwrap();
            let w = b.wakeups.table_batch(schema_of::<WakeupRow>()).unwrap();
            wakeups.write_table(&w).unwrap();
        })
        .unwrap();
        assert!(batches > 0);
        let expected = read_sched(&path, &opts).unwrap();
        let named = expected
            .sched_slices
            .iter()
            .filter(|s| s.workload.is_some());
        assert!(named.count() > 0, "{stem}: some rows carry the workload");
        fn back<T: Table + PartialEq + std::fmt::Debug>(w: TableWriter<T>) -> Vec<T> {
            read_rows(&w.finish().unwrap()).unwrap()
        }
        assert!(
            back(slices) == expected.sched_slices,
            "{stem}: sched_slices differ"
        );
        assert!(
            back(migrations) == expected.migrations,
            "{stem}: migrations differ"
        );
        assert!(back(wakeups) == expected.wakeups, "{stem}: wakeups differ");
    }
}
