//! The compression of a v7 trace.dat: its metadata sections and its CPU data, with the
//! algorithm its header names (trace-cmd writes zstd or zlib).

use std::io::Read;

/// Decompressed sizes beyond this are taken for a damaged size field rather than data: trace-cmd
/// compresses CPU data a chunk of pages at a time, and its largest metadata section (kallsyms)
/// is tens of megabytes.
const MAX_DECOMPRESSED: u32 = 1 << 30;

/// A compression algorithm of trace-cmd.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Codec {
    Zstd,
    /// zlib's format (RFC 1950), as `compress2` writes it.
    Zlib,
}

impl Codec {
    /// The codec the header's name gives; `None` for `none`; `Err` for one this reader lacks.
    pub(crate) fn from_name(name: &str) -> Result<Option<Codec>, ()> {
        match name {
            "none" | "" => Ok(None),
            "zstd" => Ok(Some(Codec::Zstd)),
            "zlib" => Ok(Some(Codec::Zlib)),
            _ => Err(()),
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Codec::Zstd => "zstd",
            Codec::Zlib => "zlib",
        }
    }

    /// `input` decompressed, which must give exactly `size` bytes; `Err` says why not.
    pub(crate) fn decompress(self, input: &[u8], size: u32) -> Result<Vec<u8>, String> {
        if size > MAX_DECOMPRESSED {
            return Err(format!(
                "a decompressed size of {size} bytes is not plausible"
            ));
        }
        let size = size as usize;
        let out = match self {
            Codec::Zstd => zstd::bulk::decompress(input, size).map_err(|e| e.to_string())?,
            Codec::Zlib => {
                let mut out = Vec::with_capacity(size);
                // One byte more than announced: a stream that holds more is caught below.
                (flate2::read::ZlibDecoder::new(input).take(size as u64 + 1))
                    .read_to_end(&mut out)
                    .map_err(|e| e.to_string())?;
                out
            }
        };
        if out.len() != size {
            return Err(format!(
                "{} data decompressed to {} bytes, not the {size} its header says",
                self.name(),
                out.len()
            ));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn both_codecs_give_back_what_was_compressed_and_refuse_a_wrong_size() {
        let data: Vec<u8> = (0..10_000u32)
            .flat_map(|i| (i % 97).to_le_bytes())
            .collect();
        let zstd = zstd::bulk::compress(&data, 3).unwrap();
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        zlib.write_all(&data).unwrap();
        let zlib = zlib.finish().unwrap();
        for (codec, bytes) in [(Codec::Zstd, &zstd), (Codec::Zlib, &zlib)] {
            let n = data.len() as u32;
            assert_eq!(codec.decompress(bytes, n).unwrap(), data);
            assert!(
                codec.decompress(bytes, n - 1).is_err(),
                "{codec:?}: too small"
            );
            assert!(
                codec.decompress(bytes, n + 1).is_err(),
                "{codec:?}: too big"
            );
            assert!(
                codec.decompress(&bytes[..bytes.len() / 2], n).is_err(),
                "cut"
            );
            assert!(codec.decompress(bytes, u32::MAX).is_err(), "implausible");
        }
    }
}
