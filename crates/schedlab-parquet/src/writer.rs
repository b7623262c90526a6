//! A Parquet file of a table, written under a temporary name beside its destination and renamed
//! into place when complete: each column as the table declares ([`ColumnEncoding`]), dictionary
//! text by [`TextColumn`], delta times by [`TimeColumn`], the others by the `parquet` crate's
//! Arrow column writers; row groups cut by rows and bytes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, RecordBatch};
use arrow_schema::SchemaRef;
use bytes::Bytes;
use parquet::arrow::arrow_writer::{ArrowColumnWriter, ArrowRowGroupWriterFactory, compute_leaves};
use parquet::arrow::{ArrowSchemaConverter, add_encoded_arrow_schema_to_metadata};
use parquet::basic::Compression;
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::ParquetError;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use tempfile::NamedTempFile;

use crate::TableError;
use crate::encoding::{ColumnEncoding, Encodings};
use crate::text_column::{TableBatch, TableColumn, TextColumn};
use crate::time_column::TimeColumn;

/// Writes one Arrow batch as the Parquet file `path`, atomically (temporary file + rename), its
/// columns encoded as `encodings` declares.
pub fn write_batch(
    path: &Path,
    batch: &RecordBatch,
    encodings: &Encodings,
) -> Result<(), TableError> {
    let mut file = ParquetWriter::create(path, batch.schema(), encodings)?;
    file.write(batch)?;
    file.finish()
}

/// Rows per row group: big enough that per-group overhead (a codec per column)
/// vanishes, small enough that the encoded group a writer holds is a few megabytes.
pub const ROW_GROUP_ROWS: usize = 256 * 1024;

/// Encoded bytes per row group (the writer's estimate, which counts the page being filled
/// uncompressed): the group a writer holds is capped by bytes as well as rows, because a row's
/// size varies by table and by trace. Each table's encoder holds a group while it fills, so
/// the cap bounds the parse's memory; a group still holds some 100 K slices, so the per-group
/// overhead stays small.
pub const ROW_GROUP_BYTES: usize = 1 << 20;

/// How the columns a table declares [`Plain`](ColumnEncoding::Plain) are written, chosen by
/// timing `schedlab parse perf-sched` on the `just bench` trace (the commit messages have the
/// figures; docs/src/parquet.md says why each table's columns are declared as they are):
///
/// - Not dictionary-encoded: integers are nearly all distinct or compress as well without one,
///   and building the dictionary costs a hash per value. Text that should have a dictionary is
///   declared [`Dictionary`](ColumnEncoding::Dictionary) and written by [`TextColumn`].
/// - Snappy, not zstd: zstd makes files a little smaller but costs more CPU time, and the
///   parquet crate creates a zstd compression and a decompression context for every column of
///   every row group, each holding about a megabyte while its group is written.
/// - No statistics: a row group spans every value of a thread id or a CPU anyway, and
///   computing them is a comparison per value. The columns analyses filter on are declared
///   [`DictionaryWithRange`](ColumnEncoding::DictionaryWithRange) or
///   [`Delta`](ColumnEncoding::Delta), which keep each row group's min and max.
///
/// Parquet files written with zstd by older versions are still read (the `zstd` feature stays).
fn writer_properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::None)
        .build()
}

