//! `trend-<metric>-<point>.svg`: one metric at one sweep point across the runs of a spec,
//! oldest left. Per variant (the arm colours): each trial a faint dot, each run's mean with
//! its 95% interval bar; a change point a vertical line before its first run (solid:
//! confirmed, dashed: unconfirmed) with its shift; an outlier run a red ring; where a
//! fingerprint change starts a new series, a grey dashed line with the fields that changed.

use plotters::style::text_anchor::HPos;
use plotters::style::{Color, RGBColor};
use servebench_history::{Cell, SpecHistory};
use servebench_stats::changepoint::Status;

use crate::error::ReportError;
use crate::plots::axis::{Axis, Panel, Ticks};
use crate::plots::canvas::{Canvas, FLAG_RED, Key, arm_color, svg};
use crate::text::change;

const SIZE: (u32, u32) = (1000, 560);
const GREY: RGBColor = RGBColor(0x88, 0x88, 0x88);

/// One trend figure: a metric at a point of one spec.
#[derive(Debug, Clone, PartialEq)]
pub struct Trend {
    /// The spec's name.
    pub spec: String,
    /// Catalogue name.
    pub metric: String,
    /// The point's full label.
    pub point: String,
    /// Its short label.
    pub label: String,
}

impl Trend {
    /// Its file name: `trend-<spec>-output_throughput-c16.svg`.
    pub fn file_name(&self) -> String {
        let clean = |s: &str| -> String {
            s.chars()
                .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
                .collect()
        };
        format!(
            "trend-{}-{}-{}.svg",
            clean(&self.spec),
            self.metric,
            clean(&self.label.replace(' ', "-"))
        )
    }
}

/// The trends of a spec: one per metric and point, in the order of its cells.
pub fn trends(spec: &SpecHistory) -> Vec<Trend> {
    let mut out: Vec<Trend> = Vec::new();
    for c in spec.series.iter().flat_map(|s| &s.cells) {
        if !out
            .iter()
            .any(|t| t.metric == c.metric && t.point == c.point)
        {
            out.push(Trend {
                spec: spec.spec_name.clone(),
                metric: c.metric.clone(),
                point: c.point.clone(),
                label: c.label.clone(),
            });
        }
    }
    out
}

/// The cells of `trend` with the offset of their series' first run (runs count from 1
/// across the spec).
fn cells<'a>(spec: &'a SpecHistory, t: &Trend) -> Vec<(usize, &'a Cell)> {
    let mut out = Vec::new();
    let mut offset = 0;
    for s in &spec.series {
        for c in &s.cells {
            if c.metric == t.metric && c.point == t.point {
                out.push((offset, c));
            }
        }
        offset += s.runs.len();
    }
    out
}

fn variants(spec: &SpecHistory) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in spec.series.iter().flat_map(|s| &s.cells) {
        if !out.contains(&c.variant) {
            out.push(c.variant.clone());
        }
    }
    out
}

fn x_axis(runs: usize) -> Axis {
    let step = runs.div_ceil(16).max(1);
    Axis {
        desc: "run, oldest first".into(),
        log: false,
        lo: 0.4,
        hi: runs as f64 + 0.6,
        ticks: (1..=runs).step_by(step).map(|r| r as f64).collect(),
        format: Ticks::Number,
    }
}

fn y_axis(cells: &[(usize, &Cell)]) -> Axis {
    let mut values = Vec::new();
    for (_, c) in cells {
        for r in &c.runs {
            values.extend(r.values.iter().copied());
            values.push(r.mean);
            if let Some(ci) = r.ci {
                values.extend([ci.lower, ci.upper]);
            }
        }
    }
    let unit = cells.first().map(|(_, c)| c.unit.as_str()).unwrap_or("");
    let metric = cells.first().map(|(_, c)| c.metric.as_str()).unwrap_or("");
    Axis::fit(
        &format!("{metric} ({unit})"),
        &values,
        false,
        false,
        Ticks::Number,
    )
}

