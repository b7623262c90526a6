//! One CPU's data cut into ring-buffer pages, and the pages into events, in time order.
//!
//! A CPU's data is its ring buffer's pages as the kernel filled them, each page in time order
//! and the pages one after the other. In a v7 file with compression it is a count of chunks,
//! each a compressed run of whole pages (`u32` compressed size, `u32` size, the bytes): one
//! chunk is decompressed at a time, so memory stays a chunk per CPU whatever the file size.
//! Uncompressed, the pages are read where they lie in the file's mapping.
//!
//! Damage (a page that commits more than it holds, a chunk that does not decompress, data cut
//! short) ends that CPU's stream with a [`Damage`]: the events before it stand.

use std::ops::Range;

use crate::compress::Codec;
use crate::decode::{Missed, next_event, page_header};
use crate::metadata::CpuData;

/// Where a CPU's data became unreadable: the byte of the file and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Damage {
    pub offset: u64,
    pub what: String,
    /// The data ran out (a file cut short), rather than being inconsistent.
    pub cut: bool,
}

/// Events the kernel lost on a CPU, between two times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lost {
    pub cpu: i32,
    /// The buffer whose ring buffer lost them (index into the metadata's buffers).
    pub buffer: usize,
    /// The CPU's last event before the loss (`None`: none in the trace yet).
    pub since: Option<u64>,
    /// The time of the first page after the loss.
    pub until: u64,
    /// `None`: the page did not say how many.
    pub count: Option<u64>,
}

/// How the page layout reads: from the file's `header_page`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageLayout {
    pub page_size: usize,
    pub commit_size: usize,
    pub data_start: usize,
}

/// The pages of one CPU's data, and the next event among them.
pub(crate) struct CpuStream<'a> {
    pub cpu: i32,
    /// Which buffer (index into the metadata's buffers) the CPU's data belongs to.
    pub buffer: usize,
    layout: PageLayout,
    /// The CPU's data in the file, and the file offset of its first byte.
    data: &'a [u8],
    base: u64,
    codec: Option<Codec>,
    /// Compressed data: chunks not yet decompressed, the next one's place in `data`, and the
    /// current chunk's bytes and file offset.
    chunks_left: u32,
    next_chunk: usize,
    chunk: Vec<u8>,
    chunk_at: u64,
    /// The next page's start in the current block (`data`, or `chunk`).
    next_page: usize,
    /// The current page: its start in the block, where its events end, the next event's
    /// place and the running time.
    page: usize,
    page_end: usize,
    pos: usize,
    time: u64,
    /// The next event: its time and its payload's place in the block.
    head: Option<(u64, Range<usize>)>,
    last_time: Option<u64>,
    pub damage: Option<Damage>,
    /// Losses seen so far (taken by the reader).
    pub lost: Vec<Lost>,
    pub pages: u64,
}

impl<'a> CpuStream<'a> {
    /// The stream of `cpu`'s data in `file`, positioned at its first event.
    pub(crate) fn new(
        file: &'a [u8],
        cpu: CpuData,
        buffer: usize,
        layout: PageLayout,
        codec: Option<Codec>,
    ) -> Self {
        let start = (cpu.offset as usize).min(file.len());
        // Compressed data is as long as its chunk count says: trace-cmd 3.1 records its size 4
        // bytes short (without the count), and reads it by the count too.
        let end = match codec {
            Some(_) => file.len(),
            None => (cpu.offset.saturating_add(cpu.size) as usize).clamp(start, file.len()),
        };
        let mut s = CpuStream {
            cpu: cpu.cpu,
            buffer,
            layout,
            data: &file[start..end],
            base: start as u64,
            codec,
            chunks_left: 0,
            next_chunk: 0,
            chunk: Vec::new(),
            chunk_at: 0,
            next_page: 0,
            page: 0,
            page_end: 0,
            pos: 0,
            time: 0,
            head: None,
            last_time: None,
            damage: None,
            lost: Vec::new(),
            pages: 0,
        };
        if codec.is_some() && !s.data.is_empty() {
            match s.data.get(..4) {
                Some(b) => {
                    s.chunks_left = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    s.next_chunk = 4;
                }
                None => s.cut(s.base, "the CPU data is cut inside its chunk count".into()),
            }
        }
        s.advance();
        s
    }

    /// The next event's time, `None` when the stream has ended.
    pub(crate) fn peek_time(&self) -> Option<u64> {
        self.head.as_ref().map(|h| h.0)
    }

    /// The next event's payload (empty once the stream has ended).
    pub(crate) fn payload(&self) -> &[u8] {
        match &self.head {
            Some((_, range)) => self.block().get(range.clone()).unwrap_or_default(),
            None => &[],
        }
    }

