//! `divergence-<candidate>.svg`: where the probe's outputs first differ (`spec.equivalence`,
//! docs/equivalence.md) — one row for the candidate's starts against the baseline's first
//! start, one for the baseline's own other starts against its first, each differing output
//! a dot at its first differing position (tokens, or words of text), dots at one position
//! drawn as one whose area grows with the count, written beside it.

use std::collections::BTreeMap;

use plotters::style::text_anchor::HPos;
use plotters::style::{BLACK, Color};
use servebench_compare::equivalence::EquivalenceReport;

use crate::Exporter;
use crate::error::ReportError;
use crate::model::Report;

use super::axis::{Axis, Panel, Ticks};
use super::canvas::{arm_color, svg};

/// One comparison's first-divergence figure.
#[derive(Debug, Clone)]
pub struct FirstDivergence {
    /// Index into the comparisons.
    pub comparison: usize,
    /// The candidate variant (names the file).
    pub candidate: String,
}

const SIZE: (u32, u32) = (960, 360);

/// The file name for a candidate: `divergence-<name>.svg`, anything but letters, digits,
/// `-` and `_` replaced.
pub fn file_for(candidate: &str) -> String {
    super::ratio::file_for(candidate).replacen("ratio-", "divergence-", 1)
}

/// Whether a comparison's equivalence gets the figure: something was judged.
pub fn wanted(e: &EquivalenceReport) -> bool {
    e.prompts > 0
}

/// (position, how many outputs first differ there).
fn counts(positions: &[usize]) -> Vec<(usize, usize)> {
    let mut m: BTreeMap<usize, usize> = BTreeMap::new();
    for p in positions {
        *m.entry(*p).or_default() += 1;
    }
    m.into_iter().collect()
}

/// The rows of the figure: (label, positions), the baseline's own other starts first
/// (short labels: the y label area is 84 px wide).
fn rows(e: &EquivalenceReport) -> [(String, &[usize]); 2] {
    [
        ("baseline".to_owned(), &e.first_divergence_baseline),
        ("candidate".to_owned(), &e.first_divergence_candidate),
    ]
}

fn unit(e: &EquivalenceReport) -> &'static str {
    if e.compared_by == "text" {
        "words"
    } else {
        "tokens"
    }
}

impl Exporter for FirstDivergence {
    fn file_name(&self) -> String {
        file_for(&self.candidate)
    }

    fn export(&self, report: &Report) -> Result<String, ReportError> {
        let file = self.file_name();
        let e = report
            .compare
            .as_ref()
            .and_then(|c| c.comparisons.get(self.comparison))
            .and_then(|c| c.equivalence.as_ref())
            .ok_or_else(|| ReportError::plot(&file, "no equivalence in this comparison"))?;
        let rows = rows(e);
        let mut xs: Vec<f64> = vec![0.0];
        xs.extend(rows.iter().flat_map(|(_, p)| p.iter().map(|v| *v as f64)));
        let x = Axis::fit(
            &format!("first differing position ({})", unit(e)),
            &xs,
            false,
            true,
            Ticks::Number,
        );
        let labels: Vec<String> = rows.iter().map(|(l, _)| l.clone()).collect();
        let y = Axis {
            desc: String::new(),
            log: false,
            lo: -0.6,
            hi: 1.6,
            ticks: vec![0.0, 1.0],
            format: Ticks::Labels(labels),
        };
        svg(&file, SIZE, |c| {
            let caption = format!(
                "First divergence against the baseline's first start, c={} ({} prompts by {})",
                e.concurrency, e.prompts, e.compared_by
            );
            let frame = Panel::new(&file, &c.root, Some(&caption), x, y)?;
            for (row, (_, positions)) in rows.iter().enumerate() {
                let color = arm_color(row);
                let yv = row as f64;
                let list = counts(positions);
                if list.is_empty() {
                    let at = frame.px(frame.x.lo, yv);
                    c.text(
                        (at.0 + 12, at.1),
                        "no output differs",
                        14,
                        BLACK,
                        HPos::Left,
                        false,
                    )?;
                }
                for (pos, n) in list {
                    let at = frame.px(pos as f64, yv);
                    let r = (3.0 + 2.5 * (n as f64).sqrt()).round() as u32;
                    c.circle(at, r, color.mix(0.7), true, 1)?;
                    if n > 1 {
                        c.text(
                            (at.0, at.1 - r as i32 - 9),
                            &n.to_string(),
                            13,
                            BLACK,
                            HPos::Center,
                            false,
                        )?;
                    }
                }
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_counted_and_the_file_is_named_safely() {
        assert_eq!(counts(&[0, 0, 5, 7, 7, 7]), [(0, 2), (5, 1), (7, 3)]);
        assert_eq!(file_for("fast kernel"), "divergence-fast_kernel.svg");
    }
}
