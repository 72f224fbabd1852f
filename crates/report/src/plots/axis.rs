//! Axes: the scale (linear or log10), the range and the ticks of each axis, and the plot
//! frame that plotters draws from them (ticks, grid, axis titles) and that maps data values
//! to pixels.

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;

use crate::error::ReportError;
use crate::model::SweepAxis;
use crate::text::tick;

use super::canvas::{FONT, GRID, Root};

type Coord = Cartesian2d<Scale, Scale>;

/// A linear coordinate over (possibly log10-transformed) values whose only grid lines and
/// labels are the given ticks.
#[derive(Debug, Clone)]
struct Scale {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Ranged for Scale {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        if self.hi == self.lo {
            return (limit.0 + limit.1) / 2;
        }
        let f = (v - self.lo) / (self.hi - self.lo);
        limit.0 + (f64::from(limit.1 - limit.0) * f).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

/// How tick values are written.
#[derive(Debug, Clone, PartialEq)]
pub enum Ticks {
    /// Plain numbers.
    Number,
    /// A ratio written as a signed change (`1.05` → `+5%`).
    Change,
    /// A fraction written as a percentage (`0.5` → `50%`).
    Percent,
    /// One label per integer position.
    Labels(Vec<String>),
}

/// One axis: its title (with unit), scale, range (data values) and ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// Title, with the unit.
    pub desc: String,
    /// Log10 scale.
    pub log: bool,
    /// Lower end (data value).
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// Tick positions (data values).
    pub ticks: Vec<f64>,
    /// Tick text.
    pub format: Ticks,
}

fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = hi - lo;
    if span.is_nan() || span <= 0.0 {
        return vec![lo];
    }
    let raw = span / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    // Multiples of the step, rounded to its decimals (no 0.30000000000000004).
    let scale = 10f64.powi((-step.log10().floor() as i32 + 1).max(0));
    let round = |v: f64| (v * scale).round() / scale;
    let first = (lo / step).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|k| round(k as f64 * step)).collect()
}

fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let pick = |mults: &[f64]| {
        let mut out = Vec::new();
        let (k0, k1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        for k in k0..=k1 {
            for m in mults {
                let v = m * 10f64.powi(k);
                if v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9) {
                    out.push(v);
                }
            }
        }
        out
    };
    let dense = pick(&[1.0, 2.0, 5.0]);
    if dense.len() > 9 {
        pick(&[1.0])
    } else if dense.len() < 3 {
        pick(&[1.0, 1.5, 2.0, 3.0, 5.0, 7.0])
    } else {
        dense
    }
}

impl Axis {
    /// The sweep axis: concurrency values as ticks, or one slot per labelled point.
    pub fn sweep(axis: &SweepAxis) -> Axis {
        match axis {
            SweepAxis::Concurrency { values, log } => {
                let (lo, hi) = (
                    values.first().copied().unwrap_or(1.0),
                    values.last().copied().unwrap_or(1.0),
                );
                let (lo, hi) = if *log {
                    (lo / 1.35, hi * 1.35)
                } else {
                    let pad = ((hi - lo) * 0.06).max(0.5);
                    (lo - pad, hi + pad)
                };
                Axis {
                    desc: format!(
                        "concurrency limit (requests in flight){}",
                        if *log { ", log scale" } else { "" }
                    ),
                    log: *log,
                    lo,
                    hi,
                    ticks: values.clone(),
                    format: Ticks::Number,
                }
            }
            SweepAxis::Category { labels } => Axis {
                desc: "sweep point".into(),
                log: false,
                lo: -0.5,
                hi: labels.len() as f64 - 0.5,
                ticks: (0..labels.len()).map(|i| i as f64).collect(),
                format: Ticks::Labels(labels.clone()),
            },
        }
    }

    /// An axis over `values`: log-scaled when `allow_log` and they span more than a decade,
    /// else linear (from 0 when `zero`), with a little room at the ends.
    pub fn fit(desc: &str, values: &[f64], allow_log: bool, zero: bool, format: Ticks) -> Axis {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
        let log = allow_log && lo > 0.0 && hi / lo > 10.0;
        let (lo, hi, ticks) = if log {
            let (lo, hi) = (lo / 1.25, hi * 1.25);
            (lo, hi, log_ticks(lo, hi))
        } else {
            let span = if hi > lo {
                hi - lo
            } else {
                hi.abs().max(1.0) * 0.1
            };
            let lo = if zero && lo >= 0.0 {
                0.0
            } else {
                lo - span * 0.08
            };
            let hi = hi + span * 0.08;
            (lo, hi, linear_ticks(lo, hi))
        };
        Axis {
            desc: format!("{desc}{}", if log { ", log scale" } else { "" }),
            log,
            lo,
            hi,
            ticks,
            format,
        }
    }

    fn fwd(&self, v: f64) -> f64 {
        if self.log {
            v.max(f64::MIN_POSITIVE).log10()
        } else {
            v
        }
    }

