//! How a table's columns are encoded: declared with the table, column by column, never
//! inferred from a column's name or type, so that renaming a column keeps its encoding.

use arrow_schema::{DataType, Schema};

/// How one column of a table is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ColumnEncoding {
    /// PLAIN, by the `parquet` crate's Arrow column writers, snappy-compressed, without
    /// statistics: what every column not declared otherwise gets.
    Plain,
    /// Text (`Utf8`) in a dictionary per row group, by `text_column`: the few distinct command
    /// names, states, kinds and workloads of millions of rows. Falls back to plain, compressed
    /// pages where a row group's texts are too many for a dictionary to pay.
    Dictionary,
    /// [`Dictionary`](Self::Dictionary) with each row group's min and max: for the columns
    /// analyses select row groups by (the run id).
    DictionaryWithRange,
    /// `Int64` in DELTA_BINARY_PACKED, uncompressed, with each row group's min and max, by
    /// `time_column`: times and durations, nearly sorted or small.
    Delta,
}

/// A table's declared encodings, by column name; a column not named is
/// [`Plain`](ColumnEncoding::Plain).
pub type Encodings = [(&'static str, ColumnEncoding)];

impl ColumnEncoding {
    /// The encoding `encodings` declares for `column`.
    pub(crate) fn of(encodings: &Encodings, column: &str) -> ColumnEncoding {
        (encodings.iter())
            .find(|(name, _)| *name == column)
            .map_or(ColumnEncoding::Plain, |&(_, encoding)| encoding)
    }

    /// The Arrow type this encoding takes, if it takes only one.
    fn data_type(self) -> Option<DataType> {
        match self {
            ColumnEncoding::Plain => None,
            ColumnEncoding::Dictionary | ColumnEncoding::DictionaryWithRange => {
                Some(DataType::Utf8)
            }
            ColumnEncoding::Delta => Some(DataType::Int64),
        }
    }
}

/// What in `encodings` does not fit `schema`, if anything: a column it names that the schema
/// lacks, named twice, or of a type its encoding cannot take.
pub(crate) fn mismatch(encodings: &Encodings, schema: &Schema) -> Option<String> {
    encodings.iter().enumerate().find_map(|(i, &(name, encoding))| {
        if encodings[..i].iter().any(|(other, _)| *other == name) {
            return Some(format!("column {name} has two declared encodings"));
        }
        let Ok(field) = schema.field_with_name(name) else {
            return Some(format!(
                "column {name} has a declared encoding ({encoding:?}) but the table has no such column"
            ));
        };
        let wanted = encoding.data_type()?;
        (field.data_type() != &wanted).then(|| {
            format!(
                "column {name} is {}, which {encoding:?} cannot encode (it takes {wanted})",
                field.data_type()
            )
        })
    })
}
