//! turbostat's per-CPU table: interval blocks, fork-mode blocks, `-S` summaries, any `--show`
//! subset, any version since 2015.
//!
//! The seeds read Busy%, Avg_MHz, Bzy_MHz, C1/C6 residency, temperature and package power off
//! this table, per CPU and per core class. Its columns differ by machine, version and `--show`
//! set, so the table is an Arrow batch built from the header rather than a fixed row type: the
//! topology columns `cpu`, `core`, `package` (Int32, null on the summary row), then one Float64
//! column per turbostat field under a normalised name ([`normalise_column`]). Unknown fields are
//! kept, under their snake_case name.
//!
//! Columns before the fields: `run_id`, `sample` (interval index from 0), `time_ns` (end of the
//! interval on the run clock, null when unknown), `row` (position in the sample's block),
//! `summary` (the `-` row, or the only row of `-S`).
//!
//! The table is read by shape: a header is a line of names that includes a turbostat column;
//! a data row is a line of numbers (or `-`) no longer than the header. Fields map by header
//! position, and a row that stops early (core- and package-scope columns are printed only on
//! the first thread of a core or package) leaves the missing fields null, meaning "not
//! applicable". A new sample (interval) starts at each header, or at a summary row when the
//! header is not repeated. Lines before the first header (the debug banner) are skipped.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
    new_null_array,
};
use arrow_schema::{DataType, Field, Schema};

use schedlab_tables::Severity;

use crate::text::{Unrecognized, decimal_scaled, number, numbered_lines, quality, text_error};
use crate::{ParseContext, ParseError, Parsed};

const PARSER: &str = "turbostat";

/// Names that mark a line as a turbostat header (at least one must appear).
const ANCHORS: [&str; 14] = [
    "Avg_MHz",
    "Busy%",
    "%Busy",
    "Bzy_MHz",
    "TSC_MHz",
    "CPU",
    "Core",
    "Package",
    "PkgWatt",
    "Pkg_J",
    "CorWatt",
    "IRQ",
    "usec",
    "Time_Of_Day_Seconds",
];

/// The columns every turbostat batch starts with, before the per-field Float64 columns.
const BASE_COLUMNS: [(&str, DataType, bool); 8] = [
    ("run_id", DataType::Utf8, false),
    ("sample", DataType::Int64, false),
    ("time_ns", DataType::Int64, true),
    ("row", DataType::Int32, false),
    ("summary", DataType::Boolean, false),
    ("cpu", DataType::Int32, true),
    ("core", DataType::Int32, true),
    ("package", DataType::Int32, true),
];

/// How to place turbostat's intervals on the run clock.
#[derive(Debug, Clone, Default)]
pub struct TurbostatConfig {
    /// The `--interval` turbostat ran with, when the collector knows it. Used when the text does
    /// not say (`--quiet` drops the `Measurement interval` banner line). Fork mode's `N sec`
    /// line takes precedence.
    pub interval_ns: Option<i64>,
}

/// One position of a header.
#[derive(Clone, Copy)]
enum Slot {
    Cpu,
    Core,
    Package,
    Field(usize),
}

/// One data row, values sparse by field index.
struct Row {
    sample: i64,
    /// Position in the sample's block (0 = first row printed): the only way to tell CPU rows
    /// apart when a `--show` set leaves out the CPU column.
    position: i32,
    time_ns: Option<i64>,
    summary: bool,
    cpu: Option<i32>,
    core: Option<i32>,
    package: Option<i32>,
    values: Vec<(usize, f64)>,
}

/// Parses turbostat output with no interval known beyond what the text says.
pub fn parse(text: &str, source_name: &str, ctx: &ParseContext) -> Result<Parsed, ParseError> {
    parse_with(text, source_name, ctx, &TurbostatConfig::default())
}

