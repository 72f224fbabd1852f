//! `servebench export --format parquet`: the same tables as the CSV, typed. Read back with the
//! parquet crate's reader, every cell is checked against the CSV export of the same committed
//! result (the committed simulator run of export_cli.rs), and the column types against what
//! docs/export.md says; docs/export.md's Parquet snippet runs in pandas (pyarrow from
//! `scripts/setup-pandas`; required under CI) and compares dtypes and values with the CSV's.
//! Bad input: a folder without a result, an output that cannot be written.

use std::path::Path;

use parquet::basic::{Repetition, Type as Physical};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;

use crate::common;
use crate::export_cli::{export, fixture, pandas_python, rows};
use common::{repo, scratch};

/// A Parquet file's columns: (name, physical type, nullable).
type Columns = Vec<(String, Physical, bool)>;

/// A Parquet file's columns and its rows as fields.
fn read(path: &Path) -> (Columns, Vec<Vec<Field>>) {
    let bytes = std::fs::read(path).expect("written");
    let reader = SerializedFileReader::new(bytes::Bytes::from(bytes)).expect("a Parquet file");
    let cols = reader
        .metadata()
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .map(|c| {
            let rep = c.self_type().get_basic_info().repetition();
            (
                c.name().to_owned(),
                c.physical_type(),
                rep == Repetition::OPTIONAL,
            )
        })
        .collect();
    let rows = reader
        .get_row_iter(None)
        .expect("rows")
        .map(|r| {
            r.expect("a row")
                .get_column_iter()
                .map(|(_, f)| f.clone())
                .collect()
        })
        .collect();
    (cols, rows)
}

/// A Parquet field as its CSV cell.
fn as_csv(f: &Field) -> String {
    match f {
        Field::Null => String::new(),
        Field::Bool(b) => b.to_string(),
        Field::Long(n) => n.to_string(),
        Field::Double(x) => x.to_string(),
        Field::Str(s) => s.clone(),
        other => panic!("a type export does not write: {other:?}"),
    }
}

