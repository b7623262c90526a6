//! One table from several Parquet files of it, without decoding them.
//!
//! Traces and runs are parsed in parallel, each into its own part files; the table is then the
//! parts in input order. Copying the encoded column chunks row group by row group (as
//! `parquet-concat` does) costs a file copy, not a decode and re-encode, and keeps the result
//! independent of which part finished first, so the same inputs always give the same bytes.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::column::writer::ColumnCloseResult;
use parquet::file::metadata::{
    PageIndexPolicy, ParquetMetaData, ParquetMetaDataOptions, ParquetMetaDataReader,
};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;

use crate::TableError;
use crate::temp_table_beside;

/// Writes the row groups of the Parquet files `parts`, in order, as the file `dest` (atomically:
/// temporary file + rename). The parts must be files of one table (same schema); their key-value
/// metadata (the Arrow schema) is taken from the first.
pub fn concat_parts(parts: &[PathBuf], dest: &Path) -> Result<(), TableError> {
    let Some(first) = parts.first() else {
        return Err(TableError::Schema {
            path: dest.to_owned(),
            message: "no part files to join".into(),
        });
    };
    let inputs = (parts.iter())
        .map(|path| {
            let file = File::open(path).map_err(|source| TableError::io(path, source))?;
            // Page encoding stats in full, not as the mask the reader makes by default: the
            // writer copies only the full form into the joined file.
            let options = ParquetMetaDataOptions::new().with_encoding_stats_as_mask(false);
            let metadata = ParquetMetaDataReader::new()
                .with_page_index_policy(PageIndexPolicy::Optional)
                .with_metadata_options(Some(options))
                .parse_and_finish(&file)
                .map_err(|err| TableError::parquet(path, err))?;
            Ok((path, file, metadata))
        })
        .collect::<Result<Vec<_>, TableError>>()?;

    let schema = inputs[0].2.file_metadata().schema_descr();
    for (path, _, metadata) in &inputs[1..] {
        if metadata.file_metadata().schema_descr().root_schema() != schema.root_schema() {
            return Err(TableError::Schema {
                path: (*path).clone(),
                message: format!("its columns differ from those of {}", first.display()),
            });
        }
    }

    let tmp = temp_table_beside(dest)?;
    let props = Arc::new(WriterProperties::builder().build());
    let pq = |err| TableError::parquet(dest, err);
    let mut writer = SerializedFileWriter::new(tmp, schema.root_schema_ptr(), props).map_err(pq)?;
    for kv in (inputs[0].2.file_metadata().key_value_metadata())
        .into_iter()
        .flatten()
    {
        writer.append_key_value_metadata(kv.clone());
    }
    for (_, file, metadata) in &inputs {
        copy_row_groups(file, metadata, &mut writer).map_err(pq)?;
    }
    let tmp = writer.into_inner().map_err(pq)?;
    tmp.persist(dest)
        .map_err(|err| TableError::io(dest, err.error))?;
    Ok(())
}

fn copy_row_groups(
    file: &File,
    metadata: &ParquetMetaData,
    writer: &mut SerializedFileWriter<tempfile::NamedTempFile>,
) -> parquet::errors::Result<()> {
    let page_index = metadata.page_index();
    for (g, group) in metadata.row_groups().iter().enumerate() {
        let mut out = writer.next_row_group()?;
        for (c, column) in group.columns().iter().enumerate() {
            out.append_column(
                file,
                ColumnCloseResult {
                    bytes_written: column.compressed_size() as u64,
                    rows_written: group.num_rows() as u64,
                    metadata: column.clone(),
                    bloom_filter: None,
                    column_index: page_index.and_then(|p| p.column_index(g, c)).cloned(),
                    offset_index: page_index.and_then(|p| p.offset_index(g, c)).cloned(),
                },
            )?;
        }
        out.close()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write_batch;
    use arrow_array::{Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema, SchemaRef};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    const NOTES: &crate::Encodings = &[
        ("run_id", crate::ColumnEncoding::DictionaryWithRange),
        ("message", crate::ColumnEncoding::Dictionary),
        ("time_ns", crate::ColumnEncoding::Delta),
    ];

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("run_id", DataType::Utf8, false),
            Field::new("message", DataType::Utf8, false),
            Field::new("time_ns", DataType::Int64, true),
        ]))
    }

    /// Notes `range` as a batch of [`schema`].
    fn notes(range: std::ops::Range<i64>) -> RecordBatch {
        let run_ids: Vec<String> = range.clone().map(|i| format!("r{}", i % 3)).collect();
        let messages: Vec<String> = range.clone().map(|i| format!("note {i}")).collect();
        let times: Vec<Option<i64>> = range.map(|i| (i % 2 == 0).then_some(i)).collect();
        RecordBatch::try_new(
            schema(),
            vec![
                Arc::new(StringArray::from(run_ids)),
                Arc::new(StringArray::from(messages)),
                Arc::new(Int64Array::from(times)),
            ],
        )
        .unwrap()
    }

    fn read(path: &Path) -> Vec<RecordBatch> {
        let file = File::open(path).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build();
        reader.unwrap().map(Result::unwrap).collect()
    }

    #[test]
    fn parts_join_in_order_and_read_back_with_the_arrow_schema() {
        let dir = tempfile::tempdir().unwrap();
        let parts: Vec<PathBuf> = [0..20, 20..20, 20..21, 21..50]
            .into_iter()
            .enumerate()
            .map(|(i, range)| {
                let path = dir.path().join(format!("part{i}.parquet"));
                write_batch(&path, &notes(range), NOTES).unwrap();
                path
            })
            .collect();
        let dest = dir.path().join("quality.parquet");
        concat_parts(&parts, &dest).unwrap();
        let batches = read(&dest);
        assert_eq!(batches[0].schema(), schema());
        let joined = arrow_select_concat(&batches);
        assert_eq!(joined, notes(0..50));
    }

    /// The batches as one (the columns of each, end to end).
    fn arrow_select_concat(batches: &[RecordBatch]) -> RecordBatch {
        let columns = (0..schema().fields().len())
            .map(|c| {
                let parts: Vec<&dyn arrow_array::Array> =
                    batches.iter().map(|b| b.column(c).as_ref()).collect();
                concat_arrays(&parts)
            })
            .collect();
        RecordBatch::try_new(schema(), columns).unwrap()
    }

    fn concat_arrays(parts: &[&dyn arrow_array::Array]) -> arrow_array::ArrayRef {
        use arrow_array::cast::AsArray;
        use arrow_array::types::Int64Type;
        match parts[0].data_type() {
            DataType::Utf8 => Arc::new(StringArray::from_iter(
                parts.iter().flat_map(|p| p.as_string::<i32>().iter()),
            )),
            _ => Arc::new(Int64Array::from_iter(
                parts
                    .iter()
                    .flat_map(|p| p.as_primitive::<Int64Type>().iter()),
            )),
        }
    }

    #[test]
    fn parts_of_different_tables_are_refused_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.parquet");
        let b = dir.path().join("b.parquet");
        write_batch(&a, &notes(1..2), NOTES).unwrap();
        let other = Arc::new(Schema::new(vec![Field::new("cpu", DataType::Int32, false)]));
        write_batch(&b, &RecordBatch::new_empty(other), &[]).unwrap();
        let dest = dir.path().join("quality.parquet");
        let err = concat_parts(&[a, b.clone()], &dest)
            .unwrap_err()
            .to_string();
        assert!(err.contains("b.parquet") && err.contains("differ"), "{err}");
        assert!(!dest.exists());
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 2, "no temporary file left: {names:?}");
    }
}
