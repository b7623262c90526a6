//! Tracepoint formats from the TRACING_DATA feature section.
//!
//! perf copies the kernel's `events/<system>/<name>/format` text for every recorded tracepoint
//! into the file. Field offsets and sizes are read from that text rather than hard-coded, so a
//! kernel that reorders or widens a field (as `prev_state` went from `long` to `unsigned int`
//! and back) is decoded correctly.

use crate::le::{Comm, comm_at, comm_from, u32_at};

/// How a field's bytes are stored in the raw sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loc {
    /// The value itself.
    Inline,
    /// `__data_loc`: a u32 whose low 16 bits are the offset of the data from the start of the
    /// record and whose high 16 bits are its length.
    Data,
    /// `__rel_loc`: as `__data_loc`, but the offset counts from the end of this field.
    Rel,
}

/// One field of a tracepoint record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub offset: usize,
    pub size: usize,
    pub signed: bool,
    pub loc: Loc,
}

impl Field {
    /// The field as an integer, sign-extended when the format says it is signed.
    #[inline]
    pub fn int(&self, raw: &[u8]) -> Option<i64> {
        let s = raw.get(self.offset..self.offset.checked_add(self.size)?)?;
        Some(match (self.size, self.signed) {
            (1, true) => s[0] as i8 as i64,
            (1, false) => s[0] as i64,
            (2, true) => i16::from_le_bytes([s[0], s[1]]) as i64,
            (2, false) => u16::from_le_bytes([s[0], s[1]]) as i64,
            (4, true) => i32::from_le_bytes(s.try_into().ok()?) as i64,
            (4, false) => u32::from_le_bytes(s.try_into().ok()?) as i64,
            (8, _) => i64::from_le_bytes(s.try_into().ok()?),
            _ => return None,
        })
    }

    /// The field as an `i32` (pids and CPUs), or `None` when it is missing or out of range.
    #[inline(always)]
    pub fn i32(&self, raw: &[u8]) -> Option<i32> {
        // pids and CPUs are `int` in every format: read them directly, without the match on
        // size and sign (the reader's most frequent field read).
        if self.size == 4 && self.signed {
            let s = raw.get(self.offset..self.offset.checked_add(4)?)?;
            return Some(i32::from_le_bytes(s.try_into().ok()?));
        }
        self.int(raw).and_then(|v| i32::try_from(v).ok())
    }

    /// A task name such as `prev_comm`: a fixed `char[16]`, or, for the tracepoints newer
    /// kernels declare with `__data_loc char[] comm` (sched_migrate_task and sched_process_fork
    /// on Linux 6.x), the string the descriptor points at.
    #[inline(always)]
    pub fn comm(&self, raw: &[u8]) -> Option<Comm> {
        match self.loc {
            Loc::Inline => comm_at(raw, self.offset, self.size),
            Loc::Data | Loc::Rel => self.bytes(raw).map(comm_from),
        }
    }

    /// The bytes of a string field, following `__data_loc` / `__rel_loc` indirection, up to
    /// the first NUL.
    pub fn bytes<'a>(&self, raw: &'a [u8]) -> Option<&'a [u8]> {
        let s = match self.loc {
            Loc::Inline => raw.get(self.offset..self.offset.checked_add(self.size)?)?,
            Loc::Data | Loc::Rel => {
                let v = u32_at(raw, self.offset)? as usize;
                let mut start = v & 0xffff;
                if self.loc == Loc::Rel {
                    start += self.offset + self.size;
                }
                raw.get(start..start.checked_add(v >> 16)?)?
            }
        };
        let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
        Some(&s[..end])
    }
}

/// One tracepoint's format: its name, the id that `perf_event_attr.config` refers to, and its
/// fields.
#[derive(Debug, Clone)]
pub struct Format {
    pub system: String,
    pub name: String,
    pub id: u64,
    pub fields: Vec<(String, Field)>,
    /// The `print fmt:` line after the label: how the kernel prints the record.
    pub print_fmt: String,
}

impl Format {
    pub fn field(&self, name: &str) -> Option<Field> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, f)| *f)
    }
}

/// A problem in the TRACING_DATA section: byte offset within the section and what was wrong.
pub type TraceError = (usize, String);

const MAGIC: &[u8; 10] = b"\x17\x08\x44tracing";

