//! Pipe-mode and compressed perf.data, rewritten as the plain file-mode perf.data the reader
//! reads: what `perf inject` does.
//!
//! perf writes the same records in two more layouts. `perf record -o -` (pipe mode) has no header
//! sections: the attributes, the tracepoint formats and the feature sections travel as records
//! at the start of the stream (HEADER_ATTR, HEADER_TRACING_DATA, HEADER_FEATURE), and the stream
//! ends with its last record. `perf record -z` packs the ring buffers' records into
//! PERF_RECORD_COMPRESSED (or COMPRESSED2) records: one zstd stream across all of them, in which
//! a record may begin in one compressed record and end in the next.
//!
//! Rather than teach the metadata reader, the framing and the salvage two more layouts, this
//! module writes the equivalent file-mode file once, into an unnamed temporary file (in
//! `$TMPDIR`) that the reader then maps like any other. The decompressed records stand where
//! their compressed record stood, so perf's rounds (FINISHED_ROUND) keep their order. A plain
//! file-mode perf.data is not copied: it is read as it is.
//!
//! Byte offsets in the errors of this module are of the file itself; the reader's later ones
//! are of the rewritten file (they say so).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use memmap2::Mmap;

use crate::error::PerfError;
use crate::le::{u16_at, u32_at, u64_at};

/// The file-mode header's length, and the pipe-mode header's.
const FILE_HEADER_LEN: usize = 104;
const PIPE_HEADER_LEN: u64 = 16;
/// Where the file-mode header keeps the data section's size and the feature bitmap.
const DATA_SIZE_AT: usize = 48;
const FEATURES_AT: usize = 72;
/// The feature bits perf.data can set (four u64 words).
const FEATURE_BITS: u32 = 256;
const HEADER_TRACING_DATA_FEATURE: u32 = 1;
const HEADER_COMPRESSED_FEATURE: u32 = 27;

const RECORD_HEADER_LEN: usize = 8;
const PERF_RECORD_HEADER_ATTR: u32 = 64;
const PERF_RECORD_HEADER_EVENT_TYPE: u32 = 65;
const PERF_RECORD_HEADER_TRACING_DATA: u32 = 66;
const PERF_RECORD_HEADER_BUILD_ID: u32 = 67;
const PERF_RECORD_HEADER_FEATURE: u32 = 80;
const PERF_RECORD_COMPRESSED: u32 = 81;
const PERF_RECORD_COMPRESSED2: u32 = 83;

/// How far a `perf_event_attr` may plausibly be: perf's own grows by a few words a decade.
const ATTR_SIZE_RANGE: std::ops::RangeInclusive<u32> = 64..=4096;

/// The bytes the reader reads for a perf.data file.
pub(crate) struct Plain {
    pub map: Mmap,
    /// What the file was rewritten from, when it was not plain file mode.
    pub rewritten: Option<Rewritten>,
}

/// What rewriting a file found.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rewritten {
    /// The file's layout: `pipe` or `file`.
    pub layout: &'static str,
    /// PERF_RECORD_COMPRESSED(2) records decompressed.
    pub compressed_records: u64,
    /// The file's own bytes of records, and the rewritten file's: the progress counts the
    /// former.
    pub records_bytes: u64,
    pub rewritten_records_bytes: u64,
    /// Where a damaged or unfinished stream stopped being readable (read with salvage): the byte
    /// and what was there.
    pub cut: Option<(u64, String)>,
    /// Bytes the compressed records end with that are not a whole record: perf drops them as
    /// well (its decompression keeps them for a next compressed record that never comes).
    pub unended_record_bytes: u64,
}

/// `map`, or the plain file-mode perf.data it stands for when it is pipe mode or holds
/// compressed records. With `salvage`, a stream cut short is read up to its last complete
/// record; without it, that is an error.
pub(crate) fn plain(path: &Path, map: Mmap, salvage: bool) -> Result<Plain, PerfError> {
    let layout = match layout(&map) {
        None => {
            return Ok(Plain {
                map,
                rewritten: None,
            });
        }
        Some(layout) => layout,
    };
    let mut out = Image::new(path)?;
    let rewritten = match layout {
        Layout::Pipe => rewrite_pipe(path, &map, salvage, &mut out)?,
        Layout::CompressedFile => rewrite_compressed_file(path, &map, salvage, &mut out)?,
    };
    let map = out.finish()?;
    Ok(Plain {
        map,
        rewritten: Some(rewritten),
    })
}

