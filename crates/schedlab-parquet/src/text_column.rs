//! Dictionary-encoded text columns, written as Parquet column chunks without the `parquet`
//! crate's per-value interning.
//!
//! Every text column of schedlab's tables is dictionary-encoded: a trace has a handful of
//! distinct command names, states, kinds, workloads and one run id, on millions of rows. The
//! `parquet` crate builds that dictionary by hashing every value and comparing its bytes with
//! the match (`Interner::intern`), and before that the strings must be laid out in an Arrow
//! array. The perf.data reader already knows each row's text by a small key (a state's code, a
//! command name's 16 bytes), so here the dictionary is keyed by that: a comparison with the
//! row before or a cached integer hash per row, and the text is made once per distinct key.
//! The tables read back equal to the `parquet` crate's; hashing every value was a large share
//! of a parse's CPU time (the benchmarks page has the figures).
//!
//! A column chunk holds the texts its row group uses (one PLAIN dictionary page) and data pages
//! (format v1, up to [`PAGE_ROWS`] rows each) of RLE/bit-packed indices into them,
//! uncompressed: the indices take a few bits a row and compress no further. Every reader of
//! Parquet reads these as it reads the `parquet` crate's own (the tests read them back with the
//! `parquet` crate, pyarrow, DuckDB and polars).
//!
//! Where a row group's texts are mostly distinct (messages, command lines), a dictionary saves
//! nothing and holds every text twice: once its dictionary passes [`DICTIONARY_BYTES`], the
//! chunk falls back, as the `parquet` crate's writer does, to PLAIN pages for its remaining
//! rows, and the whole chunk is snappy-compressed. The column's later row groups in the file
//! are plain from their first row: its texts are mostly distinct, and numbering them for a
//! dictionary each row group would keep every one of them for the rest of the file.

use std::sync::Arc;

use ahash::AHashMap;
use bytes::Bytes;
use parquet::basic::{Compression, Encoding};
use parquet::column::writer::ColumnCloseResult;
use parquet::data_type::ByteArray;
use parquet::errors::Result;
use parquet::file::statistics::{Statistics, ValueStatistics};
use parquet::schema::types::ColumnDescPtr;

use crate::column_chunk::{ChunkPages, ChunkParts, PAGE_ROWS, encode_hybrid};

/// The bytes of a row group's dictionary (texts and their lengths) past which its chunk falls
/// back to plain pages. The dictionaries the encoding is for (command names, states, kinds,
/// workloads, the run id) hold a few KiB; an eighth of a row group of distinct texts is no
/// dictionary worth its indices.
pub(crate) const DICTIONARY_BYTES: usize = 128 * 1024;

/// Bytes of PLAIN values past which a page ends before it holds [`PAGE_ROWS`] rows: long texts
/// would otherwise make pages of many megabytes.
const PLAIN_PAGE_BYTES: usize = 1 << 20;

/// A key no text has: the row is null.
pub const NULL_KEY: u128 = u128::MAX;

/// Text rows given by key: `keys[i]` names row `i`'s text (or is [`NULL_KEY`]), and `text`
/// gives the text of a key the column has not seen yet. A key must name the same text
/// throughout a file: the writer asks for each key's text once (debug builds ask again, once a
/// batch, and panic where a key's text changed).
pub struct KeyedText {
    pub keys: Vec<u128>,
    pub text: Arc<dyn Fn(u128) -> String + Send + Sync>,
}

/// A batch for a table's writer: a column per field of the table's schema, in order, each an
/// Arrow array or, for a text field, [`KeyedText`].
pub struct TableBatch {
    pub rows: usize,
    pub columns: Vec<TableColumn>,
}

impl TableBatch {
    /// A batch of `rows` rows, checked against `schema`: a column per field, each Arrow array
    /// of its field's type and keyed text only for text fields.
    pub fn new(
        schema: &arrow_schema::Schema,
        rows: usize,
        columns: Vec<TableColumn>,
    ) -> std::result::Result<TableBatch, arrow_schema::ArrowError> {
        let batch = TableBatch { rows, columns };
        match batch.mismatch(schema) {
            Some(why) => Err(arrow_schema::ArrowError::SchemaError(why)),
            None => Ok(batch),
        }
    }

