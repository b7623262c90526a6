//! A key of [`KeyedText`] names one text throughout a file: debug builds check it.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema};
use schedlab_parquet::{ColumnEncoding, KeyedText, ParquetWriter, TableBatch, TableColumn};

/// A batch of `rows` rows of key 7, whose text is `text`.
fn batch(schema: &Schema, rows: usize, text: &'static str) -> TableBatch {
    let column = TableColumn::Text(KeyedText {
        keys: vec![7; rows],
        text: Arc::new(move |_| text.to_owned()),
    });
    TableBatch::new(schema, rows, vec![column]).unwrap()
}

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![Field::new("comm", DataType::Utf8, false)]))
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(
    expected = "text column comm: key 0x7 named \"sh\" earlier in this file and now \"bash\": a key must name one text throughout a file"
)]
fn a_key_that_names_another_text_later_in_the_file_panics_in_debug_builds() {
    let dir = tempfile::tempdir().unwrap();
    let encodings = [("comm", ColumnEncoding::Dictionary)];
    let mut writer =
        ParquetWriter::create(&dir.path().join("t.parquet"), schema(), &encodings).unwrap();
    writer.write_table(&batch(&schema(), 10, "sh")).unwrap();
    writer.write_table(&batch(&schema(), 10, "sh")).unwrap();
    writer.write_table(&batch(&schema(), 10, "bash")).unwrap();
}
