//! A table encoded by rayon's pool while its rows are still being produced.
//!
//! Parsing a perf trace is a pipeline: the reader decodes and orders events, and Parquet
//! encoding (dictionaries, delta encoding, snappy) of the rows it produced takes about as long
//! again. Encoding in the reader's callback would make each wait for the other; a
//! [`BackgroundWriter`] queues the rows instead and encodes them in a task of rayon's pool, the
//! pool the reader runs in, so that whichever thread is free does the next piece of work.
//!
//! Why not a thread of its own per table: then each side waits for the other at a block's
//! hand-off and the cores idle; in the pool, the thread that would wait does the other's work.
//!
//! Rows are encoded in the order they were sent: one drain task at a time takes the queued
//! batches in turn. A sender waits while more than [`QUEUE_BATCHES`] are queued, and waits
//! by doing other work of the pool (this table's drain task, another block's decoding), so a
//! pool thread never blocks on work that only the pool can do: with one pool thread, or with
//! several inputs parsed at once, a sender that slept would wait for a drain task queued
//! behind it. For the same reason a job (building and encoding a batch) must not itself wait
//! on the pool: a drain task that waited could run, nested, a sender waiting for that drain.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use arrow_schema::SchemaRef;

use crate::{Table, TableBatch, TableError, TableWriter};

/// Batches waiting to be encoded before a send waits. One is as fast as more on the bench trace
/// and holds less memory.
const QUEUE_BATCHES: usize = 1;

/// One batch's work for the encoder: rows, or a function building their Arrow batch.
type Job<T> = Box<dyn FnOnce(&mut TableWriter<T>) -> Result<(), TableError> + Send>;

/// A [`TableWriter`] fed from any thread and encoded in rayon's pool.
///
/// Like `TableWriter`, nothing appears at the path until [`finish`](Self::finish); dropping the
/// writer (an error elsewhere, a panic) waits for the batch being encoded, discards the rest and
/// deletes the temporary file.
pub struct BackgroundWriter<T: Table + Send + 'static> {
    shared: Arc<Shared<T>>,
}

struct Shared<T: Table> {
    state: Mutex<State<T>>,
    /// Signalled whenever the drain task finishes a batch or stops.
    progress: Condvar,
}

struct State<T: Table> {
    jobs: VecDeque<Job<T>>,
    /// A drain task is queued or running; it alone takes jobs and the writer.
    draining: bool,
    /// The file being written: out of the state while the drain task encodes into it, and
    /// gone after an error (dropped, which deletes its temporary file).
    writer: Option<TableWriter<T>>,
    error: Option<TableError>,
    panic: Option<Box<dyn std::any::Any + Send>>,
}

impl<T: Table> Shared<T> {
    fn state(&self) -> MutexGuard<'_, State<T>> {
        // Jobs run outside the lock and their panics are caught, so it is never poisoned.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Encodes queued batches in order until none is left.
    fn drain(&self) {
        loop {
            let (job, mut writer) = {
                let mut state = self.state();
                let Some(job) = state.jobs.pop_front() else {
                    state.draining = false;
                    self.progress.notify_all();
                    return;
                };
                (job, state.writer.take())
            };
            let outcome = writer
                .as_mut()
                .map(|w| catch_unwind(AssertUnwindSafe(|| job(w))));
            let mut state = self.state();
            match outcome {
                Some(Ok(Ok(()))) => state.writer = writer,
                Some(Ok(Err(err))) => {
                    state.error.get_or_insert(err);
                }
                Some(Err(panic)) => {
                    state.panic.get_or_insert(panic);
                }
                // An earlier batch failed: the rest are dropped.
                None => {}
            }
            self.progress.notify_all();
        }
    }

    /// Returns once `done` holds, doing the pool's pending work meanwhile; a thread outside
    /// the pool (or with nothing to do) sleeps until the drain task reports progress. The
    /// timeout only bounds how long a pool thread sleeps before it looks for work again.
    fn wait_until(&self, done: impl Fn(&State<T>) -> bool) {
        loop {
            if done(&self.state()) {
                return;
            }
            if rayon::yield_now() == Some(rayon::Yield::Executed) {
                continue;
            }
            let state = self.state();
            if done(&state) {
                return;
            }
            let _ = self.progress.wait_timeout(state, Duration::from_millis(1));
        }
    }
}

