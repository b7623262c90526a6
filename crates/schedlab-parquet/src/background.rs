//! A table encoded by rayon's pool while its rows are still being produced.
//!
//! The writer is any [`Sink`]: the engine's [`ParquetWriter`](crate::ParquetWriter), or
//! schedlab-tables' row writer around it, whose jobs turn rows into batches.
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
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use crate::TableError;

/// Batches waiting to be encoded before a send waits: one keeps the encoder busy, and more
/// would only hold more memory.
const QUEUE_BATCHES: usize = 1;

/// A file writer a [`BackgroundWriter`] encodes into: it is handed jobs (each writing a batch
/// into it) in order, then finished.
pub trait Sink: Send + 'static {
    /// Completes the file and renames it into place; returns its path.
    fn finish(self) -> Result<PathBuf, TableError>;
}

impl Sink for crate::ParquetWriter {
    fn finish(self) -> Result<PathBuf, TableError> {
        let path = self.path().to_owned();
        crate::ParquetWriter::finish(self)?;
        Ok(path)
    }
}

/// One batch's work for the encoder: a function that writes it into the writer.
type Job<W> = Box<dyn FnOnce(&mut W) -> Result<(), TableError> + Send>;

/// A [`Sink`] fed from any thread and encoded in rayon's pool.
///
/// Nothing appears at the path until [`finish`](Self::finish); dropping the
/// writer (an error elsewhere, a panic) waits for the batch being encoded, discards the rest and
/// deletes the temporary file.
pub struct BackgroundWriter<W: Sink> {
    shared: Arc<Shared<W>>,
}

struct Shared<W> {
    state: Mutex<State<W>>,
    /// Signalled whenever the drain task finishes a batch or stops.
    progress: Condvar,
}

struct State<W> {
    jobs: VecDeque<Job<W>>,
    /// A drain task is queued or running; it alone takes jobs and the writer.
    draining: bool,
    /// The file being written: out of the state while the drain task encodes into it, and
    /// gone after an error (dropped, which deletes its temporary file).
    writer: Option<W>,
    error: Option<TableError>,
    panic: Option<Box<dyn std::any::Any + Send>>,
}

impl<W> Shared<W> {
    fn state(&self) -> MutexGuard<'_, State<W>> {
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
    fn wait_until(&self, done: impl Fn(&State<W>) -> bool) {
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

impl<W: Sink> BackgroundWriter<W> {
    /// Encodes into `writer` in the pool from now on.
    pub fn new(writer: W) -> Self {
        BackgroundWriter {
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
        }
    }

    /// Queues `job`, which writes a batch into the writer when its turn comes; waits while the
    /// queue is full. After a write error the jobs are dropped: [`finish`](Self::finish)
    /// reports the error.
    pub fn queue(&self, job: impl FnOnce(&mut W) -> Result<(), TableError> + Send + 'static) {
        let job: Job<W> = Box::new(job);
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

impl<W: Sink> Drop for BackgroundWriter<W> {
    fn drop(&mut self) {
        // Unfinished: drop the queued batches and wait for the one being encoded, so the
        // writer is dropped (and its temporary file deleted) before the caller goes on.
        self.shared.state().jobs.clear();
        (self.shared).wait_until(|state| !state.draining);
        let writer = self.shared.state().writer.take();
        drop(writer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ParquetWriter;
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use arrow_array::{Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema, SchemaRef};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use std::path::Path;

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("n", DataType::Int64, false),
            Field::new("note", DataType::Utf8, false),
        ]))
    }

    /// Rows `numbers` as a batch: each number and its note.
    fn batch(numbers: &[i64]) -> RecordBatch {
        let notes: Vec<String> = numbers.iter().map(|n| format!("note {n}")).collect();
        RecordBatch::try_new(
            schema(),
            vec![
                Arc::new(Int64Array::from(numbers.to_vec())),
                Arc::new(StringArray::from(notes)),
            ],
        )
        .unwrap()
    }

    fn writer(path: &Path) -> BackgroundWriter<ParquetWriter> {
        let encodings = [("note", crate::ColumnEncoding::Dictionary)];
        BackgroundWriter::new(ParquetWriter::create(path, schema(), &encodings).unwrap())
    }

    fn send(writer: &BackgroundWriter<ParquetWriter>, numbers: &[i64]) {
        let batch = batch(numbers);
        writer.queue(move |w| w.write(&batch));
    }

    /// The numbers of the file `path`, checked against their notes.
    fn read_numbers(path: &Path) -> Vec<i64> {
        let file = std::fs::File::open(path).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build();
        let mut numbers = Vec::new();
        for batch in reader.unwrap() {
            let batch = batch.unwrap();
            let notes = batch.column(1).as_string::<i32>();
            for (i, n) in batch
                .column(0)
                .as_primitive::<Int64Type>()
                .iter()
                .enumerate()
            {
                let n = n.unwrap();
                assert_eq!(notes.value(i), format!("note {n}"));
                numbers.push(n);
            }
        }
        numbers
    }

    #[test]
    fn batches_sent_one_after_another_read_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.parquet");
        let writer = writer(&path);
        let numbers: Vec<i64> = (0..100).collect();
        for chunk in numbers.chunks(7) {
            send(&writer, chunk);
        }
        assert!(!path.exists(), "nothing at the path before finish");
        assert_eq!(writer.finish().unwrap(), path);
        assert_eq!(read_numbers(&path), numbers);
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
                    (0..3i64)
                        .into_par_iter()
                        .map(|input| {
                            let path = dir.path().join(format!("{input}.parquet"));
                            let writer = writer(&path);
                            let numbers: Vec<i64> = (0..600).map(|i| input * 1000 + i).collect();
                            for chunk in numbers.chunks(5) {
                                send(&writer, chunk);
                            }
                            writer.finish().unwrap();
                            (read_numbers(&path), numbers)
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
        let path = dir.path().join("notes.parquet");
        let writer = writer(&path);
        send(&writer, &[1]);
        writer.queue(|_| panic!("a bug in a batch builder"));
        send(&writer, &[2]);
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
    fn an_error_while_encoding_is_returned_by_finish_and_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.parquet");
        let writer = writer(&path);
        send(&writer, &[1]);
        let other = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
        writer.queue(move |w| w.write_table(&RecordBatch::new_empty(other).into()));
        send(&writer, &[2]);
        let err = writer.finish().unwrap_err().to_string();
        assert!(err.contains("notes.parquet"), "{err}");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn a_writer_dropped_unfinished_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.parquet");
        let writer = writer(&path);
        send(&writer, &[1]);
        drop(writer);
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
