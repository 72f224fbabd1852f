//! Metrics against the sweep, per arm: each trial as a faint dot, the mean across trials
//! with its 95% interval bar, a line through the means, and a red ring with a footnote
//! marker where a flag concerns that point and metric. Arms at the same x are dodged a few
//! pixels apart so that their bars do not hide each other.

use plotters::style::text_anchor::HPos;
use plotters::style::{Color, RGBColor};

use crate::error::ReportError;
use crate::model::Report;

use super::axis::{Axis, Panel, Ticks};
use super::canvas::{Canvas, Key, arm_color};

/// One metric drawn for every arm.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Catalogue name (`ttft_p99`).
    pub metric: String,
    /// Legend suffix (`p99`), empty for a single series.
    pub suffix: String,
    /// Dashed line and hollow markers.
    pub dashed: bool,
}

impl Series {
    /// A solid series.
    pub fn solid(metric: &str, suffix: &str) -> Self {
        Series {
            metric: metric.to_owned(),
            suffix: suffix.to_owned(),
            dashed: false,
        }
    }

    /// A dashed series.
    pub fn dashed(metric: &str, suffix: &str) -> Self {
        Series {
            dashed: true,
            ..Series::solid(metric, suffix)
        }
    }
}

/// Every value the plot shows (means, interval ends, trials), to fit the y axis.
pub fn values(report: &Report, series: &[Series]) -> Vec<f64> {
    let mut out = Vec::new();
    for arm in &report.arms {
        for p in report.points(arm) {
            for s in series {
                if let Some(c) = report.cell(arm, p.index, &s.metric) {
                    out.push(c.mean);
                    if let Some((lo, hi)) = c.ci {
                        out.extend([lo, hi]);
                    }
                }
                out.extend(report.trial_values(arm, p.index, &s.metric));
            }
        }
    }
    out
}

/// The legend: one key per arm and series, the trial dot, and the flag ring when any point
/// of these series is flagged.
pub fn legend(report: &Report, series: &[Series]) -> Vec<Key> {
    let mut keys = Vec::new();
    for (i, arm) in report.arms.iter().enumerate() {
        for s in series {
            let label = if s.suffix.is_empty() {
                arm.label.clone()
            } else {
                format!("{} {}", arm.label, s.suffix)
            };
            keys.push(Key::Series {
                label,
                color: arm_color(i),
                dashed: s.dashed,
            });
        }
    }
    keys.push(Key::Trial("one trial".into()));
    if any_flag(report, series) {
        keys.push(Key::Flag("flagged [n]: see Flags".into()));
    }
    keys
}

fn any_flag(report: &Report, series: &[Series]) -> bool {
    report.arms.iter().enumerate().any(|(i, arm)| {
        report.points(arm).iter().any(|p| {
            series
                .iter()
                .any(|s| !report.marks.at(i, &s.metric, &p.label).is_empty())
        })
    })
}

/// Draw every arm's series on `panel`.
pub fn draw(
    canvas: &Canvas<'_>,
    panel: &Panel<'_, '_>,
    report: &Report,
    series: &[Series],
) -> Result<(), ReportError> {
    let lanes = (report.arms.len() * series.len()).max(1);
    let spread = if lanes > 1 { 8.0 } else { 0.0 };
    let mut flags = Vec::new();
    let mut means = Vec::new();
    for (i, arm) in report.arms.iter().enumerate() {
        let color = arm_color(i);
        for (k, s) in series.iter().enumerate() {
            let lane = i * series.len() + k;
            let dx = ((lane as f64 - (lanes as f64 - 1.0) / 2.0) * spread).round() as i32;
            let mut line = Vec::new();
            let mut marks = Vec::new();
            for p in report.points(arm) {
                for v in report.trial_values(arm, p.index, &s.metric) {
                    let (x, y) = panel.px(p.x, v);
                    canvas.circle((x + dx, y), 3, color.mix(0.35), true, 1)?;
                }
                let Some(cell) = report.cell(arm, p.index, &s.metric) else {
                    continue;
                };
                let (x, y) = panel.px(p.x, cell.mean);
                if let Some((lo, hi)) = cell.ci {
                    let (_, ylo) = panel.px(p.x, lo);
                    let (_, yhi) = panel.px(p.x, hi);
                    canvas.error_bar(x + dx, ylo, yhi, color)?;
                }
                line.push((x + dx, y));
                marks.push((x + dx, y));
                let numbers = report.marks.at(i, &s.metric, &p.label);
                if !numbers.is_empty() {
                    flags.push(((x + dx, y), numbers.to_vec()));
                }
            }
            if s.dashed {
                canvas.dashed(&line, color.to_rgba(), 2)?;
            } else {
                canvas.line(&line, color.to_rgba(), 2)?;
            }
            for m in marks {
                canvas.marker(m, color, s.dashed)?;
                means.push(m);
            }
        }
    }
    // Rings last, so that nothing covers them.
    canvas.flags(&flags, &means)
}

/// A whole sweep figure: title, legend above the frame, the frame, the series.
pub fn figure(
    canvas: &Canvas<'_>,
    file: &str,
    size: (u32, u32),
    title: &str,
    y: Axis,
    report: &Report,
    series: &[Series],
) -> Result<(), ReportError> {
    let (w, h) = (size.0 as i32, size.1 as i32);
    canvas.text(
        (w / 2, 20),
        title,
        19,
        RGBColor(0x11, 0x11, 0x11),
        HPos::Center,
        true,
    )?;
    let keys = legend(report, series);
    let legend_h = canvas.legend(&keys, (100, 38), w - 130, false)?;
    canvas.legend(&keys, (100, 38), w - 130, true)?;
    let top = 38 + legend_h + 4;
    let area = canvas.root.margin(top, 0, 0, 0);
    let _ = h;
    let panel = Panel::new(file, &area, None, Axis::sweep(&report.axis), y)?;
    draw(canvas, &panel, report, series)
}

/// The y axis of a sweep figure over `series`.
pub fn y_axis(report: &Report, series: &[Series], desc: &str, allow_log: bool) -> Axis {
    Axis::fit(
        desc,
        &values(report, series),
        allow_log,
        !allow_log,
        Ticks::Number,
    )
}