    fn block(&self) -> &[u8] {
        if self.codec.is_some() {
            &self.chunk
        } else {
            self.data
        }
    }

    /// The file offset of a place in the current block (for a compressed chunk, the chunk's).
    fn offset_of(&self, at: usize) -> u64 {
        if self.codec.is_some() {
            self.chunk_at
        } else {
            self.base + at as u64
        }
    }

    fn damaged(&mut self, offset: u64, what: String) {
        self.damage.get_or_insert(Damage {
            offset,
            what,
            cut: false,
        });
        self.head = None;
    }

    /// Moves to the next event, loading pages and chunks as needed.
    pub(crate) fn advance(&mut self) {
        if let Some((time, _)) = self.head.take() {
            self.last_time = Some(time);
        }
        if self.damage.is_some() {
            return;
        }
        loop {
            let block = if self.codec.is_some() {
                &self.chunk
            } else {
                self.data
            };
            match next_event(block, &mut self.pos, self.page_end, &mut self.time) {
                Ok(Some(range)) => {
                    self.head = Some((self.time, range));
                    return;
                }
                Ok(None) => {}
                Err(why) => {
                    let at = self.offset_of(self.page);
                    return self.damaged(at, format!("cpu {}: {why}", self.cpu));
                }
            }
            if !self.load_page() {
                return;
            }
        }
    }

    /// Loads the next page (decompressing the next chunk when the current one is used up);
    /// false at the end of the data or on damage.
    fn load_page(&mut self) -> bool {
        let size = self.layout.page_size;
        while self.next_page + size > self.block().len() {
            let block_len = self.block().len();
            if self.codec.is_none() || self.chunks_left == 0 {
                if self.next_page < block_len && self.codec.is_none() {
                    let at = self.offset_of(self.next_page);
                    let what = format!(
                        "cpu {}: the data ends inside a page ({} of its {size} bytes are there)",
                        self.cpu,
                        block_len - self.next_page
                    );
                    self.cut(at, what);
                }
                return false;
            }
            if !self.load_chunk() {
                return false;
            }
        }
        let start = self.next_page;
        self.next_page += size;
        let header = page_header(
            &self.block()[start..start + size],
            self.layout.commit_size,
            self.layout.data_start,
        );
        match header {
            Ok(h) => {
                self.pages += 1;
                if h.missed != Missed::None {
                    self.lost.push(Lost {
                        cpu: self.cpu,
                        buffer: self.buffer,
                        since: self.last_time,
                        until: h.timestamp,
                        count: match h.missed {
                            Missed::Count(n) => Some(n),
                            _ => None,
                        },
                    });
                }
                self.page = start;
                self.page_end = start + h.data_end;
                self.pos = start + self.layout.data_start;
                self.time = h.timestamp;
                true
            }
            Err(why) => {
                let at = self.offset_of(start);
                self.damaged(at, format!("cpu {}: {why}", self.cpu));
                false
            }
        }
    }

    /// Decompresses the next chunk into the current block; false on damage.
    /// The data ran out at `offset`.
    fn cut(&mut self, offset: u64, what: String) {
        self.damaged(offset, what);
        if let Some(d) = &mut self.damage {
            d.cut = true;
        }
    }

    fn load_chunk(&mut self) -> bool {
        let at = self.base + self.next_chunk as u64;
        let header = (self.data.get(self.next_chunk..self.next_chunk + 8)).map(|b| {
            let word = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
            (word(0) as usize, word(4))
        });
        let Some((zsize, size)) = header else {
            let what = format!(
                "cpu {}: the data is cut inside a compressed chunk's header",
                self.cpu
            );
            self.cut(at, what);
            return false;
        };
        let from = self.next_chunk + 8;
        let Some(bytes) = from
            .checked_add(zsize)
            .and_then(|end| self.data.get(from..end))
        else {
            let what = format!(
                "cpu {}: the data is cut inside a compressed chunk ({zsize} bytes announced, {} there)",
                self.cpu,
                self.data.len().saturating_sub(from)
            );
            self.cut(at, what);
            return false;
        };
        let codec = self.codec.unwrap_or(Codec::Zstd);
        match codec.decompress(bytes, size) {
            Ok(chunk) => {
                self.chunk = chunk;
                self.chunk_at = at;
                self.chunks_left -= 1;
                self.next_chunk = from + zsize;
                self.next_page = 0;
                self.page_end = 0;
                self.pos = 0;
                true
            }
            Err(why) => {
                self.damaged(
                    at,
                    format!(
                        "cpu {}: a compressed chunk does not decompress: {why}",
                        self.cpu
                    ),
                );
                false
            }
        }
    }
}