    /// What does not fit `schema`, if anything.
    pub fn mismatch(&self, schema: &arrow_schema::Schema) -> Option<String> {
        let fields = schema.fields();
        if fields.len() != self.columns.len() {
            return Some(format!(
                "{} columns for the {} fields",
                self.columns.len(),
                fields.len()
            ));
        }
        (fields.iter().zip(&self.columns)).find_map(|(field, column)| match column {
            TableColumn::Array(a) if a.data_type() != field.data_type() => Some(format!(
                "column {} is {}, not {}",
                field.name(),
                a.data_type(),
                field.data_type()
            )),
            TableColumn::Array(a) if a.len() != self.rows => Some(format!(
                "column {} has {} rows, not {}",
                field.name(),
                a.len(),
                self.rows
            )),
            TableColumn::Text(t) if field.data_type() != &arrow_schema::DataType::Utf8 => {
                Some(format!("column {} is not text", field.name()))
            }
            TableColumn::Text(t) if t.keys.len() != self.rows => Some(format!(
                "column {} has {} rows, not {}",
                field.name(),
                t.keys.len(),
                self.rows
            )),
            _ => None,
        })
    }
}

impl From<arrow_array::RecordBatch> for TableBatch {
    /// Every column as its Arrow array (text as strings).
    fn from(batch: arrow_array::RecordBatch) -> Self {
        TableBatch {
            rows: batch.num_rows(),
            columns: batch
                .columns()
                .iter()
                .cloned()
                .map(TableColumn::Array)
                .collect(),
        }
    }
}

/// One column of a [`TableBatch`].
pub enum TableColumn {
    Array(arrow_array::ArrayRef),
    Text(KeyedText),
}

/// One text column of a table being written: every text seen in the file, numbered, and the
/// current row group's dictionary (the texts it uses) with its indices into it.
pub(crate) struct TextColumn {
    chunk: ChunkPages,
    statistics: bool,
    /// Number of each key seen in this file, and the last keys looked up (see
    /// `number_of_key`; [`NULL_KEY`] marks an empty slot).
    by_key: AHashMap<u128, u32>,
    recent: Box<[(u128, u32); 256]>,
    /// Number of each text seen in this file (rows given as strings).
    by_text: AHashMap<Box<str>, u32>,
    texts: Vec<Box<str>>,
    /// This row group: its dictionary (text numbers), each number's place in it
    /// ([`UNUSED`] if none yet), the bytes of its texts, and an index per non-null row of the
    /// page being filled.
    dictionary: Vec<u32>,
    place: Vec<u32>,
    dictionary_bytes: usize,
    indices: Vec<u32>,
    /// Pages of this row group's chunk encoded as dictionary indices.
    dictionary_pages: usize,
    /// The column fell back from its dictionary (in this row group or an earlier one): the
    /// remaining pages are PLAIN, `plain` holding the values of the page being filled, and the
    /// min and max of the texts this row group wrote so (with `statistics` only).
    fallen_back: bool,
    plain: Vec<u8>,
    plain_range: Option<(Box<str>, Box<str>)>,
}

/// A text the current row group does not use yet.
const UNUSED: u32 = u32::MAX;

impl TextColumn {
    /// A column of `descr`; `statistics`: record min/max per row group.
    pub(crate) fn new(descr: ColumnDescPtr, statistics: bool) -> Self {
        TextColumn {
            chunk: ChunkPages::new(descr),
            statistics,
            by_key: AHashMap::new(),
            recent: Box::new([(NULL_KEY, 0); 256]),
            by_text: AHashMap::new(),
            texts: Vec::new(),
            dictionary: Vec::new(),
            place: Vec::new(),
            dictionary_bytes: 0,
            indices: Vec::new(),
            dictionary_pages: 0,
            fallen_back: false,
            plain: Vec::new(),
            plain_range: None,
        }
    }

