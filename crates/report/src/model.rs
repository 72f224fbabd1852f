//! What a report shows, independent of how it is drawn: the result files, the *arms* (one
//! series per plotted variant), the sweep axis, the CDF point, and the flag marks.
//!
//! Per-cell statistics are not computed here: [`servebench_result::table::cell`] and
//! [`servebench_result::table::trial_values`] give the mean, its 95% interval and the per-trial
//! values, so the report and the end-of-run table always agree.

use std::collections::BTreeMap;

use servebench_stats::flags::{Flag, FlagId, FlagLevel};

use servebench_compare::{CompareReport, LoadedResult};
use servebench_result::table::{self, CellStat};
use servebench_result::{PointInfo, RunResult, TrialStatus};

use super::error::ReportError;

/// What an arm is in the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The reference every candidate is compared with.
    Baseline,
    /// Compared with the baseline.
    Candidate,
}

/// One plotted series: a variant of one result file.
#[derive(Debug, Clone, PartialEq)]
pub struct Arm {
    /// Legend text.
    pub label: String,
    /// Index into [`Report::sources`].
    pub source: usize,
    /// Variant name in that file.
    pub variant: String,
    /// Baseline or candidate.
    pub role: Role,
}

/// How the sweep points are laid out along x.
#[derive(Debug, Clone, PartialEq)]
pub enum SweepAxis {
    /// Only the concurrency limit varies: x is the concurrency (log-scaled when it spans
    /// more than a decade).
    Concurrency {
        /// The distinct concurrency values, ascending.
        values: Vec<f64>,
        /// Log scale.
        log: bool,
    },
    /// Anything else: one slot per distinct point, in sweep order, labelled.
    Category {
        /// Short labels, in order.
        labels: Vec<String>,
    },
}

/// A sweep point of one arm, placed on the axis.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmPoint {
    /// Index of the point in the arm's result file.
    pub index: usize,
    /// Position along x.
    pub x: f64,
    /// Short label (the sweep keys that vary: `c=16`).
    pub short: String,
    /// Full label as recorded.
    pub label: String,
}

/// A flagged (arm, metric, sweep point): the footnote numbers of the flags that concern it.
/// Filled from the comparison; empty without one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlagMarks {
    marks: BTreeMap<(usize, String, String), Vec<usize>>,
}

impl FlagMarks {
    /// Mark `arm`'s point `label` (full label) for `metric` with footnote `number`.
    pub fn add(&mut self, arm: usize, metric: &str, label: &str, number: usize) {
        let v = self
            .marks
            .entry((arm, metric.to_owned(), label.to_owned()))
            .or_default();
        if !v.contains(&number) {
            v.push(number);
        }
    }

    /// The footnote numbers at `arm`'s point `label` for `metric` (empty: not flagged).
    pub fn at(&self, arm: usize, metric: &str, label: &str) -> &[usize] {
        self.marks
            .get(&(arm, metric.to_owned(), label.to_owned()))
            .map_or(&[], Vec::as_slice)
    }

    /// Whether nothing is marked.
    pub fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }
}

/// Flags of one rule for one metric of one comparison, under one footnote number (grouped
/// by [`super::findings::groups`]).
#[derive(Debug, Clone, PartialEq)]
pub struct FlagGroup {
    /// Footnote number, from 1.
    pub number: usize,
    /// Index into the report's comparisons.
    pub comparison: usize,
    /// The metric, or `None` for a flag about the whole comparison (multiplicity).
    pub metric: Option<String>,
    /// The rule.
    pub id: FlagId,
    /// Re-baseline or look.
    pub level: FlagLevel,
    /// The flags, each with its own evidence and action.
    pub flags: Vec<Flag>,
    /// Short labels of the sweep points concerned, with the arm when the evidence names
    /// one.
    pub points: Vec<(String, Option<Role>)>,
    /// For a flag about the whole comparison: the (metric, point) rows its evidence names
    /// (`multiplicity`: "no longer significant: ttft_p50 c=4 (p = …)").
    pub rows: Vec<(String, String)>,
}

