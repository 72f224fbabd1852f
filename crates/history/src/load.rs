//! Reading runs: result files, folders searched recursively, or the result files of every
//! commit of a git range ([`crate::git`]). A file that is not a readable result — truncated,
//! another format (a `.compare.json`), a run id read already — is skipped with a note saying
//! why; nothing is merged silently and nothing read is lost.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use servebench_result::RunResult;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::error::HistoryError;
use crate::model::Skipped;

/// One run as read.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedRun {
    /// Where it was read (`COMMIT:path` from git).
    pub file: String,
    /// The result file.
    pub result: RunResult,
    /// `created_at`, parsed: runs are ordered by it.
    pub created: OffsetDateTime,
    /// The first commit of the range holding it (git only).
    pub commit: Option<String>,
}

/// Everything read, and what was not.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Loaded {
    /// Runs, oldest first (ties by run id).
    pub runs: Vec<LoadedRun>,
    /// Files not read, with why.
    pub skipped: Vec<Skipped>,
}

/// What the text of one `.json` file is, if not a run.
pub(crate) fn classify(text: &str) -> Result<RunResult, String> {
    if servebench_spec::text::starts_with_bom(text.as_bytes()) {
        return Err(servebench_spec::text::BOM_WORDS.to_owned());
    }
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) if e.is_eof() => {
            return Err(format!(
                "truncated: the JSON ends early (line {}, column {})",
                e.line(),
                e.column()
            ));
        }
        Err(e) => return Err(format!("not valid JSON: {e}")),
    };
    if let Some(format) = value.get("format").and_then(|f| f.as_str()) {
        return Err(format!(
            "a `{format}` file (a report made from results), not a result file"
        ));
    }
    let looks_like_result = value.get("run_id").is_some() && value.get("schema_version").is_some();
    if !looks_like_result {
        return Err(
            "not a servebench result file (it has no `run_id` and `schema_version`)".into(),
        );
    }
    serde_json::from_value(value).map_err(|e| {
        format!("a result file this servebench cannot read ({e}); was it written by a newer one?")
    })
}

fn parse_time(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &Rfc3339).ok()
}

/// Add one file's text to `out`, or a note on why it is skipped.
pub(crate) fn add(out: &mut Loaded, file: String, text: &str, commit: Option<String>) {
    match classify(text) {
        Ok(result) => match parse_time(&result.created_at) {
            Some(created) => out.runs.push(LoadedRun {
                file,
                result,
                created,
                commit,
            }),
            None => out.skipped.push(Skipped {
                reason: format!(
                    "its created_at `{}` is not an RFC 3339 time, so it cannot be placed in \
                     the series",
                    result.created_at
                ),
                file,
            }),
        },
        Err(reason) => out.skipped.push(Skipped { file, reason }),
    }
}

/// Order the runs by start time and skip every repeat of a run id (the first read is kept).
pub(crate) fn finish(mut out: Loaded) -> Loaded {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut runs = Vec::new();
    for r in out.runs {
        match seen.get(&r.result.run_id) {
            Some(first) => out.skipped.push(Skipped {
                reason: format!(
                    "run id `{}` was already read from {first}: a copy or a re-written run, \
                     left out rather than counted twice",
                    r.result.run_id
                ),
                file: r.file,
            }),
            None => {
                seen.insert(r.result.run_id.clone(), r.file.clone());
                runs.push(r);
            }
        }
    }
    runs.sort_by(|a, b| {
        a.created
            .cmp(&b.created)
            .then_with(|| a.result.run_id.cmp(&b.result.run_id))
    });
    out.runs = runs;
    out
}

/// `.json` files under `dir`, recursively, sorted.
fn json_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), HistoryError> {
    let entries = std::fs::read_dir(dir).map_err(|source| HistoryError::Read {
        path: dir.to_owned(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            json_files(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
    Ok(())
}

/// Read result files and folders (searched recursively for `*.json`). A path that does not
/// exist, or holds no readable result (an empty folder, only skipped files), is an error; a
/// file that is not a readable result is skipped with a note.
pub fn read_paths(paths: &[PathBuf]) -> Result<Loaded, HistoryError> {
    let mut out = Loaded::default();
    for p in paths {
        let mut files = Vec::new();
        if p.is_dir() {
            json_files(p, &mut files)?;
        } else if p.exists() {
            files.push(p.clone());
        } else {
            return Err(HistoryError::NoSuchPath { path: p.clone() });
        }
        let (runs, skipped) = (out.runs.len(), out.skipped.len());
        for f in &files {
            read_one(&mut out, f);
        }
        if out.runs.len() == runs {
            return Err(HistoryError::NoRuns {
                place: p.display().to_string(),
                why: nothing_read(files.len(), &out.skipped[skipped..]),
            });
        }
    }
    Ok(finish(out))
}

fn read_one(out: &mut Loaded, f: &Path) {
    let name = f.display().to_string();
    match std::fs::read(f) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => add(out, name, &text, None),
            Err(_) => out.skipped.push(Skipped {
                file: name,
                reason: "not UTF-8 text".into(),
            }),
        },
        Err(e) => out.skipped.push(Skipped {
            file: name,
            reason: format!("unreadable: {e}"),
        }),
    }
}

/// Why a source gave no run: no `.json` file at all, or each file's reason.
pub(crate) fn nothing_read(files: usize, skipped: &[Skipped]) -> String {
    if files == 0 {
        return "it holds no `.json` file".into();
    }
    let shown: Vec<String> = skipped
        .iter()
        .take(3)
        .map(|s| format!("{}: {}", s.file, s.reason))
        .collect();
    format!(
        "none of its {files} `.json` file(s) is a readable result ({}{})",
        shown.join("; "),
        if skipped.len() > 3 { "; …" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_formats_say_what_they_are() {
        let e = classify(r#"{"format": "servebench-compare/2", "comparisons": []}"#)
            .expect_err("not a run");
        assert!(e.contains("servebench-compare/2"), "{e}");
        let e = classify(r#"{"run_id": "x", "schema_version": 1, "sta"#).expect_err("cut");
        assert!(e.starts_with("truncated"), "{e}");
        let e = classify("[1, 2]").expect_err("not a result");
        assert!(e.contains("no `run_id`"), "{e}");
        let e = classify("{,}").expect_err("bad JSON");
        assert!(e.starts_with("not valid JSON"), "{e}");
    }
}
