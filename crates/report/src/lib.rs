//! servebench-report: `servebench report` — a result file (or a baseline and a candidate
//! file) as a folder a reader can open: `report.md`, one self-contained `report.html`, SVG
//! plots and `trials.csv`.
//!
//! The only crate with plotters. It depends on servebench-compare (the verdicts and flags it
//! shows), servebench-result, -spec and -stats; it must not depend on servebench-runner, nor
//! on tokio, reqwest or tokenizers. Entry points: [`within`] / [`across`] build a [`Report`],
//! [`write()`] writes its files.
//!
//! * [`model`] says what is shown: arms (one series per variant), the sweep axis, the CDF
//!   point and the flagged points. Cell statistics come from [`servebench_result::table`], so the
//!   report and the end-of-run table agree.
//! * [`content`] builds the document ([`doc`]) once; [`markdown`] and [`html`] write it.
//! * [`plots`] draws the SVGs with plotters; [`csv`] writes one row per trial.
//! * [`history`] is the report of `servebench history`: its own document, a trend SVG per
//!   metric and point ([`history::trend`]), the same writers and drawing layer.
//! * [`capacity`] is the report of a capacity search (`spec.search`): its own document,
//!   `capacity.svg` and `capacity.csv`.
//!
//! Every file is one [`Exporter`]; [`exporters`] lists them and [`write()`]
//! writes them all.

pub mod capacity;
pub mod content;
pub mod csv;
pub mod describe;
pub mod doc;
mod equivalence;
mod error;
pub mod findings;
pub mod history;
pub mod html;
mod kernels;
pub mod markdown;
pub mod model;
pub mod plots;
pub mod summary;
pub mod text;
pub mod verdicts;

use std::path::{Path, PathBuf};

pub use error::ReportError;
pub use model::{Arm, FlagGroup, FlagMarks, Report, Role, SweepAxis};

use servebench_compare::{
    CompareError, CompareOptions, CompareReport, LoadedResult, compare_across, compare_within,
};

/// One output file of the report.
pub trait Exporter {
    /// Its name in the output folder.
    fn file_name(&self) -> String;
    /// Its contents.
    fn export(&self, report: &Report) -> Result<String, ReportError>;
}

/// Choices for the report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportOptions {
    /// The sweep point of the latency CDFs (`32`, `c=32` or a full label); default the
    /// highest concurrency.
    pub cdf_point: Option<String>,
    /// What to compare and how (variants, metrics, θ, α), as for `servebench compare`.
    pub compare: CompareOptions,
}

/// Arms of the comparisons: the baseline, then each candidate in comparison order.
fn arms_of(report: &CompareReport, sources: &[LoadedResult]) -> Vec<Arm> {
    let across = sources.len() > 1;
    let source_of = |run_id: &str| {
        sources
            .iter()
            .rposition(|s| s.result.run_id == run_id)
            .unwrap_or(0)
    };
    let mut arms: Vec<Arm> = Vec::new();
    for c in &report.comparisons {
        for (side, role) in [
            (&c.baseline, Role::Baseline),
            (&c.candidate, Role::Candidate),
        ] {
            let source = match (across, role) {
                (true, Role::Baseline) => 0,
                (true, Role::Candidate) => 1,
                (false, _) => source_of(&side.run_id),
            };
            if arms
                .iter()
                .any(|a| a.source == source && a.variant == side.variant)
            {
                continue;
            }
            let same_name = c.baseline.variant == c.candidate.variant;
            let label = match (role, across && same_name) {
                (Role::Baseline, true) => format!("{} (baseline run)", side.variant),
                (Role::Candidate, true) => format!("{} (candidate run)", side.variant),
                (Role::Baseline, false) => format!("{} (baseline)", side.variant),
                (Role::Candidate, false) => side.variant.clone(),
            };
            arms.push(Arm {
                label,
                source,
                variant: side.variant.clone(),
                role,
            });
        }
    }
    arms
}

fn finish(
    sources: Vec<LoadedResult>,
    compared: Result<CompareReport, CompareError>,
    opts: &ReportOptions,
) -> Result<Report, ReportError> {
    for s in &sources {
        if s.result.trials.is_empty() {
            return Err(ReportError::NoTrials {
                file: s.file.clone(),
            });
        }
    }
    let (compare, no_compare) = match compared {
        Ok(c) => (Some(c), None),
        // A run that cannot be compared (one variant, no baseline) is still reported.
        Err(e @ (CompareError::NothingToCompare { .. } | CompareError::NoBaseline { .. })) => {
            (None, Some(e.to_string()))
        }
        Err(e) => return Err(e.into()),
    };
    let arms = match &compare {
        Some(c) => arms_of(c, &sources),
        None => model::arms_within(0, &sources[0].result),
    };
    let mut report = Report::new(sources, arms, opts.cdf_point.as_deref())?;
    report.flags = compare.as_ref().map(findings::groups).unwrap_or_default();
    report.compare = compare;
    report.no_compare = no_compare;
    report.marks = findings::marks(&report);
    Ok(report)
}

/// The report of one run: every variant against its baseline (`servebench compare RESULT`).
pub fn within(source: LoadedResult, opts: &ReportOptions) -> Result<Report, ReportError> {
    let compared = compare_within(&source, &opts.compare);
    finish(vec![source], compared, opts)
}

/// The report of a baseline variant of one run against a variant of another
/// (`servebench compare BASELINE CANDIDATE`).
pub fn across(
    base: LoadedResult,
    cand: LoadedResult,
    opts: &ReportOptions,
) -> Result<Report, ReportError> {
    let compared = compare_across(&base, &cand, &opts.compare);
    finish(vec![base, cand], compared, opts)
}

/// Every file of the report: the plots, `trials.csv`, `report.md` and `report.html`.
pub fn exporters(report: &Report) -> Vec<Box<dyn Exporter>> {
    let mut out: Vec<Box<dyn Exporter>> =
        plots::all(report).into_iter().map(|f| f.exporter).collect();
    out.push(Box::new(csv::TrialsCsv));
    out.push(Box::new(markdown::Markdown));
    out.push(Box::new(html::Html));
    out
}

/// Write every file into `dir` (created if needed); returns the paths written.
pub fn write(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    std::fs::create_dir_all(dir).map_err(|source| ReportError::Write {
        path: dir.to_owned(),
        error: source,
    })?;
    let mut written = Vec::new();
    for e in exporters(report) {
        let path = dir.join(e.file_name());
        let text = e.export(report)?;
        std::fs::write(&path, text).map_err(|source| ReportError::Write {
            path: path.clone(),
            error: source,
        })?;
        written.push(path);
    }
    Ok(written)
}
