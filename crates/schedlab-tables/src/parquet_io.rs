//! Parquet files of rows: atomic writes, whole or a batch at a time, and typed reads.

use std::fs::File;
use std::io::Write;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, FieldRef, Schema, SchemaRef};
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::arrow_writer::{ArrowColumnWriter, ArrowRowGroupWriterFactory, compute_leaves};
use parquet::arrow::{ArrowSchemaConverter, add_encoded_arrow_schema_to_metadata};
use parquet::basic::Compression;
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::ParquetError;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use serde_arrow::schema::{SchemaLike, TracingOptions};
use tempfile::NamedTempFile;

use crate::text_column::{TableBatch, TableColumn, TextColumn};
use crate::time_column::TimeColumn;
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

/// Writes one Arrow batch as the Parquet file `path`, atomically (temporary file + rename).
pub fn write_batch(path: &Path, batch: &RecordBatch) -> Result<(), TableError> {
    let mut file = AtomicParquet::create(path, batch.schema())?;
    file.write(batch)?;
    file.finish()
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
    file: AtomicParquet,
    rows: PhantomData<fn(&T)>,
}

impl<T: Table> TableWriter<T> {
    /// Starts the table `path` (its directory is created if needed); nothing appears at `path`
    /// until [`finish`](Self::finish).
    pub fn create(path: &Path) -> Result<Self, TableError> {
        let schema = schema_of::<T>();
        Ok(TableWriter {
            file: AtomicParquet::create(path, schema.clone())?,
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
            path: self.file.path.clone(),
            message,
        }
    }

    /// Completes the file and renames it to its path, which it returns.
    pub fn finish(self) -> Result<PathBuf, TableError> {
        let path = self.file.path.clone();
        self.file.finish()?;
        Ok(path)
    }
}

/// Rows per row group: big enough that per-group overhead (a codec per column)
/// vanishes, small enough that the encoded group a writer holds is a few megabytes.
const ROW_GROUP_ROWS: usize = 256 * 1024;

/// Encoded bytes per row group (the writer's estimate, which counts the page being filled
/// uncompressed): the group a writer holds is capped by bytes as well as rows, because a row's
/// size varies by table and by trace. Each table's encoder holds a group while it fills, so
/// the cap bounds the parse's memory; a group still holds some 100 K slices, so the per-group
/// overhead stays small.
const ROW_GROUP_BYTES: usize = 1 << 20;

/// How every table is encoded, chosen by timing `schedlab parse perf-sched` on the `just bench`
/// trace (the commit messages have the figures):
///
/// - Text columns (`run_id`, `comm`, states, kinds, workloads) are dictionary-encoded, by
///   [`TextColumn`] rather than these properties (see `text_column` for why): a trace has a
///   handful of distinct values, so a page holds small indices instead of every string again.
///   Plain strings cost as much to copy and compress, and their page buffers hold more memory.
/// - Other columns are not dictionary-encoded: integers are nearly all distinct or compress as
///   well without one, and building the dictionary costs a hash per value.
/// - Snappy, not zstd: zstd makes files a little smaller but costs more CPU time, and the
///   parquet crate creates a zstd compression and a decompression context for every column of
///   every row group, each holding about a megabyte while its group is written.
/// - Time columns (`*_ns`, Int64) are delta-encoded (nearly sorted, nearly all distinct) and
///   not compressed: nothing is left to squeeze in the deltas. [`TimeColumn`] encodes them
///   (see `time_column` for why), with min/max statistics per row group: with `run_id`'s, the
///   only statistics written, since analyses filter on them; elsewhere (command names, thread
///   ids) a row group spans every value anyway, and computing them is a comparison per value.
///
/// Parquet files written with zstd by older versions are still read (the `zstd` feature stays).
fn writer_properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::None)
        .build()
}

/// A time column: written by [`TimeColumn`].
fn is_time(field: &FieldRef) -> bool {
    field.name().ends_with("_ns") && field.data_type() == &DataType::Int64
}

/// A Parquet file being written under a temporary name in its final directory.
///
/// Text columns are encoded by [`TextColumn`] and time columns by [`TimeColumn`] (see their
/// modules for why), the others by the `parquet` crate's Arrow column writers; row groups are
/// cut as [`ROW_GROUP_ROWS`] and [`ROW_GROUP_BYTES`] say, a batch split across two groups where
/// needed.
struct AtomicParquet {
    path: PathBuf,
    schema: SchemaRef,
    file: SerializedFileWriter<NamedTempFile>,
    factory: ArrowRowGroupWriterFactory,
    /// How each field of the schema is written, in order.
    fields: Vec<FieldColumns>,
    /// The current row group's Arrow column writers (one per Parquet leaf, text ones unused).
    group: Option<Vec<ArrowColumnWriter>>,
    group_rows: usize,
}