/// A Parquet file being written under a temporary name in its final directory, a batch at a
/// time; [`finish`](Self::finish) renames it into place, and dropping it unfinished deletes it.
///
/// Each column is encoded as the table declares: [`Dictionary`](ColumnEncoding::Dictionary)
/// text by [`TextColumn`] and [`Delta`](ColumnEncoding::Delta) times by [`TimeColumn`] (see
/// their modules for why), the others by the `parquet` crate's Arrow column writers; row groups are
/// cut as [`ROW_GROUP_ROWS`] and [`ROW_GROUP_BYTES`] say, a batch split across two groups where
/// needed.
pub struct ParquetWriter {
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

impl ParquetWriter {
    /// Starts the table `path` of `schema`, its columns encoded as `encodings` declares (an
    /// error if a declaration does not fit the schema).
    pub fn create(
        path: &Path,
        schema: SchemaRef,
        encodings: &Encodings,
    ) -> Result<Self, TableError> {
        if let Some(why) = crate::encoding::mismatch(encodings, &schema) {
            return Err(TableError::Schema {
                path: path.to_owned(),
                message: why,
            });
        }
        let pq = |err| TableError::parquet(path, err);
        let tmp = temp_table_beside(path)?;
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
                match ColumnEncoding::of(encodings, field.name()) {
                    ColumnEncoding::Dictionary => {
                        FieldColumns::Text(Box::new(TextColumn::new(leaf, false)))
                    }
                    ColumnEncoding::DictionaryWithRange => {
                        FieldColumns::Text(Box::new(TextColumn::new(leaf, true)))
                    }
                    ColumnEncoding::Delta => FieldColumns::Time(Box::new(TimeColumn::new(leaf))),
                    ColumnEncoding::Plain => FieldColumns::Leaves(n),
                }
            })
            .collect();
        Ok(ParquetWriter {
            path: path.to_owned(),
            schema,
            file,
            factory,
            fields,
            group: None,
            group_rows: 0,
        })
    }

    /// The file's final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Adds `batch` (see [`write_table`](Self::write_table)).
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), TableError> {
        self.write_table(&TableBatch::from(batch.clone()))
    }

    /// Adds `batch` to the current row group, which is written out once it holds
    /// [`ROW_GROUP_ROWS`] rows or [`ROW_GROUP_BYTES`] encoded bytes.
    pub fn write_table(&mut self, batch: &TableBatch) -> Result<(), TableError> {
        if let Some(why) = batch.mismatch(&self.schema) {
            return Err(TableError::Schema {
                path: self.path.clone(),
                message: format!("a batch of another schema: {why}"),
            });
        }
        (self.encode(batch)).map_err(|err| TableError::parquet(&self.path, err))
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
                        "keyed text for column {}, which is not declared a dictionary",
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

    pub fn finish(mut self) -> Result<(), TableError> {
        (self.write_group()).map_err(|err| TableError::parquet(&self.path, err))?;
        let path = self.path;
        let mut tmp = (self.file.into_inner()).map_err(|err| TableError::parquet(&path, err))?;
        tmp.flush()
            .map_err(|source| TableError::io(&path, source))?;
        tmp.persist(&path)
            .map_err(|err| TableError::io(&path, err.error))?;
        Ok(())
    }
}

/// A temporary file named `prefix…` in the directory of `path`, to be renamed to `path` once
/// complete; deleted if dropped before. It keeps `path`'s extension. The directory must exist.
pub fn temp_file_beside(path: &Path, prefix: &str) -> std::io::Result<NamedTempFile> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let suffix = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    // Outputs are data to share (an analyst's notebook often runs as another user than the root
    // that collected them): 0644, not the 0600 temporary files get by default.
    tempfile::Builder::new()
        .prefix(prefix)
        .suffix(&suffix)
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))
        .tempfile_in(dir)
}

/// A table's temporary file: [`temp_file_beside`] in `path`'s directory, created if needed,
/// named `.tmp-…` (what the runner sweeps after a kill).
fn temp_beside(path: &Path) -> std::io::Result<NamedTempFile> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    temp_file_beside(path, ".tmp-")
}

/// [`temp_beside`] with the error naming `path`.
pub(crate) fn temp_table_beside(path: &Path) -> Result<NamedTempFile, TableError> {
    temp_beside(path).map_err(|source| TableError::io(path, source))
}

/// Writes `bytes` as the file `path` atomically (temporary file in the same directory, then
/// rename): reports, manifests and state files get the same guarantee as tables.
pub fn write_file_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = temp_beside(path)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|err| err.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::{DataType, Schema};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use std::fs::File;

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
        let times = [
            ("start_ns", ColumnEncoding::Delta),
            ("end_ns", ColumnEncoding::Delta),
        ];
        let mut file = ParquetWriter::create(&path, schema.clone(), &times).unwrap();
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
        let texts = [
            ("run_id", ColumnEncoding::DictionaryWithRange),
            ("workload", ColumnEncoding::Dictionary),
        ];
        let mut file = ParquetWriter::create(&path, schema.clone(), &texts).unwrap();
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

        let mut file =
            ParquetWriter::create(&dir.path().join("bad.parquet"), schema, &texts).unwrap();
        let mut bad = batch(vec![1], vec![1]);
        bad.columns[0] = keyed(vec![NULL_KEY]);
        let err = file.write_table(&bad).unwrap_err().to_string();
        assert!(
            err.contains("bad.parquet") && err.contains("run_id"),
            "{err}"
        );
    }
}

#[cfg(test)]
mod permission_tests {
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn tables_are_readable_by_other_users() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("quality.parquet");
        let schema = std::sync::Arc::new(arrow_schema::Schema::empty());
        super::write_batch(&path, &arrow_array::RecordBatch::new_empty(schema), &[]).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o044, 0o044, "mode {mode:o}");
    }
}
