//! What the engine writes decodes to what the `parquet` crate's ArrowWriter writes, and to what
//! was given, over random nulls, batch splits, text cardinalities and lengths, text given as
//! strings or by key: every encoding the engine has (dictionary, its plain fallback, delta,
//! the Arrow column writers' plain) against the reference writer's defaults.

use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use proptest::prelude::*;
use schedlab_parquet::{
    ColumnEncoding, Encodings, KeyedText, NULL_KEY, ParquetWriter, TableBatch, TableColumn,
};

const ENCODINGS: &Encodings = &[
    ("run_id", ColumnEncoding::DictionaryWithRange),
    ("comm", ColumnEncoding::Dictionary),
    ("message", ColumnEncoding::Dictionary),
    ("time_ns", ColumnEncoding::Delta),
    ("dur_ns", ColumnEncoding::Delta),
];

/// How a case's columns are made.
#[derive(Debug, Clone)]
struct Case {
    rows: usize,
    seed: u64,
    /// Share of null rows in each nullable column, in percent.
    nulls: [u32; 6],
    /// Distinct texts of `run_id`, `comm`, `message` and `plain` (`usize::MAX`: every row its
    /// own), and whether they are long (hundreds of bytes: a dictionary that outgrows its
    /// bound) or short.
    distinct: [usize; 4],
    long: bool,
    /// `comm` given by key rather than as strings.
    keyed: bool,
    /// Rows per batch written, in turn.
    batches: Vec<usize>,
}

fn case() -> impl Strategy<Value = Case> {
    let rows = prop_oneof![8 => 0usize..3_000, 1 => 32_000usize..70_000];
    let null_share = prop::sample::select(vec![0u32, 10, 50, 100]);
    let distinct = prop::sample::select(vec![1usize, 2, 100, usize::MAX]);
    (
        rows,
        any::<u64>(),
        prop::array::uniform6(null_share),
        prop::array::uniform4(distinct),
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(1usize..20_000, 1..6),
    )
        .prop_map(|(rows, seed, nulls, distinct, long, keyed, batches)| Case {
            rows,
            seed,
            nulls,
            distinct,
            long,
            keyed,
            batches,
        })
}

/// A xorshift sequence: the case's data from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Whether this row of a column with `percent` nulls is null.
    fn null(&mut self, percent: u32) -> bool {
        (self.next() % 100) < u64::from(percent)
    }
}

/// Text number `n` of a column: short, or hundreds of bytes, some of them not ASCII.
fn text(column: &str, n: usize, long: bool) -> String {
    match long {
        true => format!("{column} {n} {}", "é-long-text ".repeat(20 + n % 7)),
        false => format!("{column}{n}"),
    }
}

