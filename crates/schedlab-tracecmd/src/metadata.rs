//! The file's metadata: everything needed before the first event can be decoded.
//!
//! Both versions start alike: the magic, the version, the endianness, the user-space long size
//! and the page size. A v6 file then holds, in a fixed order, the ring buffer's header formats
//! (`header_page`, `header_event`), the ftrace and event formats, kallsyms, printk formats, the
//! saved command lines, the CPU count, the options, and the top buffer's table of CPU data
//! (an instance's table is where its BUFFER option points). A v7 file names its compression,
//! then points at a chain of options sections, whose options point at every other section (each
//! possibly compressed) and describe each buffer's CPU data. Every size and offset is checked
//! against the file's length before it is used, so a damaged or cut file gives an error with
//! the byte offset, never a huge allocation.

use std::borrow::Cow;
use std::path::Path;

use schedlab_perf::feed::{Format, parse_field, parse_format};

use crate::bytes::{Cursor, Origin, ReadError};
use crate::compress::Codec;
use crate::error::TraceCmdError;
use crate::options::{Options, Version, bracketed};

pub(crate) const MAGIC: &[u8; 10] = b"\x17\x08\x44tracing";
/// v7's section ids this reader opens.
const HEADER_INFO: u16 = 16;
const EVENT_FORMATS: u16 = 18;
const SECTION_BUFFER: u16 = 3;
const SECTION_COMPRESSED: u16 = 1;
/// More options sections than this in a chain means the chain loops.
const MAX_OPTION_SECTIONS: usize = 4096;
const HINT_DAMAGED: &str = "the file is damaged: copy it again or re-record";

/// One CPU's data of a buffer: where it is in the file and how many bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CpuData {
    pub cpu: i32,
    pub offset: u64,
    pub size: u64,
}

/// One ring buffer (the top buffer or an instance) as the file describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Buffer {
    /// `""` for the top buffer.
    pub name: String,
    /// The trace clock its times are on, as the file names it.
    pub clock: Option<String>,
    pub page_size: u32,
    /// The CPU data is in trace-cmd's chunked compression (v7).
    pub compressed: bool,
    pub cpus: Vec<CpuData>,
}

impl Buffer {
    /// The name to show: `top` for the top buffer.
    pub(crate) fn label(&self) -> &str {
        if self.name.is_empty() {
            "top"
        } else {
            &self.name
        }
    }
}

/// What the reader knows before the CPU data.
#[derive(Debug, Clone)]
pub(crate) struct Metadata {
    pub version: u32,
    pub codec: Option<Codec>,
    /// The kernel's `long` (the size of a page header's `commit` field): 4 or 8.
    pub commit_size: usize,
    /// Where a page's events start.
    pub page_data: usize,
    pub formats: Vec<Format>,
    pub options: Options,
    /// The buffers with CPU data, top first.
    pub buffers: Vec<Buffer>,
    /// The CPU count the header or the CPUCOUNT option gives.
    pub cpu_count: Option<u32>,
    /// The salvaged read found CPU data cut at this byte of the file.
    pub cut_at: Option<u64>,
    pub file_len: u64,
}

impl Metadata {
    /// `file`'s format, e.g. `trace.dat v7 (zstd)`.
    pub(crate) fn file_format(&self) -> String {
        match self.codec {
            Some(codec) => format!("trace.dat v{} ({})", self.version, codec.name()),
            None => format!("trace.dat v{}", self.version),
        }
    }