    /// Encodes the page being filled once it is full.
    fn end_page_if_full(&mut self) {
        if self.chunk.page_full() || self.plain.len() >= PLAIN_PAGE_BYTES {
            self.encode_page();
        }
    }

    /// Encodes the page being filled: the indices' bit width, with the dictionary so far (every
    /// page says its own), and the indices; or, once the chunk fell back, the PLAIN values.
    fn encode_page(&mut self) {
        if self.fallen_back {
            let plain = &self.plain;
            (self.chunk).end_page(Encoding::PLAIN, |body| body.extend_from_slice(plain));
            self.plain.clear();
            return;
        }
        let bits = bit_width(self.dictionary.len());
        let indices = &self.indices;
        self.chunk.end_page(Encoding::RLE_DICTIONARY, |body| {
            body.push(bits);
            encode_hybrid(indices, bits, body);
        });
        self.indices.clear();
        self.dictionary_pages += 1;
    }

    /// Adds `rows` non-null rows of text number `n`: indices into this row group's dictionary,
    /// or plain values once the dictionary would pass [`DICTIONARY_BYTES`].
    fn push_text(&mut self, n: u32, rows: usize) {
        let text_bytes = self.texts[n as usize].len() + 4;
        if !self.fallen_back
            && self.place[n as usize] == UNUSED
            && self.dictionary_bytes + text_bytes > DICTIONARY_BYTES
        {
            self.fall_back();
        }
        if self.fallen_back {
            let text = self.texts[n as usize].clone();
            self.push_plain(&text, rows);
        } else {
            let index = self.index_of(n);
            self.push_indices(index, rows);
        }
    }

    /// Ends the dictionary's last page: the chunk's remaining rows are plain.
    fn fall_back(&mut self) {
        if self.chunk.rows_pending() {
            self.encode_page();
        }
        self.fallen_back = true;
    }

    /// Adds `rows` non-null rows of `text` as PLAIN values (the chunk has fallen back).
    fn push_plain(&mut self, text: &str, rows: usize) {
        for take in self.chunk.page_pieces(rows) {
            for _ in 0..take {
                self.plain
                    .extend_from_slice(&(text.len() as u32).to_le_bytes());
                self.plain.extend_from_slice(text.as_bytes());
            }
            self.chunk.values(take);
            self.end_page_if_full();
        }
        if self.statistics {
            let range = self
                .plain_range
                .get_or_insert_with(|| (text.into(), text.into()));
            if text.as_bytes() < range.0.as_bytes() {
                range.0 = text.into();
            }
            if text.as_bytes() > range.1.as_bytes() {
                range.1 = text.into();
            }
        }
    }

    /// The number of `text` in the file, numbering it if new.
    fn number(&mut self, text: &str) -> u32 {
        if let Some(&n) = self.by_text.get(text) {
            return n;
        }
        let n = self.texts.len() as u32;
        self.texts.push(text.into());
        self.place.push(UNUSED);
        self.by_text.insert(text.into(), n);
        n
    }

    /// The place of text number `n` in this row group's dictionary, adding it if new.
    fn index_of(&mut self, n: u32) -> u32 {
        let mut index = self.place[n as usize];
        if index == UNUSED {
            index = self.dictionary.len() as u32;
            self.dictionary.push(n);
            self.place[n as usize] = index;
            self.dictionary_bytes += self.texts[n as usize].len() + 4;
        }
        index
    }

    /// Adds `rows` non-null rows at `index` of this row group's dictionary.
    fn push_indices(&mut self, index: u32, rows: usize) {
        for take in self.chunk.page_pieces(rows) {
            self.indices.resize(self.indices.len() + take, index);
            self.chunk.values(take);
            self.end_page_if_full();
        }
    }

