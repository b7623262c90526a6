//! The committed stress file, `tests/fixtures/stress.parquet`: what the engine writes for a
//! table of every encoding it has, read by pyarrow, DuckDB and polars with every value equal to
//! what was written. `SCHEDLAB_BLESS=1` rewrites the file after a deliberate change of the
//! engine (the README beside it says how it was made).

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use arrow_schema::{DataType, Field, Schema};
use schedlab_parquet::{
    ColumnEncoding, Encodings, KeyedText, NULL_KEY, ParquetWriter, TableBatch, TableColumn,
};
use serde_json::{Value, json};

/// Rows of the stress file: more than a data page holds.
const ROWS: usize = 34_000;

/// Distinct messages, one a row, before the column turns null: past a dictionary's bound, so
/// the chunk falls back to plain pages.
const MESSAGES: usize = 3_000;

/// Command names, by key: empty, not ASCII, with a quote, a tab and a newline.
const COMMS: [&str; 6] = [
    "sh",
    "",
    "ünïcødé ✓",
    "kworker/0:1",
    "a \"quoted\" name",
    "tab\tnew\nline",
];

const ENCODINGS: &Encodings = &[
    ("run_id", ColumnEncoding::DictionaryWithRange),
    ("comm", ColumnEncoding::Dictionary),
    ("message", ColumnEncoding::Dictionary),
    ("time_ns", ColumnEncoding::Delta),
    ("dur_ns", ColumnEncoding::Delta),
];

fn stress_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stress.parquet")
}

/// The stress table, as strings, and the key of each row's command name.
fn stress_table() -> (RecordBatch, Vec<u128>) {
    let item = Arc::new(Field::new("item", DataType::Utf8, true));
    let schema = Arc::new(Schema::new(vec![
        Field::new("run_id", DataType::Utf8, false),
        Field::new("comm", DataType::Utf8, true),
        Field::new("message", DataType::Utf8, true),
        Field::new("note", DataType::Utf8, true),
        Field::new("time_ns", DataType::Int64, false),
        Field::new("dur_ns", DataType::Int64, true),
        Field::new("cpu", DataType::Int32, true),
        Field::new("share", DataType::Float64, false),
        Field::new("flag", DataType::Boolean, true),
        Field::new("argv", DataType::List(item), true),
    ]));
    let keys: Vec<u128> = (0..ROWS)
        .map(|i| {
            if i % 11 == 4 {
                NULL_KEY
            } else {
                (i * 7 % COMMS.len()) as u128
            }
        })
        .collect();
    let comms = keys
        .iter()
        .map(|&k| (k != NULL_KEY).then(|| COMMS[k as usize]));
    let messages = (0..ROWS).map(|i| {
        (i < MESSAGES && i % 13 != 5)
            .then(|| format!("message {i:05}: {}", "and so on, ".repeat(7)))
    });
    let notes = (0..ROWS).map(|i| (i % 5 != 0).then(|| ["plain", "text", "ü"][i / 1_000 % 3]));
    let times = (0..ROWS as i64).map(|i| match i {
        5 => i64::MIN,
        6 => i64::MAX,
        999 => 1_000_000_000,
        _ => 1_000_000_000 + i * 1_000 + i * 7_919 % 13,
    });
    let durations = (0..ROWS as i64).map(|i| (i % 3 != 1).then_some(i * i % 61 - 20));
    let cpus = (0..ROWS as i32).map(|i| (i % 17 != 0).then_some(i % 4));
    let shares = (0..ROWS).map(|i| (i % 50) as f64 / 7.0 - 3.0);
    let flags = (0..ROWS).map(|i| (i % 19 != 0).then_some(i % 2 == 0));
    let mut argv = ListBuilder::new(StringBuilder::new());
    for i in 0..ROWS {
        if i % 23 == 0 {
            argv.append(false);
            continue;
        }
        for a in 0..i % 3 {
            argv.values().append_value(format!("--arg{a}"));
        }
        argv.append(true);
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec!["stress-r1"; ROWS])),
        Arc::new(comms.collect::<StringArray>()),
        Arc::new(messages.collect::<StringArray>()),
        Arc::new(notes.collect::<StringArray>()),
        Arc::new(times.collect::<Int64Array>()),
        Arc::new(durations.collect::<Int64Array>()),
        Arc::new(cpus.collect::<Int32Array>()),
        Arc::new(shares.collect::<Float64Array>()),
        Arc::new(flags.collect::<BooleanArray>()),
        Arc::new(argv.finish()),
    ];
    (RecordBatch::try_new(schema, columns).unwrap(), keys)
}

