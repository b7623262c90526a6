//! A table encoded on its own thread while the rows are still being produced.
//!
//! Parsing a perf trace is a pipeline: the reader decodes and orders events, and Parquet
//! encoding (dictionaries, delta encoding, snappy) of the rows it produced takes about as long
//! again. Encoding in the reader's callback would make each wait for the other; a
//! [`BackgroundWriter`] takes the rows through a short queue instead, so both run at once and a
//! second core is used fully.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::{Table, TableError, TableWriter};

/// Batches waiting in the queue before a send blocks. One is as fast as four on a perf trace
/// (the reader and the encoder take turns on two cores) and holds 20 MiB less.
const QUEUE_BATCHES: usize = 1;

/// One batch's work for the encoding thread: rows, or a function building their Arrow batch.
type Job<T> = Box<dyn FnOnce(&mut TableWriter<T>) -> Result<(), TableError> + Send>;

/// A [`TableWriter`] fed from any thread and encoding on its own.
///
/// Like `TableWriter`, nothing appears at the path until [`finish`](Self::finish); dropping the
/// writer (an error elsewhere, a panic) stops its thread and deletes the temporary file.
pub struct BackgroundWriter<T: Table + Send + 'static> {
    queue: Option<SyncSender<Job<T>>>,
    thread: Option<JoinHandle<Result<TableWriter<T>, TableError>>>,
}

impl<T: Table + Send + 'static> BackgroundWriter<T> {
    /// Starts the table `path` and its encoding thread. The temporary file is created here, so
    /// an unwritable directory is reported at once rather than after the input is read.
    pub fn create(path: &Path) -> Result<Self, TableError> {
        let mut writer = TableWriter::<T>::create(path)?;
        let (queue, jobs) = sync_channel::<Job<T>>(QUEUE_BATCHES);
        let thread = std::thread::Builder::new()
            .name(format!("write {}", T::NAME))
            .spawn(move || {
                for job in jobs {
                    job(&mut writer)?;
                }
                Ok(writer)
            })
            .map_err(|source| TableError::Io {
                path: path.to_owned(),
                source,
            })?;
        Ok(BackgroundWriter {
            queue: Some(queue),
            thread: Some(thread),
        })
    }

    /// Queues `rows` for the table; blocks while the queue is full. After a write error the
    /// rows are dropped: [`finish`](Self::finish) reports the error.
    pub fn send(&self, rows: Vec<T>) {
        if !rows.is_empty() {
            self.queue(Box::new(move |writer| writer.write(&rows)));
        }
    }

    /// Queues rows held in another form than `T`, as a function that builds their Arrow batch
    /// (of the schema it is given) on the encoding thread. The perf reader's compact rows use
    /// this: building the arrays there keeps the conversion off the reader's thread.
    pub fn send_with<E: std::fmt::Display>(
        &self,
        build: impl FnOnce(SchemaRef) -> Result<RecordBatch, E> + Send + 'static,
    ) {
        self.queue(Box::new(move |writer| {
            let batch = build(writer.schema()).map_err(|e| writer.schema_error(e.to_string()))?;
            writer.write_batch(&batch)
        }));
    }

    fn queue(&self, job: Job<T>) {
        if let Some(queue) = &self.queue {
            // A closed queue means the thread stopped on an error, which `finish` returns.
            let _ = queue.send(job);
        }
    }

    /// Waits for the queued rows to be encoded, completes the file and renames it into place;
    /// returns its path.
    pub fn finish(mut self) -> Result<PathBuf, TableError> {
        self.queue = None;
        let thread = self.thread.take().expect("finish runs once");
        match thread.join() {
            Ok(writer) => writer?.finish(),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

impl<T: Table + Send + 'static> Drop for BackgroundWriter<T> {
    fn drop(&mut self) {
        // Unfinished: close the queue and wait, so the thread's TableWriter is dropped (and its
        // temporary file deleted) before the caller goes on.
        self.queue = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{QualityRow, Severity, read_rows};

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
    fn batches_built_on_the_encoding_thread_must_have_the_tables_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("quality.parquet");
        let writer = BackgroundWriter::<QualityRow>::create(&path).unwrap();
        let rows = vec![note(1), note(2)];
        let copy = rows.clone();
        writer.send_with(move |schema| {
            serde_arrow::to_record_batch(schema.fields(), &copy).map_err(|e| e.to_string())
        });
        writer.finish().unwrap();
        assert_eq!(read_rows::<QualityRow>(&path).unwrap(), rows);

        let path = dir.path().join("other.parquet");
        let writer = BackgroundWriter::<QualityRow>::create(&path).unwrap();
        writer.send_with(|_| {
            let other = crate::schema_of::<crate::RunRow>();
            Ok::<_, String>(RecordBatch::new_empty(other))
        });
        let err = writer.finish().unwrap_err().to_string();
        assert!(
            err.contains("other.parquet") && err.contains("quality"),
            "{err}"
        );
        assert!(!path.exists());
    }

    #[test]
    fn a_writer_dropped_unfinished_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("quality.parquet");
        let writer = BackgroundWriter::<QualityRow>::create(&path).unwrap();
        writer.send(vec![note(1)]);
        drop(writer);
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