    /// The number of the text of `key`, from the last keys seen or the file's map.
    fn number_of_key(&mut self, key: u128, text: &dyn Fn(u128) -> String) -> u32 {
        // Keys repeat (a few command names make most rows): a direct-mapped cache in front of
        // the hash map answers most rows with one multiplication.
        let slot = (((key as u64) ^ (key >> 64) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56)
            as usize;
        let (cached, n) = self.recent[slot];
        if cached == key {
            return n;
        }
        let n = match self.by_key.get(&key) {
            #[cfg(debug_assertions)]
            Some(&n) => {
                self.check_text_of_key(key, n, text);
                n
            }
            #[cfg(not(debug_assertions))]
            Some(&n) => n,
            None => {
                let n = self.number(&text(key));
                self.by_key.insert(key, n);
                n
            }
        };
        self.recent[slot] = (key, n);
        n
    }

    /// Panics where `key`, which named text number `n`, now names another text: the rule of
    /// [`KeyedText`], checked in debug builds each time a key is looked up past the cache of
    /// the last keys (once a batch at least, as [`push_keyed`](Self::push_keyed) clears it).
    #[cfg(debug_assertions)]
    fn check_text_of_key(&self, key: u128, n: u32, text: &dyn Fn(u128) -> String) {
        let (then, now) = (&self.texts[n as usize], text(key));
        assert!(
            **then == *now,
            "text column {}: key {key:#x} named {then:?} earlier in this file and now {now:?}: \
             a key must name one text throughout a file (see KeyedText)",
            self.chunk.column_name(),
        );
    }

    /// Adds `rows` null rows: an error in a column that has none.
    fn push_nulls(&mut self, rows: usize) -> Result<()> {
        for take in self.chunk.page_pieces(rows) {
            self.chunk.nulls(take)?;
            self.end_page_if_full();
        }
        Ok(())
    }

    /// Appends rows `keys` given by key (see [`KeyedText`]).
    ///
    /// A run of one key (the run id on every row, a workload column that is null throughout
    /// when the pipeline names no workload) is added at once: row by row, such columns cost
    /// the parse a share of its time out of all proportion to what they hold.
    pub(crate) fn push_keyed(
        &mut self,
        keys: &[u128],
        text: &dyn Fn(u128) -> String,
    ) -> Result<()> {
        self.indices.reserve(keys.len().min(PAGE_ROWS));
        if cfg!(debug_assertions) {
            // Every key of the batch is looked up in the file's map, which checks its text.
            self.recent.fill((NULL_KEY, 0));
        }
        let mut rest = keys;
        while let Some(&key) = rest.first() {
            let run = rest.iter().position(|&k| k != key).unwrap_or(rest.len());
            if key == NULL_KEY {
                self.push_nulls(run)?;
            } else {
                let n = self.number_of_key(key, text);
                self.push_text(n, run);
            }
            rest = &rest[run..];
        }
        Ok(())
    }

    /// Appends rows given as strings (`None`: null).
    pub(crate) fn push_strs<'a>(
        &mut self,
        rows: impl Iterator<Item = Option<&'a str>>,
    ) -> Result<()> {
        for text in rows {
            match text {
                // Texts given as strings are not numbered once the chunk falls back: a column
                // of distinct texts would hold them all.
                Some(text) if self.fallen_back => self.push_plain(text, 1),
                Some(text) => {
                    let n = self.number(text);
                    self.push_text(n, 1);
                }
                None => self.push_nulls(1)?,
            }
        }
        Ok(())
    }

    /// Bytes the current row group's chunk will take, about.
    pub(crate) fn estimated_bytes(&self) -> usize {
        let bits = bit_width(self.dictionary.len()) as usize;
        self.chunk.encoded_bytes
            + self.dictionary_bytes
            + self.indices.len() * bits / 8
            + self.plain.len()
            + self.chunk.pending_level_bytes()
    }

