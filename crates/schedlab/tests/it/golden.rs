//! The figures, value for value: real recordings imported with a pipeline that asks for every
//! aggregate step, and every aggregate table written as sorted text and compared with the
//! golden files in `tests/golden/` (`SCHEDLAB_BLESS=1` rewrites them after a deliberate change
//! of a figure; the README there says how they were made).
//!
//! `SCHEDLAB_GOLDEN_TRACE=FILE SCHEDLAB_GOLDEN_DIR=DIR` runs the same on another trace (the
//! bench trace, which is not committed) against golden files kept in `DIR`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::util::Sandbox;
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, UInt32Type, UInt64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;

/// The pipelines: every aggregate step over the whole run, and the steps that take a window over
/// the trace window; over the workloads any of the recordings has, with a declared topology
/// (the recordings come from this 2-CPU machine) so that the class logic has two classes.
const PIPELINES: [(&str, &str); 2] = [
    (
        "whole",
        "aggregate:
  - residency: {}
  - migrations: {}
  - sched_delay: {}
  - cpu_time: {}
  - throughput: {}
  - cpu_activity: {}
  - cpu_share: { workload: stress }
  - power_step: {}
  - cpu_timeline: {}
  - placement_cost: {}
  - wakeup_placement: {}
",
    ),
    (
        "trace_window",
        "aggregate:
  - residency: { window: trace }
  - migrations: { window: trace }
  - sched_delay: { window: trace }
  - cpu_time: { window: trace }
",
    ),
];

const IMPORT: &str = "\
topology: { P: [0], E: [1] }
import:
  workloads:
    stress: \"comm:stress-ng*\"
    shell: \"comm:sh\"
";

/// The committed recordings made on this machine (see the perf crate's fixtures README).
const RECORDINGS: [&str; 4] = ["bursty", "contended", "allsched", "lossy"];

#[test]
fn every_aggregate_of_the_recordings_matches_its_golden_table() {
    let bench = std::env::var_os("SCHEDLAB_GOLDEN_TRACE").map(PathBuf::from);
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (recordings, golden): (Vec<(String, PathBuf)>, PathBuf) = match bench {
        Some(trace) => {
            let dir = std::env::var_os("SCHEDLAB_GOLDEN_DIR")
                .expect("SCHEDLAB_GOLDEN_DIR names where the trace's golden tables are kept");
            (vec![("bench".to_owned(), trace)], PathBuf::from(dir))
        }
        None => (
            (RECORDINGS.iter())
                .map(|name| {
                    let path =
                        manifest_dir.join(format!("../schedlab-perf/tests/fixtures/{name}.data"));
                    ((*name).to_owned(), path)
                })
                .collect(),
            manifest_dir.join("tests/golden"),
        ),
    };

    let sandbox = Sandbox::new();
    let bless = std::env::var_os("SCHEDLAB_BLESS").is_some_and(|v| v == "1");
    let mut differ = Vec::new();
    for (name, steps) in PIPELINES {
        let pipeline = sandbox.write(
            &format!("{name}.yaml"),
            &format!("name: {name}\n{IMPORT}{steps}"),
        );
        let pipeline = pipeline.to_str().unwrap();
        for (label, path) in &recordings {
            let import =
                sandbox.schedlab(&["import", pipeline, path.to_str().unwrap(), "--label", label]);
            assert_eq!(import.code, 0, "{}", import.stderr);
        }
        let analyze = sandbox.schedlab(&["analyze", pipeline]);
        assert_eq!(analyze.code, 0, "{}", analyze.stderr);
        let tables = aggregate_tables(&sandbox.data(name, "aggregates"));
        assert!(
            tables.contains_key("cpu_time"),
            "the steps wrote their tables: {:?}",
            tables.keys().collect::<Vec<_>>()
        );
        let golden = golden.join(name);
        if bless {
            bless_into(&golden, &tables);
        } else {
            differ.extend(compare(&golden, &tables));
        }
    }
    assert!(
        differ.is_empty(),
        "aggregate tables differ from {} (SCHEDLAB_BLESS=1 after a deliberate change):\n{}",
        golden.display(),
        differ.join("\n")
    );
}

/// Replaces the golden files in `golden` with `tables`.
fn bless_into(golden: &Path, tables: &BTreeMap<String, String>) {
    std::fs::create_dir_all(golden).unwrap();
    for entry in std::fs::read_dir(golden).unwrap().flatten() {
        if entry.path().extension().is_some_and(|e| e == "csv") {
            std::fs::remove_file(entry.path()).unwrap();
        }
    }
    for (table, text) in tables {
        std::fs::write(golden.join(format!("{table}.csv")), text).unwrap();
    }
    eprintln!("blessed {} tables into {}", tables.len(), golden.display());
}

