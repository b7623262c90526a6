//! Time columns (Int64 columns a table declares [`Delta`](crate::ColumnEncoding::Delta)),
//! delta-encoded as Parquet column chunks by schedlab rather than by the `parquet` crate's
//! column writer.
//!
//! Times are nearly sorted and nearly all distinct, durations are small: Parquet's
//! DELTA_BINARY_PACKED encoding stores each value as its difference from the one before, minus
//! the smallest such difference in its block of 128, bit-packed per miniblock of 32 in as few
//! bits as that miniblock's largest needs. Nothing is left to compress in that, so the pages
//! are not compressed. The `parquet` crate's encoder is generic over every integer type and
//! writes through a bit writer a value at a time; this one takes each delta, its block's
//! smallest delta and the values' range in one pass as a batch arrives (no copy of the values),
//! and packs a miniblock into 64-bit words, for pages every reader decodes to the same values.
//!
//! Min/max statistics are kept per row group (the columns analyses filter on).

use arrow_array::{Array, Int64Array};
use bytes::Bytes;
use parquet::basic::{Compression, Encoding};
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::Result;
use parquet::file::statistics::{Statistics, ValueStatistics};
use parquet::schema::types::ColumnDescPtr;

use crate::column_chunk::{ChunkPages, ChunkParts, uleb128};

/// Values per block, and per miniblock (the `parquet` crate's choice, which every reader takes).
const BLOCK: usize = 128;
const MINIBLOCK: usize = 32;
const MINIBLOCKS: usize = BLOCK / MINIBLOCK;

/// One time column of a table being written: the current row group's pages, the page being
/// filled's encoding so far, and the group's min and max.
pub(crate) struct TimeColumn {
    chunk: ChunkPages,
    deltas: DeltaEncoder,
    range: Option<(i64, i64)>,
}

impl TimeColumn {
    pub(crate) fn new(descr: ColumnDescPtr) -> Self {
        TimeColumn {
            chunk: ChunkPages::new(descr),
            deltas: DeltaEncoder::default(),
            range: None,
        }
    }

    /// Appends the rows of `array`: each run of values, and the nulls between runs.
    pub(crate) fn push(&mut self, array: &Int64Array) -> Result<()> {
        let values = array.values();
        let whole = (array.null_count() == 0).then_some((0, values.len()));
        let runs = (array.nulls())
            .filter(|nulls| nulls.null_count() > 0)
            .map(|nulls| nulls.valid_slices());
        let mut at = 0;
        for (start, end) in whole.into_iter().chain(runs.into_iter().flatten()) {
            self.push_nulls(start - at)?;
            self.push_run(&values[start..end]);
            at = end;
        }
        self.push_nulls(values.len() - at)
    }

    /// Appends non-null `values`, a page's worth at a time.
    fn push_run(&mut self, mut values: &[i64]) {
        for take in self.chunk.page_pieces(values.len()) {
            self.push_values(&values[..take]);
            self.chunk.values(take);
            values = &values[take..];
            self.end_page_if_full();
        }
    }

    /// Appends `rows` nulls: an error in a column that has none.
    fn push_nulls(&mut self, rows: usize) -> Result<()> {
        for take in self.chunk.page_pieces(rows) {
            self.chunk.nulls(take)?;
            self.end_page_if_full();
        }
        Ok(())
    }

    fn end_page_if_full(&mut self) {
        if self.chunk.page_full() {
            self.encode_page();
        }
    }

    fn push_values(&mut self, values: &[i64]) {
        if let Some((lo, hi)) = self.deltas.push(values) {
            let (min, max) = self.range.get_or_insert((lo, hi));
            (*min, *max) = ((*min).min(lo), (*max).max(hi));
        }
    }

    fn encode_page(&mut self) {
        let deltas = &mut self.deltas;
        (self.chunk).end_page(Encoding::DELTA_BINARY_PACKED, |body| deltas.finish(body));
    }

    /// Bytes the current row group's chunk will take, about.
    pub(crate) fn estimated_bytes(&self) -> usize {
        self.chunk.encoded_bytes + self.deltas.blocks.len() + self.chunk.pending_level_bytes()
    }

