//! A table read column by column: only the columns a reader names, a record batch at a time,
//! its text columns as dictionary keys.
//!
//! The row reads (`read_table`) decode every column of every row into a struct, strings
//! included; a computation over a trace's slices needs a few numbers per slice and the texts
//! only to tell rows apart. So this reads the named columns alone (a Parquet projection: the
//! others are never decompressed) and hands each text column as the file's own dictionary and a
//! key per row, never a string per row. The accessors check each column's type against the
//! reader's expectation and name the file when it does not fit.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{ArrowPrimitiveType, Int32Type, Int64Type};
use arrow_array::{Array, RecordBatch, StringArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Schema};
use bytes::{Buf, Bytes};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::errors::ParquetError;
use parquet::file::reader::{ChunkReader, Length};

use crate::{Table, TableDir, TableError, schema_of};

/// Calls `each` with every batch of the columns `columns` of table `T` in `dir`, file by file in
/// the order `dir` lists them; a table that was never written has no batch. A name that is not
/// a column of `T` is a bug of the caller and panics.
pub fn read_columns<T: Table>(
    dir: &(impl TableDir + ?Sized),
    columns: &[&str],
    mut each: impl FnMut(&ColumnBatch<'_>) -> Result<(), TableError>,
) -> Result<(), TableError> {
    for group in row_groups::<T>(dir, columns)? {
        group.read(&mut each)?;
    }
    Ok(())
}

/// The row groups of table `T` in `dir`, to read the columns `columns` of, file by file in the
/// order `dir` lists them and in file order within one: each can be read on its own thread, and
/// what is read from them, put together in this order, is in the table's order. A name that is
/// not a column of `T` is a bug of the caller and panics.
pub fn row_groups<T: Table>(
    dir: &(impl TableDir + ?Sized),
    columns: &[&str],
) -> Result<Vec<RowGroup>, TableError> {
    let schema = schema_of::<T>();
    for name in columns {
        assert!(
            schema.field_with_name(name).is_ok(),
            "{name} is not a column of table {}",
            T::NAME
        );
    }
    let mut groups = Vec::new();
    for path in dir.files_of(T::NAME)? {
        let footer = footer_of(&path, columns)?;
        let mask = ProjectionMask::columns(footer.parquet_schema(), columns.iter().copied());
        let metadata = footer.metadata();
        let file_rows = usize::try_from(metadata.file_metadata().num_rows()).unwrap_or(0);
        let path: Arc<Path> = path.into();
        for (index, group) in metadata.row_groups().iter().enumerate() {
            groups.push(RowGroup {
                path: path.clone(),
                index,
                rows: usize::try_from(group.num_rows()).unwrap_or(0),
                file_rows,
                footer: footer.clone(),
                mask: mask.clone(),
            });
        }
    }
    Ok(groups)
}

/// The footer of the Parquet file `path`, with its text `columns` read as dictionaries.
fn footer_of(path: &Path, columns: &[&str]) -> Result<ArrowReaderMetadata, TableError> {
    let pq = |err| TableError::parquet(path, err);
    let file = File::open(path).map_err(|source| TableError::io(path, source))?;
    let footer = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new()).map_err(pq)?;
    let fields: Vec<Field> = (footer.schema().fields().iter())
        .map(|field| match field.data_type() {
            DataType::Utf8 if columns.contains(&field.name().as_str()) => {
                let keyed =
                    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
                field.as_ref().clone().with_data_type(keyed)
            }
            _ => field.as_ref().clone(),
        })
        .collect();
    let options = ArrowReaderOptions::new().with_schema(Arc::new(Schema::new(fields)));
    ArrowReaderMetadata::try_new(footer.metadata().clone(), options).map_err(pq)
}

/// One row group of one file of a table (see [`row_groups`]).
pub struct RowGroup {
    path: Arc<Path>,
    index: usize,
    rows: usize,
    file_rows: usize,
    footer: ArrowReaderMetadata,
    mask: ProjectionMask,
}

impl RowGroup {
    /// How many rows it has.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// How many rows its file has (for a reader that sizes its columns once).
    pub fn file_rows(&self) -> usize {
        self.file_rows
    }

