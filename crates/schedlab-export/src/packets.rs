//! Perfetto's protobuf trace file, written one packet at a time.
//!
//! A trace file is the encoding of `Trace { repeated TracePacket packet = 1; }`, and a repeated
//! field's encoding is its elements' one after the other: so a file of packets each written as
//! field 1 is the trace, and packets are appended as they are made, never held as a whole
//! `Trace`. The file is written to a temporary name beside its destination and renamed once the
//! last packet is in, so an interrupted export leaves no file that looks complete.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use schedlab_perfetto_protos::{TracePacket, write_packet};
use tempfile::NamedTempFile;

use crate::{ExportError, write_error};

/// A trace file being written.
pub(crate) struct PacketWriter {
    out: BufWriter<NamedTempFile>,
    path: PathBuf,
    /// One packet's encoding, reused.
    buf: Vec<u8>,
}

impl PacketWriter {
    /// Starts the trace that [`PacketWriter::finish`] will put at `path`.
    pub(crate) fn create(path: &Path) -> Result<PacketWriter, ExportError> {
        let file = schedlab_tables::temp_file_beside(path, ".export-")
            .map_err(|source| write_error(path, source))?;
        Ok(PacketWriter {
            out: BufWriter::with_capacity(1 << 20, file),
            path: path.to_owned(),
            buf: Vec::new(),
        })
    }

    /// Appends one packet.
    pub(crate) fn packet(&mut self, packet: &TracePacket) -> Result<(), ExportError> {
        self.buf.clear();
        write_packet(packet, &mut self.buf);
        (self.out.write_all(&self.buf)).map_err(|source| write_error(&self.path, source))
    }

    /// Puts the file in place; returns its size in bytes.
    pub(crate) fn finish(self) -> Result<u64, ExportError> {
        let path = self.path;
        let file = (self.out.into_inner()).map_err(|err| write_error(&path, err.into_error()))?;
        let size = (file.as_file().metadata()).map_err(|source| write_error(&path, source))?;
        file.persist(&path)
            .map_err(|err| write_error(&path, err.error))?;
        Ok(size.len())
    }
}