/// Parses the event formats out of a TRACING_DATA section. Stops after the event formats:
/// kallsyms, printk formats and saved cmdlines that follow are not needed.
pub(crate) fn parse_tracing_data(d: &[u8]) -> Result<Vec<Format>, TraceError> {
    let mut c = Cursor { d, pos: 0 };
    if c.take(10)? != MAGIC {
        return Err((
            0,
            "TRACING_DATA does not start with the tracing magic".into(),
        ));
    }
    let _version = c.cstr()?;
    let big_endian = c.take(1)?[0];
    if big_endian != 0 {
        return Err((c.pos - 1, "big-endian tracing data".into()));
    }
    let _long_size = c.take(1)?;
    let _page_size = c.u32()?;
    for header in ["header_page", "header_event"] {
        let at = c.pos;
        if c.cstr()? != header.as_bytes() {
            return Err((at, format!("expected the {header} block")));
        }
        let size = c.u64()?;
        c.skip(size)?;
    }
    let ftrace_count = c.u32()?;
    for _ in 0..ftrace_count {
        let size = c.u64()?;
        c.skip(size)?;
    }
    let systems = c.u32()?;
    let mut formats = Vec::new();
    for _ in 0..systems {
        let system = String::from_utf8_lossy(c.cstr()?).into_owned();
        let count = c.u32()?;
        for _ in 0..count {
            let size = c.u64()?;
            let at = c.pos;
            let text = c.take_u64(size)?;
            let text = std::str::from_utf8(text)
                .map_err(|e| (at + e.valid_up_to(), "format text is not UTF-8".to_string()))?;
            formats.push(parse_format(&system, text).map_err(|(o, m)| (at + o, m))?);
        }
    }
    Ok(formats)
}

/// Parses one `format` file: `name:`, `ID:` and the `field:` lines.
pub fn parse_format(system: &str, text: &str) -> Result<Format, TraceError> {
    let mut name = None;
    let mut id = None;
    let mut fields = Vec::new();
    let mut print_fmt = String::new();
    let mut line_start = 0;
    for line in text.split('\n') {
        let at = line_start;
        line_start += line.len() + 1;
        let t = line.trim();
        if let Some(v) = t.strip_prefix("name:") {
            name = Some(v.trim().to_string());
        } else if let Some(v) = t.strip_prefix("ID:") {
            id = Some(
                v.trim()
                    .parse::<u64>()
                    .map_err(|_| (at, format!("bad tracepoint ID {:?}", v.trim())))?,
            );
        } else if let Some(v) = t.strip_prefix("print fmt:") {
            print_fmt = v.trim().to_string();
        } else if t.starts_with("field:") {
            fields.push(parse_field(t).ok_or_else(|| (at, format!("bad field line {t:?}")))?);
        }
    }
    match (name, id) {
        (Some(name), Some(id)) => Ok(Format {
            system: system.to_string(),
            name,
            id,
            fields,
            print_fmt,
        }),
        _ => Err((0, "format text without name or ID".into())),
    }
}

/// `field:char prev_comm[16];<TAB>offset:8;<TAB>size:16;<TAB>signed:0;` (fields separated by tabs)
pub fn parse_field(line: &str) -> Option<(String, Field)> {
    let mut decl = None;
    let (mut offset, mut size, mut signed) = (None, None, false);
    for part in line.split(';') {
        let part = part.trim();
        if let Some(v) = part.strip_prefix("field:") {
            decl = Some(v.trim());
        } else if let Some(v) = part.strip_prefix("offset:") {
            offset = v.trim().parse::<usize>().ok();
        } else if let Some(v) = part.strip_prefix("size:") {
            size = v.trim().parse::<usize>().ok();
        } else if let Some(v) = part.strip_prefix("signed:") {
            signed = v.trim() == "1";
        }
    }
    let decl = decl?;
    let loc = if decl.starts_with("__data_loc") {
        Loc::Data
    } else if decl.starts_with("__rel_loc") {
        Loc::Rel
    } else {
        Loc::Inline
    };
    let last = decl.split_whitespace().last()?;
    let name = last.split('[').next()?.to_string();
    let field = Field {
        offset: offset?,
        size: size?,
        signed,
        loc,
    };
    Some((name, field))
}