enum Layout {
    Pipe,
    CompressedFile,
}

/// Which layout needs rewriting; `None` for plain file mode, and for what is not perf.data at
/// all or is a layout the metadata reader refuses itself (big-endian, version 1).
fn layout(file: &[u8]) -> Option<Layout> {
    if file.get(..8) != Some(b"PERFILE2") {
        return None;
    }
    match u64_at(file, 8)? {
        PIPE_HEADER_LEN => Some(Layout::Pipe),
        size if size as usize == FILE_HEADER_LEN
            && has_feature(file, HEADER_COMPRESSED_FEATURE) =>
        {
            Some(Layout::CompressedFile)
        }
        _ => None,
    }
}

fn has_feature(header: &[u8], bit: u32) -> bool {
    u64_at(header, FEATURES_AT + (bit / 64) as usize * 8).is_some_and(|w| w >> (bit % 64) & 1 == 1)
}

/// A file-mode perf.data being written into an unnamed temporary file.
struct Image<'p> {
    path: &'p Path,
    out: BufWriter<File>,
    /// Bytes written so far (the offset of the next write).
    len: u64,
}

impl<'p> Image<'p> {
    fn new(path: &'p Path) -> Result<Image<'p>, PerfError> {
        let file = tempfile::tempfile().map_err(|source| scratch(path, source))?;
        Ok(Image {
            path,
            out: BufWriter::with_capacity(1 << 20, file),
            len: 0,
        })
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), PerfError> {
        self.out
            .write_all(bytes)
            .map_err(|source| scratch(self.path, source))?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    fn write_u64(&mut self, value: u64) -> Result<(), PerfError> {
        self.write(&value.to_le_bytes())
    }

    /// Writes the feature index and sections (the file-mode layout after the data section),
    /// returning the feature bitmap.
    fn write_features(&mut self, features: &BTreeMap<u32, &[u8]>) -> Result<[u64; 4], PerfError> {
        let mut bitmap = [0u64; 4];
        let mut offset = self.len + 16 * features.len() as u64;
        for (&bit, data) in features {
            bitmap[(bit / 64) as usize] |= 1 << (bit % 64);
            self.write_u64(offset)?;
            self.write_u64(data.len() as u64)?;
            offset += data.len() as u64;
        }
        for data in features.values() {
            self.write(data)?;
        }
        Ok(bitmap)
    }

    /// Puts `header` over the image's first bytes (written first as a placeholder of its
    /// length, or copied from the file).
    fn write_header(&mut self, header: &[u8]) -> Result<(), PerfError> {
        let path = self.path;
        self.out.flush().map_err(|source| scratch(path, source))?;
        self.out
            .get_ref()
            .write_all_at(header, 0)
            .map_err(|source| scratch(path, source))
    }

    /// Flushes the file and maps it.
    fn finish(self) -> Result<Mmap, PerfError> {
        let path = self.path;
        let file = (self.out.into_inner()).map_err(|e| scratch(path, e.into_error()))?;
        // SAFETY: the file is unnamed and this process's alone; nothing else can change it.
        unsafe { Mmap::map(&file) }.map_err(|source| scratch(path, source))
    }
}

fn scratch(path: &Path, source: std::io::Error) -> PerfError {
    PerfError::Rewrite {
        path: path.to_path_buf(),
        source,
    }
}

fn malformed(path: &Path, offset: u64, what: String) -> PerfError {
    PerfError::Malformed {
        path: path.to_path_buf(),
        offset,
        what,
        hint: "the file is damaged: copy it again or re-record",
    }
}

/// A file-mode header: `template`'s fields, with these data section and feature bits.
fn file_header(template: &[u8], data_start: u64, data_size: u64, bitmap: [u64; 4]) -> Vec<u8> {
    let mut header = template[..FILE_HEADER_LEN].to_vec();
    header[8..16].copy_from_slice(&(FILE_HEADER_LEN as u64).to_le_bytes());
    header[40..48].copy_from_slice(&data_start.to_le_bytes());
    header[DATA_SIZE_AT..DATA_SIZE_AT + 8].copy_from_slice(&data_size.to_le_bytes());
    for (i, word) in bitmap.iter().enumerate() {
        let at = FEATURES_AT + 8 * i;
        header[at..at + 8].copy_from_slice(&word.to_le_bytes());
    }
    header
}

/// The records of a stream of them, in order: where each starts, its type and its bytes.
struct Records<'a> {
    bytes: &'a [u8],
    at: usize,
    end: usize,
}

/// A record, or where the stream stops being one.
enum Next<'a> {
    Record {
        at: usize,
        kind: u32,
        record: &'a [u8],
    },
    /// The bytes left are too few for the record that starts there, or it has size 0.
    Cut {
        at: usize,
        what: String,
    },
    End,
}

