//! `ratio-<candidate>.svg`: per compared metric, the candidate against the baseline across
//! the sweep — the ratio of geometric means (or the difference of means, for metrics that
//! can be 0) with its 95% interval from `servebench compare`, the practical-threshold band
//! ±θ around "no change", points coloured by verdict, and flagged points ringed.

use plotters::style::text_anchor::HPos;
use plotters::style::{Color, RGBColor};
use servebench_stats::Direction;
use servebench_stats::verdict::Scale;

use crate::Exporter;
use crate::error::ReportError;
use crate::findings::numbers_at;
use crate::model::{Report, Role};
use servebench_compare::{Comparison, MetricReport, VerdictKind};

use super::axis::{Axis, Panel, Ticks};
use super::canvas::{BAND, Canvas, Key, svg};

/// One comparison's ratio figure.
#[derive(Debug, Clone)]
pub struct Ratio {
    /// Index into the comparisons.
    pub comparison: usize,
    /// The candidate variant (names the file).
    pub candidate: String,
}

/// Colour of an improved point.
pub const IMPROVED: RGBColor = RGBColor(0x00, 0x9E, 0x73);
/// Colour of a regressed point.
pub const REGRESSED: RGBColor = RGBColor(0xCC, 0x79, 0xA7);
/// Colour of any other verdict.
pub const NEUTRAL: RGBColor = RGBColor(0x55, 0x55, 0x55);

fn color(v: VerdictKind) -> RGBColor {
    match v {
        VerdictKind::Improved => IMPROVED,
        VerdictKind::Regressed => REGRESSED,
        _ => NEUTRAL,
    }
}

/// The file name for a candidate: `ratio-<name>.svg` with anything but letters, digits,
/// `-` and `_` replaced.
pub fn file_for(candidate: &str) -> String {
    let safe: String = candidate
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("ratio-{safe}.svg")
}

/// (x, point report) of each sweep point of `m` that lies on the report's axis.
fn placed<'m>(
    report: &Report,
    m: &'m MetricReport,
) -> Vec<(f64, &'m servebench_compare::PointReport)> {
    let Some(base) = report.arms.iter().find(|a| a.role == Role::Baseline) else {
        return Vec::new();
    };
    let points = report.points(base);
    m.points
        .iter()
        .filter_map(|p| {
            let x = points
                .iter()
                .find(|a| a.label == p.point_label || a.short == p.label)?
                .x;
            Some((x, p))
        })
        .collect()
}

fn margin(m: &MetricReport, p: &servebench_compare::PointReport) -> f64 {
    p.margin.unwrap_or(match m.scale {
        Scale::Log => m.threshold.ln_1p(),
        Scale::Arithmetic => 0.0,
    })
}

fn band(m: &MetricReport, p: &servebench_compare::PointReport) -> (f64, f64) {
    let g = margin(m, p);
    match m.scale {
        Scale::Log => ((-g).exp(), g.exp()),
        Scale::Arithmetic => (-g, g),
    }
}

