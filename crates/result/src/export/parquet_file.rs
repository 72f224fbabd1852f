//! A [`Table`] as a Parquet file, through the `parquet` crate's column writer (no arrow):
//! one row group, a column chunk per column, written from the table's typed values with
//! definition levels for the nullable ones.

use std::sync::Arc;

use parquet::basic::{LogicalType, Repetition, Type as Physical};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use super::{Column, ExportError, Table, Values};

fn err(column: &str) -> impl Fn(parquet::errors::ParquetError) -> ExportError + '_ {
    move |e| ExportError::Parquet {
        column: column.to_owned(),
        message: e.to_string(),
    }
}

fn field(c: &Column) -> Result<Arc<Type>, ExportError> {
    let (physical, logical) = match c.values {
        Values::Int(_) => (Physical::INT64, None),
        Values::Float(_) => (Physical::DOUBLE, None),
        Values::Str(_) => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
        Values::Bool(_) => (Physical::BOOLEAN, None),
    };
    let repetition = if c.nullable {
        Repetition::OPTIONAL
    } else {
        Repetition::REQUIRED
    };
    Type::primitive_type_builder(&c.name, physical)
        .with_repetition(repetition)
        .with_logical_type(logical)
        .build()
        .map(Arc::new)
        .map_err(err(&c.name))
}

/// The present values and, for a nullable column, the definition levels (1 present, 0
/// null). A column that is not nullable has a value in every row ([`super::tables`] builds
/// it so); a missing one would be written as the type's default rather than lose the row.
fn levels<T: Clone + Default>(c: &Column, v: &[Option<T>]) -> (Vec<T>, Option<Vec<i16>>) {
    if c.nullable {
        let defs = v.iter().map(|x| i16::from(x.is_some())).collect();
        (v.iter().flatten().cloned().collect(), Some(defs))
    } else {
        (
            v.iter().map(|x| x.clone().unwrap_or_default()).collect(),
            None,
        )
    }
}

/// The table as the bytes of a Parquet file.
pub(super) fn write(table: &Table) -> Result<Vec<u8>, ExportError> {
    let fields = table.columns.iter().map(field).collect::<Result<_, _>>()?;
    let schema = Type::group_type_builder("schema")
        .with_fields(fields)
        .build()
        .map_err(err("(schema)"))?;
    let props = WriterProperties::builder()
        .set_created_by(format!(
            "servebench {} (parquet-rs)",
            env!("CARGO_PKG_VERSION")
        ))
        .build();
    let mut out = Vec::new();
    let mut writer = SerializedFileWriter::new(&mut out, Arc::new(schema), Arc::new(props))
        .map_err(err("(schema)"))?;
    let mut group = writer.next_row_group().map_err(err("(schema)"))?;
    for c in &table.columns {
        let e = err(&c.name);
        let Some(mut col) = group.next_column().map_err(&e)? else {
            return Err(ExportError::Parquet {
                column: c.name.clone(),
                message: "the writer has no column for it".into(),
            });
        };
        match &c.values {
            Values::Int(v) => {
                let (vals, defs) = levels(c, v);
                col.typed::<Int64Type>()
                    .write_batch(&vals, defs.as_deref(), None)
                    .map_err(&e)?;
            }
            Values::Float(v) => {
                let (vals, defs) = levels(c, v);
                col.typed::<DoubleType>()
                    .write_batch(&vals, defs.as_deref(), None)
                    .map_err(&e)?;
            }
            Values::Bool(v) => {
                let (vals, defs) = levels(c, v);
                col.typed::<BoolType>()
                    .write_batch(&vals, defs.as_deref(), None)
                    .map_err(&e)?;
            }
            Values::Str(v) => {
                let (vals, defs) = levels(c, v);
                let vals: Vec<ByteArray> = vals
                    .into_iter()
                    .map(|s| ByteArray::from(s.into_bytes()))
                    .collect();
                col.typed::<ByteArrayType>()
                    .write_batch(&vals, defs.as_deref(), None)
                    .map_err(&e)?;
            }
        }
        col.close().map_err(&e)?;
    }
    group.close().map_err(err("(schema)"))?;
    writer.close().map_err(err("(schema)"))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    /// Written, then read back with the crate's reader: the types, the nulls and the values.
    #[test]
    fn a_table_reads_back_with_its_types_and_nulls() {
        let col = |name: &str, nullable, values| Column {
            name: name.into(),
            nullable,
            values,
        };
        let t = Table {
            columns: vec![
                col("n", false, Values::Int(vec![Some(3), Some(-1), Some(7)])),
                col(
                    "x",
                    true,
                    Values::Float(vec![Some(0.1), None, Some(f64::INFINITY)]),
                ),
                col(
                    "s",
                    true,
                    Values::Str(vec![None, Some("a,b".into()), Some("é".into())]),
                ),
                col(
                    "b",
                    false,
                    Values::Bool(vec![Some(true), Some(false), Some(true)]),
                ),
            ],
        };
        let bytes = t.to_parquet().expect("writes");
        let reader = SerializedFileReader::new(bytes::Bytes::from(bytes)).expect("reads");
        let schema = reader.metadata().file_metadata().schema_descr_ptr();
        let kinds: Vec<String> = schema
            .columns()
            .iter()
            .map(|c| {
                format!(
                    "{} {:?} {:?}",
                    c.name(),
                    c.physical_type(),
                    c.self_type().get_basic_info().repetition()
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "n INT64 REQUIRED",
                "x DOUBLE OPTIONAL",
                "s BYTE_ARRAY OPTIONAL",
                "b BOOLEAN REQUIRED"
            ]
        );
        let rows: Vec<Vec<Field>> = reader
            .get_row_iter(None)
            .expect("rows")
            .map(|r| {
                r.expect("row")
                    .get_column_iter()
                    .map(|(_, f)| f.clone())
                    .collect()
            })
            .collect();
        assert_eq!(
            rows,
            [
                vec![
                    Field::Long(3),
                    Field::Double(0.1),
                    Field::Null,
                    Field::Bool(true)
                ],
                vec![
                    Field::Long(-1),
                    Field::Null,
                    Field::Str("a,b".into()),
                    Field::Bool(false)
                ],
                vec![
                    Field::Long(7),
                    Field::Double(f64::INFINITY),
                    Field::Str("é".into()),
                    Field::Bool(true)
                ],
            ]
        );
    }

    #[test]
    fn an_empty_table_is_a_file_with_its_columns_and_no_rows() {
        let t = Table {
            columns: vec![Column {
                name: "n".into(),
                nullable: true,
                values: Values::Int(vec![]),
            }],
        };
        let reader = SerializedFileReader::new(bytes::Bytes::from(t.to_parquet().expect("writes")))
            .expect("reads");
        assert_eq!(reader.metadata().file_metadata().num_rows(), 0);
        assert_eq!(
            reader
                .metadata()
                .file_metadata()
                .schema_descr()
                .num_columns(),
            1
        );
    }
}