    /// Calls `each` with every batch of its columns, in order.
    pub fn read(
        &self,
        mut each: impl FnMut(&ColumnBatch<'_>) -> Result<(), TableError>,
    ) -> Result<(), TableError> {
        let path = &*self.path;
        let pq = |err| TableError::parquet(path, err);
        let bytes = self.bytes()?;
        // One batch for the whole group: the columns' pages are decoded in one go, and the
        // caller's work per batch is done once.
        let batches =
            ParquetRecordBatchReaderBuilder::new_with_metadata(bytes, self.footer.clone())
                .with_projection(self.mask.clone())
                .with_row_groups(vec![self.index])
                .with_batch_size(self.rows.max(1))
                .build()
                .map_err(pq)?;
        for batch in batches {
            let batch = batch.map_err(|err| TableError::Parquet {
                path: path.to_owned(),
                message: err.to_string(),
            })?;
            each(&ColumnBatch { path, batch })?;
        }
        Ok(())
    }

    /// The bytes of the group's columns, read from the file in one call. Read from a file,
    /// the Parquet reader reopens and seeks it for every page it reads.
    fn bytes(&self) -> Result<GroupBytes, TableError> {
        let path = &*self.path;
        let damaged = |message: String| TableError::Parquet {
            path: path.to_owned(),
            message: format!("row group {} {message}", self.index),
        };
        let metadata = self.footer.metadata();
        let group = metadata.row_group(self.index);
        let mut span: Option<(u64, u64)> = None;
        for (leaf, column) in group.columns().iter().enumerate() {
            if !self.mask.leaf_included(leaf) {
                continue;
            }
            let start = column
                .dictionary_page_offset()
                .unwrap_or(column.data_page_offset());
            let (Ok(start), Ok(len)) = (
                u64::try_from(start),
                u64::try_from(column.compressed_size()),
            ) else {
                let why = format!("column {leaf}: a negative offset or size in the footer");
                return Err(damaged(why));
            };
            let end = start.saturating_add(len);
            span = Some(span.map_or((start, end), |(s, e)| (s.min(start), e.max(end))));
        }
        let (start, end) = span.unwrap_or((0, 0));
        let file = File::open(path).map_err(|source| TableError::io(path, source))?;
        let file_len = (file.metadata())
            .map_err(|source| TableError::io(path, source))?
            .len();
        if end > file_len {
            return Err(damaged(format!(
                "ends at byte {end}, past the file's end ({file_len} bytes): the file is truncated"
            )));
        }
        let mut bytes = vec![0; usize::try_from(end - start).expect("a row group fits in memory")];
        file.read_exact_at(&mut bytes, start)
            .map_err(|source| TableError::io(path, source))?;
        Ok(GroupBytes {
            start,
            file_len,
            bytes: bytes.into(),
        })
    }
}

/// The bytes of one row group's columns at their offset in the file, as the Parquet reader's
/// source: it asks for each page by its offset in the file, and a page outside the group is an
/// error of the footer.
struct GroupBytes {
    start: u64,
    file_len: u64,
    bytes: Bytes,
}

impl Length for GroupBytes {
    fn len(&self) -> u64 {
        self.file_len
    }
}

impl ChunkReader for GroupBytes {
    type T = bytes::buf::Reader<Bytes>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        let end = self.start + self.bytes.len() as u64;
        let length = usize::try_from(end.saturating_sub(start)).unwrap_or(0);
        Ok(self.get_bytes(start, length)?.reader())
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        let at = usize::try_from(start.wrapping_sub(self.start)).unwrap_or(usize::MAX);
        match at.checked_add(length) {
            Some(end) if start >= self.start && end <= self.bytes.len() => {
                Ok(self.bytes.slice(at..end))
            }
            _ => Err(ParquetError::General(format!(
                "{length} bytes at byte {start} are outside the row group's columns \
                 (bytes {} to {})",
                self.start,
                self.start + self.bytes.len() as u64
            ))),
        }
    }
}

/// One batch of some of a table's columns, from one file.
pub struct ColumnBatch<'p> {
    path: &'p Path,
    batch: RecordBatch,
}