/// The case's table: the batch it describes, and `comm`'s keys (the text number of each row,
/// or [`NULL_KEY`]).
fn table(case: &Case) -> (RecordBatch, Vec<u128>) {
    let mut rng = Rng(case.seed | 1);
    let rows = case.rows;
    let number = |distinct: usize, rng: &mut Rng| match distinct {
        usize::MAX => None,
        d => Some(rng.below(d)),
    };
    let texts = |name: &str, c: usize, nulls: Option<u32>, rng: &mut Rng| -> Vec<Option<String>> {
        (0..rows)
            .map(|i| {
                if nulls.is_some_and(|share| rng.null(share)) {
                    return None;
                }
                let n = number(case.distinct[c], rng).unwrap_or(i);
                Some(text(name, n, case.long))
            })
            .collect()
    };
    let run_id = texts("run", 0, None, &mut rng);
    let comm = texts("comm", 1, Some(case.nulls[0]), &mut rng);
    let message = texts("message", 2, Some(case.nulls[1]), &mut rng);
    let plain = texts("plain", 3, Some(case.nulls[2]), &mut rng);
    let mut time = 1_000_000_000i64;
    let times: Vec<i64> = (0..rows)
        .map(|_| {
            time += (rng.next() % 5_000) as i64 - 500;
            time
        })
        .collect();
    let durations: Vec<Option<i64>> = (0..rows)
        .map(|_| (!rng.null(case.nulls[3])).then(|| (rng.next() >> 20) as i64 - (1 << 42)))
        .collect();
    let cpus: Vec<Option<i32>> = (0..rows)
        .map(|_| (!rng.null(case.nulls[4])).then(|| rng.below(8) as i32))
        .collect();
    let mut argv = ListBuilder::new(StringBuilder::new());
    for _ in 0..rows {
        if rng.null(case.nulls[5]) {
            argv.append(false);
            continue;
        }
        for a in 0..rng.below(3) {
            argv.values().append_value(format!("--arg{a}"));
        }
        argv.append(true);
    }
    let keys = (comm.iter())
        .map(|t| t.as_ref().map_or(NULL_KEY, |t| comm_number(t) as u128))
        .collect();
    let strings = |v: Vec<Option<String>>| Arc::new(StringArray::from(v)) as ArrayRef;
    let columns: Vec<ArrayRef> = vec![
        strings(run_id),
        strings(comm),
        strings(message),
        strings(plain),
        Arc::new(Int64Array::from(times)),
        Arc::new(Int64Array::from(durations)),
        Arc::new(Int32Array::from(cpus)),
        Arc::new(argv.finish()),
    ];
    (RecordBatch::try_new(schema(), columns).unwrap(), keys)
}

/// The text number in a `comm` text (`comm7…` is 7).
fn comm_number(text: &str) -> usize {
    let digits = text["comm".len()..].trim_start();
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse().unwrap()
}

fn schema() -> Arc<Schema> {
    let item = Arc::new(Field::new("item", DataType::Utf8, true));
    Arc::new(Schema::new(vec![
        Field::new("run_id", DataType::Utf8, false),
        Field::new("comm", DataType::Utf8, true),
        Field::new("message", DataType::Utf8, true),
        Field::new("plain", DataType::Utf8, true),
        Field::new("time_ns", DataType::Int64, false),
        Field::new("dur_ns", DataType::Int64, true),
        Field::new("cpu", DataType::Int32, true),
        Field::new("argv", DataType::List(item), true),
    ]))
}

/// Rows `at..at + n` of the table for the engine, `comm` by key where the case says so.
fn table_batch(case: &Case, batch: &RecordBatch, keys: &[u128], at: usize, n: usize) -> TableBatch {
    let mut columns: Vec<TableColumn> = (batch.columns().iter())
        .map(|c| TableColumn::Array(c.slice(at, n)))
        .collect();
    if case.keyed {
        let long = case.long;
        columns[1] = TableColumn::Text(KeyedText {
            keys: keys[at..at + n].to_vec(),
            text: Arc::new(move |k| text("comm", k as usize, long)),
        });
    }
    TableBatch::new(&batch.schema(), n, columns).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_engine_decodes_as_arrow_writer_does(case in case()) {
        let (batch, keys) = table(&case);
        let dir = tempfile::tempdir().unwrap();

        let ours = dir.path().join("ours.parquet");
        let mut writer = ParquetWriter::create(&ours, schema(), ENCODINGS).unwrap();
        let mut at = 0;
        for &size in case.batches.iter().cycle() {
            if at == case.rows {
                break;
            }
            let n = size.min(case.rows - at);
            writer.write_table(&table_batch(&case, &batch, &keys, at, n)).unwrap();
            at += n;
        }
        writer.finish().unwrap();

        let reference = dir.path().join("reference.parquet");
        let file = std::fs::File::create(&reference).unwrap();
        let mut writer = ArrowWriter::try_new(file, schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();

        let (ours, reference) = (super::read_whole(&ours), super::read_whole(&reference));
        prop_assert_eq!(&ours, &reference);
        prop_assert_eq!(&ours, &batch);
    }
}