/// How one field of a table is written.
enum FieldColumns {
    Text(Box<TextColumn>),
    Time(Box<TimeColumn>),
    /// By Arrow column writers, one per Parquet leaf of the field.
    Leaves(usize),
}

impl FieldColumns {
    /// Bytes of the current row group's chunk of a column schedlab encodes (0 for the others,
    /// which their Arrow column writers estimate).
    fn estimated_bytes(&self) -> usize {
        match self {
            FieldColumns::Text(text) => text.estimated_bytes(),
            FieldColumns::Time(time) => time.estimated_bytes(),
            FieldColumns::Leaves(_) => 0,
        }
    }

    /// The current row group's chunk of a column schedlab encodes, closed; `None` for the
    /// others.
    fn close_chunk(&mut self) -> Option<parquet::errors::Result<(Bytes, ColumnCloseResult)>> {
        match self {
            FieldColumns::Text(text) => Some(text.close_chunk()),
            FieldColumns::Time(time) => Some(time.close_chunk()),
            FieldColumns::Leaves(_) => None,
        }
    }
}

impl AtomicParquet {
    fn create(path: &Path, schema: SchemaRef) -> Result<Self, TableError> {
        let pq = |err| parquet_error(path, err);
        let tmp = temp_file_beside(path)?;
        let mut props = writer_properties();
        add_encoded_arrow_schema_to_metadata(&schema, &mut props);
        let descr = ArrowSchemaConverter::new().convert(&schema).map_err(pq)?;
        let file =
            SerializedFileWriter::new(tmp, descr.root_schema_ptr(), Arc::new(props)).map_err(pq)?;
        let factory = ArrowRowGroupWriterFactory::new(&file, schema.clone());
        let leaves = descr.columns();
        let mut first = 0;
        let fields = (schema.fields().iter())
            .map(|field| {
                let n = (leaves[first..].iter())
                    .take_while(|c| c.path().parts()[0] == *field.name())
                    .count();
                let leaf = leaves[first].clone();
                first += n;
                if field.data_type() == &DataType::Utf8 {
                    FieldColumns::Text(Box::new(TextColumn::new(leaf, field.name() == "run_id")))
                } else if is_time(field) {
                    FieldColumns::Time(Box::new(TimeColumn::new(leaf)))
                } else {
                    FieldColumns::Leaves(n)
                }
            })
            .collect();
        Ok(AtomicParquet {
            path: path.to_owned(),
            schema,
            file,
            factory,
            fields,
            group: None,
            group_rows: 0,
        })
    }

    /// Adds `batch` (see [`write_table`](Self::write_table)).
    fn write(&mut self, batch: &RecordBatch) -> Result<(), TableError> {
        self.write_table(&TableBatch::from(batch.clone()))
    }

    /// Adds `batch` to the current row group, which is written out once it holds
    /// [`ROW_GROUP_ROWS`] rows or [`ROW_GROUP_BYTES`] encoded bytes.
    fn write_table(&mut self, batch: &TableBatch) -> Result<(), TableError> {
        (self.encode(batch)).map_err(|err| parquet_error(&self.path, err))
    }

    fn encode(&mut self, batch: &TableBatch) -> parquet::errors::Result<()> {
        let mut start = 0;
        while start < batch.rows {
            if self.group.is_none() {
                let index = self.file.flushed_row_groups().len();
                self.group = Some(self.factory.create_column_writers(index)?);
            }
            let mut take = (batch.rows - start).min(ROW_GROUP_ROWS - self.group_rows);
            // As many rows as fit the byte cap at the group's bytes per row so far.
            let bytes = self.group_bytes();
            if let Some(per_row) = bytes.checked_div(self.group_rows) {
                let fit = ROW_GROUP_BYTES.saturating_sub(bytes) / per_row.max(1);
                if fit == 0 {
                    self.write_group()?;
                    continue;
                }
                take = take.min(fit);
            }
            self.write_rows(batch, start, take)?;
            start += take;
            if self.group_rows >= ROW_GROUP_ROWS || self.group_bytes() >= ROW_GROUP_BYTES {
                self.write_group()?;
            }
        }
        Ok(())
    }