    /// Reads the metadata of `file`. With `salvage`, CPU data running past the end of the file
    /// is clipped there (and `cut_at` says where) instead of refusing the file.
    pub(crate) fn read(path: &Path, file: &[u8], salvage: bool) -> Result<Metadata, TraceCmdError> {
        let errs = Errors {
            path,
            len: file.len() as u64,
        };
        let mut c = Cursor::new(file, 0, Origin::File(0));
        check_magic(file, &errs)?;
        c.take(MAGIC.len(), "the magic")
            .map_err(|e| errs.read(e, false))?;
        let version_at = c.offset();
        let version = c
            .cstr("the file version")
            .map_err(|e| errs.read(e, false))?;
        let version = match version.as_str() {
            "6" => 6,
            "7" => 7,
            other => {
                return Err(errs.unsupported(
                    version_at,
                    format!("file format version {other:?} (this reader knows versions 6 and 7)"),
                    "convert it with `trace-cmd convert --file-version 7 -i IN -o OUT` (trace-cmd 3.x), or re-record",
                ));
            }
        };
        let endian_at = c.offset();
        let header = (|| {
            let endian = c.take(1, "the endianness")?[0];
            let _long_size = c.take(1, "the long size")?[0];
            let page_size = c.u32("the page size")?;
            Ok::<_, ReadError>((endian, page_size))
        })()
        .map_err(|e| errs.read(e, false))?;
        let (endian, page_size) = header;
        if endian != 0 {
            return Err(errs.unsupported(
                endian_at,
                "a big-endian trace".into(),
                "read it on a big-endian machine with `trace-cmd report`, or re-record on little-endian",
            ));
        }
        if !page_size.is_power_of_two() || !(1024..=1 << 20).contains(&page_size) {
            return Err(errs.malformed(endian_at + 2, format!("a page size of {page_size} bytes")));
        }
        let mut meta = Metadata {
            version,
            codec: None,
            commit_size: 8,
            page_data: 16,
            formats: Vec::new(),
            options: Options::default(),
            buffers: Vec::new(),
            cpu_count: None,
            cut_at: None,
            file_len: file.len() as u64,
        };
        if version == 6 {
            meta.read_v6(&mut c, file, page_size, &errs)?;
        } else {
            meta.read_v7(&mut c, file, page_size, &errs)?;
        }
        meta.check_cpu_data(file.len() as u64, salvage, &errs)?;
        Ok(meta)
    }

    /// The rest of a v6 file's metadata, from the header formats on.
    fn read_v6(
        &mut self,
        c: &mut Cursor,
        file: &[u8],
        page_size: u32,
        errs: &Errors,
    ) -> Result<(), TraceCmdError> {
        let read = |e| errs.read(e, false);
        self.read_header_info(c).map_err(read)?;
        skip_ftrace_formats(c).map_err(read)?;
        self.formats = read_event_formats(c).map_err(read)?;
        (|| {
            let kallsyms = c.u32("the kallsyms size")?;
            c.take(kallsyms as usize, "kallsyms")?;
            let printk = c.u32("the printk formats' size")?;
            c.take(printk as usize, "the printk formats")?;
            let cmdlines = c.u64("the saved command lines' size")?;
            c.take_u64(cmdlines, "the saved command lines")?;
            Ok(())
        })()
        .map_err(read)?;
        let header_cpus = c.u32("the CPU count").map_err(read)?;
        let kind_at = c.offset();
        let mut kind = c.take(10, "the data kind").map_err(read)?;
        if kind.starts_with(b"options") {
            self.options.read(c, Version::V6).map_err(read)?;
            kind = c.take(10, "the data kind").map_err(read)?;
        }
        let cpus = self.options.cpu_count.unwrap_or(header_cpus);
        self.cpu_count = Some(cpus);
        if kind.starts_with(b"latency") {
            return Err(errs.unsupported(
                kind_at,
                "a latency trace (text, no events)".into(),
                "record the sched events with `trace-cmd record -e sched`",
            ));
        }
        if !kind.starts_with(b"flyrecord") {
            return Err(errs.malformed(
                kind_at,
                format!("unknown data kind {:?}", String::from_utf8_lossy(kind)),
            ));
        }
        let top = self.read_v6_table(c, "", cpus, page_size).map_err(read)?;
        self.buffers.push(top);
        for option in self.options.buffers.clone() {
            if option.text {
                continue;
            }
            let mut c = Cursor::new(file, 0, Origin::File(0));
            let at = usize::try_from(option.offset).unwrap_or(usize::MAX);
            c.take(at, "the instance's CPU table").map_err(|e| {
                errs.read(
                    ReadError {
                        offset: option.at,
                        what: format!(
                            "the BUFFER option of instance {:?} points at byte {}, past the end",
                            option.name, option.offset
                        ),
                        past_file_end: e.past_file_end,
                    },
                    false,
                )
            })?;
            let kind_at = c.offset();
            let kind = c.take(10, "the instance's data kind").map_err(read)?;
            if !kind.starts_with(b"flyrecord") {
                return Err(errs.malformed(
                    kind_at,
                    format!("instance {:?}: expected its flyrecord table", option.name),
                ));
            }
            let buffer = self
                .read_v6_table(&mut c, &option.name, cpus, page_size)
                .map_err(read)?;
            self.buffers.push(buffer);
        }
        Ok(())
    }

