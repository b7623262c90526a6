//! Time columns are the pages the `parquet` crate's own DELTA_BINARY_PACKED writer makes with
//! the engine's layout (blocks of 128 values in 4 miniblocks, pages of 32 Ki rows,
//! uncompressed), value bytes for value bytes: the hand-written encoder is checked against the
//! reference implementation, not only against a reader.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding};
use parquet::column::page::Page;
use parquet::file::properties::{DeltaBinaryPackedEncoderOptions, WriterProperties};
use schedlab_parquet::{ColumnEncoding, Encodings, ParquetWriter};

/// The engine's rows per data page.
const PAGE_ROWS: usize = 32 * 1024;

/// The `parquet` crate's writer set to the engine's layout for delta-encoded columns.
fn reference_properties() -> WriterProperties {
    WriterProperties::builder()
        .set_dictionary_enabled(false)
        .set_encoding(Encoding::DELTA_BINARY_PACKED)
        .set_compression(Compression::UNCOMPRESSED)
        .set_delta_binary_packed_encoder_options(
            DeltaBinaryPackedEncoderOptions::try_new(128, 4).unwrap(),
        )
        .set_data_page_row_count_limit(PAGE_ROWS)
        .set_data_page_size_limit(usize::MAX)
        .build()
}

const DELTA: &Encodings = &[
    ("start_ns", ColumnEncoding::Delta),
    ("duration_ns", ColumnEncoding::Delta),
    ("extreme_ns", ColumnEncoding::Delta),
    ("constant_ns", ColumnEncoding::Delta),
];

/// Times as traces have them (nearly sorted, with a step back), durations with nulls, the
/// extremes of i64 side by side, and one value throughout: over several pages, the last one
/// part full and ending mid-block.
fn columns(rows: usize) -> (Arc<Schema>, Vec<ArrayRef>) {
    let rows = rows as i64;
    let start =
        (0..rows).map(|i| 1_000_000_000 + i * 1_000 + (i * 7919 % 13) - (i == 999) as i64 * 5_000);
    let duration = (0..rows).map(|i| (i % 5 != 2).then_some(i * i % 100_003));
    let extremes = (0..rows).map(|i| match i % 7 {
        0 => Some(i64::MIN),
        1 => Some(i64::MAX),
        2 => None,
        _ => Some(-i),
    });
    let schema = Schema::new(vec![
        Field::new("start_ns", DataType::Int64, false),
        Field::new("duration_ns", DataType::Int64, true),
        Field::new("extreme_ns", DataType::Int64, true),
        Field::new("constant_ns", DataType::Int64, false),
    ]);
    let arrays: Vec<ArrayRef> = vec![
        Arc::new(start.collect::<Int64Array>()),
        Arc::new(duration.collect::<Int64Array>()),
        Arc::new(extremes.collect::<Int64Array>()),
        Arc::new(Int64Array::from(vec![42; rows as usize])),
    ];
    (Arc::new(schema), arrays)
}

#[test]
fn time_columns_are_the_parquet_crates_delta_pages_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    for rows in [0, 1, 127, 129, 3 * PAGE_ROWS + 77] {
        let (schema, arrays) = columns(rows);
        let batch = RecordBatch::try_new(schema.clone(), arrays).unwrap();

        let ours = dir.path().join(format!("ours-{rows}.parquet"));
        let mut writer = ParquetWriter::create(&ours, schema.clone(), DELTA).unwrap();
        // Batches that end mid-block and mid-page.
        let mut at = 0;
        for size in [100, 1, 40_000, 7].into_iter().cycle() {
            let n = size.min(rows - at);
            writer.write(&batch.slice(at, n)).unwrap();
            at += n;
            if at == rows {
                break;
            }
        }
        writer.finish().unwrap();

        let reference = dir.path().join(format!("reference-{rows}.parquet"));
        let file = std::fs::File::create(&reference).unwrap();
        let mut writer =
            ArrowWriter::try_new(file, schema.clone(), Some(reference_properties())).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();

        for (c, field) in schema.fields().iter().enumerate() {
            let nullable = field.is_nullable();
            let ours = data_pages(&super::pages(&ours, c), nullable);
            let reference = data_pages(&super::pages(&reference, c), nullable);
            assert_eq!(
                ours.len(),
                reference.len(),
                "{rows} rows, {}: pages",
                field.name()
            );
            for (p, (a, b)) in ours.iter().zip(&reference).enumerate() {
                assert!(a == b, "{rows} rows, {}: page {p} differs", field.name());
            }
        }
        assert_eq!(super::read_whole(&ours), batch);
    }
}

/// The data pages' value count, encoding and the bytes of their values. The definition levels
/// before them (in a nullable column) are left out: both writers use the RLE/bit-packed hybrid,
/// but cut its runs differently (one value is a bit-packed group here, an RLE run there); they
/// are checked by the values read back.
fn data_pages(pages: &[Page], nullable: bool) -> Vec<(u32, Encoding, Vec<u8>)> {
    (pages.iter())
        .filter_map(|page| match page {
            Page::DataPage {
                buf,
                num_values,
                encoding,
                ..
            } => {
                let levels = match nullable {
                    true => 4 + u32::from_le_bytes(buf[..4].try_into().unwrap()) as usize,
                    false => 0,
                };
                Some((*num_values, *encoding, buf[levels..].to_vec()))
            }
            _ => None,
        })
        .collect()
}