impl<'a> Records<'a> {
    fn new(bytes: &'a [u8], start: usize, end: usize) -> Records<'a> {
        Records {
            bytes,
            at: start,
            end: end.min(bytes.len()),
        }
    }

    fn next(&mut self) -> Next<'a> {
        let at = self.at;
        if at >= self.end {
            return Next::End;
        }
        let (Some(kind), Some(size)) = (u32_at(self.bytes, at), u16_at(self.bytes, at + 6)) else {
            return Next::Cut {
                at,
                what: format!(
                    "the last {} bytes are less than a record header",
                    self.end - at
                ),
            };
        };
        let size = size as usize;
        if size < RECORD_HEADER_LEN {
            return Next::Cut {
                at,
                what: format!("a record of type {kind} claims {size} bytes"),
            };
        }
        if at + size > self.end {
            return Next::Cut {
                at,
                what: format!(
                    "a record of type {kind} needs {size} bytes, {} are left",
                    self.end - at
                ),
            };
        }
        self.at += size;
        Next::Record {
            at,
            kind,
            record: &self.bytes[at..at + size],
        }
    }

    /// Skips `n` bytes that follow the last record (HEADER_TRACING_DATA's payload); `false`
    /// when fewer are left.
    fn skip(&mut self, n: usize) -> bool {
        if self.at + n > self.end {
            return false;
        }
        self.at += n;
        true
    }
}

/// The ring buffers' records out of the compressed ones, in order.
struct Decompressor {
    zstd: zstd::stream::raw::Decoder<'static>,
    /// Decompressed bytes not yet a whole record.
    pending: Vec<u8>,
    buffer: Vec<u8>,
    records: u64,
}

impl Decompressor {
    fn new(path: &Path) -> Result<Decompressor, PerfError> {
        Ok(Decompressor {
            zstd: zstd::stream::raw::Decoder::new().map_err(|source| scratch(path, source))?,
            pending: Vec::new(),
            buffer: vec![0; 1 << 20],
            records: 0,
        })
    }

    /// Decompresses one COMPRESSED or COMPRESSED2 record (starting at byte `at` of the file)
    /// and writes the whole records it completes. A record cut short by the file's end
    /// (`whole` false) gives what its bytes hold.
    fn record(
        &mut self,
        path: &Path,
        at: usize,
        kind: u32,
        record: &[u8],
        whole: bool,
        out: &mut Image<'_>,
    ) -> Result<(), PerfError> {
        use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
        let payload = match kind {
            // COMPRESSED2 says how much of it is data; the rest pads the record to 8 bytes.
            PERF_RECORD_COMPRESSED2 => {
                let start = (RECORD_HEADER_LEN + 8).min(record.len());
                let size = u64_at(record, RECORD_HEADER_LEN).unwrap_or(0);
                let available = record.len() - start;
                match usize::try_from(size) {
                    Ok(size) if size <= available => &record[start..start + size],
                    _ if !whole => &record[start..],
                    _ => {
                        return Err(malformed(
                            path,
                            at as u64,
                            format!(
                                "a compressed record claims {size} bytes of data in {available}"
                            ),
                        ));
                    }
                }
            }
            _ => record.get(RECORD_HEADER_LEN..).unwrap_or_default(),
        };
        let mut input = InBuffer::around(payload);
        loop {
            let mut output = OutBuffer::around(&mut self.buffer[..]);
            let ran = self.zstd.run(&mut input, &mut output);
            if let Err(e) = ran {
                // What a cut record holds up to its last whole block was decompressed already.
                if !whole {
                    break;
                }
                return Err(malformed(
                    path,
                    at as u64,
                    format!("its compressed records do not decompress ({e})"),
                ));
            }
            let produced = output.pos();
            self.pending.extend_from_slice(&self.buffer[..produced]);
            if input.pos() == payload.len() && produced < self.buffer.len() {
                break;
            }
        }
        self.records += 1;
        let mut whole = 0;
        while let Some(size) = u16_at(&self.pending, whole + 6) {
            let size = size as usize;
            if size < RECORD_HEADER_LEN {
                return Err(malformed(
                    path,
                    at as u64,
                    format!("a record decompressed from here claims {size} bytes"),
                ));
            }
            if whole + size > self.pending.len() {
                break;
            }
            whole += size;
        }
        out.write(&self.pending[..whole])?;
        self.pending.drain(..whole);
        Ok(())
    }
}

