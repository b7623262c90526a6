//! Framing of the record stream into chunks of rounds.
//!
//! `perf record` drains all per-CPU ring buffers, writes what it got, then writes a
//! FINISHED_ROUND record. The records between two FINISHED_ROUNDs are a *round*: each CPU's
//! records in it are in time order, but CPUs interleave arbitrarily. Framing only reads the
//! 8-byte record headers, so it is cheap and sequential; decoding is the expensive part and
//! runs in parallel (see `decode`), over *chunks*: a round, or a piece of a round of at most
//! [`CHUNK_BYTES`]. Rounds are as large as perf's ring buffers (`perf record -m`: 4 to 7 MiB
//! on a busy machine), so whole rounds decoded on one core each, and blocks of whole rounds
//! held one such round or two at a time whatever block size was asked for.

use crate::le::{u16_at, u32_at, u64_at};

pub(crate) const RECORD_FINISHED_ROUND: u32 = 68;
const RECORD_ID_INDEX: u32 = 69;
const RECORD_AUXTRACE: u32 = 71;
/// Largest record type this reader accepts as plausible; larger types mean the framing has
/// lost its place (a damaged size field).
const RECORD_TYPE_MAX: u32 = 127;

/// Bytes of records in a chunk, at most (unless one record is larger): a block of a few
/// megabytes is then several chunks, decoded on every core, whatever perf's round size.
pub(crate) const CHUNK_BYTES: usize = 512 << 10;

/// A byte range of the data section holding records of one round, in file order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chunk {
    pub start: usize,
    pub end: usize,
    /// The round's last chunk: a FINISHED_ROUND (or the end of the data) follows it.
    pub ends_round: bool,
}

/// Where the record stream became unreadable: file offset and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Damage {
    pub offset: u64,
    pub what: String,
}

/// Chunks from the framer, in file order, plus the damage that ended the stream if any.
#[derive(Debug, Default)]
pub(crate) struct Block {
    pub chunks: Vec<Chunk>,
    pub damage: Option<Damage>,
}

/// Walks the data section record by record.
pub(crate) struct Framer<'a> {
    data: &'a [u8],
    /// File offset of `data[0]`, for error messages.
    base: u64,
    pos: usize,
    chunk_start: usize,
    done: bool,
    /// Event id → CPU from PERF_RECORD_ID_INDEX, to place LOST_SAMPLES records.
    pub id_cpu: Vec<(u64, i32)>,
}

impl<'a> Framer<'a> {
    pub(crate) fn new(data: &'a [u8], base: u64) -> Self {
        Framer {
            data,
            base,
            pos: 0,
            chunk_start: 0,
            done: false,
            id_cpu: Vec::new(),
        }
    }

    /// The next chunks, together spanning at least `want` bytes (fewer at the end of the
    /// stream) and at most `want` plus a chunk. `None` once everything was handed out.
    pub(crate) fn next_block(&mut self, want: usize) -> Option<Block> {
        if self.done {
            return None;
        }
        let mut block = Block::default();
        let block_start = self.chunk_start;
        while self.pos - block_start < want || block.chunks.is_empty() {
            match self.step() {
                Step::Record => {}
                Step::ChunkEnd(c) => block.chunks.push(c),
                Step::End(c, damage) => {
                    if c.end > c.start {
                        block.chunks.push(c);
                    }
                    block.damage = damage;
                    self.done = true;
                    break;
                }
            }
        }
        Some(block)
    }

    fn damage(&self, what: String) -> Option<Damage> {
        Some(Damage {
            offset: self.base + self.pos as u64,
            what,
        })
    }

    fn step(&mut self) -> Step {
        prefetch(self.data, self.pos + PREFETCH_AHEAD);
        let rest = self.data.len() - self.pos;
        // What is left at the end of the data is the last round's last chunk.
        let open = Chunk {
            start: self.chunk_start,
            end: self.pos,
            ends_round: true,
        };
        if rest == 0 {
            return Step::End(open, None);
        }
        let (Some(ty), Some(size)) = (u32_at(self.data, self.pos), u16_at(self.data, self.pos + 6))
        else {
            return Step::End(
                open,
                self.damage(format!("a record header is cut off ({rest} bytes left)")),
            );
        };
        let mut size = size as usize;
        if size < 8 || !size.is_multiple_of(8) || ty == 0 || ty > RECORD_TYPE_MAX {
            return Step::End(
                open,
                self.damage(format!(
                    "implausible record header (type {ty}, size {size})"
                )),
            );
        }
        if ty == RECORD_AUXTRACE {
            // The AUX data follows the record and is not counted in its header size.
            let aux = u64_at(self.data, self.pos + 8).and_then(|a| usize::try_from(a).ok());
            match aux.and_then(|a| size.checked_add(a)) {
                Some(s) => size = s,
                None => return Step::End(open, self.damage("implausible AUXTRACE size".into())),
            }
        }
        if size > rest {
            return Step::End(
                open,
                self.damage(format!(
                    "a {size}-byte record runs past the end of the data ({rest} bytes left)"
                )),
            );
        }
        let record = &self.data[self.pos..self.pos + size];
        if ty == RECORD_ID_INDEX {
            self.read_id_index(record);
        }
        self.pos += size;
        if ty == RECORD_FINISHED_ROUND {
            self.chunk_start = self.pos;
            return Step::ChunkEnd(open);
        }
        if self.pos - self.chunk_start >= CHUNK_BYTES {
            let piece = Chunk {
                end: self.pos,
                ends_round: false,
                ..open
            };
            self.chunk_start = self.pos;
            return Step::ChunkEnd(piece);
        }
        Step::Record
    }