fn draw(canvas: &Canvas<'_>, file: &str, spec: &SpecHistory, t: &Trend) -> Result<(), ReportError> {
    let cells = cells(spec, t);
    let runs: usize = spec.series.iter().map(|s| s.runs.len()).sum();
    let names = variants(spec);
    let (w, _) = (SIZE.0 as i32, SIZE.1 as i32);
    canvas.text(
        (w / 2, 20),
        &format!(
            "{} at {} across runs (mean of trials, 95% CI)",
            t.metric, t.label
        ),
        19,
        RGBColor(0x11, 0x11, 0x11),
        HPos::Center,
        true,
    )?;
    let mut keys: Vec<Key> = names
        .iter()
        .enumerate()
        .map(|(i, v)| Key::Series {
            label: v.clone(),
            color: arm_color(i),
            dashed: false,
        })
        .collect();
    keys.push(Key::Trial("one trial".into()));
    if cells.iter().any(|(_, c)| !c.outliers.is_empty()) {
        keys.push(Key::Flag("outlier run".into()));
    }
    let legend_h = canvas.legend(&keys, (100, 38), w - 130, false)?;
    canvas.legend(&keys, (100, 38), w - 130, true)?;
    let area = canvas.root.margin(38 + legend_h + 4, 0, 0, 0);
    let panel = Panel::new(file, &area, None, x_axis(runs), y_axis(&cells))?;
    let (_, top, _, bottom) = panel.bounds();
    // Series boundaries first, under everything.
    let mut offset = 0;
    for s in &spec.series {
        if let Some(b) = &s.starts {
            let (x, _) = panel.px(offset as f64 + 0.5, panel.y.lo);
            canvas.dashed(&[(x, top), (x, bottom)], GREY.to_rgba(), 2)?;
            let fields: Vec<&str> = b.differences.iter().map(|d| d.field.as_str()).collect();
            let text = format!("new series: {}", fields.join(", "));
            canvas.text((x + 4, top + 10), &text, 12, GREY, HPos::Left, false)?;
        }
        offset += s.runs.len();
    }
    let lanes = names.len().max(1);
    let spread = if lanes > 1 { 6.0 } else { 0.0 };
    let mut label_row = 0;
    for (offset, c) in &cells {
        let i = names.iter().position(|v| *v == c.variant).unwrap_or(0);
        let color = arm_color(i);
        let dx = ((i as f64 - (lanes as f64 - 1.0) / 2.0) * spread).round() as i32;
        for cp in &c.change_points {
            let (x, _) = panel.px((offset + cp.first_run_after.index) as f64 + 0.5, panel.y.lo);
            let pts = [(x + dx / 2, top), (x + dx / 2, bottom)];
            if cp.status == Status::Confirmed {
                canvas.line(&pts, color.mix(0.8), 2)?;
            } else {
                canvas.dashed(&pts, color.mix(0.8), 2)?;
            }
            let what = if cp.status == Status::Confirmed {
                "step"
            } else {
                "unconfirmed"
            };
            let text = match c.scale {
                servebench_stats::verdict::Scale::Log => {
                    format!("{} {what} {}", c.variant, change(cp.shift.point))
                }
                servebench_stats::verdict::Scale::Arithmetic => {
                    format!("{} {what} {:+.3}", c.variant, cp.shift.point)
                }
            };
            let y = bottom - 12 - 16 * (label_row % 4);
            label_row += 1;
            canvas.text((x + 5, y), &text, 12, color, HPos::Left, true)?;
        }
        let mut means = Vec::new();
        for r in &c.runs {
            let xr = (offset + r.index + 1) as f64;
            for v in &r.values {
                let (x, y) = panel.px(xr, *v);
                canvas.circle((x + dx, y), 3, color.mix(0.35), true, 1)?;
            }
            let (x, y) = panel.px(xr, r.mean);
            if let Some(ci) = r.ci {
                let (_, lo) = panel.px(xr, ci.lower);
                let (_, hi) = panel.px(xr, ci.upper);
                canvas.error_bar(x + dx, lo, hi, color)?;
            }
            means.push((x + dx, y));
        }
        canvas.line(&means, color.mix(0.5), 1)?;
        for m in &means {
            canvas.marker(*m, color, false)?;
        }
        for o in &c.outliers {
            if let Some(r) = c.runs.iter().find(|r| r.index == o.run.index) {
                let (x, y) = panel.px((offset + r.index + 1) as f64, r.mean);
                canvas.circle((x + dx, y), 10, FLAG_RED.to_rgba(), false, 2)?;
            }
        }
    }
    Ok(())
}

/// The SVG of `t`.
pub fn render(spec: &SpecHistory, t: &Trend) -> Result<String, ReportError> {
    let file = t.file_name();
    svg(&file, SIZE, |c| draw(c, &file, spec, t))
}
