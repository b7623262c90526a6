//! Column chunks schedlab encodes itself: their data pages, definition levels and the chunk's
//! metadata, shared by the text columns ([`TextColumn`](crate::text_column::TextColumn)) and
//! the time columns ([`TimeColumn`](crate::time_column::TimeColumn)).
//!
//! A chunk is a row group's part of one column: an optional dictionary page, then data pages
//! (format v1, up to [`PAGE_ROWS`] rows each), each holding the definition levels of its rows
//! (if the column has nulls) and the encoded values of its non-null rows, each page in its own
//! encoding (a text chunk that falls back from its dictionary has both). The chunk is
//! uncompressed or, where its column asks, every page of it snappy-compressed. Pages go through
//! the `parquet` crate's `SerializedPageWriter`, and the chunk is appended to the row group with
//! `SerializedRowGroupWriter::append_column`, with an offset index per page and the chunk's
//! page encoding stats (how many pages of each kind and encoding) in its metadata.

use bytes::Bytes;
use parquet::basic::{Compression, Encoding, PageType};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::{ParquetError, Result};
use parquet::file::metadata::{ColumnChunkMetaData, OffsetIndexBuilder, PageEncodingStats};
use parquet::file::statistics::Statistics;
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;

/// Rows per data page: a page's values are held unencoded until it is full, so this bounds a
/// column's memory (128 KiB of text indices, 256 KiB of times) whatever the row group's size.
pub(crate) const PAGE_ROWS: usize = 32 * 1024;

/// The pages of the current row group's chunk of one column, and the definition levels of the
/// page being filled.
pub(crate) struct ChunkPages {
    descr: ColumnDescPtr,
    /// The column may hold nulls (it has definition levels).
    nullable: bool,
    pages: Vec<DataPage>,
    /// Whether each row of the page being filled is non-null (nullable columns only).
    defined: Vec<u8>,
    /// Rows of the page being filled (with nulls).
    page_rows: usize,
    /// Rows and nulls of this row group, and the bytes of its encoded pages.
    pub rows: usize,
    pub nulls: usize,
    pub encoded_bytes: usize,
}

/// An encoded data page: levels and values, the values in `encoding`.
struct DataPage {
    body: Vec<u8>,
    rows: usize,
    encoding: Encoding,
}

/// What a column adds to its chunk besides the data pages.
pub(crate) struct ChunkParts {
    /// A PLAIN dictionary page's bytes and its number of values.
    pub dictionary: Option<(Vec<u8>, u32)>,
    /// `UNCOMPRESSED` or `SNAPPY`, for every page of the chunk.
    pub compression: Compression,
    pub statistics: Option<Statistics>,
}

impl ChunkPages {
    pub(crate) fn new(descr: ColumnDescPtr) -> Self {
        ChunkPages {
            nullable: descr.max_def_level() > 0,
            descr,
            pages: Vec::new(),
            defined: Vec::new(),
            page_rows: 0,
            rows: 0,
            nulls: 0,
            encoded_bytes: 0,
        }
    }

    /// Counts `n` non-null rows of the page being filled.
    pub(crate) fn values(&mut self, n: usize) {
        if self.nullable {
            self.defined.resize(self.defined.len() + n, 1);
        }
        self.page_rows += n;
        self.rows += n;
    }

    /// Counts `n` null rows of the page being filled: an error in a column that has none.
    pub(crate) fn nulls(&mut self, n: usize) -> Result<()> {
        if !self.nullable {
            return Err(ParquetError::General(format!(
                "a null in column {}, which has none",
                self.descr.name()
            )));
        }
        self.defined.resize(self.defined.len() + n, 0);
        self.page_rows += n;
        self.rows += n;
        self.nulls += n;
        Ok(())
    }

    /// The column's name (for the debug builds' check of keyed text).
    #[cfg(debug_assertions)]
    pub(crate) fn column_name(&self) -> &str {
        self.descr.name()
    }

    /// The page being filled holds rows.
    pub(crate) fn rows_pending(&self) -> bool {
        self.page_rows > 0
    }

    /// The page being filled holds [`PAGE_ROWS`] rows.
    pub(crate) fn page_full(&self) -> bool {
        self.page_rows >= PAGE_ROWS
    }

    /// How `rows` new rows split at page ends: what the page being filled has room for, then
    /// whole pages, then the rest. The column adds each piece and ends the page if it is full
    /// before it adds the next.
    pub(crate) fn page_pieces(&self, mut rows: usize) -> impl Iterator<Item = usize> + use<> {
        let mut room = PAGE_ROWS - self.page_rows;
        std::iter::from_fn(move || {
            let take = rows.min(room);
            rows -= take;
            room = PAGE_ROWS;
            (take > 0).then_some(take)
        })
    }

    /// Bytes the page being filled's levels will take, about.
    pub(crate) fn pending_level_bytes(&self) -> usize {
        self.defined.len() / 8
    }

