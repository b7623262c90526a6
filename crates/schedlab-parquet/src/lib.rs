//! The Parquet engine of schedlab's tables: how a table's Arrow batches become a Parquet file.
//!
//! # Brief overview
//!
//! [`ParquetWriter`] writes a file a batch at a time under a temporary name beside its
//! destination and renames it into place when finished ([`write_batch`] writes one batch
//! whole), each column as the caller declares it ([`ColumnEncoding`]): dictionary text by
//! `text_column` (a dictionary keyed by what the caller already knows of each row's text,
//! [`KeyedText`] in a [`TableBatch`], or by the string itself; plain compressed pages where a
//! row group's texts are too many), delta times by `time_column`, both as column chunks built
//! by `column_chunk`; the other columns go through the `parquet` crate's Arrow column writers.
//! [`BackgroundWriter`] feeds a writer from any thread and encodes in rayon's pool;
//! [`concat_parts`] joins files of one table by copying their encoded row groups;
//! [`write_file_atomic`] and [`temp_file_beside`] give any other file the same
//! temporary-name-and-rename guarantee.
//!
//! # Key design decision
//!
//! The engine knows Arrow schemas, not row types: schedlab-tables derives a table's schema from
//! its row type and hands batches of it here, with the encodings the table declares, so the row
//! contract and the encoding are apart. Nothing is encoded by its column's name or type.

mod background;
mod column_chunk;
mod concat;
mod encoding;
mod text_column;
mod time_column;
mod writer;

use std::path::{Path, PathBuf};

pub use background::{BackgroundWriter, Sink};
pub use concat::concat_parts;
pub use encoding::{ColumnEncoding, Encodings};
pub use text_column::{KeyedText, NULL_KEY, TableBatch, TableColumn};
pub(crate) use writer::temp_table_beside;
pub use writer::{
    ParquetWriter, ROW_GROUP_BYTES, ROW_GROUP_ROWS, temp_file_beside, write_batch,
    write_file_atomic,
};

/// Errors from reading or writing a table file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TableError {
    /// The file could not be created, renamed or read.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The rows do not fit the schema, or the file's columns do not fit the row type.
    #[error("{path}: {message} (hint: was the file written by another schedlab version?)")]
    Schema { path: PathBuf, message: String },
    /// The Parquet encoder or decoder failed.
    #[error("{path}: {message}")]
    Parquet { path: PathBuf, message: String },
}

impl TableError {
    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> TableError {
        TableError::Io {
            path: path.to_owned(),
            source,
        }
    }

    /// An error of the Parquet encoder or decoder on `path`.
    pub fn parquet(path: &Path, err: parquet::errors::ParquetError) -> TableError {
        TableError::Parquet {
            path: path.to_owned(),
            message: err.to_string(),
        }
    }
}