fn panel(
    canvas: &Canvas<'_>,
    report: &Report,
    ci: usize,
    m: &MetricReport,
    area: &super::canvas::Root<'_>,
) -> Result<(), ReportError> {
    let file = file_for(&report_candidate(report, ci));
    let pts = placed(report, m);
    let none = match m.scale {
        Scale::Log => 1.0,
        Scale::Arithmetic => 0.0,
    };
    let mut ys = vec![none];
    for (_, p) in &pts {
        let (lo, hi) = band(m, p);
        ys.extend([lo, hi]);
        if let Some(e) = &p.effect {
            ys.extend([e.point, e.ci.lower, e.ci.upper]);
        }
    }
    let better = match (m.direction, m.scale) {
        (Direction::HigherIsBetter, _) => "up is better",
        (Direction::LowerIsBetter, _) => "down is better",
    };
    let y = match m.scale {
        Scale::Log => Axis::fit(
            "change vs baseline (ratio − 1, %)",
            &ys,
            false,
            false,
            Ticks::Change,
        ),
        Scale::Arithmetic => Axis::fit(
            &format!("candidate − baseline ({})", m.unit),
            &ys,
            false,
            false,
            Ticks::Number,
        ),
    };
    let caption = format!("{} ({}; {better})", m.metric, m.unit);
    let frame = Panel::new(&file, area, Some(&caption), Axis::sweep(&report.axis), y)?;
    let (left, _, right, _) = frame.bounds();
    // The ±θ band: one rectangle when θ is the same everywhere, else one per point.
    let same = pts
        .windows(2)
        .all(|w| (margin(m, w[0].1) - margin(m, w[1].1)).abs() < 1e-12);
    if let (true, Some((_, p))) = (same, pts.first()) {
        let (lo, hi) = band(m, p);
        let (_, ylo) = frame.px(0.0_f64.max(frame.x.lo), lo);
        let (_, yhi) = frame.px(0.0_f64.max(frame.x.lo), hi);
        canvas.rect((left + 1, yhi), (right - 1, ylo), BAND.mix(0.6))?;
    } else {
        for (x, p) in &pts {
            let (lo, hi) = band(m, p);
            let (px, ylo) = frame.px(*x, lo);
            let (_, yhi) = frame.px(*x, hi);
            canvas.rect((px - 14, yhi), (px + 14, ylo), BAND.mix(0.6))?;
        }
    }
    let (_, y0) = frame.px(frame.x.lo, none);
    canvas.line(
        &[(left, y0), (right, y0)],
        RGBColor(0x44, 0x44, 0x44).to_rgba(),
        1,
    )?;
    let mut line = Vec::new();
    let mut markers = Vec::new();
    let mut flagged = Vec::new();
    for (x, p) in &pts {
        let Some(e) = &p.effect else { continue };
        let c = color(p.verdict);
        let (px, py) = frame.px(*x, e.point);
        let (_, lo) = frame.px(*x, e.ci.lower);
        let (_, hi) = frame.px(*x, e.ci.upper);
        canvas.error_bar(px, lo, hi, c)?;
        line.push((px, py));
        markers.push(((px, py), c));
        let numbers = numbers_at(report, ci, &m.metric, &p.label);
        if !numbers.is_empty() {
            flagged.push(((px, py), numbers));
        }
    }
    canvas.line(&line, NEUTRAL.mix(0.5), 1)?;
    for (at, c) in &markers {
        canvas.marker(*at, *c, false)?;
    }
    let means: Vec<(i32, i32)> = markers.iter().map(|(at, _)| *at).collect();
    canvas.flags(&flagged, &means)
}

fn report_candidate(report: &Report, ci: usize) -> String {
    comparison(report, ci)
        .map(|c| c.candidate.variant.clone())
        .unwrap_or_default()
}

fn comparison(report: &Report, ci: usize) -> Option<&Comparison> {
    report.compare.as_ref()?.comparisons.get(ci)
}

impl Exporter for Ratio {
    fn file_name(&self) -> String {
        file_for(&self.candidate)
    }

    fn export(&self, report: &Report) -> Result<String, ReportError> {
        let file = self.file_name();
        let Some(c) = comparison(report, self.comparison) else {
            return Err(ReportError::plot(&file, "no such comparison"));
        };
        let n = c.metrics.len().max(1);
        let cols = if n == 1 { 1 } else { 2 };
        let rows = n.div_ceil(cols);
        let size = (1100, 110 + 400 * rows as u32);
        svg(&file, size, |canvas| {
            let w = size.0 as i32;
            let title = format!(
                "{} vs {}: change with 95% CI, ±θ band",
                c.candidate.variant, c.baseline.variant
            );
            canvas.text(
                (w / 2, 20),
                &title,
                19,
                RGBColor(0x11, 0x11, 0x11),
                HPos::Center,
                true,
            )?;
            let mut keys = vec![
                Key::Series {
                    label: "improved".into(),
                    color: IMPROVED,
                    dashed: false,
                },
                Key::Series {
                    label: "regressed".into(),
                    color: REGRESSED,
                    dashed: false,
                },
                Key::Series {
                    label: "other verdict".into(),
                    color: NEUTRAL,
                    dashed: false,
                },
                Key::Band("±θ: practically no change".into()),
            ];
            if report.flags.iter().any(|g| g.comparison == self.comparison) {
                keys.push(Key::Flag("flagged [n]: see Flags".into()));
            }
            let legend_h = canvas.legend(&keys, (100, 38), w - 130, false)?;
            canvas.legend(&keys, (100, 38), w - 130, true)?;
            let area = canvas.root.margin(38 + legend_h + 4, 0, 0, 0);
            let cells = area.split_evenly((rows, cols));
            for (m, cell) in c.metrics.iter().zip(cells.iter()) {
                panel(canvas, report, self.comparison, m, cell)?;
            }
            Ok(())
        })
    }
}
