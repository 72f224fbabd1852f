//! A result as tables for dataframes (`servebench export`): one row per trial, or one row per
//! request of the sidecar, as CSV or Parquet. The columns are documented in docs/export.md;
//! pandas reads the CSV with `pd.read_csv` and the Parquet with `pd.read_parquet`.
//!
//! A [`Table`] is typed column by column (integer, float, string, boolean; nullable or not),
//! built once by [`trials`] or [`requests`] and written by [`Table::to_csv`] (RFC 4180
//! quoting, a header row, an empty cell where a value is absent, numbers in Rust's shortest
//! round-trip form) or [`Table::to_parquet`] (the same columns with those types, absent values
//! as nulls). Both formats come from the same table, so they cannot disagree on a column.
//!
//! Trials carry every metric of the catalogue ([`servebench_spec::metrics::catalogue`]) under
//! its name, over all measured requests of the trial (the values `compare` uses). Requests
//! carry the per-request metrics as [`crate::metrics::derive()`] defines them, so a dataframe's
//! `ttft_ms.quantile(0.99)` of a trial's requests is the trial's `ttft_p99` up to the
//! histogram's rounding.

mod parquet_file;
mod tables;

pub use tables::{requests, trials};

use crate::{RequestLine, RunResult};

/// A failure to write a table.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The Parquet writer refused the schema or a column.
    #[error("writing Parquet column `{column}`: {message}")]
    Parquet {
        /// The column (`(schema)` for the file as a whole).
        column: String,
        /// The writer's message.
        message: String,
    },
}

/// A column's values, one per row; `None` is an absent value (an empty CSV cell, a Parquet
/// null).
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// 64-bit signed integers (counts and indices; a count past `i64::MAX` reads as it).
    Int(Vec<Option<i64>>),
    /// 64-bit floats (times in ms, rates, metrics).
    Float(Vec<Option<f64>>),
    /// UTF-8 strings.
    Str(Vec<Option<String>>),
    /// Booleans.
    Bool(Vec<Option<bool>>),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::Int(v) => v.len(),
            Values::Float(v) => v.len(),
            Values::Str(v) => v.len(),
            Values::Bool(v) => v.len(),
        }
    }

    /// Row `i` as its CSV cell (before quoting).
    fn cell(&self, i: usize) -> String {
        fn s<T: ToString>(v: Option<&Option<T>>) -> String {
            v.and_then(Option::as_ref)
                .map(ToString::to_string)
                .unwrap_or_default()
        }
        match self {
            Values::Int(v) => s(v.get(i)),
            Values::Float(v) => s(v.get(i)),
            Values::Str(v) => s(v.get(i)),
            Values::Bool(v) => s(v.get(i)),
        }
    }
}

/// One column of a [`Table`].
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// The header (docs/export.md).
    pub name: String,
    /// Whether a row may lack a value (a Parquet `OPTIONAL` column); a column that is not
    /// nullable has a value in every row.
    pub nullable: bool,
    /// The values, one per row.
    pub values: Values,
}

/// A typed table: columns of equal length.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The columns, in order.
    pub columns: Vec<Column>,
}

impl Table {
    /// The number of rows.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.values.len())
    }

    /// The column named `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The table as CSV: a header row, then one line per row.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        let head: Vec<String> = self.columns.iter().map(|c| c.name.clone()).collect();
        push_row(&mut out, &head);
        for i in 0..self.rows() {
            let row: Vec<String> = self.columns.iter().map(|c| c.values.cell(i)).collect();
            push_row(&mut out, &row);
        }
        out
    }

    /// The table as a Parquet file (one row group, uncompressed, dictionary-encoded where it
    /// helps): integers as `INT64`, floats as `DOUBLE`, strings as UTF-8 `BYTE_ARRAY`
    /// (logical type `STRING`), booleans as `BOOLEAN`; a nullable column is `OPTIONAL`.
    pub fn to_parquet(&self) -> Result<Vec<u8>, ExportError> {
        parquet_file::write(self)
    }
}

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

fn push_row(out: &mut String, cells: &[String]) {
    let row: Vec<String> = cells.iter().map(|c| field(c)).collect();
    out.push_str(&row.join(","));
    out.push('\n');
}

/// One row per trial of `result` as CSV ([`trials`]).
pub fn trials_csv(result: &RunResult) -> String {
    trials(result).to_csv()
}

/// One row per request line of `result`'s sidecar as CSV ([`requests`]).
pub fn requests_csv(result: &RunResult, lines: &[RequestLine]) -> String {
    requests(result, lines).to_csv()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_by_rfc_4180() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
    }

    #[test]
    fn absent_values_are_empty_cells_and_numbers_keep_their_shortest_form() {
        let t = Table {
            columns: vec![
                Column {
                    name: "n".into(),
                    nullable: true,
                    values: Values::Int(vec![Some(3), None]),
                },
                Column {
                    name: "x".into(),
                    nullable: true,
                    values: Values::Float(vec![Some(0.1), Some(f64::INFINITY)]),
                },
                Column {
                    name: "s".into(),
                    nullable: true,
                    values: Values::Str(vec![None, Some("a,b".into())]),
                },
                Column {
                    name: "b".into(),
                    nullable: false,
                    values: Values::Bool(vec![Some(true), Some(false)]),
                },
            ],
        };
        assert_eq!(t.rows(), 2);
        assert_eq!(t.to_csv(), "n,x,s,b\n3,0.1,,true\n,inf,\"a,b\",false\n");
    }
}