    /// Encodes the current row group's chunk and starts the next (see
    /// [`TextColumn::close_chunk`](crate::text_column::TextColumn::close_chunk)).
    pub(crate) fn close_chunk(&mut self) -> Result<(Bytes, ColumnCloseResult)> {
        if self.chunk.page_pending() {
            self.encode_page();
        }
        let (min, max) = self.range.take().unzip();
        let nulls = Some(self.chunk.nulls as u64);
        let statistics = Statistics::Int64(ValueStatistics::new(min, max, None, nulls, false));
        self.chunk.close(ChunkParts {
            dictionary: None,
            compression: Compression::UNCOMPRESSED,
            statistics: Some(statistics),
        })
    }
}

/// A page's values in the DELTA_BINARY_PACKED encoding, encoded a block at a time as they
/// come: a header (block size, miniblocks per block, value count, first value), then per block
/// of deltas the smallest delta and each miniblock's bit width, then the miniblocks, each delta
/// less the smallest in `width` bits. The last miniblock is padded with zeros and the unused
/// ones have width 0 and no bytes (readers stop at the value count).
struct DeltaEncoder {
    /// Values so far, the first and the last.
    count: usize,
    first: i64,
    last: i64,
    /// Deltas of the block being filled: `filled` of them, the smallest `min`.
    block: [i64; BLOCK],
    filled: usize,
    min: i64,
    /// The encoded blocks.
    blocks: Vec<u8>,
}

impl Default for DeltaEncoder {
    fn default() -> Self {
        DeltaEncoder {
            count: 0,
            first: 0,
            last: 0,
            block: [0; BLOCK],
            filled: 0,
            min: i64::MAX,
            blocks: Vec::new(),
        }
    }
}

impl DeltaEncoder {
    /// Adds `values`; returns their min and max.
    fn push(&mut self, mut values: &[i64]) -> Option<(i64, i64)> {
        let &first = values.first()?;
        if self.count == 0 {
            (self.first, self.last, self.count) = (first, first, 1);
            values = &values[1..];
        }
        self.count += values.len();
        // One pass a value: its delta, the block's smallest delta, and the values' range.
        let (mut lo, mut hi) = (first, first);
        while !values.is_empty() {
            let take = values.len().min(BLOCK - self.filled);
            let (mut last, mut min) = (self.last, self.min);
            for (slot, &v) in self.block[self.filled..].iter_mut().zip(&values[..take]) {
                let delta = v.wrapping_sub(last);
                *slot = delta;
                min = min.min(delta);
                (lo, hi) = (lo.min(v), hi.max(v));
                last = v;
            }
            (self.last, self.min) = (last, min);
            self.filled += take;
            values = &values[take..];
            if self.filled == BLOCK {
                self.encode_block();
            }
        }
        Some((lo, hi))
    }

    fn encode_block(&mut self) {
        let (deltas, min) = (&self.block[..self.filled], self.min);
        let out = &mut self.blocks;
        uleb128(zigzag(min), out);
        let widths_at = out.len();
        out.resize(widths_at + MINIBLOCKS, 0);
        for (m, mini) in deltas.chunks(MINIBLOCK).enumerate() {
            let mut packed = [0u64; MINIBLOCK];
            for (p, &d) in packed.iter_mut().zip(mini) {
                *p = d.wrapping_sub(min) as u64;
            }
            let width = 64 - packed.iter().fold(0, |acc, &p| acc | p).leading_zeros();
            out[widths_at + m] = width as u8;
            pack(&packed, width, out);
        }
        (self.filled, self.min) = (0, i64::MAX);
    }

    /// Appends the page's encoding to `out` and starts the next page.
    fn finish(&mut self, out: &mut Vec<u8>) {
        if self.filled > 0 {
            self.encode_block();
        }
        uleb128(BLOCK as u64, out);
        uleb128(MINIBLOCKS as u64, out);
        uleb128(self.count as u64, out);
        uleb128(
            if self.count > 0 {
                zigzag(self.first)
            } else {
                0
            },
            out,
        );
        out.extend_from_slice(&self.blocks);
        self.blocks.clear();
        self.count = 0;
    }
}

