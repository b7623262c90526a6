//! Criterion benchmark: read a real perf sched trace named by `SCHEDLAB_BENCH_TRACE`
//! (record one with `crates/schedlab-perf/bench.sh`). Without the variable it benchmarks the
//! small committed fixture, so `cargo bench` always has something to run.

use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use schedlab_perf::{SchedOptions, stream_sched};

fn parse(c: &mut Criterion) {
    let path = std::env::var_os("SCHEDLAB_BENCH_TRACE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lossy.data")
        });
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let opts = SchedOptions {
        run_id: "bench".into(),
        workloads: Vec::new(),
        ..Default::default()
    };
    let mut group = c.benchmark_group("read");
    group.sample_size(10).throughput(Throughput::Bytes(size));
    group.bench_function("stream_sched", |b| {
        b.iter(|| {
            let mut slices = 0;
            stream_sched(&path, &opts, |batch| slices += batch.sched_slices.len()).unwrap();
            slices
        })
    });
    group.finish();
}

criterion_group!(benches, parse);
criterion_main!(benches);