fn export_both(table: &str, dir: &Path) -> (String, std::path::PathBuf) {
    let pq = dir.join(format!("{table}.parquet"));
    let (code, _, err) = export(
        &fixture(),
        &[
            "--table",
            table,
            "--format",
            "parquet",
            "-o",
            &pq.display().to_string(),
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let (code, csv, err) = export(&fixture(), &["--table", table]);
    assert_eq!(code, Some(0), "{err}");
    (csv, pq)
}

#[test]
fn export_parquet_holds_the_csv_cells_with_their_types() {
    let dir = scratch("export", "parquet-cells");
    for table in ["trials", "requests"] {
        let (csv, pq) = export_both(table, &dir);
        let (cols, prows) = read(&pq);
        let head: Vec<&str> = csv.lines().next().expect("header").split(',').collect();
        let names: Vec<&str> = cols.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(names, head, "{table}: the same columns in the same order");
        let crows = rows(&csv);
        assert_eq!(prows.len(), crows.len(), "{table}: rows");
        assert!(!prows.is_empty());
        for (p, c) in prows.iter().zip(&crows) {
            for ((name, _, nullable), f) in cols.iter().zip(p) {
                assert_eq!(as_csv(f), c[name], "{table}.{name}");
                // A column that is not nullable never lacks a value; an empty CSV cell is a
                // null, never an empty string or a zero.
                if !nullable {
                    assert_ne!(*f, Field::Null, "{table}.{name}");
                }
                if c[name].is_empty() {
                    assert_eq!(*f, Field::Null, "{table}.{name}");
                }
            }
        }
        let kind = |n: &str| cols.iter().find(|c| c.0 == n).expect(n).1;
        let nullable = |n: &str| cols.iter().find(|c| c.0 == n).expect(n).2;
        for (n, want) in [
            ("variant", Physical::BYTE_ARRAY),
            ("trial", Physical::INT64),
            ("point", Physical::INT64),
            ("point_label", Physical::BYTE_ARRAY),
        ] {
            assert_eq!(kind(n), want, "{table}.{n}");
        }
        assert!(!nullable("trial") && !nullable("variant"));
        if table == "trials" {
            // Every catalogue metric is a nullable float (a failed trial has none).
            for n in [
                "ttft_p99",
                "output_throughput",
                "request_rate",
                "duration_s",
            ] {
                assert_eq!((kind(n), nullable(n)), (Physical::DOUBLE, true), "{n}");
            }
            for n in ["max_concurrency", "completed", "requests"] {
                assert_eq!((kind(n), nullable(n)), (Physical::INT64, true), "{n}");
            }
            assert_eq!(kind("status"), Physical::BYTE_ARRAY);
        } else {
            assert_eq!(
                (kind("warmup"), nullable("warmup")),
                (Physical::BOOLEAN, false)
            );
            assert_eq!(
                (kind("ttft_ms"), nullable("ttft_ms")),
                (Physical::DOUBLE, true)
            );
            assert_eq!(
                (kind("intended_ms"), nullable("intended_ms")),
                (Physical::DOUBLE, false)
            );
            for n in ["output_tokens", "conversation", "cached_tokens"] {
                assert_eq!((kind(n), nullable(n)), (Physical::INT64, true), "{n}");
            }
            assert_eq!(kind("token_events"), Physical::INT64);
            assert_eq!(kind("error"), Physical::BYTE_ARRAY);
        }
    }
}

/// Every column of both tables (the catalogue's metrics aside: docs/metrics.md lists them)
/// is in docs/export.md's tables, so a column added to the export is documented.
#[test]
fn export_columns_are_each_documented() {
    let doc = std::fs::read_to_string(repo().join("docs/export.md")).expect("docs/export.md");
    let metrics = String::from_utf8_lossy(
        &common::sb(&repo())
            .args(["schema", "metrics"])
            .output()
            .expect("runs")
            .stdout,
    )
    .into_owned();
    for table in ["trials", "requests"] {
        let (_, csv, err) = export(&fixture(), &["--table", table]);
        assert!(!csv.is_empty(), "{err}");
        for name in csv.lines().next().expect("header").split(',') {
            if table == "trials" && metrics.contains(&format!("\"{name}\"")) {
                continue;
            }
            assert!(
                doc.contains(&format!("`{name}`")),
                "docs/export.md does not document the {table} column `{name}`"
            );
        }
    }
}

#[test]
fn export_takes_a_results_folder_and_says_where_a_result_is_missing() {
    // A folder with a `latest` file: its newest run, as compare and report read it.
    let dir = scratch("export", "folder");
    let src = fixture();
    let stem = src
        .file_stem()
        .expect("stem")
        .to_string_lossy()
        .into_owned();
    for ext in ["json", "requests.jsonl"] {
        std::fs::copy(src.with_extension(ext), dir.join(format!("{stem}.{ext}"))).expect("copy");
    }
    std::fs::write(dir.join("latest"), format!("{stem}.json\n")).expect("latest");
    let (code, by_folder, err) = export(&dir, &["--table", "requests"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(by_folder, export(&src, &["--table", "requests"]).1);

    // A folder without a result: the error names the file it looked for.
    let empty = scratch("export", "empty-folder");
    let (code, _, err) = export(&empty, &["--format", "parquet", "-o", "x.parquet"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&empty.join("latest").display().to_string()),
        "{err}"
    );
    assert!(err.contains("servebench run"), "{err}");
    assert!(!Path::new("x.parquet").exists() && !repo().join("x.parquet").exists());
}

#[test]
fn export_to_an_unwritable_output_says_which_file() {
    let dir = scratch("export", "unwritable");
    let out = dir.join("no-such-folder/trials.parquet");
    for format in ["parquet", "csv"] {
        let (code, stdout, err) = export(
            &fixture(),
            &["--format", format, "-o", &out.display().to_string()],
        );
        assert_eq!(code, Some(2), "{err}");
        assert!(stdout.is_empty(), "{stdout}");
        assert!(err.contains(&out.display().to_string()), "{err}");
        assert!(err.contains("No such file or directory"), "{err}");
    }
}

#[test]
fn export_parquet_pandas_snippet() {
    let Some(py) = pandas_python() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "pandas and pyarrow are not set up: CI must run scripts/setup-pandas before the tests"
        );
        eprintln!("NOT RUN: pandas and pyarrow are not set up (scripts/setup-pandas)");
        return;
    };
    let doc = std::fs::read_to_string(repo().join("docs/export.md")).expect("docs/export.md");
    let snippet = doc
        .split("```python\n")
        .nth(2)
        .and_then(|s| s.split("```").next())
        .expect("a second python block (Parquet) in docs/export.md");
    assert!(snippet.contains("read_parquet"), "{snippet}");
    let dir = scratch("export", "pandas-parquet");
    let mut files = Vec::new();
    for table in ["trials", "requests"] {
        let (csv, pq) = export_both(table, &dir);
        let csv_path = dir.join(format!("{table}.csv"));
        std::fs::write(&csv_path, csv).expect("write");
        files.push((pq, csv_path));
    }
    // The snippet as written (it reads the two Parquet files), then, for both tables, the
    // Parquet frame against the CSV frame: the same columns, rows and values, and the same
    // dtype, but for the two things a CSV cannot say: a column empty in every row (float64 of
    // NaN in pandas whatever it holds; in Parquet all null under its own type), and a float
    // column whose every value is whole (`error_rate` 0: written `0`, read as int64; in
    // Parquet float64).
    let checks = r#"
import pyarrow.parquet as pq

def same(parquet_path, csv_path):
    p = pd.read_parquet(parquet_path)
    c = pd.read_csv(csv_path)
    assert list(p.columns) == list(c.columns), (list(p.columns), list(c.columns))
    assert len(p) == len(c) > 0, (len(p), len(c))
    schema = pq.read_schema(parquet_path)
    whole_floats = []
    for col in c.columns:
        arrow = str(schema.field(col).type)
        if c[col].isna().all():
            assert p[col].isna().all(), col
            continue
        if arrow == "double" and str(c[col].dtype) == "int64":
            assert str(p[col].dtype) == "float64", (col, p[col].dtype)
            assert (p[col] == c[col]).all(), col
            whole_floats.append(col)
            continue
        assert p[col].dtype == c[col].dtype, (col, p[col].dtype, c[col].dtype)
        pd.testing.assert_series_equal(p[col], c[col], check_exact=True, obj=col)
        want = {"int64": ["int64"], "float64": ["double", "int64"], "bool": ["bool"]}
        assert arrow in want.get(str(c[col].dtype), ["string"]), (col, arrow, c[col].dtype)
    print("whole floats:", whole_floats)
    return p

tp = same(sys.argv[3], sys.argv[4])
rp = same(sys.argv[5], sys.argv[6])
assert tp["trial"].dtype == "int64" and rp["warmup"].dtype == "bool"
assert rp["ttft_ms"].dtype == "float64"
assert len(trials) == 6 and len(requests) == len(rp)
print("CHECKED")
"#;
    let script = dir.join("snippet.py");
    std::fs::write(&script, format!("{snippet}{checks}")).expect("write");
    let mut cmd = std::process::Command::new(py);
    cmd.arg(&script);
    for (pq, _) in &files {
        cmd.arg(pq);
    }
    for (pq, csv) in &files {
        cmd.arg(pq).arg(csv);
    }
    let out = cmd.output().expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("ttft_ms"), "{stdout}");
    assert!(stdout.contains("CHECKED"), "{stdout}");
}