impl ColumnBatch<'_> {
    /// How many rows the batch has.
    pub fn rows(&self) -> usize {
        self.batch.num_rows()
    }

    /// The `Int32` column `name`.
    pub fn i32s(&self, name: &str) -> Result<Numbers<'_, i32>, TableError> {
        self.numbers::<Int32Type>(name)
    }

    /// The `Int64` column `name`.
    pub fn i64s(&self, name: &str) -> Result<Numbers<'_, i64>, TableError> {
        self.numbers::<Int64Type>(name)
    }

    fn numbers<A: ArrowPrimitiveType>(
        &self,
        name: &str,
    ) -> Result<Numbers<'_, A::Native>, TableError> {
        let column = self.column(name)?;
        let array = (column.as_primitive_opt::<A>()).ok_or_else(|| self.mistyped(name, column))?;
        Ok(Numbers {
            values: array.values(),
            nulls: array.nulls(),
        })
    }

    /// The text column `name`: a key per row into the batch's dictionary.
    pub fn texts(&self, name: &str) -> Result<Texts<'_>, TableError> {
        let column = self.column(name)?;
        let array =
            (column.as_dictionary_opt::<Int32Type>()).ok_or_else(|| self.mistyped(name, column))?;
        let values =
            (array.values().as_string_opt::<i32>()).ok_or_else(|| self.mistyped(name, column))?;
        Ok(Texts {
            keys: Numbers {
                values: array.keys().values(),
                nulls: array.nulls(),
            },
            dictionary: values,
        })
    }

    fn column(&self, name: &str) -> Result<&Arc<dyn Array>, TableError> {
        self.batch
            .column_by_name(name)
            .ok_or_else(|| TableError::Schema {
                path: self.path.to_owned(),
                message: format!("no column {name}"),
            })
    }

    fn mistyped(&self, name: &str, column: &Arc<dyn Array>) -> TableError {
        TableError::Schema {
            path: self.path.to_owned(),
            message: format!(
                "column {name} is {}, not what the table has",
                column.data_type()
            ),
        }
    }
}

/// A column of numbers, some maybe null.
#[derive(Clone, Copy)]
pub struct Numbers<'a, T> {
    values: &'a [T],
    nulls: Option<&'a NullBuffer>,
}

impl<T: Copy> Numbers<'_, T> {
    /// Row `row`'s number, whatever it is where the row is null (a column that has no nulls).
    pub fn value(&self, row: usize) -> T {
        self.values[row]
    }

    /// The numbers of `rows`, whatever they are where a row is null.
    pub fn values(&self, rows: std::ops::Range<usize>) -> &[T] {
        &self.values[rows]
    }

    /// Row `row`'s number, `None` where it is null.
    pub fn get(&self, row: usize) -> Option<T> {
        match self.nulls {
            Some(nulls) if nulls.is_null(row) => None,
            _ => Some(self.values[row]),
        }
    }
}

/// A text column as the batch's dictionary and a key per row.
#[derive(Clone, Copy)]
pub struct Texts<'a> {
    keys: Numbers<'a, i32>,
    dictionary: &'a StringArray,
}

impl<'a> Texts<'a> {
    /// The texts of the dictionary, in key order (some maybe used by no row).
    pub fn dictionary(&self) -> impl Iterator<Item = &'a str> + 'a {
        let dictionary = self.dictionary;
        (0..dictionary.len()).map(move |k| dictionary.value(k))
    }

    /// Row `row`'s key into [`Texts::dictionary`], `None` where the row is null.
    pub fn key(&self, row: usize) -> Option<usize> {
        self.keys.get(row).map(|k| k as usize)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    /// Ten bytes of a row group that starts at byte 100 of a 200-byte file.
    fn group() -> GroupBytes {
        GroupBytes {
            start: 100,
            file_len: 200,
            bytes: Bytes::from_iter(0u8..10),
        }
    }

    #[test]
    fn a_page_is_read_by_its_offset_in_the_file() {
        let group = group();
        assert_eq!(&group.get_bytes(103, 4).unwrap()[..], [3, 4, 5, 6]);
        assert_eq!(
            &group.get_bytes(100, 10).unwrap()[..],
            (0u8..10).collect::<Vec<_>>()
        );
        let mut rest = Vec::new();
        group.get_read(107).unwrap().read_to_end(&mut rest).unwrap();
        assert_eq!(rest, [7, 8, 9]);
    }

    #[test]
    fn a_page_outside_the_group_is_an_error_not_a_panic() {
        let group = group();
        for (start, length) in [(95, 5), (99, 2), (105, 10), (110, 1), (u64::MAX, 2)] {
            let err = group.get_bytes(start, length).unwrap_err().to_string();
            assert!(
                err.contains("outside the row group's columns (bytes 100 to 110)"),
                "{start} +{length}: {err}"
            );
        }
        assert!(group.get_read(150).is_err());
        assert!(group.get_read(50).is_err());
    }
}
