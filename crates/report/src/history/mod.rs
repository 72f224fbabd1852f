//! The report of `servebench history -o DIR`: `report.md`, one self-contained
//! `report.html` and a trend SVG per spec, metric and sweep point ([`trend`]), from the
//! [`servebench_history::History`] — the same document model ([`crate::doc`]), Markdown and
//! HTML writers and drawing layer ([`crate::plots::canvas`], [`crate::plots::axis`]) as the
//! comparison report.

pub mod content;
pub mod trend;

use std::path::{Path, PathBuf};

use servebench_history::History;

use crate::error::ReportError;
use crate::{html, markdown};

/// Every file of the history report as (file name, contents): the trend SVGs, `report.md`
/// and `report.html`.
pub fn files(history: &History) -> Result<Vec<(String, String)>, ReportError> {
    let mut svgs = Vec::new();
    for spec in &history.specs {
        for t in trend::trends(spec) {
            svgs.push((t.file_name(), trend::render(spec, &t)?));
        }
    }
    let doc = content::document(history);
    let mut out = svgs.clone();
    out.push(("report.md".into(), markdown::render(&doc)));
    out.push(("report.html".into(), html::render(&doc, &svgs)));
    Ok(out)
}

/// Write every file into `dir` (created if needed); returns the paths written.
pub fn write(history: &History, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    std::fs::create_dir_all(dir).map_err(|error| ReportError::Write {
        path: dir.to_owned(),
        error,
    })?;
    let mut written = Vec::new();
    for (name, text) in files(history)? {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|error| ReportError::Write {
            path: path.clone(),
            error,
        })?;
        written.push(path);
    }
    Ok(written)
}