    fn label(&self, fwd: f64) -> String {
        let v = if self.log { 10f64.powf(fwd) } else { fwd };
        match &self.format {
            Ticks::Number => tick(v),
            Ticks::Change => {
                let p = (v - 1.0) * 100.0;
                if p.abs() < 1e-9 {
                    "0%".into()
                } else {
                    format!("{}{}%", if p > 0.0 { "+" } else { "" }, tick(p))
                }
            }
            Ticks::Percent => format!("{}%", tick(v * 100.0)),
            Ticks::Labels(l) => l.get(v.round() as usize).cloned().unwrap_or_default(),
        }
    }
}

/// A plot frame: maps data values to absolute pixels.
pub struct Panel<'a, 'b> {
    chart: ChartContext<'b, SVGBackend<'a>, Coord>,
    /// The x axis.
    pub x: Axis,
    /// The y axis.
    pub y: Axis,
}

impl std::fmt::Debug for Panel<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Panel")
            .field("x", &self.x)
            .field("y", &self.y)
            .finish()
    }
}

impl<'a, 'b> Panel<'a, 'b> {
    /// Draw the frame (axes, ticks, grid, titles) on `area`, with an optional caption.
    pub fn new(
        file: &str,
        area: &'b Root<'a>,
        caption: Option<&str>,
        x: Axis,
        y: Axis,
    ) -> Result<Self, ReportError> {
        let err = |e: &dyn std::fmt::Display| ReportError::plot(file, e);
        let mut b = ChartBuilder::on(area);
        b.margin(10)
            .margin_right(28)
            .x_label_area_size(54)
            .y_label_area_size(84);
        if let Some(c) = caption {
            b.caption(c, (FONT, 19).into_font().style(FontStyle::Bold));
        }
        let scale = |a: &Axis| Scale {
            lo: a.fwd(a.lo),
            hi: a.fwd(a.hi),
            ticks: a.ticks.iter().map(|t| a.fwd(*t)).collect(),
        };
        let (xr, yr) = (scale(&x), scale(&y));
        let mut chart = b.build_cartesian_2d(xr, yr).map_err(|e| err(&e))?;
        let xf = |v: &f64| x.label(*v);
        let yf = |v: &f64| y.label(*v);
        chart
            .configure_mesh()
            .x_desc(x.desc.as_str())
            .y_desc(y.desc.as_str())
            .x_label_formatter(&xf)
            .y_label_formatter(&yf)
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 16))
            .bold_line_style(GRID)
            .axis_style(RGBColor(0x66, 0x66, 0x66))
            .draw()
            .map_err(|e| err(&e))?;
        Ok(Panel { chart, x, y })
    }

    /// Absolute pixel of a data point.
    pub fn px(&self, x: f64, y: f64) -> (i32, i32) {
        self.chart.backend_coord(&(self.x.fwd(x), self.y.fwd(y)))
    }

    /// Pixel bounds of the plotting area: (left, top, right, bottom).
    pub fn bounds(&self) -> (i32, i32, i32, i32) {
        let (xr, yr) = self.chart.plotting_area().get_pixel_range();
        (xr.start, yr.start, xr.end, yr.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_are_round_and_inside() {
        assert_eq!(
            linear_ticks(0.0, 2300.0),
            [0.0, 500.0, 1000.0, 1500.0, 2000.0]
        );
        let t = linear_ticks(-0.12, 0.3);
        assert!(t.iter().all(|v| (-0.12..=0.3).contains(v)));
        assert!(t.contains(&0.0), "zero is a tick when inside: {t:?}");
    }

    #[test]
    fn log_ticks_use_1_2_5_per_decade() {
        assert_eq!(log_ticks(6.0, 120.0), [10.0, 20.0, 50.0, 100.0]);
        assert_eq!(
            log_ticks(1e-3, 1e4),
            [1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0, 1e3, 1e4]
        );
    }

    #[test]
    fn an_axis_is_logarithmic_only_past_a_decade() {
        let a = Axis::fit("x (ms)", &[7.0, 95.0], true, false, Ticks::Number);
        assert!(a.log && a.desc == "x (ms), log scale");
        let a = Axis::fit("x (ms)", &[10.0, 95.0], true, false, Ticks::Number);
        assert!(!a.log && a.desc == "x (ms)");
        let a = Axis::fit("x", &[0.0, 95.0], true, false, Ticks::Number);
        assert!(!a.log, "zero cannot sit on a log axis");
        let a = Axis::fit("y", &[200.0, 2000.0], false, true, Ticks::Number);
        assert_eq!(a.lo, 0.0, "from zero when asked");
    }

    #[test]
    fn the_sweep_axis_ticks_are_the_sweep_values() {
        let a = Axis::sweep(&SweepAxis::Concurrency {
            values: vec![1.0, 4.0, 16.0, 32.0],
            log: true,
        });
        assert_eq!(a.ticks, [1.0, 4.0, 16.0, 32.0]);
        assert!(a.lo < 1.0 && a.hi > 32.0);
        assert_eq!(a.label(a.fwd(32.0)), "32");
        let c = Axis {
            format: Ticks::Change,
            ..Axis::fit("r", &[0.9, 1.1], false, false, Ticks::Number)
        };
        assert_eq!(c.label(1.05), "+5%");
        assert_eq!(c.label(1.0), "0%");
    }
}