    /// Rows `start..start + len` of `batch` into the current row group.
    fn write_rows(
        &mut self,
        batch: &TableBatch,
        start: usize,
        len: usize,
    ) -> parquet::errors::Result<()> {
        let writers = self.group.as_mut().expect("a row group is open");
        let mut leaf = 0;
        let columns = (self.schema.fields().iter())
            .zip(&batch.columns)
            .zip(&mut self.fields);
        for ((field, column), how) in columns {
            match (how, column) {
                (FieldColumns::Text(text), TableColumn::Text(keyed)) => {
                    text.push_keyed(&keyed.keys[start..start + len], &*keyed.text)?;
                    leaf += 1;
                }
                (FieldColumns::Text(text), TableColumn::Array(array)) => {
                    let strings = array.as_string_opt::<i32>().ok_or_else(|| {
                        ParquetError::General(format!("column {} is not text", field.name()))
                    })?;
                    let rows = start..start + len;
                    text.push_strs(rows.map(|i| strings.is_valid(i).then(|| strings.value(i))))?;
                    leaf += 1;
                }
                (FieldColumns::Time(time), TableColumn::Array(array)) => {
                    let times = array.as_primitive_opt::<Int64Type>().ok_or_else(|| {
                        ParquetError::General(format!("column {} is not Int64", field.name()))
                    })?;
                    time.push(&times.slice(start, len))?;
                    leaf += 1;
                }
                (FieldColumns::Leaves(_), TableColumn::Array(array)) => {
                    for column in compute_leaves(field, &array.slice(start, len))? {
                        writers[leaf].write(&column)?;
                        leaf += 1;
                    }
                }
                (FieldColumns::Leaves(_) | FieldColumns::Time(_), TableColumn::Text(_)) => {
                    return Err(ParquetError::General(format!(
                        "keyed text for column {}, which is not text",
                        field.name()
                    )));
                }
            }
        }
        self.group_rows += len;
        Ok(())
    }

    /// The current row group's encoded size, about.
    fn group_bytes(&self) -> usize {
        let arrays = self
            .group
            .iter()
            .flatten()
            .map(|w| w.get_estimated_total_bytes());
        let own = self.fields.iter().map(FieldColumns::estimated_bytes);
        arrays.sum::<usize>() + own.sum::<usize>()
    }

    /// Writes out the current row group, if any.
    fn write_group(&mut self) -> parquet::errors::Result<()> {
        let Some(writers) = self.group.take() else {
            return Ok(());
        };
        self.group_rows = 0;
        let mut group = self.file.next_row_group()?;
        let mut writers = writers.into_iter();
        for how in &mut self.fields {
            if let FieldColumns::Leaves(n) = how {
                for writer in writers.by_ref().take(*n) {
                    writer.close()?.append_to_row_group(&mut group)?;
                }
            } else if let Some(chunk) = how.close_chunk() {
                writers.next(); // the factory's unused writer of this leaf
                let (bytes, close) = chunk?;
                group.append_column(&bytes, close)?;
            }
        }
        group.close()?;
        Ok(())
    }

    fn finish(mut self) -> Result<(), TableError> {
        (self.write_group()).map_err(|err| parquet_error(&self.path, err))?;
        let path = self.path;
        let mut tmp = (self.file.into_inner()).map_err(|err| parquet_error(&path, err))?;
        tmp.flush().map_err(|source| io_error(&path, source))?;
        tmp.persist(&path)
            .map_err(|err| io_error(&path, err.error))?;
        Ok(())
    }
}

/// A temporary file in the directory of `path` (created if needed), to be renamed to `path`
/// once complete; deleted if dropped before. Its name starts with `.tmp-` (what the runner
/// sweeps after a kill) and keeps `path`'s extension.
fn temp_beside(path: &Path) -> std::io::Result<NamedTempFile> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let suffix = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    // Outputs are data to share (an analyst's notebook often runs as another user than the root
    // that collected them): 0644, not the 0600 temporary files get by default.
    tempfile::Builder::new()
        .prefix(".tmp-")
        .suffix(&suffix)
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))
        .tempfile_in(dir)
}

pub(crate) fn temp_file_beside(path: &Path) -> Result<NamedTempFile, TableError> {
    temp_beside(path).map_err(|source| io_error(path, source))
}

/// Writes `bytes` as the file `path` atomically (temporary file in the same directory, then
/// rename): reports, manifests and state files get the same guarantee as tables.
pub fn write_file_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = temp_beside(path)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|err| err.error)?;
    Ok(())
}

pub(crate) fn io_error(path: &Path, source: std::io::Error) -> TableError {
    TableError::Io {
        path: path.to_owned(),
        source,
    }
}