    /// Encodes the current row group's chunk and starts the next: the chunk's bytes and what
    /// the row group writer needs to append them.
    pub(crate) fn close_chunk(&mut self) -> Result<(Bytes, ColumnCloseResult)> {
        if self.chunk.page_pending() {
            self.encode_page();
        }
        // A chunk that fell back before its first page has no dictionary page. A chunk of
        // nulls only gets a dictionary of one empty text no row uses: the `parquet` crate's
        // reader takes an empty dictionary for a chunk of plain values, and builds a dictionary
        // for every batch of it by hashing and comparing each null row.
        let dictionary = (self.dictionary_pages > 0).then(|| {
            let unused = self.dictionary.is_empty().then_some("");
            let texts = (self.dictionary.iter())
                .map(|&n| &*self.texts[n as usize])
                .chain(unused);
            let mut dictionary = Vec::with_capacity(self.dictionary_bytes + 4);
            let mut count = 0;
            for text in texts {
                dictionary.extend_from_slice(&(text.len() as u32).to_le_bytes());
                dictionary.extend_from_slice(text.as_bytes());
                count += 1;
            }
            (dictionary, count)
        });
        let statistics = (self.statistics).then(|| self.statistics(self.chunk.nulls as u64));
        let compression = match self.fallen_back {
            true => Compression::SNAPPY,
            false => Compression::UNCOMPRESSED,
        };
        let closed = self.chunk.close(ChunkParts {
            dictionary,
            compression,
            statistics,
        })?;
        for &n in &self.dictionary {
            self.place[n as usize] = UNUSED;
        }
        self.dictionary.clear();
        self.dictionary_bytes = 0;
        self.dictionary_pages = 0;
        self.plain_range = None;
        Ok(closed)
    }

    /// Min and max of the texts the row group uses (its dictionary and its plain values), by
    /// their bytes (Parquet's order for UTF-8).
    fn statistics(&self, nulls: u64) -> Statistics {
        let plain = (self.plain_range.iter()).flat_map(|(min, max)| [min, max]);
        let texts = (self.dictionary.iter())
            .map(|&n| &self.texts[n as usize])
            .chain(plain)
            .map(|text| text.as_bytes());
        let min = texts.clone().min().map(|v| ByteArray::from(v.to_vec()));
        let max = texts.max().map(|v| ByteArray::from(v.to_vec()));
        Statistics::ByteArray(ValueStatistics::new(min, max, None, Some(nulls), false))
    }
}

/// Bits per dictionary index for a dictionary of `len` values (0 for one value).
fn bit_width(len: usize) -> u8 {
    (usize::BITS - len.saturating_sub(1).leading_zeros()) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_that_does_not_fit_its_schema_is_refused() {
        use arrow_array::Int32Array;
        use arrow_schema::{DataType, Field, Schema};
        let schema = Schema::new(vec![
            Field::new("n", DataType::Int32, false),
            Field::new("t", DataType::Utf8, false),
        ]);
        let n = |rows: usize| TableColumn::Array(Arc::new(Int32Array::from(vec![1; rows])));
        let t = |rows: usize| {
            TableColumn::Text(KeyedText {
                keys: vec![0; rows],
                text: Arc::new(|_| "x".into()),
            })
        };
        assert!(TableBatch::new(&schema, 2, vec![n(2), t(2)]).is_ok());
        let refused = |columns| match TableBatch::new(&schema, 2, columns) {
            Ok(_) => panic!("a batch that does not fit was taken"),
            Err(err) => err.to_string(),
        };
        assert!(refused(vec![t(2), n(2)]).contains("column n is not text"));
        assert!(refused(vec![n(2)]).contains("1 columns for the 2 fields"));
        assert!(refused(vec![n(2), t(3)]).contains("column t has 3 rows, not 2"));
        assert!(refused(vec![n(1), t(2)]).contains("column n has 1 rows, not 2"));
    }

    #[test]
    fn one_value_needs_no_bits() {
        assert_eq!(bit_width(1), 0);
        assert_eq!(bit_width(2), 1);
        assert_eq!(bit_width(5), 3);
    }
}
