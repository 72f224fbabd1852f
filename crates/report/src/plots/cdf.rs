//! `cdf.svg`: latency CDFs per arm at one sweep point (`--cdf-point`, default the highest
//! concurrency), from the HDR histograms of all its ok trials merged — TTFT, TPOT, ITL and
//! E2E in four panels. Quantiles are read with the stats crate's one percentile method.

use hdrhistogram::Histogram;
use plotters::style::text_anchor::HPos;
use plotters::style::{Color, RGBColor};
use servebench_stats::histogram::{histogram_percentiles, merge_histograms};

use crate::Exporter;
use crate::error::ReportError;
use crate::model::{Arm, Report};
use servebench_result::TrialStatus;
use servebench_result::metrics::LatencyHistograms;

use super::axis::{Axis, Panel, Ticks};
use super::canvas::{Key, arm_color, svg};

/// The CDF figure.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cdf;

const FILE: &str = "cdf.svg";
const SIZE: (u32, u32) = (1100, 860);
/// The latency families drawn, with their panel titles.
pub const FAMILIES: [(&str, &str); 4] = [
    ("ttft", "TTFT"),
    ("tpot", "TPOT"),
    ("itl", "ITL (per chunk)"),
    ("e2e", "E2E latency"),
];

/// An arm's merged histogram of one family at the CDF point, with the number of trials
/// merged and of trials whose histogram could not be read.
pub fn merged(report: &Report, arm: &Arm, family: &str) -> (Option<Histogram<u64>>, usize, usize) {
    let Some(point) = report.cdf_point_of(arm) else {
        return (None, 0, 0);
    };
    let mut hists = Vec::new();
    let mut unreadable = 0;
    for t in report.result(arm).trials.iter().filter(|t| {
        t.variant == arm.variant && t.point == point.index && t.status == TrialStatus::Ok
    }) {
        let Some(s) = &t.summary else { continue };
        let encoded = match family {
            "ttft" => &s.histograms.ttft,
            "tpot" => &s.histograms.tpot,
            "itl" => &s.histograms.itl,
            _ => &s.histograms.e2e,
        };
        match LatencyHistograms::decode(encoded) {
            Ok(h) => hists.push(h),
            Err(_) => unreadable += 1,
        }
    }
    let n = hists.len();
    (merge_histograms(hists.iter()).ok(), n, unreadable)
}

/// CDF points (latency in ms, cumulative fraction) of a histogram recorded in µs.
pub fn curve(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    let qs: Vec<f64> = (0..=200).map(|i| f64::from(i) / 200.0).collect();
    let Some(values) = histogram_percentiles(h, &qs) else {
        return Vec::new();
    };
    values
        .into_iter()
        .zip(qs)
        .map(|(us, q)| (us / 1000.0, q))
        .collect()
}

impl Exporter for Cdf {
    fn file_name(&self) -> String {
        FILE.to_owned()
    }

    fn export(&self, report: &Report) -> Result<String, ReportError> {
        svg(FILE, SIZE, |c| {
            let (w, _) = (SIZE.0 as i32, SIZE.1 as i32);
            let title = format!(
                "Latency CDFs at {} (all trials of each arm merged)",
                report.cdf_point
            );
            c.text(
                (w / 2, 20),
                &title,
                19,
                RGBColor(0x11, 0x11, 0x11),
                HPos::Center,
                true,
            )?;
            let keys: Vec<Key> = report
                .arms
                .iter()
                .enumerate()
                .map(|(i, arm)| {
                    let (h, n, bad) = merged(report, arm, "e2e");
                    let requests = h.map_or(0, |h| h.len());
                    let mut label = format!("{} ({requests} requests, {n} trials", arm.label);
                    if bad > 0 {
                        label.push_str(&format!(", {bad} unreadable"));
                    }
                    label.push(')');
                    Key::Line {
                        label,
                        color: arm_color(i),
                    }
                })
                .collect();
            let legend_h = c.legend(&keys, (100, 38), w - 130, false)?;
            c.legend(&keys, (100, 38), w - 130, true)?;
            let area = c.root.margin(38 + legend_h + 4, 0, 0, 0);
            let cells = area.split_evenly((2, 2));
            for ((family, name), cell) in FAMILIES.iter().zip(cells.iter()) {
                let curves: Vec<Vec<(f64, f64)>> = report
                    .arms
                    .iter()
                    .map(|arm| {
                        merged(report, arm, family)
                            .0
                            .map(|h| curve(&h))
                            .unwrap_or_default()
                    })
                    .collect();
                // Zeros (two events in one microsecond) cannot sit on a log axis: the axis
                // is fitted to the positive values and the curve starts at its left edge.
                let xs: Vec<f64> = curves
                    .iter()
                    .flatten()
                    .map(|(x, _)| *x)
                    .filter(|x| *x > 0.0)
                    .collect();
                let x = Axis::fit(&format!("{name} (ms)"), &xs, true, false, Ticks::Number);
                let left = x.lo;
                let y = Axis {
                    desc: "requests at or below (%)".into(),
                    log: false,
                    lo: 0.0,
                    hi: 1.02,
                    ticks: vec![0.0, 0.25, 0.5, 0.75, 0.9, 0.99],
                    format: Ticks::Percent,
                };
                let panel = Panel::new(FILE, cell, Some(name), x, y)?;
                for (i, pts) in curves.iter().enumerate() {
                    let px: Vec<(i32, i32)> =
                        pts.iter().map(|(x, q)| panel.px(x.max(left), *q)).collect();
                    c.line(&px, arm_color(i).mix(0.95), 2)?;
                }
            }
            Ok(())
        })
    }
}