/// Parses turbostat output into one batch in [`Parsed::turbostat`].
pub fn parse_with(
    text: &str,
    source_name: &str,
    ctx: &ParseContext,
    config: &TurbostatConfig,
) -> Result<Parsed, ParseError> {
    let mut parsed = Parsed::default();
    let mut unknown = Unrecognized::new(PARSER);
    let mut fields: Vec<String> = Vec::new();
    let mut field_index: HashMap<String, usize> = HashMap::new();
    let mut header: Option<Vec<Slot>> = None;
    let mut header_line = 0;
    let mut rows: Vec<Row> = Vec::new();
    let mut banner_interval_ns: Option<i64> = None;
    let mut pending_ns: Option<i64> = None;
    let mut new_block = true;
    let mut rows_in_block = 0usize;
    let mut sample = -1i64;
    // Offset of the current sample's end from turbostat's start; None once unknowable.
    let mut offset_ns: Option<i64> = Some(0);
    for (line_no, line) in numbered_lines(text) {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens.is_empty() {
            continue;
        }
        if let [seconds, "sec"] = tokens.as_slice()
            && let Some(ns) = decimal_scaled(seconds, 1_000_000_000)
        {
            pending_ns = Some(ns);
            new_block = true;
            continue;
        }
        if is_header(&tokens) {
            header = Some(header_slots(&tokens, &mut fields, &mut field_index));
            header_line = line_no;
            new_block = true;
            continue;
        }
        let Some(slots) = &header else {
            if let Some(value) = line.trim().strip_prefix("Measurement interval:") {
                banner_interval_ns = value
                    .trim()
                    .strip_suffix("seconds")
                    .and_then(|s| decimal_scaled(s.trim(), 1_000_000_000));
            }
            continue;
        };
        let values: Option<Vec<Option<f64>>> = tokens
            .iter()
            .map(|t| {
                if *t == "-" {
                    Some(None)
                } else {
                    number(t).map(Some)
                }
            })
            .collect();
        let (Some(values), true) = (values, tokens.len() <= slots.len()) else {
            unknown.note(line_no, line);
            continue;
        };
        let topology = slots
            .iter()
            .zip(&values)
            .filter(|(slot, _)| !matches!(slot, Slot::Field(_)));
        let has_topology = slots.iter().any(|slot| !matches!(slot, Slot::Field(_)));
        let summary = if has_topology {
            topology.clone().all(|(_, v)| v.is_none())
        } else {
            new_block
        };
        if new_block || (summary && rows_in_block > 0) {
            sample += 1;
            rows_in_block = 0;
            let duration = pending_ns
                .take()
                .or(config.interval_ns)
                .or(banner_interval_ns);
            offset_ns = offset_ns
                .zip(duration)
                .and_then(|(offset, duration)| offset.checked_add(duration));
        }
        new_block = false;
        let position = i32::try_from(rows_in_block).unwrap_or(i32::MAX);
        rows_in_block += 1;
        let mut row = Row {
            sample,
            position,
            time_ns: ctx
                .start_ns
                .zip(offset_ns)
                .and_then(|(start, offset)| start.checked_add(offset)),
            summary,
            cpu: None,
            core: None,
            package: None,
            values: Vec::new(),
        };
        for (slot, value) in slots.iter().zip(values) {
            let Some(value) = value else { continue };
            // Topology values are small integers; anything else is not a CPU number.
            let id = (value.fract() == 0.0 && value.abs() < 1e9).then_some(value as i32);
            match slot {
                Slot::Cpu => row.cpu = id,
                Slot::Core => row.core = id,
                Slot::Package => row.package = id,
                Slot::Field(index) => row.values.push((*index, value)),
            }
        }
        rows.push(row);
    }
    if header.is_none() {
        let line = numbered_lines(text)
            .find(|(_, l)| !l.trim().is_empty())
            .map_or(1, |(n, _)| n);
        return Err(text_error(
            source_name,
            line,
            "no turbostat header line (hint: expected columns such as `CPU Avg_MHz Busy% Bzy_MHz`)",
        ));
    }
    if rows.is_empty() {
        let message = format!(
            "{source_name}:{header_line}: turbostat printed a header but no data rows (interrupted run?)"
        );
        parsed
            .quality
            .push(quality(ctx, PARSER, Severity::Warning, message));
    }
    parsed
        .quality
        .extend(unknown.into_quality(ctx, source_name));
    parsed.turbostat.push(to_batch(&ctx.run_id, &fields, &rows));
    Ok(parsed)
}

