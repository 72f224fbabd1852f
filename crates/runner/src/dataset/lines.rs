//! The lines of a JSONL file, each with its 1-based number, read as bytes so that a line that
//! is not UTF-8 is refused with its number (and the byte where it stops being text) rather
//! than as an I/O error of the whole file.

use std::io::BufRead;
use std::path::Path;

use super::DatasetError;

/// Calls `each(line number, text)` for every line of `path` that is not blank, in order,
/// until it returns an error. A trailing `\r` (a file written on Windows) is not part of the
/// line.
pub(crate) fn for_each_line(
    path: &Path,
    mut each: impl FnMut(usize, &str) -> Result<(), DatasetError>,
) -> Result<(), DatasetError> {
    let file = std::fs::File::open(path).map_err(|e| DatasetError::io(path, e))?;
    let mut reader = std::io::BufReader::new(file);
    let mut buf = Vec::new();
    let mut number = 0;
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| DatasetError::io(path, e))?;
        if n == 0 {
            return Ok(());
        }
        number += 1;
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
        if number == 1 && servebench_spec::text::starts_with_bom(&buf) {
            return Err(DatasetError::Parse {
                path: path.to_owned(),
                line: 1,
                message: servebench_spec::text::BOM_WORDS.to_owned(),
            });
        }
        let text = std::str::from_utf8(&buf).map_err(|e| DatasetError::Parse {
            path: path.to_owned(),
            line: number,
            message: format!(
                "not UTF-8 text (byte {} of the line is not part of a UTF-8 character): save \
                 the file as UTF-8",
                e.valid_up_to() + 1
            ),
        })?;
        if text.trim().is_empty() {
            continue;
        }
        each(number, text)?;
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn numbers_lines_skips_blank_ones_and_names_a_line_that_is_not_utf8() {
        let mut f = tempfile::NamedTempFile::new().expect("tmp");
        f.write_all(b"a\r\n\n  \nb\n\xff\xfe\n").expect("write");
        let mut seen = Vec::new();
        let err = for_each_line(f.path(), |n, t| {
            seen.push((n, t.to_owned()));
            Ok(())
        })
        .expect_err("line 5 is not UTF-8");
        assert_eq!(seen, [(1, "a".to_owned()), (4, "b".to_owned())]);
        let msg = err.to_string();
        assert!(msg.contains(":5: not UTF-8 text (byte 1"), "{msg}");
    }
}
