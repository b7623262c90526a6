//! Bounds-checked reads of the file's metadata, each failure with the byte offset it is at.
//!
//! A trace.dat's metadata is read from the file itself (v6, and v7's uncompressed sections) or
//! from a section trace-cmd compressed (v7). A cursor knows which: its errors name the byte of
//! the file, or the section's byte and the offset within its decompressed data, so a message
//! always points at something a hex dump shows.

/// Where a cursor's bytes come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The file, from this byte on.
    File(u64),
    /// The decompressed data of the section whose header is at this byte.
    Section(u64),
}

/// What went wrong at a place in the metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadError {
    /// The byte of the file where it went wrong (for a compressed section, the section's).
    pub offset: u64,
    pub what: String,
    /// The read ran past the end of the file (not of a section): the file is cut short.
    pub past_file_end: bool,
}

/// A reader over metadata bytes.
pub(crate) struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    origin: Origin,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(data: &'a [u8], pos: usize, origin: Origin) -> Self {
        Cursor { data, pos, origin }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// The bytes not read yet (the cursor stays where it is).
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.data.get(self.pos..).unwrap_or_default()
    }

    /// The byte of the file the cursor is at (for a decompressed section, the section's).
    pub(crate) fn offset(&self) -> u64 {
        self.offset_of(self.pos)
    }

    fn offset_of(&self, pos: usize) -> u64 {
        match self.origin {
            Origin::File(base) => base + pos as u64,
            Origin::Section(at) => at,
        }
    }

    /// An error at the cursor's place.
    pub(crate) fn error(&self, what: impl Into<String>) -> ReadError {
        self.error_at(self.pos, what.into(), false)
    }

    fn error_at(&self, pos: usize, what: String, past_end: bool) -> ReadError {
        let what = match self.origin {
            Origin::File(_) => what,
            Origin::Section(_) => {
                format!("{what} (at byte {pos} of the section's decompressed data)")
            }
        };
        ReadError {
            offset: self.offset_of(pos),
            what,
            past_file_end: past_end && matches!(self.origin, Origin::File(_)),
        }
    }

    /// The next `n` bytes; `what` says what they were to hold, for the error.
    pub(crate) fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], ReadError> {
        match self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.data.len())
        {
            Some(end) => {
                let s = &self.data[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(self.error_at(
                self.pos,
                format!(
                    "{what} needs {n} bytes, {} are left",
                    self.data.len() - self.pos.min(self.data.len())
                ),
                true,
            )),
        }
    }

    /// The next `n` bytes as a cursor of their own, whose errors name the same places.
    pub(crate) fn take_cursor(&mut self, n: usize, what: &str) -> Result<Cursor<'a>, ReadError> {
        let origin = match self.origin {
            Origin::File(base) => Origin::File(base + self.pos as u64),
            section => section,
        };
        Ok(Cursor::new(self.take(n, what)?, 0, origin))
    }

    /// `n` bytes given as a 64-bit size read from the file.
    pub(crate) fn take_u64(&mut self, n: u64, what: &str) -> Result<&'a [u8], ReadError> {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        self.take(n, what)
    }

    pub(crate) fn u16(&mut self, what: &str) -> Result<u16, ReadError> {
        let s = self.take(2, what)?;
        Ok(u16::from_le_bytes([s[0], s[1]]))
    }

    pub(crate) fn u32(&mut self, what: &str) -> Result<u32, ReadError> {
        let s = self.take(4, what)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    pub(crate) fn u64(&mut self, what: &str) -> Result<u64, ReadError> {
        let s = self.take(8, what)?;
        let mut b = [0u8; 8];
        b.copy_from_slice(s);
        Ok(u64::from_le_bytes(b))
    }

    /// A NUL-terminated string (without its NUL), invalid UTF-8 replaced.
    pub(crate) fn cstr(&mut self, what: &str) -> Result<String, ReadError> {
        let rest = self.data.get(self.pos..).unwrap_or_default();
        match rest.iter().position(|&b| b == 0) {
            Some(n) => {
                let s = String::from_utf8_lossy(&rest[..n]).into_owned();
                self.pos += n + 1;
                Ok(s)
            }
            None => Err(self.error_at(
                self.data.len(),
                format!("{what}: the string has no terminating NUL"),
                true,
            )),
        }
    }

    /// Checks that the next bytes are `expected` (a label such as `header_page\0`).
    pub(crate) fn expect(&mut self, expected: &[u8], what: &str) -> Result<(), ReadError> {
        let at = self.pos;
        let got = self.take(expected.len(), what)?;
        if got != expected {
            return Err(self.error_at(
                at,
                format!(
                    "expected {what} ({:?}), found {:?}",
                    String::from_utf8_lossy(expected),
                    String::from_utf8_lossy(got)
                ),
                false,
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_file_byte_or_the_section_and_its_decompressed_byte() {
        let mut c = Cursor::new(b"ab\0cd", 0, Origin::File(100));
        assert_eq!(c.cstr("name").unwrap(), "ab");
        let e = c.u32("a count").unwrap_err();
        assert_eq!((e.offset, e.past_file_end), (103, true));
        assert!(e.what.contains("needs 4 bytes, 2 are left"), "{}", e.what);
        let mut c = Cursor::new(b"xy", 0, Origin::Section(500));
        let e = c.u64("a size").unwrap_err();
        assert_eq!((e.offset, e.past_file_end), (500, false));
        assert!(e.what.contains("byte 0 of the section"), "{}", e.what);
    }

    #[test]
    fn huge_sizes_and_missing_nuls_are_errors_not_panics() {
        let mut c = Cursor::new(b"abc", 1, Origin::File(0));
        assert!(c.take_u64(u64::MAX, "data").is_err());
        assert!(c.cstr("name").is_err());
        assert!(c.expect(b"bcd", "label").is_err());
    }
}
