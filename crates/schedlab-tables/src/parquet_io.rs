//! Parquet files of rows: atomic writes, whole or a batch at a time, and typed reads.

use std::fs::File;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, FieldRef, Schema, SchemaRef};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use schedlab_parquet::{ParquetWriter, TableBatch};
use serde_arrow::schema::{SchemaLike, TracingOptions};

use crate::{SharedStrings, Table, TableError};

fn tracing_options() -> TracingOptions {
    TracingOptions::default()
        .strings_as_large_utf8(false)
        .sequence_as_large_list(false)
        .allow_null_fields(true)
        .enums_without_data_as_strings(true)
}

fn fields_of<T: Table>() -> Vec<FieldRef> {
    let fields = Vec::<FieldRef>::from_type::<T>(tracing_options())
        .unwrap_or_else(|err| panic!("row type of table {} has no Arrow schema: {err}", T::NAME));
    fields.into_iter().map(plain_strings).collect()
}

/// serde_arrow traces a unit-only enum (a severity, a verdict) as a dictionary of strings; the
/// tables hold it as a plain `Utf8` column instead, the same column a `String` field had, so
/// that files written before the enum existed and after it have one schema and read alike.
/// serde_arrow writes and reads such an enum to and from a `Utf8` column by its variant name.
fn plain_strings(field: FieldRef) -> FieldRef {
    match field.data_type() {
        DataType::Dictionary(_, values) => {
            let values = values.as_ref().clone();
            Arc::new(field.as_ref().clone().with_data_type(values))
        }
        _ => field,
    }
}

/// The Arrow schema of table `T`, derived from its row type.
pub fn schema_of<T: Table>() -> SchemaRef {
    Arc::new(Schema::new(fields_of::<T>()))
}

/// Rows converted to one Arrow batch at a time by [`TableWriter::write`].
const ARROW_CHUNK_ROWS: usize = 64 * 1024;

/// Writes `rows` as the Parquet file `path`, atomically (temporary file + rename).
pub fn write_rows<T: Table>(path: &Path, rows: &[T]) -> Result<(), TableError> {
    let mut writer = TableWriter::<T>::create(path)?;
    writer.write(rows)?;
    writer.finish().map(drop)
}

/// A Parquet file of table `T` written a slice of rows at a time, so that a table larger than
/// memory can be written while it is produced.
///
/// Rows gather into row groups of at most 256 K rows or about 1 MiB encoded, whichever comes
/// first, however they are sliced; the writer holds at most one encoded, compressed row group in
/// memory.
/// The rows go to a temporary file in the destination directory, which [`finish`](Self::finish)
/// renames to `path`; dropping the writer without finishing (an error, a panic) deletes it, so
/// `path` is never a half-written table.
///
/// ```no_run
/// use schedlab_tables::{QualityRow, TableWriter};
///
/// let rows: Vec<QualityRow> = Vec::new();
/// let mut writer = TableWriter::<QualityRow>::create("out/quality.parquet".as_ref())?;
/// for chunk in rows.chunks(100_000) {
///     writer.write(chunk)?;
/// }
/// writer.finish()?;
/// # Ok::<(), schedlab_tables::TableError>(())
/// ```
pub struct TableWriter<T: Table> {
    schema: SchemaRef,
    file: ParquetWriter,
    rows: PhantomData<fn(&T)>,
}

impl<T: Table> TableWriter<T> {
    /// Starts the table `path` (its directory is created if needed); nothing appears at `path`
    /// until [`finish`](Self::finish).
    pub fn create(path: &Path) -> Result<Self, TableError> {
        let schema = schema_of::<T>();
        Ok(TableWriter {
            file: ParquetWriter::create(path, schema.clone(), T::ENCODINGS)?,
            schema,
            rows: PhantomData,
        })
    }

    /// Appends `rows` (nothing when `rows` is empty).
    pub fn write(&mut self, rows: &[T]) -> Result<(), TableError> {
        // Converted to Arrow a chunk at a time: the arrays of a whole table (a run's timeline,
        // a stretch per slice) would sit beside its rows, doubling what the table holds.
        for chunk in rows.chunks(ARROW_CHUNK_ROWS) {
            let batch = serde_arrow::to_record_batch(self.schema.fields(), &chunk)
                .map_err(|err| self.schema_error(err.to_string()))?;
            self.file.write(&batch)?;
        }
        Ok(())
    }

    /// Appends a batch whose text columns may come as [`KeyedText`](crate::KeyedText) (see
    /// [`BackgroundWriter::send_with`](crate::BackgroundWriter::send_with)): a column per
    /// field of the table's schema, in order.
    pub fn write_table(&mut self, batch: &TableBatch) -> Result<(), TableError> {
        if let Some(why) = batch.mismatch(&self.schema) {
            return Err(self.schema_error(format!("a batch for table {}: {why}", T::NAME)));
        }
        self.file.write_table(batch)
    }