/// Appends the 32 values of a miniblock `width` bits each, least significant bit first: 32
/// values of any width fill `4 * width` bytes, written a 64-bit word at a time, and the half
/// word an odd width leaves. (Copies of a fixed size: a copy of `word.len()` bytes was a call
/// to `memmove` per word, a quarter of the encoder's time.)
fn pack(values: &[u64; MINIBLOCK], width: u32, out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + 4 * width as usize, 0);
    let mut words = out[start..].chunks_exact_mut(8);
    let (mut acc, mut filled) = (0u64, 0u32);
    for &v in values {
        acc |= v << filled;
        filled += width;
        if filled >= 64 {
            if let Some(word) = words.next() {
                word.copy_from_slice(&acc.to_le_bytes());
            }
            filled -= 64;
            // The bits of `v` that did not fit (none when it ended the word exactly).
            acc = if filled == 0 {
                0
            } else {
                v >> (width - filled)
            };
        }
    }
    if let Ok(half) = <&mut [u8; 4]>::try_from(words.into_remainder()) {
        *half = (acc as u32).to_le_bytes();
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column_chunk::tests::read_uleb128;

    /// Decodes DELTA_BINARY_PACKED (the format's definition, written out independently).
    fn decode_deltas(mut b: &[u8]) -> Vec<i64> {
        let unzigzag = |v: u64| ((v >> 1) as i64) ^ -((v & 1) as i64);
        let block = read_uleb128(&mut b) as usize;
        let minis = read_uleb128(&mut b) as usize;
        let count = read_uleb128(&mut b) as usize;
        let mut out = vec![unzigzag(read_uleb128(&mut b))];
        while out.len() < count {
            let min = unzigzag(read_uleb128(&mut b));
            let widths: Vec<usize> = b[..minis].iter().map(|&w| w as usize).collect();
            b = &b[minis..];
            for width in widths {
                if out.len() >= count {
                    break;
                }
                let per = block / minis;
                for k in 0..per {
                    let mut v = 0u64;
                    for bit in 0..width {
                        let at = k * width + bit;
                        v |= u64::from((b[at / 8] >> (at % 8)) & 1) << bit;
                    }
                    if out.len() < count {
                        let last = *out.last().unwrap();
                        out.push(last.wrapping_add(min).wrapping_add(v as i64));
                    }
                }
                b = &b[per * width / 8..];
            }
        }
        out
    }

    /// A page of `values`, given in pieces of different sizes as batches give them.
    fn encode_deltas(values: &[i64]) -> Vec<u8> {
        let mut encoder = DeltaEncoder::default();
        let (mut rest, mut piece) = (values, 1);
        while !rest.is_empty() {
            let (now, later) = rest.split_at(piece.min(rest.len()));
            encoder.push(now);
            (rest, piece) = (later, piece * 3 + 1);
        }
        let mut out = Vec::new();
        encoder.finish(&mut out);
        out
    }

    #[test]
    fn deltas_round_trip_whatever_the_values() {
        let mut times: Vec<i64> = (0..1000)
            .map(|i| 1_000_000_000 + i * 997 + (i % 7) * 13)
            .collect();
        times[500] = 0; // out of order
        let cases: Vec<Vec<i64>> = vec![
            vec![],
            vec![42],
            vec![5, 5, 5, 5],
            times,
            vec![i64::MIN, i64::MAX, 0, -1, i64::MAX, i64::MIN],
            (0..129).map(|i| -i * i).collect(),
        ];
        for values in cases {
            let out = encode_deltas(&values);
            if values.is_empty() {
                assert_eq!(out, vec![128, 1, 4, 0, 0]);
                continue;
            }
            assert_eq!(decode_deltas(&out), values);
        }
    }

    #[test]
    fn equal_deltas_take_no_bits() {
        let values: Vec<i64> = (0..129).map(|i| 10 + 3 * i).collect();
        let out = encode_deltas(&values);
        // Header (128, 4, 129, zigzag 10), one block: min delta 3 (zigzag 6), four widths of 0.
        assert_eq!(out, vec![128, 1, 4, 129, 1, 20, 6, 0, 0, 0, 0]);
    }
}