/// How `tables` differ from the golden files in `golden`: a line per table that differs, with
/// its first differing row.
fn compare(golden: &Path, tables: &BTreeMap<String, String>) -> Vec<String> {
    let mut golden_tables: BTreeMap<String, String> = BTreeMap::new();
    for entry in std::fs::read_dir(golden).expect("golden files (SCHEDLAB_BLESS=1 writes them)") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "csv") {
            let table = path.file_stem().unwrap().to_string_lossy().into_owned();
            golden_tables.insert(table, std::fs::read_to_string(&path).unwrap());
        }
    }
    assert_eq!(
        tables.keys().collect::<Vec<_>>(),
        golden_tables.keys().collect::<Vec<_>>(),
        "the same aggregate tables as the golden ones in {}",
        golden.display()
    );
    let mut differ = Vec::new();
    for (table, text) in tables {
        let expected = &golden_tables[table];
        if text != expected {
            let first = (text.lines().zip(expected.lines()))
                .find(|(got, want)| got != want)
                .map(|(got, want)| format!("\n  now:    {got}\n  golden: {want}"))
                .unwrap_or_else(|| {
                    let (now, was) = (text.lines().count(), expected.lines().count());
                    format!(" ({now} lines now, {was} golden)")
                });
            differ.push(format!("{}/{table}{first}", golden.display()));
        }
    }
    differ
}

/// Each aggregate table under `root` (`<table>/run_id=<run>/*.parquet`) as text: a header of its
/// columns, then its rows of every run, sorted.
fn aggregate_tables(root: &Path) -> BTreeMap<String, String> {
    let mut tables = BTreeMap::new();
    for table in std::fs::read_dir(root)
        .expect("aggregates written")
        .flatten()
    {
        let name = table.file_name().to_string_lossy().into_owned();
        let mut header = None;
        let mut rows = Vec::new();
        let mut files: Vec<PathBuf> = Vec::new();
        for partition in std::fs::read_dir(table.path()).unwrap().flatten() {
            for file in std::fs::read_dir(partition.path()).unwrap().flatten() {
                if file.path().extension().is_some_and(|e| e == "parquet") {
                    files.push(file.path());
                }
            }
        }
        for file in files {
            for batch in schedlab_tables::read_batches(&file).expect("readable aggregate") {
                header.get_or_insert_with(|| columns(&batch));
                rows.extend(lines(&batch));
            }
        }
        rows.sort();
        let mut text = header.unwrap_or_default();
        text.push('\n');
        for row in rows {
            text.push_str(&row);
            text.push('\n');
        }
        tables.insert(name, text);
    }
    tables
}

fn columns(batch: &RecordBatch) -> String {
    let names: Vec<&str> = (batch.schema_ref().fields().iter())
        .map(|f| f.name().as_str())
        .collect();
    names.join(",")
}

fn lines(batch: &RecordBatch) -> Vec<String> {
    (0..batch.num_rows())
        .map(|row| {
            let cells: Vec<String> = (batch.columns().iter())
                .map(|column| cell(column.as_ref(), row))
                .collect();
            cells.join(",")
        })
        .collect()
}

/// One value as text: empty for null, floats in Rust's shortest form that reads back to the
/// same bits, text quoted.
fn cell(column: &dyn Array, row: usize) -> String {
    if column.is_null(row) {
        return String::new();
    }
    match column.data_type() {
        DataType::Utf8 => format!("{:?}", column.as_string::<i32>().value(row)),
        DataType::LargeUtf8 => format!("{:?}", column.as_string::<i64>().value(row)),
        DataType::Int32 => column.as_primitive::<Int32Type>().value(row).to_string(),
        DataType::Int64 => column.as_primitive::<Int64Type>().value(row).to_string(),
        DataType::UInt32 => column.as_primitive::<UInt32Type>().value(row).to_string(),
        DataType::UInt64 => column.as_primitive::<UInt64Type>().value(row).to_string(),
        DataType::Float64 => {
            let value = column
                .as_primitive::<arrow_array::types::Float64Type>()
                .value(row);
            format!("{value:?}")
        }
        DataType::Boolean => column.as_boolean().value(row).to_string(),
        DataType::List(_) => {
            let items = column.as_list::<i32>().value(row);
            let mut text = String::from("[");
            for i in 0..items.len() {
                if i > 0 {
                    text.push(';');
                }
                let _ = write!(text, "{}", cell(items.as_ref(), i));
            }
            text.push(']');
            text
        }
        other => panic!("no text form for an aggregate column of type {other}"),
    }
}