    /// A v6 buffer's table of CPU data (offset and size per CPU), then the trace clock's text
    /// when the file has a TRACECLOCK option.
    fn read_v6_table(
        &self,
        c: &mut Cursor,
        name: &str,
        cpus: u32,
        page_size: u32,
    ) -> Result<Buffer, ReadError> {
        if u64::from(cpus) * 16 > c.rest().len() as u64 {
            return Err(c.error(format!(
                "a table of {cpus} CPUs runs past the end of the file"
            )));
        }
        let mut table = Vec::new();
        for cpu in 0..cpus {
            let offset = c.u64("a CPU's data offset")?;
            let size = c.u64("a CPU's data size")?;
            table.push(CpuData {
                cpu: cpu as i32,
                offset,
                size,
            });
        }
        let mut clock = self.options.trace_clock.clone();
        if self.options.has_trace_clock {
            let size = c.u64("the trace clock's size")?;
            let text = c.take_u64(size, "the trace clock")?;
            clock = bracketed(&String::from_utf8_lossy(text)).or(clock);
        }
        Ok(Buffer {
            name: name.to_string(),
            clock,
            page_size,
            compressed: false,
            cpus: table,
        })
    }

    /// The rest of a v7 file's metadata: the compression, then the options sections and the
    /// sections they point at.
    fn read_v7(
        &mut self,
        c: &mut Cursor,
        file: &[u8],
        page_size: u32,
        errs: &Errors,
    ) -> Result<(), TraceCmdError> {
        let read = |e| errs.read(e, false);
        let codec_at = c.offset();
        let name = c.cstr("the compression's name").map_err(read)?;
        let _codec_version = c.cstr("the compression's version").map_err(read)?;
        self.codec = Codec::from_name(&name).map_err(|()| {
            errs.unsupported(
                codec_at,
                format!("compression {name:?} (this reader knows zstd and zlib)"),
                "convert it with `trace-cmd convert --compression zstd -i IN -o OUT`",
            )
        })?;
        let mut next = c.u64("the first options section's offset").map_err(read)?;
        let mut seen = Vec::new();
        let mut pointer_at = c.offset() - 8;
        while next != 0 {
            if seen.contains(&next) || seen.len() >= MAX_OPTION_SECTIONS {
                return Err(errs.malformed(
                    pointer_at,
                    format!("the chain of options sections loops back to byte {next}"),
                ));
            }
            seen.push(next);
            if next >= errs.len {
                // trace-cmd writes the options that describe each buffer's CPU data after that
                // data: a v7 file cut short loses them, and with them where each CPU's data
                // begins and ends.
                return Err(TraceCmdError::Truncated {
                    path: errs.path.to_path_buf(),
                    offset: pointer_at,
                    len: errs.len,
                    what: format!(
                        "its options continue at byte {next}, past the end; a v7 file keeps the table of its CPU data in the options trace-cmd writes after the data, so a v7 file cut short cannot be read, nor salvaged"
                    ),
                    salvageable: false,
                });
            }
            let section = self.section(file, next, 0, pointer_at, errs)?;
            self.options.next = 0;
            (self.options.read(&mut section.cursor(), Version::V7))
                .map_err(|e| errs.read(e, false))?;
            pointer_at = next;
            next = self.options.next;
        }
        for (id, offset) in self.options.sections.clone() {
            match id {
                HEADER_INFO => {
                    let section = self.section(file, offset, id, offset, errs)?;
                    self.read_header_info(&mut section.cursor()).map_err(read)?;
                }
                EVENT_FORMATS => {
                    let section = self.section(file, offset, id, offset, errs)?;
                    self.formats = read_event_formats(&mut section.cursor()).map_err(read)?;
                }
                _ => {}
            }
        }
        self.cpu_count = self.options.cpu_count;
        for option in self.options.buffers.clone() {
            if option.text {
                continue;
            }
            let mut header = Cursor::new(file, 0, Origin::File(0));
            let compressed = (|| {
                header.take_u64(option.offset, "the buffer's section")?;
                let id = header.u16("the buffer section's id")?;
                let flags = header.u16("the buffer section's flags")?;
                Ok::<_, ReadError>((id, flags))
            })()
            .map_err(|e| {
                errs.read(
                    ReadError {
                        offset: option.at,
                        what: format!(
                            "the BUFFER option of {:?} points at byte {}: {}",
                            option.name, option.offset, e.what
                        ),
                        past_file_end: e.past_file_end,
                    },
                    false,
                )
            })?;
            if compressed.0 != SECTION_BUFFER {
                return Err(errs.malformed(
                    option.offset,
                    format!(
                        "expected a buffer section (id 3), found section id {}",
                        compressed.0
                    ),
                ));
            }
            self.buffers.push(Buffer {
                name: option.name.clone(),
                clock: option.clock.clone(),
                page_size: option.page_size.unwrap_or(page_size),
                compressed: compressed.1 & SECTION_COMPRESSED != 0,
                cpus: (option.cpus.iter())
                    .map(|&(cpu, offset, size)| CpuData {
                        cpu: cpu as i32,
                        offset,
                        size,
                    })
                    .collect(),
            });
        }
        // The top buffer first, as trace-cmd lists it.
        self.buffers.sort_by_key(|b| !b.name.is_empty());
        Ok(())
    }

