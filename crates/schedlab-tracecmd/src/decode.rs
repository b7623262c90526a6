//! The kernel's ring-buffer pages, as trace-cmd copies them into the file: a page header (the
//! time of the page's first event, the bytes committed and whether events were lost before
//! the page), then events, each a 4-byte header (5 bits of type or length, 27 bits of time
//! delta) and its payload, with time-extend and absolute-time entries and padding between them
//! (include/linux/ring_buffer.h; libtraceevent's kbuffer-parse.c reads them the same way).

use std::ops::Range;

/// Type values of an event header's 5-bit field; 1 to 28 are a payload of that many words.
const PADDING: u32 = 29;
const TIME_EXTEND: u32 = 30;
const TIME_STAMP: u32 = 31;
/// A page header's commit word: bytes committed, and two flags about the events before it.
const COMMIT_MASK: u64 = (1 << 27) - 1;
const MISSED_EVENTS: u64 = 1 << 31;
const MISSED_STORED: u64 = 1 << 30;
/// Absolute time stamps lack the top 5 bits, which come from the running time.
const TS_MSB: u64 = 0xf8 << 56;
const TS_SHIFT: u32 = 27;

/// Events the kernel lost before a page (its ring buffer was full, or overwritten).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Missed {
    None,
    /// Lost, but the page had no room to say how many.
    Unknown,
    Count(u64),
}

/// A page's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PageHeader {
    /// The time of the page's first event.
    pub timestamp: u64,
    /// Where the page's events end (from the start of the page).
    pub data_end: usize,
    pub missed: Missed,
}

/// Reads the header of `page`; `commit_size` and `data_start` come from the file's
/// `header_page` format (8 and 16 on 64-bit kernels).
pub(crate) fn page_header(
    page: &[u8],
    commit_size: usize,
    data_start: usize,
) -> Result<PageHeader, &'static str> {
    const SHORT: &str = "a ring-buffer page shorter than its header";
    let timestamp = u64::from_le_bytes(page.get(..8).ok_or(SHORT)?.try_into().map_err(|_| SHORT)?);
    let word = |at: usize| -> Option<u64> {
        let b = page.get(at..at.checked_add(commit_size)?)?;
        Some(match commit_size {
            4 => u32::from_le_bytes(b.try_into().ok()?) as u64,
            _ => u64::from_le_bytes(b.try_into().ok()?),
        })
    };
    let flags = word(8).ok_or(SHORT)?;
    let data_end = data_start + (flags & COMMIT_MASK) as usize;
    if data_end > page.len() {
        return Err("a ring-buffer page commits more bytes than the page has");
    }
    let missed = match (flags & MISSED_EVENTS != 0, flags & MISSED_STORED != 0) {
        (false, _) => Missed::None,
        (true, true) => word(data_end).map_or(Missed::Unknown, Missed::Count),
        (true, false) => Missed::Unknown,
    };
    Ok(PageHeader {
        timestamp,
        data_end,
        missed,
    })
}