    /// Ends the page being filled: its definition levels (if the column has nulls), then the
    /// values `encode_values` appends in `encoding`.
    pub(crate) fn end_page(
        &mut self,
        encoding: Encoding,
        encode_values: impl FnOnce(&mut Vec<u8>),
    ) {
        let mut body = Vec::new();
        if self.nullable {
            let mut levels = Vec::new();
            encode_hybrid(&self.defined, 1, &mut levels);
            body.extend_from_slice(&(levels.len() as u32).to_le_bytes());
            body.extend_from_slice(&levels);
        }
        encode_values(&mut body);
        self.encoded_bytes += body.len();
        self.pages.push(DataPage {
            body,
            rows: self.page_rows,
            encoding,
        });
        self.defined.clear();
        self.page_rows = 0;
    }

    /// Whether a page must still be ended before the chunk is closed: rows are pending, or the
    /// chunk has no page yet (an empty row group's chunk still has one).
    pub(crate) fn page_pending(&self) -> bool {
        self.page_rows > 0 || self.pages.is_empty()
    }

    /// The chunk's bytes (dictionary page, data pages) and what the row group writer needs to
    /// append them; starts the next row group's chunk.
    pub(crate) fn close(&mut self, parts: ChunkParts) -> Result<(Bytes, ColumnCloseResult)> {
        let mut sink = TrackedWrite::new(Vec::new());
        let mut writer = SerializedPageWriter::new(&mut sink);
        let compressed = |buf: Vec<u8>| -> Result<(Bytes, usize)> {
            let len = buf.len();
            if parts.compression == Compression::SNAPPY {
                let packed = snap::raw::Encoder::new()
                    .compress_vec(&buf)
                    .map_err(|err| ParquetError::External(Box::new(err)))?;
                return Ok((Bytes::from(packed), len));
            }
            Ok((Bytes::from(buf), len))
        };
        let mut stats = PageStats::default();
        let mut saved = 0;
        let mut dictionary_offset = None;
        if let Some((buf, num_values)) = parts.dictionary {
            let (buf, len) = compressed(buf)?;
            saved += len as i64 - buf.len() as i64;
            let spec = writer.write_page(CompressedPage::new(
                Page::DictionaryPage {
                    buf,
                    num_values,
                    encoding: Encoding::PLAIN,
                    is_sorted: false,
                },
                len,
            ))?;
            dictionary_offset = Some(spec.offset as i64);
            stats.count(PageType::DICTIONARY_PAGE, Encoding::PLAIN);
        }
        let mut offsets = OffsetIndexBuilder::new();
        let mut first_data_page = None;
        for page in self.pages.drain(..) {
            let (buf, len) = compressed(page.body)?;
            saved += len as i64 - buf.len() as i64;
            let spec = writer.write_page(CompressedPage::new(
                Page::DataPage {
                    buf,
                    num_values: page.rows as u32,
                    encoding: page.encoding,
                    def_level_encoding: Encoding::RLE,
                    rep_level_encoding: Encoding::RLE,
                    statistics: None,
                },
                len,
            ))?;
            stats.count(PageType::DATA_PAGE, page.encoding);
            first_data_page.get_or_insert(spec.offset as i64);
            offsets.append_offset_and_size(spec.offset as i64, spec.compressed_size as i32);
            offsets.append_row_count(page.rows as i64);
        }
        writer.close()?;
        let uncompressed = sink.bytes_written() as i64 + saved;
        let bytes = Bytes::from(sink.into_inner()?);

        let mut builder = ColumnChunkMetaData::builder(self.descr.clone())
            .set_compression(parts.compression)
            .set_encodings(stats.encodings())
            .set_page_encoding_stats(stats.pages)
            .set_total_compressed_size(bytes.len() as i64)
            .set_total_uncompressed_size(uncompressed)
            .set_num_values(self.rows as i64)
            .set_dictionary_page_offset(dictionary_offset)
            .set_data_page_offset(first_data_page.unwrap_or_default());
        if let Some(statistics) = parts.statistics {
            builder = builder.set_statistics(statistics);
        }
        let close = ColumnCloseResult {
            bytes_written: bytes.len() as u64,
            rows_written: self.rows as u64,
            metadata: builder.build()?,
            bloom_filter: None,
            column_index: None,
            offset_index: Some(offsets.build()),
        };
        (self.rows, self.nulls, self.encoded_bytes) = (0, 0, 0);
        Ok((bytes, close))
    }
}

/// The pages of a chunk by kind and encoding, in the order each first appears.
#[derive(Default)]
struct PageStats {
    pages: Vec<PageEncodingStats>,
}

impl PageStats {
    fn count(&mut self, page_type: PageType, encoding: Encoding) {
        let same = |s: &&mut PageEncodingStats| s.page_type == page_type && s.encoding == encoding;
        match self.pages.iter_mut().find(same) {
            Some(stats) => stats.count += 1,
            None => self.pages.push(PageEncodingStats {
                page_type,
                encoding,
                count: 1,
            }),
        }
    }