impl<T: Table + Send + 'static> BackgroundWriter<T> {
    /// Starts the table `path`. The temporary file is created here, so an unwritable directory
    /// is reported at once rather than after the input is read.
    pub fn create(path: &Path) -> Result<Self, TableError> {
        let writer = TableWriter::<T>::create(path)?;
        Ok(BackgroundWriter {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    jobs: VecDeque::new(),
                    draining: false,
                    writer: Some(writer),
                    error: None,
                    panic: None,
                }),
                progress: Condvar::new(),
            }),
        })
    }

    /// Queues `rows` for the table; waits while the queue is full. After a write error the
    /// rows are dropped: [`finish`](Self::finish) reports the error.
    pub fn send(&self, rows: Vec<T>) {
        if !rows.is_empty() {
            self.queue(Box::new(move |writer| writer.write(&rows)));
        }
    }

    /// Queues rows held in another form than `T`, as a function that builds their batch (of
    /// the schema it is given) when they are encoded. The perf reader's compact rows use this:
    /// building the batch there keeps the conversion out of the reader's own work.
    pub fn send_with<E: std::fmt::Display>(
        &self,
        build: impl FnOnce(SchemaRef) -> Result<TableBatch, E> + Send + 'static,
    ) {
        self.queue(Box::new(move |writer| {
            let batch = build(writer.schema()).map_err(|e| writer.schema_error(e.to_string()))?;
            writer.write_table(&batch)
        }));
    }

    fn queue(&self, job: Job<T>) {
        {
            let mut state = self.shared.state();
            state.jobs.push_back(job);
            if !state.draining {
                state.draining = true;
                let shared = self.shared.clone();
                rayon::spawn(move || shared.drain());
            }
        }
        (self.shared).wait_until(|state| state.jobs.len() <= QUEUE_BATCHES);
    }

    /// Waits for the queued rows to be encoded, completes the file and renames it into place;
    /// returns its path.
    pub fn finish(self) -> Result<PathBuf, TableError> {
        (self.shared).wait_until(|state| !state.draining);
        let mut state = self.shared.state();
        if let Some(panic) = state.panic.take() {
            drop(state);
            resume_unwind(panic);
        }
        if let Some(err) = state.error.take() {
            return Err(err);
        }
        let writer = state
            .writer
            .take()
            .expect("finish runs once, after the last batch");
        drop(state);
        writer.finish()
    }
}

impl<T: Table + Send + 'static> Drop for BackgroundWriter<T> {
    fn drop(&mut self) {
        // Unfinished: drop the queued batches and wait for the one being encoded, so the
        // TableWriter is dropped (and its temporary file deleted) before the caller goes on.
        self.shared.state().jobs.clear();
        (self.shared).wait_until(|state| !state.draining);
        let writer = self.shared.state().writer.take();
        drop(writer);
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

    /// Many inputs encoded at once by the pool they are read in, as `schedlab parse` does with
    /// several files: with one pool thread the sender itself must run the drain task, with two
    /// both senders may wait at once. A sender that blocked its thread instead would hang here.
    #[test]
    fn batches_sent_from_pool_tasks_are_encoded_in_order_with_any_number_of_threads() {
        for threads in [1, 2] {
            let (done, finished) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let dir = tempfile::tempdir().unwrap();
                let read_back = pool.install(|| {
                    use rayon::prelude::*;
                    (0..3usize)
                        .into_par_iter()
                        .map(|input| {
                            let path = dir.path().join(format!("{input}.parquet"));
                            let writer = BackgroundWriter::<QualityRow>::create(&path).unwrap();
                            let rows: Vec<QualityRow> =
                                (0..600).map(|i| note(input * 1000 + i)).collect();
                            for chunk in rows.chunks(5) {
                                writer.send(chunk.to_vec());
                            }
                            writer.finish().unwrap();
                            (read_rows::<QualityRow>(&path).unwrap(), rows)
                        })
                        .collect::<Vec<_>>()
                });
                done.send(read_back).unwrap();
            });
            let read_back = finished
                .recv_timeout(std::time::Duration::from_secs(120))
                .unwrap_or_else(|_| panic!("{threads} pool thread(s): no progress in 120 s"));
            for (got, sent) in read_back {
                assert_eq!(got, sent, "{threads} pool thread(s)");
            }
        }
    }

    #[test]
    fn a_panic_while_encoding_is_raised_by_finish_and_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("quality.parquet");
        let writer = BackgroundWriter::<QualityRow>::create(&path).unwrap();
        writer.send(vec![note(1)]);
        writer.send_with(|_| -> Result<TableBatch, String> { panic!("a bug in a batch builder") });
        writer.send(vec![note(2)]);
        let raised = std::panic::catch_unwind(AssertUnwindSafe(|| writer.finish()));
        let message = raised.expect_err("finish raises the panic");
        assert_eq!(
            message.downcast_ref::<&str>(),
            Some(&"a bug in a batch builder")
        );
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
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
