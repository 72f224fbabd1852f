//! The correction for many tests of one comparison: Holm's step-down over every metric ×
//! point (the default), or none, and the multiple-testing flag that says what it changed.

use servebench_spec::types::Multiplicity;
use servebench_stats::flags::rules::{multiplicity, multiplicity_applied};
use servebench_stats::flags::{Flag, NamedP};
use servebench_stats::holm::{holm_adjust, holm_levels};
use servebench_stats::verdict::Verdict;

use crate::MetricReport;
use crate::analyze::{CellLevels, MetricSpec, PointInput, cell_tests};

/// The correction for many tests. With Holm's (the default) every cell's test is read at its
/// Holm level, so the verdicts shown are the corrected ones (docs/compare.md). A sequential
/// run's cells are read on their repeated intervals at their own looks: the design keeps each
/// cell's error rates at α, and no correction is applied on top.
pub(crate) struct Holm {
    /// Every cell's own test.
    pub(crate) own: Vec<NamedP>,
    /// Whether the verdicts are read at Holm levels.
    pub(crate) corrected: bool,
    /// Each cell's Holm level, when corrected.
    pub(crate) levels: Option<CellLevels>,
    /// Each cell's Holm-adjusted p, when corrected.
    pub(crate) adjusted: Option<CellLevels>,
}

impl Holm {
    pub(crate) fn of(
        inputs: &[(&MetricSpec, Vec<PointInput>)],
        alpha: f64,
        correction: Multiplicity,
        sequential: bool,
        notes: &mut Vec<String>,
    ) -> Holm {
        let own: Vec<NamedP> = inputs
            .iter()
            .flat_map(|(spec, inputs)| cell_tests(spec, inputs, alpha))
            .collect();
        let corrected = correction == Multiplicity::Holm && !sequential && own.len() >= 2;
        let (levels, adjusted) = if corrected {
            let ps: Vec<f64> = own.iter().map(|t| t.p).collect();
            let keyed = |v: Vec<f64>| -> CellLevels {
                own.iter()
                    .zip(v)
                    .map(|(t, x)| ((t.metric.clone(), t.point.clone()), x))
                    .collect()
            };
            match (holm_levels(&ps, alpha), holm_adjust(&ps)) {
                (Ok(l), Ok(a)) => (Some(keyed(l)), Some(keyed(a))),
                _ => (None, None),
            }
        } else {
            (None, None)
        };
        if corrected && levels.is_some() {
            notes.push(format!(
                "verdicts corrected for {} tests (Holm's step-down over every metric × point, \
                 compare.multiplicity: holm): a cell is significant when its Holm-adjusted p, \
                 the table's p, is below α = {alpha}",
                own.len()
            ));
        }
        if sequential && correction == Multiplicity::Holm && own.len() >= 2 {
            notes.push(
                "no correction for many tests: each cell of a sequential run is read on its \
                 own repeated interval, whose design keeps that cell's error rates at α"
                    .into(),
            );
        }
        Holm {
            own,
            corrected,
            levels,
            adjusted,
        }
    }

    /// The multiple-testing flag: which verdicts the correction changed, or (uncorrected,
    /// fixed-size) how many significant cells chance alone would give.
    pub(crate) fn flag(
        &self,
        reports: &[MetricReport],
        all_p: &[NamedP],
        sequential: bool,
        alpha: f64,
    ) -> Option<Flag> {
        if self.corrected {
            let shown: Vec<Verdict> = self
                .own
                .iter()
                .map(|t| {
                    reports
                        .iter()
                        .find(|m| m.metric == t.metric)
                        .and_then(|m| m.points.iter().find(|p| p.label == t.point))
                        .and_then(|p| p.verdict.verdict())
                        .unwrap_or(t.verdict)
                })
                .collect();
            multiplicity_applied(&self.own, &shown, alpha)
                .ok()
                .flatten()
        } else if !sequential {
            multiplicity(all_p, alpha).ok().flatten()
        } else {
            None
        }
    }
}
