//! Parquet files of rows: atomic writes, typed reads.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{FieldRef, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use serde_arrow::schema::{SchemaLike, TracingOptions};

use crate::{Table, TableError};

fn tracing_options() -> TracingOptions {
    TracingOptions::default()
        .strings_as_large_utf8(false)
        .sequence_as_large_list(false)
        .allow_null_fields(true)
}

fn fields_of<T: Table>() -> Vec<FieldRef> {
    Vec::<FieldRef>::from_type::<T>(tracing_options())
        .unwrap_or_else(|err| panic!("row type of table {} has no Arrow schema: {err}", T::NAME))
}

/// The Arrow schema of table `T`, derived from its row type.
pub fn schema_of<T: Table>() -> SchemaRef {
    Arc::new(Schema::new(fields_of::<T>()))
}

/// Writes `rows` as the Parquet file `path`, atomically (temporary file + rename).
pub fn write_rows<T: Table>(path: &Path, rows: &[T]) -> Result<(), TableError> {
    let fields = fields_of::<T>();
    let batch = serde_arrow::to_record_batch(&fields, &rows).map_err(|err| TableError::Schema {
        path: path.to_owned(),
        message: err.to_string(),
    })?;
    write_batch(path, &batch)
}

/// Writes one Arrow batch as the Parquet file `path`, atomically (temporary file + rename).
pub fn write_batch(path: &Path, batch: &RecordBatch) -> Result<(), TableError> {
    let io = |source| TableError::Io {
        path: path.to_owned(),
        source,
    };
    let pq = |err: parquet::errors::ParquetError| TableError::Parquet {
        path: path.to_owned(),
        message: err.to_string(),
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .suffix(".parquet")
        .tempfile_in(dir)
        .map_err(io)?;
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .build();
    let mut writer =
        ArrowWriter::try_new(tmp.as_file_mut(), batch.schema(), Some(props)).map_err(pq)?;
    writer.write(batch).map_err(pq)?;
    writer.close().map_err(pq)?;
    tmp.as_file_mut().flush().map_err(io)?;
    tmp.persist(path).map_err(|err| io(err.error))?;
    Ok(())
}

/// Reads every batch of the Parquet file `path`.
pub fn read_batches(path: &Path) -> Result<Vec<RecordBatch>, TableError> {
    let file = File::open(path).map_err(|source| TableError::Io {
        path: path.to_owned(),
        source,
    })?;
    let pq = |err: parquet::errors::ParquetError| TableError::Parquet {
        path: path.to_owned(),
        message: err.to_string(),
    };
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(pq)?
        .build()
        .map_err(pq)?;
    reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| TableError::Parquet {
            path: path.to_owned(),
            message: err.to_string(),
        })
}

/// Reads the Parquet file `path` back into rows of table `T`.
pub fn read_rows<T: Table>(path: &Path) -> Result<Vec<T>, TableError> {
    let mut rows = Vec::new();
    for batch in read_batches(path)? {
        let mut part: Vec<T> =
            serde_arrow::from_record_batch(&batch).map_err(|err| TableError::Schema {
                path: PathBuf::from(path),
                message: err.to_string(),
            })?;
        rows.append(&mut part);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ProcessRow, QualityRow};
    use arrow_schema::DataType;

    #[test]
    fn rows_round_trip_through_parquet() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("processes.parquet");
        let rows = vec![ProcessRow {
            run_id: "r1".into(),
            workload: "burst".into(),
            instance: 0,
            pid: 42,
            start_ns: 1,
            end_ns: None,
            exit_code: Some(3),
            nice: 19,
            affinity: Some("0,2-3".into()),
            argv: vec!["stress-ng".into(), "--cpu".into(), "1".into()],
        }];
        write_rows(&path, &rows).unwrap();
        assert_eq!(read_rows::<ProcessRow>(&path).unwrap(), rows);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "temporary file left behind");
    }

    #[test]
    fn strings_are_plain_utf8_and_empty_tables_keep_their_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("quality.parquet");
        write_rows::<QualityRow>(&path, &[]).unwrap();
        let batches = read_batches(&path).unwrap();
        let schema = batches
            .first()
            .map(|b| b.schema())
            .unwrap_or_else(schema_of::<QualityRow>);
        assert_eq!(
            schema.field_with_name("message").unwrap().data_type(),
            &DataType::Utf8
        );
        assert!(read_rows::<QualityRow>(&path).unwrap().is_empty());
    }
}