/// Everything the exporters read.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// One result file, or two (baseline, candidate).
    pub sources: Vec<LoadedResult>,
    /// The plotted series; the first is the baseline.
    pub arms: Vec<Arm>,
    /// The x axis of every sweep plot.
    pub axis: SweepAxis,
    /// Short label of the point whose latency CDFs are drawn.
    pub cdf_point: String,
    /// What `servebench compare` found, when a comparison could be made.
    pub compare: Option<CompareReport>,
    /// Why there is no comparison, when there is none.
    pub no_compare: Option<String>,
    /// The comparison's flags, grouped and numbered for footnotes.
    pub flags: Vec<FlagGroup>,
    /// Flagged points, for rings and footnote markers.
    pub marks: FlagMarks,
    /// Which sweep keys vary (concurrency, rate, input, output): they make the short labels.
    vary: [bool; 4],
}

/// Sweep keys: which of them vary across `points`.
fn varying(points: &[&PointInfo]) -> [bool; 4] {
    let differs = |f: &dyn Fn(&PointInfo) -> String| points.windows(2).any(|w| f(w[0]) != f(w[1]));
    [
        differs(&|p| format!("{:?}", p.max_concurrency)),
        differs(&|p| format!("{:?}", p.request_rate)),
        differs(&|p| format!("{:?}", p.input_tokens)),
        differs(&|p| format!("{:?}", p.output_tokens)),
    ]
}

fn short_label(p: &PointInfo, vary: [bool; 4]) -> String {
    let mut parts = Vec::new();
    if vary[0] || !vary.iter().any(|v| *v) {
        parts.push(match p.max_concurrency {
            Some(c) => format!("c={c}"),
            None => "c=∞".to_owned(),
        });
    }
    if vary[1] {
        parts.push(match p.request_rate {
            Some(r) => format!("rate={r}"),
            None => "rate=inf".to_owned(),
        });
    }
    if vary[2] {
        parts.push(format!("in={}", p.input_tokens.unwrap_or(0)));
    }
    if vary[3] {
        parts.push(format!("out={}", p.output_tokens.unwrap_or(0)));
    }
    parts.join(" ")
}

impl Report {
    /// Lay out the arms of `sources` along one sweep axis and pick the CDF point
    /// (`cdf_point`: a concurrency `32`, a short label `c=32` or a full label; default the
    /// highest concurrency).
    pub fn new(
        sources: Vec<LoadedResult>,
        arms: Vec<Arm>,
        cdf_point: Option<&str>,
    ) -> Result<Report, ReportError> {
        let Some(first) = sources.first() else {
            return Err(ReportError::NoTrials {
                file: "(no result file)".into(),
            });
        };
        if let Some(bad) = arms.iter().find(|a| a.source >= sources.len()) {
            return Err(ReportError::UnknownVariant {
                name: bad.variant.clone(),
                file: first.file.clone(),
                available: String::new(),
            });
        }
        let all: Vec<&PointInfo> = arms
            .iter()
            .filter_map(|a| sources.get(a.source))
            .flat_map(|s| s.result.points.iter())
            .collect();
        let vary = varying(&all);
        let only_concurrency = vary[0] && !vary[1..].iter().any(|v| *v);
        let axis = if only_concurrency && all.iter().all(|p| p.max_concurrency.is_some()) {
            let mut values: Vec<f64> = all
                .iter()
                .filter_map(|p| p.max_concurrency.map(f64::from))
                .collect();
            values.sort_by(f64::total_cmp);
            values.dedup();
            let log = values
                .first()
                .zip(values.last())
                .is_some_and(|(lo, hi)| *lo > 0.0 && hi / lo > 10.0);
            SweepAxis::Concurrency { values, log }
        } else {
            let mut labels: Vec<String> = Vec::new();
            for p in &all {
                let s = short_label(p, vary);
                if !labels.contains(&s) {
                    labels.push(s);
                }
            }
            SweepAxis::Category { labels }
        };
        let mut report = Report {
            sources,
            arms,
            axis,
            cdf_point: String::new(),
            compare: None,
            no_compare: None,
            flags: Vec::new(),
            marks: FlagMarks::default(),
            vary,
        };
        report.cdf_point = report.pick_cdf_point(cdf_point)?;
        Ok(report)
    }