    /// Every encoding of the chunk: RLE (the definition levels'), then its pages'.
    fn encodings(&self) -> Vec<Encoding> {
        let mut encodings = vec![Encoding::RLE];
        for stats in &self.pages {
            if !encodings.contains(&stats.encoding) {
                encodings.push(stats.encoding);
            }
        }
        encodings
    }
}

/// Appends `values` in Parquet's RLE/bit-packed hybrid encoding, `bits` wide: a run of 8 or
/// more equal values as one RLE run, the rest bit-packed in groups of 8 (the last group
/// padded with zeros; readers stop at the page's value count).
pub(crate) fn encode_hybrid<T: Copy + PartialEq + Into<u32>>(
    values: &[T],
    bits: u8,
    out: &mut Vec<u8>,
) {
    let mut literal_start = 0;
    let mut i = 0;
    while i < values.len() {
        let mut end = i + 1;
        while end < values.len() && values[end] == values[i] {
            end += 1;
        }
        // A bit-packed run holds whole groups of 8: lend it the first values of this run.
        let lend = (8 - (i - literal_start) % 8) % 8;
        if end - i >= lend + 8 {
            let run_start = i + lend;
            bit_packed(&values[literal_start..run_start], bits, out);
            rle_run(values[i].into(), end - run_start, bits, out);
            literal_start = end;
        }
        i = end;
    }
    bit_packed(&values[literal_start..], bits, out);
}

fn rle_run(value: u32, count: usize, bits: u8, out: &mut Vec<u8>) {
    uleb128((count as u64) << 1, out);
    let bytes = (bits as usize).div_ceil(8);
    out.extend_from_slice(&value.to_le_bytes()[..bytes]);
}

fn bit_packed<T: Copy + Into<u32>>(values: &[T], bits: u8, out: &mut Vec<u8>) {
    if values.is_empty() {
        return;
    }
    let groups = values.len().div_ceil(8);
    uleb128(((groups as u64) << 1) | 1, out);
    let (mut acc, mut filled) = (0u64, 0u32);
    for k in 0..groups * 8 {
        acc |= u64::from(values.get(k).map_or(0, |&v| v.into())) << filled;
        filled += u32::from(bits);
        while filled >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            filled -= 8;
        }
    }
}

/// Appends `v` as an unsigned LEB128 varint (Parquet's ULEB128).
pub(crate) fn uleb128(mut v: u64, out: &mut Vec<u8>) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Reads a ULEB128 varint off the front of `b`.
    pub(crate) fn read_uleb128(b: &mut &[u8]) -> u64 {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let byte = b[0];
            *b = &b[1..];
            v |= u64::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                return v;
            }
        }
    }

    /// Decodes the hybrid encoding (the format's definition, written out independently).
    pub(crate) fn decode_hybrid(mut b: &[u8], bits: u8, n: usize) -> Vec<u32> {
        let mut out = Vec::new();
        while out.len() < n {
            let header = read_uleb128(&mut b);
            if header & 1 == 0 {
                let width = (bits as usize).div_ceil(8);
                let mut v = [0u8; 4];
                v[..width].copy_from_slice(&b[..width]);
                b = &b[width..];
                out.extend(std::iter::repeat_n(
                    u32::from_le_bytes(v),
                    (header >> 1) as usize,
                ));
            } else {
                let count = (header >> 1) as usize * 8;
                for k in 0..count {
                    let mut v = 0u32;
                    for bit in 0..bits as usize {
                        let at = k * bits as usize + bit;
                        v |= u32::from((b[at / 8] >> (at % 8)) & 1) << bit;
                    }
                    out.push(v);
                }
                b = &b[count * bits as usize / 8..];
            }
        }
        out.truncate(n);
        out
    }

    #[test]
    fn the_hybrid_encoding_round_trips_runs_and_literals() {
        let mut values = vec![3, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 5];
        values.extend(std::iter::repeat_n(7, 100));
        values.extend([0, 1, 0, 1, 6]);
        for bits in [3u8, 4, 9, 17] {
            let mut out = Vec::new();
            encode_hybrid(&values, bits, &mut out);
            assert_eq!(
                decode_hybrid(&out, bits, values.len()),
                values,
                "{bits} bits"
            );
        }
        // 100 equal values cost a run header and a byte, not 100 packed values.
        let mut out = Vec::new();
        encode_hybrid(&[7u32; 100], 3, &mut out);
        assert_eq!(out, vec![200, 1, 7]);
    }

    #[test]
    fn zero_bits_encode_a_single_value() {
        let mut out = Vec::new();
        encode_hybrid(&[0u32; 20], 0, &mut out);
        assert_eq!(decode_hybrid(&out, 0, 20), vec![0; 20]);
    }
}
