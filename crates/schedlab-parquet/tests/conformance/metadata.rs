//! What the column chunks' metadata says, as the `parquet` crate's reader reads it: page
//! encoding stats that count the chunk's pages, the plain fallback of high-cardinality text,
//! and encodings that follow each column's declaration, whatever its name.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::basic::{Compression, Encoding, PageType};
use parquet::column::page::Page;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataOptions, ParquetMetaDataReader};
use parquet::file::statistics::Statistics;
use schedlab_parquet::{ColumnEncoding, Encodings, ParquetWriter, concat_parts, write_batch};

/// The footer of `path`, page encoding stats in full.
fn metadata(path: &Path) -> ParquetMetaData {
    let options = ParquetMetaDataOptions::new().with_encoding_stats_as_mask(false);
    ParquetMetaDataReader::new()
        .with_metadata_options(Some(options))
        .parse_and_finish(&File::open(path).unwrap())
        .unwrap()
}

/// Pages of one chunk by kind and encoding, sorted, with their count.
fn page_kinds(pages: impl IntoIterator<Item = (PageType, Encoding)>) -> Vec<(String, i32)> {
    let mut kinds: Vec<(String, i32)> = Vec::new();
    for (page_type, encoding) in pages {
        let kind = format!("{page_type:?} {encoding:?}");
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => kinds.push((kind, 1)),
        }
    }
    kinds.sort();
    kinds
}

/// The pages of column `c` of row group `g` of `path`, by kind and encoding.
fn pages_of(path: &Path, g: usize, c: usize) -> Vec<(String, i32)> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let file = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
    let pages = file
        .get_row_group(g)
        .unwrap()
        .get_column_page_reader(c)
        .unwrap();
    page_kinds(pages.map(|page| {
        let page = page.unwrap();
        (page.page_type(), page.encoding())
    }))
}

/// A table of every encoding: run ids (one), command names (a few, with nulls), distinct long
/// messages (a dictionary past its bound), times, and CPUs (plain).
fn mixed(rows: usize) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("run_id", DataType::Utf8, false),
        Field::new("comm", DataType::Utf8, true),
        Field::new("message", DataType::Utf8, false),
        Field::new("time_ns", DataType::Int64, false),
        Field::new("cpu", DataType::Int32, false),
    ]));
    let comms = (0..rows).map(|i| (i % 7 != 3).then(|| ["sh", "stress-ng", "kworker/0:1"][i % 3]));
    let messages =
        (0..rows).map(|i| format!("message {:08} {}", (i * 7919) % 1_000_003, "x".repeat(40)));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec!["r1"; rows])),
        Arc::new(comms.collect::<StringArray>()),
        Arc::new(StringArray::from_iter_values(messages)),
        Arc::new(Int64Array::from_iter_values(
            (0..rows as i64).map(|i| i * 1_000 + i % 3),
        )),
        Arc::new(Int32Array::from_iter_values(
            (0..rows as i32).map(|i| i % 4),
        )),
    ];
    RecordBatch::try_new(schema, columns).unwrap()
}

const MIXED: &Encodings = &[
    ("run_id", ColumnEncoding::DictionaryWithRange),
    ("comm", ColumnEncoding::Dictionary),
    ("message", ColumnEncoding::DictionaryWithRange),
    ("time_ns", ColumnEncoding::Delta),
];

