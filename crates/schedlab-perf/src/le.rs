//! Little-endian reads from byte slices that return `None` instead of panicking.
//!
//! Every read of file bytes goes through here, so a damaged or hostile file can at worst make a
//! read fail; it can never index out of bounds.

#[inline]
pub(crate) fn u16_at(b: &[u8], off: usize) -> Option<u16> {
    let s = b.get(off..off.checked_add(2)?)?;
    Some(u16::from_le_bytes([s[0], s[1]]))
}

#[inline]
pub(crate) fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    let s = b.get(off..off.checked_add(4)?)?;
    Some(u32::from_le_bytes(s.try_into().ok()?))
}

#[inline]
pub(crate) fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    let s = b.get(off..off.checked_add(8)?)?;
    Some(u64::from_le_bytes(s.try_into().ok()?))
}

#[inline]
pub(crate) fn i32_at(b: &[u8], off: usize) -> Option<i32> {
    u32_at(b, off).map(|v| v as i32)
}

/// A task name as the kernel stores it: at most 16 bytes, NUL-padded.
pub type Comm = [u8; 16];

/// Copies a NUL-padded name of up to 16 bytes; missing bytes stay NUL.
#[inline]
pub(crate) fn comm_at(b: &[u8], off: usize, len: usize) -> Option<Comm> {
    if len >= 16 {
        // The usual `char[16]`: one 16-byte load instead of a copy of variable length.
        return b.get(off..off.checked_add(16)?)?.try_into().ok();
    }
    let s = b.get(off..off.checked_add(len)?)?;
    let mut c = [0u8; 16];
    c[..s.len()].copy_from_slice(s);
    Some(c)
}

/// The first 16 bytes of `s` (fewer when it is shorter), NUL-padded.
pub(crate) fn comm_from(s: &[u8]) -> Comm {
    let mut c = [0u8; 16];
    let n = s.len().min(16);
    c[..n].copy_from_slice(&s[..n]);
    c
}

/// The name up to its first NUL, invalid UTF-8 replaced.
pub(crate) fn comm_str(c: &Comm) -> String {
    let end = c.iter().position(|&b| b == 0).unwrap_or(c.len());
    match std::str::from_utf8(&c[..end]) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(&c[..end]).into_owned(),
    }
}