    /// `{ u64 nr; { u64 id, idx, cpu, tid } entries[nr] }` after the header.
    fn read_id_index(&mut self, record: &[u8]) {
        let nr = u64_at(record, 8).unwrap_or(0);
        let mut off = 16usize;
        for _ in 0..nr {
            let (Some(id), Some(cpu)) = (u64_at(record, off), u64_at(record, off + 16)) else {
                break;
            };
            self.id_cpu.push((id, cpu as i32));
            off += 32;
        }
    }
}

/// How far ahead of the record being framed its bytes are asked into the cache. Each record's
/// place follows from the size in the one before, so without a hint the framer waits on memory
/// once per cache line (most of the cycles framing took went to that one load). 4 KiB ahead was
/// the fastest distance measured; nearer was slower, farther no faster.
const PREFETCH_AHEAD: usize = 4096;

/// Asks for the cache line at `data[at]`, if there is one; a no-op on other architectures.
fn prefetch(data: &[u8], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if at < data.len() {
        // SAFETY: the address is inside `data`, and a prefetch only hints: it reads nothing
        // into the program and never faults.
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                data.as_ptr().add(at).cast::<i8>(),
            )
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (data, at);
}

enum Step {
    Record,
    ChunkEnd(Chunk),
    End(Chunk, Option<Damage>),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(ty: u32, size: u16) -> Vec<u8> {
        let mut r = vec![0u8; size as usize];
        r[..4].copy_from_slice(&ty.to_le_bytes());
        r[6..8].copy_from_slice(&size.to_le_bytes());
        r
    }

    #[test]
    fn splits_at_finished_round_and_reports_damage() {
        let mut data = rec(9, 16);
        data.extend(rec(RECORD_FINISHED_ROUND, 8));
        data.extend(rec(9, 24));
        let mut damaged = rec(9, 8);
        damaged[6] = 0; // size 0
        data.extend(damaged);
        let mut f = Framer::new(&data, 1000);
        let b = f.next_block(1).unwrap();
        assert_eq!(b.chunks, vec![chunk(0, 16, true)]);
        let b = f.next_block(1 << 20).unwrap();
        assert_eq!(b.chunks, vec![chunk(24, 48, true)]);
        assert_eq!(b.damage.map(|d| d.offset), Some(1048));
        assert!(f.next_block(1).is_none());
    }

    fn chunk(start: usize, end: usize, ends_round: bool) -> Chunk {
        Chunk {
            start,
            end,
            ends_round,
        }
    }

    #[test]
    fn a_long_round_comes_in_chunks_and_a_block_stops_at_a_chunk() {
        // A round of 3.5 chunks' worth of 64 KiB records, a FINISHED_ROUND, a short round.
        let record = 64 << 10;
        let per_chunk = CHUNK_BYTES / record;
        let long = per_chunk * 7 / 2;
        let mut data = Vec::new();
        for _ in 0..long {
            data.extend(rec(9, (record - 8) as u16));
            data.extend(rec(9, 8));
        }
        let round_end = data.len();
        data.extend(rec(RECORD_FINISHED_ROUND, 8));
        data.extend(rec(9, 16));
        let mut f = Framer::new(&data, 0);
        // A chunk closes at the first record boundary at or past CHUNK_BYTES.
        let first = f.next_block(1).unwrap();
        assert_eq!(first.chunks, vec![chunk(0, CHUNK_BYTES, false)]);
        let rest = f.next_block(usize::MAX).unwrap();
        let starts: Vec<usize> = rest.chunks.iter().map(|c| c.start).collect();
        let c = CHUNK_BYTES;
        assert_eq!(starts, vec![c, 2 * c, 3 * c, round_end + 8]);
        assert_eq!(rest.chunks[2], chunk(3 * c, round_end, true));
        assert!(!rest.chunks[1].ends_round && rest.chunks[3].ends_round);
        assert_eq!(rest.chunks[3].end, data.len());
    }
}