/// Copies the data records from `records` into `out`, decompressing compressed ones; returns
/// where the stream stopped being readable, if it did before its end. The metadata records of a
/// pipe (`metadata`) are handed to it, with HEADER_TRACING_DATA's payload.
fn copy_records<'a>(
    path: &Path,
    records: &mut Records<'a>,
    out: &mut Image<'_>,
    decompressor: &mut Option<Decompressor>,
    mut metadata: impl FnMut(usize, u32, &'a [u8], &'a [u8]) -> Result<(), PerfError>,
) -> Result<Option<(u64, String)>, PerfError> {
    loop {
        match records.next() {
            Next::End => break,
            Next::Cut { at, what } => {
                // A compressed record cut short still holds the records before its cut.
                if let Some(kind @ (PERF_RECORD_COMPRESSED | PERF_RECORD_COMPRESSED2)) =
                    u32_at(records.bytes, at)
                {
                    let d = match decompressor {
                        Some(d) => d,
                        None => decompressor.insert(Decompressor::new(path)?),
                    };
                    d.record(path, at, kind, &records.bytes[at..records.end], false, out)?;
                }
                return Ok(Some((at as u64, what)));
            }
            Next::Record { at, kind, record } => match kind {
                PERF_RECORD_COMPRESSED | PERF_RECORD_COMPRESSED2 => {
                    let d = match decompressor {
                        Some(d) => d,
                        None => decompressor.insert(Decompressor::new(path)?),
                    };
                    d.record(path, at, kind, record, true, out)?;
                }
                PERF_RECORD_HEADER_TRACING_DATA => {
                    // Its payload follows the record, outside its size.
                    let size = u32_at(record, RECORD_HEADER_LEN).unwrap_or(0) as usize;
                    let start = at + record.len();
                    if !records.skip(size) {
                        return Ok(Some((
                            at as u64,
                            format!("the tracepoint formats need {size} bytes after this record"),
                        )));
                    }
                    metadata(at, kind, record, &records.bytes[start..start + size])?;
                }
                PERF_RECORD_HEADER_ATTR
                | PERF_RECORD_HEADER_EVENT_TYPE
                | PERF_RECORD_HEADER_BUILD_ID
                | PERF_RECORD_HEADER_FEATURE => metadata(at, kind, record, &[])?,
                _ => out.write(record)?,
            },
        }
    }
    Ok(None)
}

/// A stream that stopped being readable before its end: an error, or with salvage the note.
fn cut_or_error(
    path: &Path,
    len: usize,
    cut: Option<(u64, String)>,
    salvage: bool,
) -> Result<Option<(u64, String)>, PerfError> {
    match cut {
        Some((offset, what)) if !salvage => Err(PerfError::Truncated {
            path: path.to_path_buf(),
            offset,
            len: len as u64,
            what,
            salvageable: true,
        }),
        cut => Ok(cut),
    }
}

/// One attribute of a pipe: the `perf_event_attr` and its event ids.
struct PipeAttr<'a> {
    attr: &'a [u8],
    ids: &'a [u8],
}

