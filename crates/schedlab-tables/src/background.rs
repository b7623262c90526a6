//! A table's rows encoded in rayon's pool while they are still being produced: the engine's
//! [`schedlab_parquet::BackgroundWriter`] around a [`TableWriter`] (see the engine for why the
//! pool, and how a sender waits).

use std::path::{Path, PathBuf};

use arrow_schema::SchemaRef;

use crate::{Table, TableBatch, TableError, TableWriter};

/// A [`TableWriter`] fed from any thread and encoded in rayon's pool.
///
/// Like `TableWriter`, nothing appears at the path until [`finish`](Self::finish); dropping the
/// writer (an error elsewhere, a panic) waits for the batch being encoded, discards the rest and
/// deletes the temporary file.
pub struct BackgroundWriter<T: Table + Send + 'static>(
    schedlab_parquet::BackgroundWriter<TableWriter<T>>,
);

impl<T: Table + Send + 'static> BackgroundWriter<T> {
    /// Starts the table `path`. The temporary file is created here, so an unwritable directory
    /// is reported at once rather than after the input is read.
    pub fn create(path: &Path) -> Result<Self, TableError> {
        let writer = TableWriter::<T>::create(path)?;
        Ok(BackgroundWriter(schedlab_parquet::BackgroundWriter::new(
            writer,
        )))
    }

    /// Queues `rows` for the table; waits while the queue is full. After a write error the
    /// rows are dropped: [`finish`](Self::finish) reports the error.
    pub fn send(&self, rows: Vec<T>) {
        if !rows.is_empty() {
            self.0.queue(move |writer| writer.write(&rows));
        }
    }

    /// Queues rows held in another form than `T`, as a function that builds their batch (of
    /// the schema it is given) when they are encoded. The perf reader's compact rows use this:
    /// building the batch there keeps the conversion out of the reader's own work.
    pub fn send_with<E: std::fmt::Display>(
        &self,
        build: impl FnOnce(SchemaRef) -> Result<TableBatch, E> + Send + 'static,
    ) {
        self.0.queue(move |writer| {
            let batch = build(writer.schema()).map_err(|e| writer.schema_error(e.to_string()))?;
            writer.write_table(&batch)
        });
    }

    /// Waits for the queued rows to be encoded, completes the file and renames it into place;
    /// returns its path.
    pub fn finish(self) -> Result<PathBuf, TableError> {
        self.0.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{QualityRow, Severity, read_rows};
    use arrow_array::RecordBatch;

    fn note(i: usize) -> QualityRow {
        QualityRow {
            run_id: "r1".into(),
            source: "test".into(),
            severity: Severity::Info,
            message: format!("note {i}"),
            time_ns: Some(i as i64),
            cpu: None,
        }
    }

    #[test]
    fn rows_sent_from_several_batches_read_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("quality.parquet");
        let writer = BackgroundWriter::<QualityRow>::create(&path).unwrap();
        let rows: Vec<QualityRow> = (0..100).map(note).collect();
        for chunk in rows.chunks(7) {
            writer.send(chunk.to_vec());
        }
        assert!(!path.exists(), "nothing at the path before finish");
        assert_eq!(writer.finish().unwrap(), path);
        assert_eq!(read_rows::<QualityRow>(&path).unwrap(), rows);
    }

    #[test]
    fn batches_built_when_encoded_must_have_the_tables_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("quality.parquet");
        let writer = BackgroundWriter::<QualityRow>::create(&path).unwrap();
        let rows = vec![note(1), note(2)];
        let copy = rows.clone();
        writer.send_with(move |schema| {
            serde_arrow::to_record_batch(schema.fields(), &copy)
                .map(TableBatch::from)
                .map_err(|e| e.to_string())
        });
        writer.finish().unwrap();
        assert_eq!(read_rows::<QualityRow>(&path).unwrap(), rows);

        let path = dir.path().join("other.parquet");
        let writer = BackgroundWriter::<QualityRow>::create(&path).unwrap();
        writer.send_with(|_| {
            let other = crate::schema_of::<crate::RunRow>();
            Ok::<_, String>(TableBatch::from(RecordBatch::new_empty(other)))
        });
        let err = writer.finish().unwrap_err().to_string();
        assert!(
            err.contains("other.parquet") && err.contains("quality"),
            "{err}"
        );
        assert!(!path.exists());
    }
}