#[test]
fn page_encoding_stats_count_the_pages_of_every_chunk_and_survive_concatenation() {
    let dir = tempfile::tempdir().unwrap();
    let rows = 70_000;
    let part = |name: &str, at: usize, n: usize| {
        // In batches, so that row groups end by their bytes.
        let path = dir.path().join(name);
        let batch = mixed(rows).slice(at, n);
        let mut writer = ParquetWriter::create(&path, batch.schema(), MIXED).unwrap();
        for start in (0..n).step_by(5_000) {
            writer
                .write(&batch.slice(start, 5_000.min(n - start)))
                .unwrap();
        }
        writer.finish().unwrap();
        path
    };
    let parts = [
        part("a.parquet", 0, 50_000),
        part("b.parquet", 50_000, 20_000),
    ];
    let joined = dir.path().join("joined.parquet");
    concat_parts(&parts, &joined).unwrap();
    for path in parts.iter().chain([&joined]) {
        let metadata = metadata(path);
        for (g, group) in metadata.row_groups().iter().enumerate() {
            for (c, chunk) in group.columns().iter().enumerate() {
                let stats = chunk.page_encoding_stats().unwrap_or_else(|| {
                    panic!("{}: no page encoding stats for column {c}", path.display())
                });
                let said = page_kinds((stats.iter()).flat_map(|s| {
                    std::iter::repeat_n((s.page_type, s.encoding), s.count as usize)
                }));
                assert_eq!(said, pages_of(path, g, c), "{}: column {c}", path.display());
            }
        }
    }
    // Data pages of dictionary indices and of deltas, over the part's row groups.
    let first = metadata(&parts[0]);
    let pages = |c: usize, encoding: Encoding| {
        (first.row_groups().iter())
            .flat_map(|g| g.column(c).page_encoding_stats().unwrap().clone())
            .filter(|s| s.page_type == PageType::DATA_PAGE && s.encoding == encoding)
            .map(|s| s.count)
            .sum::<i32>()
    };
    assert!(pages(1, Encoding::RLE_DICTIONARY) > 1);
    assert!(pages(3, Encoding::DELTA_BINARY_PACKED) > 1);
    // The messages fell back in the first row group, so the later ones are plain throughout.
    assert!(first.num_row_groups() > 1);
    for g in 1..first.num_row_groups() {
        let kinds = pages_of(&parts[0], g, 2);
        assert!(
            kinds.iter().all(|(k, _)| k == "DATA_PAGE PLAIN"),
            "group {g}: {kinds:?}"
        );
    }
}

#[test]
fn high_cardinality_text_falls_back_to_plain_compressed_pages() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mixed.parquet");
    let rows = 20_000;
    let batch = mixed(rows);
    write_batch(&path, &batch, MIXED).unwrap();
    assert_eq!(super::read_whole(&path), batch);

    let metadata = metadata(&path);
    assert_eq!(metadata.num_row_groups(), 1);
    let group = metadata.row_group(0);
    // The messages: a dictionary page, the dictionary's pages of indices, then plain pages,
    // all compressed.
    let message = group.column(2);
    let kinds = pages_of(&path, 0, 2);
    let count = |kind: &str| kinds.iter().find(|(k, _)| k == kind).map_or(0, |(_, n)| *n);
    assert_eq!(count("DICTIONARY_PAGE PLAIN"), 1, "{kinds:?}");
    assert!(count("DATA_PAGE RLE_DICTIONARY") >= 1, "{kinds:?}");
    assert!(count("DATA_PAGE PLAIN") >= 1, "{kinds:?}");
    assert_eq!(message.compression(), Compression::SNAPPY);
    assert!(message.compressed_size() < message.uncompressed_size() / 2);
    let dictionary_bytes = (super::pages(&path, 2).iter())
        .find_map(|page| match page {
            Page::DictionaryPage { buf, .. } => Some(buf.len()),
            _ => None,
        })
        .unwrap();
    assert!(dictionary_bytes <= 128 * 1024, "{dictionary_bytes}");
    // The range covers the plain rows too.
    let texts = batch.column(2).as_string::<i32>();
    let Some(Statistics::ByteArray(range)) = message.statistics() else {
        panic!("no range for the messages");
    };
    assert_eq!(
        range.min_opt().unwrap().as_utf8().unwrap(),
        texts.iter().flatten().min().unwrap()
    );
    assert_eq!(
        range.max_opt().unwrap().as_utf8().unwrap(),
        texts.iter().flatten().max().unwrap()
    );
    // The command names keep their dictionary, uncompressed.
    let comm = group.column(1);
    assert_eq!(comm.compression(), Compression::UNCOMPRESSED);
    let kinds = pages_of(&path, 0, 1);
    assert!(
        kinds.iter().all(|(k, _)| k != "DATA_PAGE PLAIN"),
        "{kinds:?}"
    );
}