    /// The table's Arrow schema.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    pub(crate) fn schema_error(&self, message: String) -> TableError {
        TableError::Schema {
            path: self.file.path().to_owned(),
            message,
        }
    }

    /// Completes the file and renames it to its path, which it returns.
    pub fn finish(self) -> Result<PathBuf, TableError> {
        let path = self.file.path().to_owned();
        self.file.finish()?;
        Ok(path)
    }
}

impl<T: Table + Send + 'static> schedlab_parquet::Sink for TableWriter<T> {
    fn finish(self) -> Result<PathBuf, TableError> {
        TableWriter::finish(self)
    }
}

/// Reads every batch of the Parquet file `path`.
pub fn read_batches(path: &Path) -> Result<Vec<RecordBatch>, TableError> {
    open(path)?.batches.collect()
}

/// A Parquet file opened for reading: its footer read once, for the row count a reader sizes
/// its vector by (one grown by doubling holds up to twice a trace's slices while it grows) and
/// for the batches, decoded one at a time as they are taken.
pub(crate) struct Opened<'a, B> {
    path: &'a Path,
    pub(crate) rows: usize,
    batches: B,
}

/// Opens the Parquet file `path` for reading.
pub(crate) fn open(
    path: &Path,
) -> Result<Opened<'_, impl Iterator<Item = Result<RecordBatch, TableError>> + '_>, TableError> {
    let file = File::open(path).map_err(|source| TableError::io(path, source))?;
    let pq = |err| TableError::parquet(path, err);
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(pq)?;
    let rows = usize::try_from(builder.metadata().file_metadata().num_rows()).unwrap_or(0);
    let reader = builder.build().map_err(pq)?;
    Ok(Opened {
        path,
        rows,
        batches: reader.map(move |batch| {
            batch.map_err(|err| TableError::Parquet {
                path: path.to_owned(),
                message: err.to_string(),
            })
        }),
    })
}

impl<B: Iterator<Item = Result<RecordBatch, TableError>>> Opened<'_, B> {
    /// Its rows as table `T`, a batch of rows at a time.
    fn row_batches<T: Table>(self) -> impl Iterator<Item = Result<Vec<T>, TableError>> + use<B, T> {
        let path = self.path.to_owned();
        self.batches.map(move |batch| {
            serde_arrow::from_record_batch(&batch?).map_err(|err| TableError::Schema {
                path: path.clone(),
                message: err.to_string(),
            })
        })
    }

    /// Appends its rows for which `keep` holds to `rows`, their strings shared through
    /// `strings` ([`Table::share_strings`]). Rows are decoded a batch at a time, so the rows
    /// left out never sit in memory together.
    pub(crate) fn append_rows<T: Table>(
        self,
        rows: &mut Vec<T>,
        strings: &mut SharedStrings,
        mut keep: impl FnMut(&T) -> bool,
    ) -> Result<(), TableError> {
        for part in self.row_batches::<T>() {
            for mut row in part? {
                if keep(&row) {
                    row.share_strings(strings);
                    rows.push(row);
                }
            }
        }
        Ok(())
    }
}

/// Reads the Parquet file `path` back into rows of table `T`, a batch at a time, so that the
/// decoded columns of only one batch sit beside the rows.
pub fn read_rows<T: Table>(path: &Path) -> Result<Vec<T>, TableError> {
    let file = open(path)?;
    let mut rows = Vec::with_capacity(file.rows);
    file.append_rows(&mut rows, &mut SharedStrings::default(), |_| true)?;
    Ok(rows)
}