    /// The section whose header is at `offset` (checked to be `id`; options sections are id
    /// 0), its data decompressed when its flags say so; `pointer_at` is where the option or
    /// header that points at it is.
    fn section<'f>(
        &self,
        file: &'f [u8],
        offset: u64,
        id: u16,
        pointer_at: u64,
        errs: &Errors,
    ) -> Result<Section<'f>, TraceCmdError> {
        let mut c = Cursor::new(file, 0, Origin::File(0));
        let pointed = |e: ReadError| {
            errs.read(
                ReadError {
                    offset: pointer_at,
                    what: format!("the section at byte {offset}: {}", e.what),
                    past_file_end: e.past_file_end,
                },
                false,
            )
        };
        c.take_u64(offset, "the section").map_err(pointed)?;
        let header = (|| {
            let got = c.u16("a section's id")?;
            let flags = c.u16("a section's flags")?;
            let _description = c.u32("a section's description")?;
            let size = c.u64("a section's size")?;
            Ok::<_, ReadError>((got, flags, size))
        })()
        .map_err(pointed)?;
        let (got, flags, size) = header;
        if got != id {
            return Err(errs.malformed(offset, format!("expected section id {id}, found {got}")));
        }
        if flags & SECTION_COMPRESSED == 0 {
            let start = c.pos();
            c.take_u64(size, "the section's data")
                .map_err(|e| errs.read(e, false))?;
            let bytes = &file[start..c.pos()];
            return Ok(Section {
                bytes: Cow::Borrowed(bytes),
                origin: Origin::File(start as u64),
            });
        }
        let Some(codec) = self.codec else {
            return Err(errs.malformed(
                offset,
                "a compressed section in a file that names no compression".into(),
            ));
        };
        let block = (|| {
            let zsize = c.u32("a compressed section's size")?;
            let size = c.u32("a compressed section's decompressed size")?;
            Ok::<_, ReadError>((c.take(zsize as usize, "a compressed section")?, size))
        })()
        .map_err(|e| errs.read(e, false))?;
        let data = codec.decompress(block.0, block.1).map_err(|why| {
            errs.malformed(offset, format!("the section does not decompress: {why}"))
        })?;
        Ok(Section {
            bytes: Cow::Owned(data),
            origin: Origin::Section(offset),
        })
    }

    /// The `header_page` and `header_event` formats: where a page's events start, how wide its
    /// commit field is, and that the ring buffer uses the event header of Linux 2.6.31 and later.
    fn read_header_info(&mut self, c: &mut Cursor) -> Result<(), ReadError> {
        c.expect(b"header_page\0", "the header_page label")?;
        let size = c.u64("header_page's size")?;
        let at = c.error("");
        let text = String::from_utf8_lossy(c.take_u64(size, "header_page")?).into_owned();
        let fields: Vec<_> = text.lines().filter_map(|l| parse_field(l.trim())).collect();
        let field = |name: &str| fields.iter().find(|(n, _)| n == name).map(|(_, f)| *f);
        match (field("timestamp"), field("commit"), field("data")) {
            (Some(ts), Some(commit), Some(data))
                if ts.size == 8 && (commit.size == 4 || commit.size == 8) =>
            {
                self.commit_size = commit.size;
                self.page_data = data.offset;
            }
            _ => {
                return Err(ReadError {
                    what: "header_page lacks a u64 timestamp, a 4- or 8-byte commit and data"
                        .into(),
                    ..at
                });
            }
        }
        c.expect(b"header_event\0", "the header_event label")?;
        let size = c.u64("header_event's size")?;
        let at = c.error("");
        let text = c.take_u64(size, "header_event")?;
        if !String::from_utf8_lossy(text).contains("type_len") {
            return Err(ReadError {
                what: "header_event describes the ring buffer of kernels before 2.6.31".into(),
                ..at
            });
        }
        Ok(())
    }

    /// Checks that every CPU's data lies in the file. With `salvage`, data running past the end
    /// is clipped to it.
    fn check_cpu_data(
        &mut self,
        len: u64,
        salvage: bool,
        errs: &Errors,
    ) -> Result<(), TraceCmdError> {
        for buffer in &mut self.buffers {
            let label = buffer.label().to_string();
            for cpu in &mut buffer.cpus {
                let end = cpu.offset.checked_add(cpu.size);
                if end.is_some_and(|end| end <= len) {
                    continue;
                }
                if !salvage {
                    return Err(TraceCmdError::Truncated {
                        path: errs.path.to_path_buf(),
                        offset: cpu.offset,
                        len,
                        what: format!(
                            "the {} buffer's data of cpu {} spans bytes {}..{}",
                            label,
                            cpu.cpu,
                            cpu.offset,
                            end.map_or("?".into(), |e| e.to_string())
                        ),
                        salvageable: true,
                    });
                }
                self.cut_at = Some(
                    self.cut_at
                        .map_or(cpu.offset.min(len), |c| c.min(cpu.offset.min(len))),
                );
                cpu.size = len.saturating_sub(cpu.offset);
            }
        }
        Ok(())
    }
}

