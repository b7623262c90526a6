//! Framing of the record stream into rounds.
//!
//! `perf record` drains all per-CPU ring buffers, writes what it got, then writes a
//! FINISHED_ROUND record. The records between two FINISHED_ROUNDs are a *round*: each CPU's
//! records in it are in time order, but CPUs interleave arbitrarily. Framing only reads the
//! 8-byte record headers, so it is cheap and sequential; decoding the rounds it finds is the
//! expensive part and runs in parallel (see `decode`).

use crate::le::{u16_at, u32_at, u64_at};

pub(crate) const RECORD_FINISHED_ROUND: u32 = 68;
const RECORD_ID_INDEX: u32 = 69;
const RECORD_AUXTRACE: u32 = 71;
/// Largest record type this reader accepts as plausible; larger types mean the framing has
/// lost its place (a damaged size field).
const RECORD_TYPE_MAX: u32 = 127;

/// A byte range of the data section holding one round's records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Round {
    pub start: usize,
    pub end: usize,
}

/// Where the record stream became unreadable: file offset and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Damage {
    pub offset: u64,
    pub what: String,
}

/// Rounds from the framer, in file order, plus the damage that ended the stream if any.
#[derive(Debug, Default)]
pub(crate) struct Block {
    pub rounds: Vec<Round>,
    pub damage: Option<Damage>,
}

/// Walks the data section record by record.
pub(crate) struct Framer<'a> {
    data: &'a [u8],
    /// File offset of `data[0]`, for error messages.
    base: u64,
    pos: usize,
    round_start: usize,
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
            round_start: 0,
            done: false,
            id_cpu: Vec::new(),
        }
    }

    /// The next rounds, together spanning at least `want` bytes (fewer at the end of the
    /// stream). `None` once everything was handed out.
    pub(crate) fn next_block(&mut self, want: usize) -> Option<Block> {
        if self.done {
            return None;
        }
        let mut block = Block::default();
        let block_start = self.round_start;
        while self.pos - block_start < want || block.rounds.is_empty() {
            match self.step() {
                Step::Record => {}
                Step::RoundEnd(r) => block.rounds.push(r),
                Step::End(r, damage) => {
                    if r.end > r.start {
                        block.rounds.push(r);
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
        let open = Round {
            start: self.round_start,
            end: self.pos,
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
            self.round_start = self.pos;
            return Step::RoundEnd(open);
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
/// once per cache line (8 of every 10 cycles framing took went to that one load). 4 KiB ahead
/// took the reader alone (`read_sched --compact`) from 0.67 to 0.49 s on the 1017 MiB bench
/// trace (512 B: 0.57 s, 2 KiB: 0.53 s, 8 KiB: as 4 KiB).
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
    RoundEnd(Round),
    End(Round, Option<Damage>),
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
        assert_eq!(b.rounds, vec![Round { start: 0, end: 16 }]);
        let b = f.next_block(1 << 20).unwrap();
        assert_eq!(b.rounds, vec![Round { start: 24, end: 48 }]);
        assert_eq!(b.damage.map(|d| d.offset), Some(1048));
        assert!(f.next_block(1).is_none());
    }
}