/// The rows of table `T` in the Parquet file `path`, one batch of rows at a time as they are
/// taken: for a reader that streams a table too big to hold (a trace's slices) into something
/// else.
pub fn row_batches<T: Table>(
    path: &Path,
) -> Result<impl Iterator<Item = Result<Vec<T>, TableError>> + use<'_, T>, TableError> {
    Ok(open(path)?.row_batches())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ProcessRow, QualityRow, SchedSliceRow};
    use arrow_schema::DataType;
    use schedlab_parquet::{ROW_GROUP_BYTES, ROW_GROUP_ROWS};

    fn files_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn slice(tid: i32, comm: &Arc<str>, workload: Option<&Arc<str>>) -> SchedSliceRow {
        SchedSliceRow {
            run_id: "r1".into(),
            cpu: tid % 4,
            pid: tid,
            tid,
            comm: comm.clone(),
            start_ns: 10 * tid as i64,
            end_ns: 10 * tid as i64 + 5,
            run_ns: 5,
            wait_ns: 1,
            sched_delay_ns: 0,
            preempt_wait_ns: 0,
            prev_state: "R+".into(),
            workload: workload.cloned(),
            prio: Some(120 + tid % 20),
        }
    }

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
        // The schema is the file's own (its footer), not one derived from the row type here.
        let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap();
        assert_eq!(builder.metadata().file_metadata().num_rows(), 0);
        let schema = builder.schema();
        assert_eq!(schema.fields(), schema_of::<QualityRow>().fields());
        assert_eq!(
            schema.field_with_name("message").unwrap().data_type(),
            &DataType::Utf8
        );
        assert!(read_rows::<QualityRow>(&path).unwrap().is_empty());
    }

    #[test]
    fn a_table_written_in_batches_reads_back_whole_in_one_row_group() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sched_slices.parquet");
        let (comm, burst): (Arc<str>, Arc<str>) = ("stress-ng".into(), "burst".into());
        let rows: Vec<SchedSliceRow> = (1..=7)
            .map(|tid| slice(tid, &comm, (tid % 2 == 0).then_some(&burst)))
            .collect();
        let mut writer = TableWriter::<SchedSliceRow>::create(&path).unwrap();
        for chunk in [&rows[..3], &[], &rows[3..4], &rows[4..]] {
            writer.write(chunk).unwrap();
        }
        assert_eq!(
            files_in(dir.path()).len(),
            1,
            "only the temporary file so far"
        );
        assert!(!path.exists(), "nothing at the path before finish");
        assert_eq!(writer.finish().unwrap(), path);

        assert_eq!(read_rows::<SchedSliceRow>(&path).unwrap(), rows);
        assert_eq!(files_in(dir.path()), ["sched_slices.parquet"]);
        let file = File::open(&path).unwrap();
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        assert_eq!(builder.metadata().num_row_groups(), 1);
        // Shared strings are plain strings in the file, as a String field would be.
        for column in ["run_id", "comm", "prev_state", "workload"] {
            let schema = builder.schema();
            let field = schema.field_with_name(column).unwrap();
            assert_eq!(field.data_type(), &DataType::Utf8, "{column}");
        }
        assert_eq!(
            builder.schema().fields(),
            schema_of::<SchedSliceRow>().fields()
        );
    }

    #[test]
    fn row_groups_are_capped_by_encoded_bytes_before_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sched_slices.parquet");
        // Values that zstd cannot squeeze much (a xorshift sequence), so that the file is several
        // times ROW_GROUP_BYTES while far fewer rows than ROW_GROUP_ROWS.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let rows: Vec<SchedSliceRow> = (0..120_000)
            .map(|i| SchedSliceRow {
                comm: format!("t{:x}", next() % 100_000).into(),
                start_ns: i * 1000,
                end_ns: i * 1000 + (next() % 1000) as i64,
                run_ns: (next() >> 1) as i64,
                wait_ns: (next() >> 1) as i64,
                pid: next() as i32,
                tid: next() as i32,
                ..slice(1, &"x".into(), None)
            })
            .collect();
        let mut writer = TableWriter::<SchedSliceRow>::create(&path).unwrap();
        for chunk in rows.chunks(8192) {
            writer.write(chunk).unwrap();
        }
        writer.finish().unwrap();

        let file = File::open(&path).unwrap();
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        let groups = builder.metadata().row_groups();
        assert!(groups.len() >= 3, "{} row groups", groups.len());
        for group in groups {
            assert!(
                group.compressed_size() as usize <= ROW_GROUP_BYTES,
                "a row group of {} bytes",
                group.compressed_size()
            );
            assert!((group.num_rows() as usize) < ROW_GROUP_ROWS);
        }
        assert_eq!(read_rows::<SchedSliceRow>(&path).unwrap(), rows);
    }

    #[test]
    fn a_table_writer_dropped_before_finish_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sched_slices.parquet");
        let comm: Arc<str> = "x".into();
        let mut writer = TableWriter::<SchedSliceRow>::create(&path).unwrap();
        writer.write(&[slice(1, &comm, None)]).unwrap();
        drop(writer);
        assert!(files_in(dir.path()).is_empty());
    }
}

/// The enums of closed word sets are plain `Utf8` columns holding their words, and a file whose
/// column was written from a `String` reads back into the enum.
#[cfg(test)]
mod word_column_tests {
    use arrow_array::{Array, StringArray};
    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::manifest::RunStatus;
    use crate::{ComparisonRow, QualityRow, RunRow, Severity, Verdict};