    fn pick_cdf_point(&self, asked: Option<&str>) -> Result<String, ReportError> {
        let vary = self.vary;
        let points: Vec<&PointInfo> = self
            .arms
            .iter()
            .filter_map(|a| self.sources.get(a.source))
            .flat_map(|s| s.result.points.iter())
            .collect();
        let Some(asked) = asked else {
            // The highest concurrency (unlimited counts as highest); the last in plan order
            // among equals.
            let key = |p: &PointInfo| p.max_concurrency.map_or(u64::MAX, u64::from);
            let best = points
                .iter()
                .enumerate()
                .max_by_key(|(i, p)| (key(p), *i))
                .map(|(_, p)| short_label(p, vary));
            return Ok(best.unwrap_or_default());
        };
        let wanted = asked.trim();
        let found = points.iter().find(|p| {
            let short = short_label(p, vary);
            short == wanted
                || p.label == wanted
                || wanted
                    .parse::<u32>()
                    .is_ok_and(|c| p.max_concurrency == Some(c))
        });
        match found {
            Some(p) => Ok(short_label(p, vary)),
            None => {
                let mut available: Vec<String> = Vec::new();
                for p in &points {
                    let s = short_label(p, vary);
                    if !available.contains(&s) {
                        available.push(s);
                    }
                }
                Err(ReportError::UnknownPoint {
                    asked: asked.to_owned(),
                    available: available.join(", "),
                })
            }
        }
    }

    /// The result file an arm comes from.
    pub fn result(&self, arm: &Arm) -> &RunResult {
        &self
            .sources
            .get(arm.source)
            .or_else(|| self.sources.first())
            .expect("Report::new checks that sources is not empty and every arm's source exists")
            .result
    }

    /// An arm's sweep points with their x positions, in sweep order.
    pub fn points(&self, arm: &Arm) -> Vec<ArmPoint> {
        let vary = self.vary;
        self.result(arm)
            .points
            .iter()
            .filter_map(|p| {
                let short = short_label(p, vary);
                let x = match &self.axis {
                    SweepAxis::Concurrency { .. } => f64::from(p.max_concurrency?),
                    SweepAxis::Category { labels } => {
                        labels.iter().position(|l| *l == short)? as f64
                    }
                };
                Some(ArmPoint {
                    index: p.index,
                    x,
                    short,
                    label: p.label.clone(),
                })
            })
            .collect()
    }

    /// Mean and 95% interval of `metric` across an arm's trials at one point.
    pub fn cell(&self, arm: &Arm, point: usize, metric: &str) -> Option<CellStat> {
        table::cell(self.result(arm), &arm.variant, point, metric)
    }

    /// Per-trial values of `metric` (ok trials, run order).
    pub fn trial_values(&self, arm: &Arm, point: usize, metric: &str) -> Vec<f64> {
        table::trial_values(self.result(arm), &arm.variant, point, metric)
    }

    /// Trials of an arm at a point: (ok, failed).
    pub fn trial_counts(&self, arm: &Arm, point: usize) -> (usize, usize) {
        let trials = self
            .result(arm)
            .trials
            .iter()
            .filter(|t| t.variant == arm.variant && t.point == point);
        trials.fold((0, 0), |(ok, failed), t| match t.status {
            TrialStatus::Ok => (ok + 1, failed),
            TrialStatus::Failed => (ok, failed + 1),
        })
    }

    /// The arm's point at the CDF sweep point, if it has one.
    pub fn cdf_point_of(&self, arm: &Arm) -> Option<ArmPoint> {
        self.points(arm)
            .into_iter()
            .find(|p| p.short == self.cdf_point)
    }
}

/// The arms of one run: its baseline variant first, then the others in spec order.
pub fn arms_within(source: usize, result: &RunResult) -> Vec<Arm> {
    let variants = &result.spec.spec.variants;
    let mut arms: Vec<Arm> = variants
        .iter()
        .map(|v| Arm {
            label: if v.baseline {
                format!("{} (baseline)", v.name)
            } else {
                v.name.clone()
            },
            source,
            variant: v.name.clone(),
            role: if v.baseline {
                Role::Baseline
            } else {
                Role::Candidate
            },
        })
        .collect();
    arms.sort_by_key(|a| a.role != Role::Baseline);
    arms
}
