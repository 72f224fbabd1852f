//! `ttft.svg`, `tpot.svg`: a latency's p50 (solid) and p99 (dashed) against the sweep, per
//! arm, with 95% interval bars across trials and each trial as a faint dot.

use crate::Exporter;
use crate::error::ReportError;
use crate::model::Report;

use super::canvas::svg;
use super::sweep::{Series, figure, y_axis};

/// One latency family's figure.
#[derive(Debug, Clone, Copy)]
pub struct Latency {
    /// `ttft` or `tpot` (any catalogue latency family works).
    pub family: &'static str,
    /// Its name in titles (`TTFT`).
    pub name: &'static str,
}

const SIZE: (u32, u32) = (960, 560);

impl Exporter for Latency {
    fn file_name(&self) -> String {
        format!("{}.svg", self.family)
    }

    fn export(&self, report: &Report) -> Result<String, ReportError> {
        let file = self.file_name();
        let series = [
            Series::solid(&format!("{}_p50", self.family), "p50"),
            Series::dashed(&format!("{}_p99", self.family), "p99"),
        ];
        let y = y_axis(report, &series, &format!("{} (ms)", self.name), true);
        let title = format!("{} p50 and p99 (mean of trials, 95% CI)", self.name);
        svg(&file, SIZE, |c| {
            figure(c, &file, SIZE, &title, y, report, &series)
        })
    }
}