/// A bounds-checked reader over the section; errors carry the offset where data ran out.
struct Cursor<'a> {
    d: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], TraceError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.d.len());
        match end {
            Some(end) => {
                let s = &self.d[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err((
                self.pos,
                format!("TRACING_DATA ends inside a {n}-byte block"),
            )),
        }
    }

    fn take_u64(&mut self, n: u64) -> Result<&'a [u8], TraceError> {
        let n = usize::try_from(n).map_err(|_| (self.pos, "block size overflows".to_string()))?;
        self.take(n)
    }

    fn skip(&mut self, n: u64) -> Result<(), TraceError> {
        self.take_u64(n).map(|_| ())
    }

    fn u32(&mut self) -> Result<u32, TraceError> {
        let s = self.take(4)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    fn u64(&mut self) -> Result<u64, TraceError> {
        let s = self.take(8)?;
        let mut b = [0u8; 8];
        b.copy_from_slice(s);
        Ok(u64::from_le_bytes(b))
    }

    fn cstr(&mut self) -> Result<&'a [u8], TraceError> {
        let rest = &self.d[self.pos..];
        let n = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| (self.pos, "unterminated string in TRACING_DATA".to_string()))?;
        let s = &rest[..n];
        self.pos += n + 1;
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sched_switch_format() {
        let text = "name: sched_switch\nID: 316\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:__data_loc char[] filename;\toffset:28;\tsize:4;\tsigned:0;\n";
        let f = parse_format("sched", text).unwrap();
        assert_eq!((f.name.as_str(), f.id), ("sched_switch", 316));
        assert_eq!(
            f.field("prev_pid"),
            Some(Field {
                offset: 24,
                size: 4,
                signed: true,
                loc: Loc::Inline
            })
        );
        assert_eq!(f.field("prev_comm").map(|f| f.size), Some(16));
        assert_eq!(f.field("filename").map(|f| f.loc), Some(Loc::Data));
    }

    #[test]
    fn data_loc_string_is_bounds_checked() {
        let f = Field {
            offset: 0,
            size: 4,
            signed: false,
            loc: Loc::Data,
        };
        // offset 4, length 3: "abc"
        let raw = [4, 0, 3, 0, b'a', b'b', b'c'];
        assert_eq!(f.bytes(&raw), Some(&b"abc"[..]));
        // length beyond the record
        let raw = [4, 0, 9, 0, b'a'];
        assert_eq!(f.bytes(&raw), None);
    }

    /// `char prev_comm[16]` is read as one 16-byte load; a narrower field is NUL-padded, and a
    /// field running past the record is missing rather than short.
    #[test]
    fn an_inline_comm_is_its_bytes_padded_and_never_read_past_the_record() {
        let field = |offset, size| Field {
            offset,
            size,
            signed: false,
            loc: Loc::Inline,
        };
        let raw = *b"xxstress-ng-switchyy";
        assert_eq!(field(2, 16).comm(&raw), Some(*b"stress-ng-switch"));
        assert_eq!(field(2, 9).comm(&raw), Some(comm_from(b"stress-ng")));
        assert_eq!(field(5, 16).comm(&raw), None, "4 bytes short");
        assert_eq!(field(usize::MAX, 16).comm(&raw), None);
    }

    /// Linux 6.x declares sched_migrate_task's `comm` as `__data_loc char[]`: reading the
    /// descriptor as the name gave `\x1c` (its offset byte) for every migration.
    #[test]
    fn a_data_loc_comm_is_the_string_it_points_at() {
        let f = Field {
            offset: 0,
            size: 4,
            signed: false,
            loc: Loc::Data,
        };
        // offset 8, length 7: "openssl" and its NUL
        let raw = [
            8, 0, 8, 0, 0, 0, 0, 0, b'o', b'p', b'e', b'n', b's', b's', b'l', 0,
        ];
        assert_eq!(f.comm(&raw), Some(comm_from(b"openssl")));
    }

    #[test]
    fn ints_read_as_i32_whatever_their_width_and_sign() {
        let field = |offset, size, signed| Field {
            offset,
            size,
            signed,
            loc: Loc::Inline,
        };
        let raw = [0xfe, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x80, 7, 0];
        assert_eq!(field(0, 4, true).i32(&raw), Some(-2));
        assert_eq!(field(0, 4, false).i32(&raw), None, "beyond i32");
        assert_eq!(field(4, 4, false).i32(&raw), None, "beyond i32");
        assert_eq!(field(4, 4, true).i32(&raw), Some(i32::MIN));
        assert_eq!(field(8, 2, false).i32(&raw), Some(7));
        assert_eq!(field(8, 4, true).i32(&raw), None, "past the end");
        assert_eq!(field(usize::MAX, 4, true).i32(&raw), None);
    }
}