    /// Writes `rows`, checks that `column` is `Utf8` in the file and holds `words`, and reads the
    /// rows back unchanged.
    fn check<T: Table + PartialEq + std::fmt::Debug>(rows: &[T], column: &str, words: &[&str]) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        write_rows(&path, rows).unwrap();
        let batches = read_batches(&path).unwrap();
        let batch = &batches[0];
        let values = batch.column_by_name(column).unwrap();
        assert_eq!(values.data_type(), &DataType::Utf8, "{column}");
        let values = values.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(values.iter().flatten().collect::<Vec<_>>(), words);
        let schema = schema_of::<T>();
        assert_eq!(
            schema.field_with_name(column).unwrap().data_type(),
            &DataType::Utf8
        );
        assert_eq!(read_rows::<T>(&path).unwrap(), rows);
    }

    fn quality(severity: Severity) -> QualityRow {
        QualityRow {
            run_id: "r1".into(),
            source: "perf".into(),
            severity,
            message: "lost 3 events".into(),
            time_ns: None,
            cpu: Some(1),
        }
    }

    #[test]
    fn severities_are_utf8_words() {
        let rows: Vec<_> = Severity::ALL.iter().copied().map(quality).collect();
        check(&rows, "severity", &["info", "warning", "error"]);
    }

    #[test]
    fn run_statuses_are_utf8_words() {
        let rows: Vec<_> = (RunStatus::ALL.iter().copied())
            .map(|status| RunRow {
                run_id: "r1".into(),
                pipeline: "p".into(),
                label: None,
                variant: String::new(),
                repetition: 0,
                host: "h".into(),
                kernel: "6.8".into(),
                cpu_model: "x".into(),
                started_at: "2026-01-01T00:00:00Z".into(),
                status,
                duration_ns: 1,
                trace_window_start_ns: None,
                trace_window_end_ns: None,
                kernel_build: None,
                kernel_config_digest: None,
                sched_config: None,
                imported: false,
            })
            .collect();
        check(
            &rows,
            "status",
            &["completed", "failed", "interrupted", "workload-stopped"],
        );
    }

    #[test]
    fn verdicts_are_utf8_words_spaces_included() {
        let rows: Vec<_> = (Verdict::ALL.iter().copied())
            .map(|verdict| ComparisonRow {
                run_ids: "r1,r2".into(),
                by: "label".into(),
                context: String::new(),
                group: "new".into(),
                baseline: "old".into(),
                workload: "w".into(),
                metric: "runner/wall_s".into(),
                unit: "s".into(),
                runs: 2,
                mean: 1.0,
                stddev: None,
                ci_low: None,
                ci_high: None,
                diff_pct: None,
                diff_ci_low_pct: None,
                diff_ci_high_pct: None,
                verdict,
                welch_p: None,
                mann_whitney_u: None,
                mann_whitney_p: None,
                verdict_note: None,
                first_vs_rest_pct: None,
                slope_per_run: None,
                slope_ci_low: None,
                slope_ci_high: None,
                order_effect: false,
                verdict_p: None,
                q: None,
                hodges_lehmann: None,
                hodges_lehmann_ci_low: None,
                hodges_lehmann_ci_high: None,
                ci_method: "t".into(),
                diff_ci_method: None,
                stands_for: None,
            })
            .collect();
        let words = [
            "baseline",
            "higher",
            "lower",
            "within noise",
            "too few runs",
            "no baseline runs",
            "inconclusive",
        ];
        check(&rows, "verdict", &words);
    }

    /// The quality row as it was when `severity` was a `String`.
    #[derive(Serialize, Deserialize)]
    struct StringQualityRow {
        run_id: String,
        source: String,
        severity: String,
        message: String,
        time_ns: Option<i64>,
        cpu: Option<i32>,
    }

    impl Table for StringQualityRow {
        const NAME: &'static str = "quality";
        const ENCODINGS: &'static crate::Encodings = QualityRow::ENCODINGS;
    }

    #[test]
    fn a_table_written_with_string_words_reads_into_the_enum() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("quality.parquet");
        let old: Vec<_> = (Severity::ALL.iter())
            .map(|severity| StringQualityRow {
                run_id: "r1".into(),
                source: "perf".into(),
                severity: severity.as_str().to_owned(),
                message: "lost 3 events".into(),
                time_ns: None,
                cpu: Some(1),
            })
            .collect();
        write_rows(&path, &old).unwrap();
        assert_eq!(schema_of::<StringQualityRow>(), schema_of::<QualityRow>());
        let expected: Vec<_> = Severity::ALL.iter().copied().map(quality).collect();
        assert_eq!(read_rows::<QualityRow>(&path).unwrap(), expected);
    }
}