/// Writes the stress table to `path` as the engine does: in batches of uneven sizes, the
/// command names given by key.
fn write_stress(path: &std::path::Path) {
    let (batch, keys) = stress_table();
    let mut writer = ParquetWriter::create(path, batch.schema(), ENCODINGS).unwrap();
    let mut at = 0;
    for size in [1, 4_095, 10_000, 333].into_iter().cycle() {
        let n = size.min(ROWS - at);
        let mut columns: Vec<TableColumn> = (batch.columns().iter())
            .map(|c| TableColumn::Array(c.slice(at, n)))
            .collect();
        columns[1] = TableColumn::Text(KeyedText {
            keys: keys[at..at + n].to_vec(),
            text: Arc::new(|k| COMMS[k as usize].to_owned()),
        });
        writer
            .write_table(&TableBatch::new(&batch.schema(), n, columns).unwrap())
            .unwrap();
        at += n;
        if at == ROWS {
            break;
        }
    }
    writer.finish().unwrap();
}

#[test]
fn the_stress_file_is_what_the_engine_writes() {
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("stress.parquet");
    write_stress(&fresh);
    let committed = stress_file();
    if std::env::var_os("SCHEDLAB_BLESS").is_some_and(|v| v == "1") {
        std::fs::copy(&fresh, &committed).unwrap();
        eprintln!("blessed {}", committed.display());
    }
    let same = std::fs::read(&committed).ok() == Some(std::fs::read(&fresh).unwrap());
    assert!(
        same,
        "{} is not what the engine writes now (SCHEDLAB_BLESS=1 rewrites it after a deliberate \
         change of the engine)",
        committed.display()
    );
    assert_eq!(super::read_whole(&committed), stress_table().0);
}

#[test]
fn pyarrow_duckdb_and_polars_read_every_value_of_the_stress_file() {
    let test = schedlab_testkit::test_name();
    let Some(python) = schedlab_testkit::parquet_python(&test) else {
        return;
    };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/read_stress.py");
    let out = std::process::Command::new(python)
        .arg(&script)
        .arg(stress_file())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {stderr}", script.display());
    let read: serde_json::Map<String, Value> = serde_json::from_slice(&out.stdout).unwrap();
    let (batch, _) = stress_table();
    let readers: Vec<&str> = read.keys().map(String::as_str).collect();
    assert_eq!(readers, ["duckdb", "polars", "pyarrow"]);
    for (reader, columns) in &read {
        let names: Vec<&str> = columns
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let schema = batch.schema();
        let mut expected_names: Vec<&str> =
            schema.fields().iter().map(|f| f.name().as_str()).collect();
        expected_names.sort();
        assert_eq!(names, expected_names, "{reader}'s columns (sorted)");
        for (field, column) in schema.fields().iter().zip(batch.columns()) {
            let got = columns[field.name()].as_array().unwrap();
            let written = values(column.as_ref());
            assert_eq!(
                got.len(),
                written.len(),
                "{reader}: rows of {}",
                field.name()
            );
            if let Some(row) = (0..got.len()).find(|&i| got[i] != written[i]) {
                panic!(
                    "{reader}: {} row {row} is {} where {} was written",
                    field.name(),
                    got[row],
                    written[row]
                );
            }
        }
    }
}

/// A column's values as JSON, as the reader script prints them.
fn values(column: &dyn Array) -> Vec<Value> {
    let value = |i: usize| -> Value {
        if column.is_null(i) {
            return Value::Null;
        }
        match column.data_type() {
            DataType::Utf8 => json!(column.as_string::<i32>().value(i)),
            DataType::Int64 => json!(column.as_primitive::<Int64Type>().value(i)),
            DataType::Int32 => json!(column.as_primitive::<Int32Type>().value(i)),
            DataType::Float64 => json!(column.as_primitive::<Float64Type>().value(i)),
            DataType::Boolean => json!(column.as_boolean().value(i)),
            DataType::List(_) => Value::Array(values(column.as_list::<i32>().value(i).as_ref())),
            other => panic!("no JSON for {other}"),
        }
    };
    (0..column.len()).map(value).collect()
}