/// A section's data: the file's bytes, or what a compressed section decompressed to.
struct Section<'f> {
    bytes: Cow<'f, [u8]>,
    origin: Origin,
}

impl Section<'_> {
    fn cursor(&self) -> Cursor<'_> {
        Cursor::new(&self.bytes, 0, self.origin)
    }
}

/// Checks the magic; a file that is not a trace.dat gets an error saying what it starts with.
fn check_magic(file: &[u8], errs: &Errors) -> Result<(), TraceCmdError> {
    let head = &file[..file.len().min(MAGIC.len())];
    if head == MAGIC {
        return Ok(());
    }
    if head.len() < MAGIC.len() && MAGIC.starts_with(head) {
        return Err(TraceCmdError::Truncated {
            path: errs.path.to_path_buf(),
            offset: head.len() as u64,
            len: errs.len,
            what: "the 10-byte magic is incomplete".into(),
            salvageable: false,
        });
    }
    let magic = if head.is_empty() {
        "nothing: the file is empty".to_string()
    } else {
        format!("{:?}", String::from_utf8_lossy(head))
    };
    Err(TraceCmdError::NotTraceDat {
        path: errs.path.to_path_buf(),
        magic,
    })
}

/// The ftrace formats (function, print, …): trace-cmd's own events, none of them sched.
fn skip_ftrace_formats(c: &mut Cursor) -> Result<(), ReadError> {
    let count = c.u32("the ftrace format count")?;
    for _ in 0..count {
        let size = c.u64("an ftrace format's size")?;
        c.take_u64(size, "an ftrace format")?;
    }
    Ok(())
}

/// The event formats, per system: `events/<system>/<name>/format` of the recording kernel.
fn read_event_formats(c: &mut Cursor) -> Result<Vec<Format>, ReadError> {
    let systems = c.u32("the event system count")?;
    let mut formats = Vec::new();
    for _ in 0..systems {
        let system = c.cstr("an event system's name")?;
        let count = c.u32("an event system's format count")?;
        for _ in 0..count {
            let size = c.u64("an event format's size")?;
            let at = c.error("");
            let text = String::from_utf8_lossy(c.take_u64(size, "an event format")?).into_owned();
            let format = parse_format(&system, &text).map_err(|(_, what)| ReadError {
                what: format!("the format of an event of {system}: {what}"),
                ..at.clone()
            })?;
            formats.push(format);
        }
    }
    Ok(formats)
}

/// The errors of one file: each names it and a byte offset in it.
pub(crate) struct Errors<'a> {
    pub path: &'a Path,
    pub len: u64,
}

impl Errors<'_> {
    /// A failed read: past the end of the file it is a truncation (`salvageable` says whether
    /// salvaging gets past it), else damage.
    pub(crate) fn read(&self, e: ReadError, salvageable: bool) -> TraceCmdError {
        if e.past_file_end {
            TraceCmdError::Truncated {
                path: self.path.to_path_buf(),
                offset: e.offset,
                len: self.len,
                what: e.what,
                salvageable,
            }
        } else {
            self.malformed(e.offset, e.what)
        }
    }

    pub(crate) fn malformed(&self, offset: u64, what: String) -> TraceCmdError {
        TraceCmdError::Malformed {
            path: self.path.to_path_buf(),
            offset,
            what,
            hint: HINT_DAMAGED,
        }
    }

    fn unsupported(&self, offset: u64, what: String, hint: &'static str) -> TraceCmdError {
        TraceCmdError::Unsupported {
            path: self.path.to_path_buf(),
            offset,
            what,
            hint,
        }
    }
}