#[test]
fn encodings_follow_the_declaration_whatever_the_column_name() {
    let dir = tempfile::tempdir().unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("time_ns", DataType::Int64, false),
        Field::new("t", DataType::Int64, false),
        Field::new("run_id", DataType::Utf8, false),
        Field::new("code", DataType::Utf8, false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from_iter_values(0..1000)),
            Arc::new(Int64Array::from_iter_values(0..1000)),
            Arc::new(StringArray::from(vec!["r1"; 1000])),
            Arc::new(StringArray::from(vec!["a"; 1000])),
        ],
    )
    .unwrap();
    let declared: &Encodings = &[
        ("t", ColumnEncoding::Delta),
        ("code", ColumnEncoding::Dictionary),
    ];
    let path = dir.path().join("renamed.parquet");
    write_batch(&path, &batch, declared).unwrap();
    assert_eq!(super::read_whole(&path), batch);
    let data_encodings = |c: usize| -> Vec<String> {
        (pages_of(&path, 0, c).into_iter())
            .filter(|(k, _)| k.starts_with("DATA_PAGE "))
            .map(|(k, _)| k["DATA_PAGE ".len()..].to_string())
            .collect()
    };
    assert_eq!(data_encodings(0), ["PLAIN"], "time_ns, declared plain");
    assert_eq!(
        data_encodings(1),
        ["DELTA_BINARY_PACKED"],
        "t, declared delta"
    );
    assert_eq!(data_encodings(2), ["PLAIN"], "run_id, declared plain");
    assert_eq!(
        data_encodings(3),
        ["RLE_DICTIONARY"],
        "code, declared a dictionary"
    );
    let group = metadata(&path).row_group(0).clone();
    assert!(
        group.column(2).statistics().is_none(),
        "no range for an undeclared run_id"
    );

    let refused = |encodings: &Encodings| {
        let path = dir.path().join("refused.parquet");
        match ParquetWriter::create(&path, schema.clone(), encodings) {
            Ok(_) => panic!("{encodings:?} was taken"),
            Err(err) => {
                assert!(!path.exists());
                err.to_string()
            }
        }
    };
    let err = refused(&[("t", ColumnEncoding::Dictionary)]);
    assert!(
        err.contains("refused.parquet") && err.contains("column t is Int64"),
        "{err}"
    );
    let err = refused(&[("code", ColumnEncoding::Delta)]);
    assert!(
        err.contains("column code is Utf8, which Delta cannot encode"),
        "{err}"
    );
    let err = refused(&[("tid", ColumnEncoding::Delta)]);
    assert!(
        err.contains("column tid") && err.contains("no such column"),
        "{err}"
    );
    let err = refused(&[("t", ColumnEncoding::Delta), ("t", ColumnEncoding::Plain)]);
    assert!(err.contains("column t has two declared encodings"), "{err}");
}

#[test]
fn a_chunk_of_nulls_only_has_a_dictionary_of_one_unused_text() {
    use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nulls.parquet");
    let rows = 3_000;
    let schema = Arc::new(Schema::new(vec![
        Field::new("comm", DataType::Utf8, true),
        Field::new("cpu", DataType::Int32, false),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec![None::<&str>; rows])),
        Arc::new(Int32Array::from_iter_values(
            (0..rows as i32).map(|i| i % 2),
        )),
    ];
    let batch = RecordBatch::try_new(schema, columns).unwrap();
    write_batch(&path, &batch, &[("comm", ColumnEncoding::Dictionary)]).unwrap();
    assert_eq!(super::read_whole(&path), batch);

    let dictionaries: Vec<u32> = (super::pages(&path, 0).iter())
        .filter_map(|page| match page {
            Page::DictionaryPage { num_values, .. } => Some(*num_values),
            _ => None,
        })
        .collect();
    assert_eq!(dictionaries, [1]);

    // Read as dictionary keys, the way the aggregates read command names: every row null.
    let keyed = Arc::new(Schema::new(vec![
        Field::new(
            "comm",
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            true,
        ),
        Field::new("cpu", DataType::Int32, false),
    ]));
    let options = ArrowReaderOptions::new().with_schema(keyed);
    let reader =
        ParquetRecordBatchReaderBuilder::try_new_with_options(File::open(&path).unwrap(), options)
            .unwrap()
            .build()
            .unwrap();
    let mut read = 0;
    for batch in reader {
        let comm = batch.unwrap().column(0).clone();
        assert_eq!(comm.null_count(), comm.len());
        read += comm.len();
    }
    assert_eq!(read, rows);
}