/// Rewrites a pipe-mode stream: its metadata records become the attribute, id and feature
/// sections of a file-mode header, every other record the data section.
fn rewrite_pipe(
    path: &Path,
    file: &[u8],
    salvage: bool,
    out: &mut Image<'_>,
) -> Result<Rewritten, PerfError> {
    let mut attrs: Vec<PipeAttr<'_>> = Vec::new();
    let mut features: BTreeMap<u32, &[u8]> = BTreeMap::new();
    // The data section is written first, into the image after a gap for the header, ids and
    // attributes, whose size is known only at the end: they are written after the feature
    // sections instead, where the header can point to them.
    out.write(&[0; FILE_HEADER_LEN])?;
    let data_start = out.len;
    let mut records = Records::new(file, PIPE_HEADER_LEN as usize, file.len());
    let mut decompressor = None;
    let cut = copy_records(
        path,
        &mut records,
        out,
        &mut decompressor,
        |at, kind, record, payload| {
            let body = &record[RECORD_HEADER_LEN..];
            match kind {
                PERF_RECORD_HEADER_ATTR => {
                    let size = u32_at(body, 4).unwrap_or(0);
                    if !ATTR_SIZE_RANGE.contains(&size) || size as usize > body.len() {
                        return Err(malformed(
                            path,
                            at as u64,
                            format!(
                                "an attribute record claims a {size}-byte perf_event_attr in {} bytes",
                                body.len()
                            ),
                        ));
                    }
                    let (attr, ids) = body.split_at(size as usize);
                    attrs.push(PipeAttr {
                        attr,
                        ids: &ids[..ids.len() / 8 * 8],
                    });
                }
                PERF_RECORD_HEADER_TRACING_DATA => {
                    features.insert(HEADER_TRACING_DATA_FEATURE, payload);
                }
                PERF_RECORD_HEADER_FEATURE => {
                    let bit = u64_at(body, 0).unwrap_or(u64::MAX);
                    if bit >= u64::from(FEATURE_BITS) {
                        return Err(malformed(
                            path,
                            at as u64,
                            format!("a feature record names feature {bit}"),
                        ));
                    }
                    // Its records are decompressed here, so the file no longer has any.
                    if bit as u32 != HEADER_COMPRESSED_FEATURE {
                        features.insert(bit as u32, &body[8..]);
                    }
                }
                // Build ids and the obsolete event types name nothing the reader uses.
                _ => {}
            }
            Ok(())
        },
    )?;
    let cut = cut_or_error(path, file.len(), cut, salvage)?;
    let data_size = out.len - data_start;
    if attrs.is_empty() {
        return Err(malformed(
            path,
            PIPE_HEADER_LEN,
            "the pipe-mode stream has no attribute records (HEADER_ATTR)".into(),
        ));
    }
    let bitmap = out.write_features(&features)?;

    // The event ids, then the attributes (each padded to the largest), each pointing to its ids.
    let attr_len = attrs
        .iter()
        .map(|a| a.attr.len())
        .max()
        .unwrap_or(0)
        .next_multiple_of(8);
    let mut id_offsets = Vec::with_capacity(attrs.len());
    for a in &attrs {
        id_offsets.push(out.len);
        out.write(a.ids)?;
    }
    let attrs_start = out.len;
    for (a, ids_at) in attrs.iter().zip(id_offsets) {
        out.write(a.attr)?;
        out.write(&vec![0; attr_len - a.attr.len()])?;
        out.write_u64(ids_at)?;
        out.write_u64(a.ids.len() as u64)?;
    }
    let attrs_size = out.len - attrs_start;

    let mut header = file_header(&[0; FILE_HEADER_LEN], data_start, data_size, bitmap);
    header[..8].copy_from_slice(b"PERFILE2");
    header[16..24].copy_from_slice(&(attr_len as u64 + 16).to_le_bytes());
    header[24..32].copy_from_slice(&attrs_start.to_le_bytes());
    header[32..40].copy_from_slice(&attrs_size.to_le_bytes());
    out.write_header(&header)?;
    Ok(Rewritten {
        layout: "pipe",
        compressed_records: decompressor.as_ref().map_or(0, |d| d.records),
        unended_record_bytes: decompressor.map_or(0, |d| d.pending.len() as u64),
        records_bytes: records.end as u64 - PIPE_HEADER_LEN,
        rewritten_records_bytes: data_size,
        cut,
    })
}