fn is_header(tokens: &[&str]) -> bool {
    tokens.iter().any(|t| ANCHORS.contains(t))
        && tokens
            .iter()
            .all(|t| number(t).is_none() && *t != "-" && !t.ends_with(':'))
}

/// Maps each header name to a slot, registering new field names in first-seen order.
fn header_slots(
    tokens: &[&str],
    fields: &mut Vec<String>,
    field_index: &mut HashMap<String, usize>,
) -> Vec<Slot> {
    let mut in_this_header: Vec<String> = Vec::new();
    tokens
        .iter()
        .map(|token| match *token {
            "CPU" => Slot::Cpu,
            "Core" => Slot::Core,
            "Package" => Slot::Package,
            name => {
                let base = normalise_column(name);
                let mut unique = base.clone();
                let mut n = 2;
                while in_this_header.contains(&unique) {
                    unique = format!("{base}_{n}");
                    n += 1;
                }
                in_this_header.push(unique.clone());
                let index = *field_index.entry(unique.clone()).or_insert_with(|| {
                    fields.push(unique);
                    fields.len() - 1
                });
                Slot::Field(index)
            }
        })
        .collect()
}

/// The schedlab name of a turbostat column: `Busy%` → `busy_pct`, `CPU%c6` → `c6_pct`,
/// `Pkg%pc2` → `pkg_pc2_pct`, `C6%` (cpuidle-requested residency) → `c6_req_pct`, `C6` (its
/// count) → `c6_count`, `CoreTmp` → `core_tmp_c`, `PkgWatt` → `pkg_watt`; an unknown name
/// becomes snake_case (`SAM%mc6` → `sam_pct_mc6`).
pub fn normalise_column(name: &str) -> String {
    let known = match name {
        "Avg_MHz" => "avg_mhz",
        "Busy%" | "%Busy" => "busy_pct",
        "Bzy_MHz" => "bzy_mhz",
        "TSC_MHz" => "tsc_mhz",
        "Time_Of_Day_Seconds" => "time_of_day_s",
        "CoreTmp" => "core_tmp_c",
        "PkgTmp" => "pkg_tmp_c",
        "CoreThr" => "core_throttle_count",
        "PkgWatt" => "pkg_watt",
        "CorWatt" => "core_watt",
        "GFXWatt" => "gfx_watt",
        "RAMWatt" => "ram_watt",
        "SysWatt" => "sys_watt",
        "Pkg_J" => "pkg_j",
        "Cor_J" => "core_j",
        "GFX_J" => "gfx_j",
        "RAM_J" => "ram_j",
        "PKG_%" => "pkg_rapl_throttle_pct",
        "RAM_%" => "ram_rapl_throttle_pct",
        "Totl%C0" => "totl_c0_pct",
        "Any%C0" => "any_c0_pct",
        "GFX%C0" => "gfx_c0_pct",
        "CPUGFX%" => "cpugfx_pct",
        "GFX%rc6" => "gfx_rc6_pct",
        "GFXMHz" => "gfx_mhz",
        "GFXAMHz" => "gfx_amhz",
        "SAMMHz" => "sam_mhz",
        "SAMAMHz" => "sam_amhz",
        "UncMHz" => "unc_mhz",
        "CPU%LPI" => "cpu_lpi_pct",
        "SYS%LPI" => "sys_lpi_pct",
        _ => "",
    };
    if !known.is_empty() {
        return known.to_owned();
    }
    let residency = |prefix: &str, out: &str| {
        name.strip_prefix(prefix)
            .filter(|state| !state.is_empty() && state.chars().all(|c| c.is_ascii_alphanumeric()))
            .map(|state| format!("{out}{}_pct", state.to_ascii_lowercase()))
    };
    if let Some(n) = residency("CPU%", "")
        .or_else(|| residency("Pkg%", "pkg_"))
        .or_else(|| residency("Pk%", "pkg_"))
    {
        return n;
    }
    if let Some(n) = residency("Mod%", "mod_") {
        return n;
    }
    let (state, percent) = match name.strip_suffix('%') {
        Some(state) => (state, true),
        None => (name, false),
    };
    let is_idle_state = state == "POLL"
        || (state.starts_with('C')
            && state[1..].starts_with(|c: char| c.is_ascii_digit())
            && state.chars().all(|c| c.is_ascii_alphanumeric()));
    if is_idle_state {
        let state = state.to_ascii_lowercase();
        return if percent {
            format!("{state}_req_pct")
        } else {
            format!("{state}_count")
        };
    }
    crate::text::snake_case(name)
}

