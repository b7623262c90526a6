//! The table contract of schedlab: one Rust row type per table, and Parquet files of them.
//!
//! # Brief overview
//!
//! Every fact schedlab records or derives lands in one of the tables of DESIGN.md. Each table is
//! a `#[derive(Serialize, Deserialize)]` struct in [`rows`]; its field names *are* the column
//! names that notebooks and reports depend on, so renaming a field is a breaking change.
//! [`Table`] ties a row type to its file name. [`write_rows`] and [`read_rows`] move rows to and
//! from Parquet ([`row_batches`] a batch of rows at a time), and [`write_batch`] writes an Arrow batch built by hand (for tables whose columns
//! depend on the input, like turbostat's). [`TableWriter`] writes a table a slice of rows at a
//! time, for tables too big to hold in memory (the events of a perf trace);
//! [`BackgroundWriter`] does so in tasks of rayon's pool, so that encoding overlaps reading; and
//! [`concat_parts`] joins part files of a table written in parallel, without re-encoding.
//! [`turbostat::read_turbostat`] reads the turbostat table, whose columns vary, back by name.
//! The two JSON files a collected run holds besides its raw tool output are formats of the
//! contract too: the run's [`manifest`] and the built-in periodic workload's
//! [`periodic_report`], so that the parse stage reads them without depending on the collector.
//!
//! # Key design decision
//!
//! Schemas are derived from the row types (`serde_arrow`), not written twice. Strings are plain
//! `Utf8` and lists plain `List`, so pyarrow, polars and DuckDB open the files without casts.
//! Closed sets of words (a note's severity, a monitor's status, a comparison's verdict) are enums
//! in code and the same plain `Utf8` words in the files, so that a typo is a compile error, not a
//! row that no filter matches.
//! Every file is written to a temporary name in the same directory and renamed into place, so a
//! crash or Ctrl-C never leaves a half-written table.

/// Declares a unit-only enum whose every variant is written as the given word, in JSON and in
/// Parquet (a plain `Utf8` column, see `parquet_io`), with `as_str` and `Display` giving the same
/// word: one list of words, so the serialized and the printed forms cannot drift apart.
macro_rules! word_enum {
    ($(#[$meta:meta])* pub enum $name:ident {
        $($(#[$vmeta:meta])* $variant:ident = $word:literal,)*
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $word)] $variant,)*
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &[$name] = &[$($name::$variant),*];

            /// The word the files hold for this variant.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word,)*
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.as_str())
            }
        }
    };
}

/// Declares a row type a table of the contract: its file name, how each of its columns is
/// encoded (`encodings { column: ColumnEncoding variant, … }`; a column not named is `Plain`),
/// and, optionally, which `Arc<str>` fields rows read from a file share.
///
/// A declared column is named by its field, so renaming a field without its declaration does
/// not compile: a column's encoding follows its declaration, never its name.
macro_rules! table {
    ($ty:ident, $name:literal, encodings { $($column:ident: $encoding:ident),* $(,)? }
        $(, shares [$($shared:ident),*])? $(,)?) => {
        impl $crate::Table for $ty {
            const NAME: &'static str = $name;
            const ENCODINGS: &'static $crate::Encodings =
                &[$((stringify!($column), $crate::ColumnEncoding::$encoding)),*];

            $(fn share_strings(&mut self, strings: &mut $crate::SharedStrings) {
                $(strings.share(&mut self.$shared);)*
            })?
        }

        const _: fn(&$ty) = |_row| {
            $(let _ = &_row.$column;)*
        };
    };
}

pub mod aggregates;
mod background;
pub mod columns;
pub mod dataset;
pub mod expectations;
pub mod manifest;
mod parquet_io;
pub mod periodic_report;
pub mod placement;
pub mod rows;
pub mod sched_config;
mod shared;
pub mod turbostat;

/// Workload selectors are pipeline syntax and also recorded in imported runs' manifests.
pub use schedlab_spec::selector;

pub use aggregates::*;
pub use background::BackgroundWriter;
pub use columns::{ColumnBatch, Numbers, RowGroup, Texts, read_columns, row_groups};
pub use dataset::{
    Partition, TableDir, create_parent, read_table, read_table_where, table_path, table_path_named,
    write_table,
};
pub use expectations::{ExpectationRow, Judgement};
pub use parquet_io::{TableWriter, read_batches, read_rows, row_batches, schema_of, write_rows};
pub use rows::*;
pub use schedlab_parquet::{
    ColumnEncoding, Encodings, KeyedText, NULL_KEY, TableBatch, TableColumn, TableError,
    concat_parts, temp_file_beside, write_batch, write_file_atomic,
};
pub use shared::{Shareable, SharedStrings};

/// A row type that is a table of the contract.
pub trait Table: serde::Serialize + serde::de::DeserializeOwned {
    /// File stem under `tables/`, e.g. `sched_slices` for `tables/sched_slices.parquet`.
    const NAME: &'static str;

    /// How its columns are encoded (see `table!`, which declares it).
    const ENCODINGS: &'static Encodings;

    /// Points the row's repeated strings (its `Arc<str>` fields) at `strings`' copies, so that
    /// rows read from a file share them. Tables of `String` fields keep this default.
    fn share_strings(&mut self, _strings: &mut SharedStrings) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every table's declared encodings fit its schema: an empty file of each is written
    /// (a declaration of a column the table lacks, or of a type its encoding cannot take, is
    /// refused when the writer is created).
    #[test]
    fn every_tables_declared_encodings_fit_its_schema() {
        fn fits<T: Table>(dir: &std::path::Path) {
            let path = dir.join(format!("{}.parquet", T::NAME));
            if let Err(err) = write_rows::<T>(&path, &[]) {
                panic!("table {}: {err}", T::NAME);
            }
        }
        macro_rules! every {
            ($($table:ty),* $(,)?) => {{
                let dir = tempfile::tempdir().unwrap();
                $(fits::<$table>(dir.path());)*
            }};
        }
        every!(
            RunRow,
            CpuRow,
            ProcessRow,
            SchedSliceRow,
            MigrationRow,
            WakeupRow,
            ThreadRow,
            TraceRow,
            LossRow,
            CpuFreqIdleRow,
            PlacementRow,
            CpuSampleRow,
            WorkloadMetricRow,
            QualityRow,
            PerfStatRow,
            TimehistSummaryRow,
            SchedRuntimeRow,
            ResidencyRow,
            MigrationSummaryRow,
            SchedDelayRow,
            SchedDelayWorkloadRow,
            SchedDelayCdfRow,
            MigrationClassRow,
            CpuTimeRow,
            ThroughputRow,
            ResidencyRollupRow,
            TotalsRow,
            CpuActivityRow,
            CpuActivityIntervalRow,
            CpuShareRow,
            PowerStepRow,
            CpuTimelineRow,
            PlacementCostRow,
            PlacementCostWorkloadRow,
            WakeupPlacementRow,
            ComparisonRow,
            ObservationRow,
            ExpectationRow,
        );
    }
}