pub(crate) fn parquet_error(path: &Path, err: parquet::errors::ParquetError) -> TableError {
    TableError::Parquet {
        path: path.to_owned(),
        message: err.to_string(),
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
    let file = File::open(path).map_err(|source| io_error(path, source))?;
    let pq = |err| parquet_error(path, err);
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

    fn files_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// The file's metadata and its rows, as the `parquet` crate's Arrow reader gives them.
    fn read_back(
        path: &Path,
    ) -> (
        Arc<parquet::file::metadata::ParquetMetaData>,
        Vec<RecordBatch>,
    ) {
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
        let metadata = reader.metadata().clone();
        let batches = reader.build().unwrap().map(Result::unwrap).collect();
        (metadata, batches)
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

    /// Times read back as written, with their nulls, over row groups of several pages and
    /// batches that end mid-page and mid-block, with each row group's min, max and null count.
    #[test]
    fn time_columns_read_back_with_their_nulls_and_ranges() {
        use arrow_array::Int64Array;
        use parquet::basic::Encoding;
        use parquet::file::statistics::Statistics;

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("times.parquet");
        let schema = Arc::new(Schema::new(vec![
            arrow_schema::Field::new("start_ns", DataType::Int64, false),
            arrow_schema::Field::new("end_ns", DataType::Int64, true),
        ]));
        // Nearly sorted times with a step back, and durations with nulls, over row groups of
        // several data pages and batches that end mid-page and mid-block.
        let rows = 3 * ROW_GROUP_ROWS / 2 + 77;
        let start: Vec<i64> = (0..rows as i64)
            .map(|i| 1_000_000_000 + i * 1_000 + (i % 5) * 7 - if i == 999 { 5_000 } else { 0 })
            .collect();
        let end: Vec<Option<i64>> = (0..rows as i64)
            .map(|i| (i % 3 != 1).then_some(i64::MAX - i * i))
            .collect();
        let mut file = AtomicParquet::create(&path, schema.clone()).unwrap();
        let mut at = 0;
        for size in [1, 127, 129, 40_000].into_iter().cycle() {
            let n = size.min(rows - at);
            let batch = RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(Int64Array::from(start[at..at + n].to_vec())),
                    Arc::new(Int64Array::from(end[at..at + n].to_vec())),
                ],
            )
            .unwrap();
            file.write(&batch).unwrap();
            at += n;
            if at == rows {
                break;
            }
        }
        file.finish().unwrap();

        let (metadata, batches) = read_back(&path);
        let column = |i: usize| -> Vec<Option<i64>> {
            (batches.iter())
                .flat_map(|b| {
                    b.column(i)
                        .as_primitive::<Int64Type>()
                        .iter()
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        let start: Vec<Option<i64>> = start.into_iter().map(Some).collect();
        assert_eq!(column(0), start);
        assert_eq!(column(1), end);
        assert!(metadata.num_row_groups() > 1);
        let mut first = 0;
        for group in metadata.row_groups() {
            let n = group.num_rows() as usize;
            for (c, values) in [(0, &start), (1, &end)] {
                let chunk = group.column(c);
                assert!(
                    chunk
                        .encodings()
                        .any(|e| e == Encoding::DELTA_BINARY_PACKED)
                );
                let present = values[first..first + n].iter().flatten();
                let Some(Statistics::Int64(stats)) = chunk.statistics() else {
                    panic!("no statistics for column {c}");
                };
                assert_eq!(stats.min_opt(), present.clone().min());
                assert_eq!(stats.max_opt(), present.clone().max());
                let nulls = values[first..first + n]
                    .iter()
                    .filter(|v| v.is_none())
                    .count();
                assert_eq!(stats.null_count_opt(), Some(nulls as u64));
            }
            first += n;
        }
    }

    /// Text given by key reads back as the text it stands for, mixed with text given as
    /// strings, with nulls where the key says so, over row groups of one page and of several,
    /// with the run id's min and max in each; a null where a column has none is an error
    /// naming the file and column.
    #[test]
    fn keyed_text_reads_back_as_the_strings_it_stands_for() {
        use crate::{KeyedText, NULL_KEY, TableBatch, TableColumn};
        use arrow_array::{Int64Array, StringArray};
        use parquet::file::statistics::Statistics;

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keyed.parquet");
        let schema = Arc::new(Schema::new(vec![
            arrow_schema::Field::new("run_id", DataType::Utf8, false),
            arrow_schema::Field::new("n", DataType::Int64, false),
            arrow_schema::Field::new("workload", DataType::Utf8, true),
        ]));
        let keyed = |keys: Vec<u128>| {
            TableColumn::Text(KeyedText {
                keys,
                text: Arc::new(|k| format!("w{k}")),
            })
        };
        let batch = |ns: Vec<i64>, workloads: Vec<u128>| TableBatch {
            rows: ns.len(),
            columns: vec![
                TableColumn::Text(KeyedText {
                    keys: vec![7; ns.len()],
                    text: Arc::new(|_| "run-7".to_string()),
                }),
                TableColumn::Array(Arc::new(Int64Array::from(ns))),
                keyed(workloads),
            ],
        };
        let mut file = AtomicParquet::create(&path, schema.clone()).unwrap();
        // 20 rows of w1, w2 and nulls (runs and literals), then a row group of w3 alone.
        let first: Vec<u128> = (0..20).map(|i| [1, 1, NULL_KEY, 2][i % 4]).collect();
        file.write_table(&batch((0..20).collect(), first.clone()))
            .unwrap();
        file.write_group().unwrap();
        // The same texts given as strings go through the same dictionary.
        let strings = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(StringArray::from(vec!["run-7"; 2])),
                Arc::new(Int64Array::from(vec![20, 21])),
                Arc::new(StringArray::from(vec![Some("w3"), None])),
            ],
        )
        .unwrap();
        file.write(&strings).unwrap();
        file.write_table(&batch(vec![22; 9], vec![3; 9])).unwrap();
        // More rows than a data page holds, so that a chunk has several pages, ending in runs
        // of a null and of a text that each span a page boundary.
        let many: Vec<u128> = ((0..70_000).map(|i| [1, NULL_KEY, 2][i % 3]))
            .chain(std::iter::repeat_n(NULL_KEY, 40_000))
            .chain(std::iter::repeat_n(2, 40_000))
            .collect();
        file.write_table(&batch(vec![23; many.len()], many.clone()))
            .unwrap();
        file.finish().unwrap();

        let (metadata, batches) = read_back(&path);
        // Data pages of the workload column's chunk in row group `g`.
        let pages = |g: usize| {
            use parquet::file::reader::{FileReader, SerializedFileReader};
            let file = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
            let chunk = file
                .get_row_group(g)
                .unwrap()
                .get_column_page_reader(2)
                .unwrap();
            (chunk.map(Result::unwrap))
                .filter(|p| matches!(p, parquet::column::page::Page::DataPage { .. }))
                .count()
        };
        assert_eq!(pages(0), 1);
        assert!(
            pages(metadata.num_row_groups() - 1) > 1,
            "a chunk of several pages"
        );
        let text = |name: &str| -> Vec<Option<String>> {
            (batches.iter())
                .flat_map(|b| {
                    let column = b.column_by_name(name).unwrap().as_string::<i32>();
                    column
                        .iter()
                        .map(|v| v.map(str::to_string))
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        let mut expected: Vec<Option<String>> = first
            .iter()
            .map(|&k| (k != NULL_KEY).then(|| format!("w{k}")))
            .collect();
        expected.extend([Some("w3".into()), None]);
        expected.extend(vec![Some("w3".into()); 9]);
        expected.extend(
            many.iter()
                .map(|&k| (k != NULL_KEY).then(|| format!("w{k}"))),
        );
        assert_eq!(text("workload"), expected);
        assert_eq!(text("run_id"), vec![Some("run-7".to_string()); 150_031]);
        assert_eq!(
            batches[0].schema(),
            schema,
            "the Arrow schema is the table's"
        );

        let groups = metadata.row_groups();
        assert_eq!(groups[0].num_rows(), 20);
        assert_eq!(groups.iter().map(|g| g.num_rows()).sum::<i64>(), 150_031);
        for group in groups {
            match group.column(0).statistics() {
                Some(Statistics::ByteArray(s)) => {
                    assert_eq!(s.min_opt().unwrap().as_utf8().unwrap(), "run-7");
                    assert_eq!(s.max_opt().unwrap().as_utf8().unwrap(), "run-7");
                }
                other => panic!("run_id statistics: {other:?}"),
            }
            assert!(group.column(2).statistics().is_none());
        }

        let mut file = AtomicParquet::create(&dir.path().join("bad.parquet"), schema).unwrap();
        let mut bad = batch(vec![1], vec![1]);
        bad.columns[0] = keyed(vec![NULL_KEY]);
        let err = file.write_table(&bad).unwrap_err().to_string();
        assert!(
            err.contains("bad.parquet") && err.contains("run_id"),
            "{err}"
        );
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

#[cfg(test)]
mod permission_tests {
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn tables_are_readable_by_other_users() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("quality.parquet");
        super::write_rows::<crate::QualityRow>(&path, &[]).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o044, 0o044, "mode {mode:o}");
    }
}