fn base_schema_fields() -> Vec<Field> {
    BASE_COLUMNS
        .iter()
        .map(|(name, data_type, nullable)| Field::new(*name, data_type.clone(), *nullable))
        .collect()
}

fn to_batch(run_id: &str, fields: &[String], rows: &[Row]) -> RecordBatch {
    let mut schema_fields = base_schema_fields();
    schema_fields.extend(
        fields
            .iter()
            .map(|name| Field::new(name, DataType::Float64, true)),
    );
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec![run_id; rows.len()])),
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.sample))),
        Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.time_ns))),
        Arc::new(Int32Array::from_iter_values(
            rows.iter().map(|r| r.position),
        )),
        Arc::new(BooleanArray::from_iter(
            rows.iter().map(|r| Some(r.summary)),
        )),
        Arc::new(Int32Array::from_iter(rows.iter().map(|r| r.cpu))),
        Arc::new(Int32Array::from_iter(rows.iter().map(|r| r.core))),
        Arc::new(Int32Array::from_iter(rows.iter().map(|r| r.package))),
    ];
    for index in 0..fields.len() {
        let values = rows
            .iter()
            .map(|r| r.values.iter().find(|(i, _)| *i == index).map(|(_, v)| *v));
        columns.push(Arc::new(Float64Array::from_iter(values)));
    }
    RecordBatch::try_new(Arc::new(Schema::new(schema_fields)), columns).unwrap_or_else(|err| {
        unreachable!("turbostat columns are built to match their schema: {err}")
    })
}

/// One batch out of several turbostat batches whose field columns differ: the union of their
/// columns (first-seen order), null where a batch lacks one. No batches give an empty batch
/// with the base columns.
pub fn concat_turbostat(batches: &[RecordBatch]) -> RecordBatch {
    let mut schema_fields = base_schema_fields();
    for batch in batches {
        for field in batch.schema().fields() {
            if !schema_fields.iter().any(|f| f.name() == field.name()) {
                schema_fields.push(Field::new(field.name(), field.data_type().clone(), true));
            }
        }
    }
    let schema = Arc::new(Schema::new(schema_fields));
    let columns: Vec<ArrayRef> = schema
        .fields()
        .iter()
        .map(|field| {
            let parts: Vec<ArrayRef> = batches
                .iter()
                .map(|batch| {
                    batch
                        .column_by_name(field.name())
                        .filter(|column| column.data_type() == field.data_type())
                        .cloned()
                        .unwrap_or_else(|| new_null_array(field.data_type(), batch.num_rows()))
                })
                .collect();
            let refs: Vec<&dyn arrow_array::Array> = parts.iter().map(|a| a.as_ref()).collect();
            if refs.is_empty() {
                return new_null_array(field.data_type(), 0);
            }
            arrow_select::concat::concat(&refs)
                .unwrap_or_else(|err| unreachable!("columns of one name share one type: {err}"))
        })
        .collect();
    RecordBatch::try_new(schema, columns)
        .unwrap_or_else(|err| unreachable!("concatenated columns match the schema: {err}"))
}