/// Rewrites a file-mode perf.data with compressed records: the same header, attributes and ids,
/// the records decompressed in place, the feature sections after them but the one that says the
/// records are compressed. A file perf did not finish (its data size 0, or the file shorter than
/// its data section) is refused as the plain reader refuses it, or with salvage rewritten as the
/// records it could decompress and no feature sections, which the salvage reads as it reads a
/// file cut after its records.
fn rewrite_compressed_file(
    path: &Path,
    file: &[u8],
    salvage: bool,
    out: &mut Image<'_>,
) -> Result<Rewritten, PerfError> {
    let field = |at: usize| u64_at(file, at).unwrap_or(0);
    let (data_start, data_size) = (field(40), field(DATA_SIZE_AT));
    let data_end = data_start.saturating_add(data_size);
    let complete = data_size > 0 && data_end <= file.len() as u64;
    if (data_start as usize) < FILE_HEADER_LEN || data_start > file.len() as u64 {
        return Err(malformed(
            path,
            40,
            format!("the data section starts at byte {data_start}"),
        ));
    }
    if !complete && !salvage {
        // The plain reader's errors say what is wrong and that `--salvage` reads it.
        return Err(match data_size {
            0 => PerfError::Unfinished {
                path: path.to_path_buf(),
                data_start,
                records: file.len() as u64 - data_start,
            },
            _ => PerfError::Truncated {
                path: path.to_path_buf(),
                offset: file.len() as u64,
                len: file.len() as u64,
                what: format!("the data section ends at byte {data_end}"),
                salvageable: true,
            },
        });
    }
    out.write(&file[..data_start as usize])?;
    let end = if complete {
        data_end as usize
    } else {
        file.len()
    };
    let mut records = Records::new(file, data_start as usize, end);
    let mut decompressor = None;
    let cut = copy_records(path, &mut records, out, &mut decompressor, |_, _, _, _| {
        Ok(())
    })?;
    let cut = cut_or_error(path, file.len(), cut, salvage)?;
    let rewritten_size = out.len - data_start;
    let header = if complete && cut.is_none() {
        let features = feature_sections(path, file, data_end)?;
        let bitmap = out.write_features(&features)?;
        file_header(file, data_start, rewritten_size, bitmap)
    } else {
        // The records it could read, then nothing: the feature bits announce sections that are
        // not there, as in a file cut after its records, which the salvage reads as such (the
        // tracepoint formats from tracefs).
        let mut bitmap = [0u64; 4];
        for (i, word) in bitmap.iter_mut().enumerate() {
            *word = u64_at(file, FEATURES_AT + 8 * i).unwrap_or(0);
        }
        bitmap[(HEADER_COMPRESSED_FEATURE / 64) as usize] &=
            !(1 << (HEADER_COMPRESSED_FEATURE % 64));
        bitmap[0] |= 1 << HEADER_TRACING_DATA_FEATURE;
        file_header(file, data_start, rewritten_size, bitmap)
    };
    out.write_header(&header)?;
    Ok(Rewritten {
        layout: "file",
        compressed_records: decompressor.as_ref().map_or(0, |d| d.records),
        unended_record_bytes: decompressor.map_or(0, |d| d.pending.len() as u64),
        records_bytes: (end as u64) - data_start,
        rewritten_records_bytes: rewritten_size,
        cut,
    })
}

/// The feature sections of a complete file-mode file (its index right after the data section),
/// without the one that says its records are compressed.
fn feature_sections<'a>(
    path: &Path,
    file: &'a [u8],
    data_end: u64,
) -> Result<BTreeMap<u32, &'a [u8]>, PerfError> {
    let mut sections = BTreeMap::new();
    let mut index = data_end as usize;
    for bit in (0..FEATURE_BITS).filter(|&bit| has_feature(file, bit)) {
        let (Some(offset), Some(size)) = (u64_at(file, index), u64_at(file, index + 8)) else {
            return Err(malformed(
                path,
                index as u64,
                format!("the index of feature {bit} is cut short"),
            ));
        };
        let section = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(offset, size)| file.get(offset..offset.checked_add(size)?))
            .ok_or_else(|| {
                malformed(
                    path,
                    index as u64,
                    format!("feature {bit} lies at bytes {offset}..+{size}, past the file's end"),
                )
            })?;
        if bit != HEADER_COMPRESSED_FEATURE {
            sections.insert(bit, section);
        }
        index += 16;
    }
    Ok(sections)
}
