//! The engine checked against independent writers and readers: the `parquet` crate's own
//! DELTA_BINARY_PACKED writer and ArrowWriter, and pyarrow, DuckDB and polars reading a
//! committed stress file.

mod arrow_writer;
mod delta;
mod keys;
mod metadata;
mod readers;

use std::fs::File;
use std::path::Path;

use arrow_array::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::column::page::Page;
use parquet::file::reader::{FileReader, SerializedFileReader};

/// The rows of the Parquet file `path` as one batch, as the `parquet` crate's Arrow reader
/// decodes them.
pub fn read_whole(path: &Path) -> RecordBatch {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let rows = builder.metadata().file_metadata().num_rows() as usize;
    let schema = builder.schema().clone();
    let batches: Vec<RecordBatch> = (builder.with_batch_size(rows.max(1)).build().unwrap())
        .map(Result::unwrap)
        .collect();
    match batches.len() {
        0 => RecordBatch::new_empty(schema),
        1 => batches.into_iter().next().unwrap(),
        n => panic!("{n} batches of a file read whole"),
    }
}

/// The pages of column `column` of every row group of the Parquet file `path`, decompressed.
pub fn pages(path: &Path, column: usize) -> Vec<Page> {
    let file = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
    (0..file.num_row_groups())
        .flat_map(|g| {
            let group = file.get_row_group(g).unwrap();
            let reader = group.get_column_page_reader(column).unwrap();
            reader.map(Result::unwrap).collect::<Vec<_>>()
        })
        .collect()
}
