//! A trace file cut into its packets: `Trace { repeated TracePacket packet = 1; }` encodes as
//! one record per packet, each a key byte `0x0a` (field 1, length-delimited), a varint length
//! and the packet's bytes. Every length is checked against the file's before a packet is
//! taken, so a cut or damaged file stops at a known byte offset.

use prost::Message;
use schedlab_perfetto_protos::TracePacket;

/// The key of `Trace.packet`: field 1, wire type 2.
const PACKET_KEY: u8 = 0x0a;

/// One packet's bytes and where its record starts in the file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Frame<'f> {
    pub offset: u64,
    pub bytes: &'f [u8],
}

/// Why the records stop before the end of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Break {
    /// The byte the broken record starts at.
    pub offset: u64,
    pub what: String,
    /// The file ends inside the record (a cut), rather than holding something else there.
    pub cut: bool,
}

/// The file's packets in file order.
pub(crate) struct Frames<'f> {
    file: &'f [u8],
    pos: usize,
}

impl<'f> Frames<'f> {
    pub(crate) fn new(file: &'f [u8]) -> Self {
        Frames { file, pos: 0 }
    }

    /// The next packet, `None` at the end of the file, or why the records stop here.
    pub(crate) fn next_frame(&mut self) -> Result<Option<Frame<'f>>, Break> {
        let start = self.pos;
        let Some(&key) = self.file.get(start) else {
            return Ok(None);
        };
        let broken = |what: String, cut| Break {
            offset: start as u64,
            what,
            cut,
        };
        if key != PACKET_KEY {
            return Err(broken(
                format!("a record with key byte {key:#04x} where a TracePacket (0x0a) belongs"),
                false,
            ));
        }
        let (len, varint) = match varint(&self.file[start + 1..]) {
            Varint::Value(len, n) => (len, n),
            Varint::Cut => return Err(broken("a packet's length is cut short".into(), true)),
            Varint::TooLong => {
                return Err(broken("a packet's length is not a varint".into(), false));
            }
        };
        let body = start + 1 + varint;
        let end = (body as u64).saturating_add(len);
        if end > self.file.len() as u64 {
            return Err(broken(
                format!("a packet of {len} bytes starting at byte {body} ends at byte {end}"),
                true,
            ));
        }
        self.pos = end as usize;
        Ok(Some(Frame {
            offset: start as u64,
            bytes: &self.file[body..end as usize],
        }))
    }
}

enum Varint {
    /// The value and the bytes it took.
    Value(u64, usize),
    Cut,
    TooLong,
}

fn varint(b: &[u8]) -> Varint {
    let mut value = 0u64;
    for (i, &byte) in b.iter().enumerate().take(10) {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Varint::Value(value, i + 1);
        }
    }
    if b.len() < 10 {
        Varint::Cut
    } else {
        Varint::TooLong
    }
}

/// Whether `head`, a file's first bytes, is the start of a Perfetto trace: it starts with a
/// TracePacket record whose packet decodes, and every record that `head` holds whole frames as
/// one. A text file that starts with a newline (also `0x0a`) fails within a few bytes.
pub fn looks_like_trace(head: &[u8]) -> bool {
    let mut frames = Frames::new(head);
    let mut first = true;
    loop {
        match frames.next_frame() {
            Ok(Some(frame)) => {
                if first && TracePacket::decode(frame.bytes).is_err() {
                    return false;
                }
                first = false;
            }
            Ok(None) => return !first,
            // A record cut by the end of `head`, not of the file: only the first must be whole.
            Err(b) => return b.cut && !first,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_frame_and_cuts_name_their_offset() {
        let file = [0x0a, 0x02, 0x40, 0x05, 0x0a, 0x00, 0x0a, 0x05, 0x40];
        let mut frames = Frames::new(&file);
        let one = frames.next_frame().unwrap().unwrap();
        assert_eq!((one.offset, one.bytes), (0, &[0x40, 0x05][..]));
        assert_eq!(frames.next_frame().unwrap().unwrap().offset, 4);
        let cut = frames.next_frame().unwrap_err();
        assert_eq!((cut.offset, cut.cut), (6, true));
        assert!(cut.what.contains("ends at byte 13"), "{}", cut.what);
    }

    #[test]
    fn another_key_is_not_a_packet() {
        let err = Frames::new(&[0x12, 0x00]).next_frame().unwrap_err();
        assert_eq!((err.offset, err.cut), (0, false));
    }

    #[test]
    fn detection_decodes_the_first_packet() {
        // timestamp = 5 (field 8, varint).
        assert!(looks_like_trace(&[0x0a, 0x02, 0x40, 0x05]));
        assert!(!looks_like_trace(b"\nhello world, this is text\n"));
        assert!(!looks_like_trace(b""));
        assert!(!looks_like_trace(&[0x0a, 0x09, 0x40]));
    }
}