/// The next event of a page from `*pos` (at most `end`), advancing `*time` by the deltas and
/// time entries on the way: the payload's range, or `None` at the end of the page's data.
pub(crate) fn next_event(
    page: &[u8],
    pos: &mut usize,
    end: usize,
    time: &mut u64,
) -> Result<Option<Range<usize>>, &'static str> {
    const PAST: &str = "a ring-buffer event runs past its page's committed data";
    let word = |at: usize| -> Result<u32, &'static str> {
        let b = page.get(at..at + 4).filter(|_| at + 4 <= end).ok_or(PAST)?;
        Ok(u32::from_le_bytes(b.try_into().map_err(|_| PAST)?))
    };
    while *pos + 4 <= end {
        let header = word(*pos)?;
        let (kind, delta) = (header & 31, u64::from(header >> 5));
        let at = *pos;
        match kind {
            PADDING => {
                // Delta 0: the rest of the page is empty (a discarded event at its end).
                if delta == 0 {
                    *pos = end;
                    return Ok(None);
                }
                // A discarded event: its first word holds the bytes after the header.
                *time = time.wrapping_add(delta);
                *pos = (at + 4).saturating_add(word(at + 4)? as usize).max(at + 8);
            }
            TIME_EXTEND => {
                let extend = u64::from(word(at + 4)?);
                *time = time.wrapping_add((extend << TS_SHIFT) + delta);
                *pos = at + 8;
            }
            TIME_STAMP => {
                let extend = u64::from(word(at + 4)?);
                *time = ((extend << TS_SHIFT) + delta) | (*time & TS_MSB);
                *pos = at + 8;
            }
            0 => {
                let length = word(at + 4)? as usize;
                if length < 4 {
                    return Err("a ring-buffer event of impossible length");
                }
                let data = at + 8;
                let next = data + ((length - 4 + 3) & !3);
                if next > end {
                    return Err(PAST);
                }
                *time = time.wrapping_add(delta);
                *pos = next;
                return Ok(Some(data..data + length - 4));
            }
            words => {
                let data = at + 4;
                let next = data + 4 * words as usize;
                if next > end {
                    return Err(PAST);
                }
                *time = time.wrapping_add(delta);
                *pos = next;
                return Ok(Some(data..next));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(kind: u32, delta: u32) -> [u8; 4] {
        (kind | (delta << 5)).to_le_bytes()
    }

    /// A page: header (timestamp 1000, commit of the data), then `data`.
    fn page(data: &[u8], flags: u64, lost: Option<u64>) -> Vec<u8> {
        let mut p = 1000u64.to_le_bytes().to_vec();
        p.extend((data.len() as u64 | flags).to_le_bytes());
        p.extend(data);
        if let Some(lost) = lost {
            p.extend(lost.to_le_bytes());
        }
        p.resize(4096, 0);
        p
    }

    fn events(p: &[u8]) -> Vec<(u64, Vec<u8>)> {
        let h = page_header(p, 8, 16).unwrap();
        let (mut pos, mut time, mut out) = (16, h.timestamp, Vec::new());
        while let Some(r) = next_event(p, &mut pos, h.data_end, &mut time).unwrap() {
            out.push((time, p[r].to_vec()));
        }
        out
    }

    #[test]
    fn deltas_extends_stamps_and_padding_give_each_event_its_time() {
        let mut d = Vec::new();
        d.extend(header(2, 5)); // 8 bytes of payload, 5 ns after the page's time
        d.extend(b"abcdefgh");
        d.extend(header(TIME_EXTEND, 3)); // + (1 << 27) + 3
        d.extend(1u32.to_le_bytes());
        d.extend(header(1, 0));
        d.extend(b"wxyz");
        // A discarded 4-byte event: its first word now says how many bytes follow the header.
        d.extend(header(PADDING, 7));
        d.extend(4u32.to_le_bytes());
        d.extend(header(0, 1)); // a long event: its length in the next word
        d.extend(7u32.to_le_bytes());
        d.extend(b"LMN\0");
        d.extend(header(TIME_STAMP, 9)); // absolute: 2 << 27 | 9
        d.extend(2u32.to_le_bytes());
        d.extend(header(1, 0));
        d.extend(b"last");
        let got = events(&page(&d, 0, None));
        let extended = 1005 + (1 << 27) + 3;
        assert_eq!(
            got,
            [
                (1005, b"abcdefgh".to_vec()),
                (extended, b"wxyz".to_vec()),
                (extended + 7 + 1, b"LMN".to_vec()),
                ((2 << 27) + 9, b"last".to_vec()),
            ]
        );
    }

    #[test]
    fn a_page_says_how_many_events_were_lost_before_it_when_it_can() {
        let h = |flags, lost| page_header(&page(&[], flags, lost), 8, 16).unwrap().missed;
        assert_eq!(h(0, None), Missed::None);
        assert_eq!(h(MISSED_EVENTS, None), Missed::Unknown);
        assert_eq!(
            h(MISSED_EVENTS | MISSED_STORED, Some(42)),
            Missed::Count(42)
        );
    }

    #[test]
    fn damaged_pages_are_errors_not_panics() {
        // Commits more than the page holds.
        let mut p = page(&[], 0, None);
        p[8..16].copy_from_slice(&5000u64.to_le_bytes());
        assert!(page_header(&p, 8, 16).is_err());
        assert!(page_header(&p[..10], 8, 16).is_err());
        // An event longer than the committed data, and one of length 0.
        for d in [
            [header(20, 0), *b"abcd"].concat(),
            [header(0, 0), 0u32.to_le_bytes()].concat(),
        ] {
            let p = page(&d, 0, None);
            let h = page_header(&p, 8, 16).unwrap();
            let (mut pos, mut time) = (16, 0);
            assert!(next_event(&p, &mut pos, h.data_end, &mut time).is_err());
        }
    }
}
