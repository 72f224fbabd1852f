//! `throughput.svg`: output throughput against the sweep, per arm, with 95% interval bars and
//! each trial as a faint dot.

use crate::Exporter;
use crate::error::ReportError;
use crate::model::Report;

use super::canvas::svg;
use super::sweep::{Series, figure, y_axis};

/// The throughput figure.
#[derive(Debug, Clone, Copy, Default)]
pub struct Throughput;

const FILE: &str = "throughput.svg";
const SIZE: (u32, u32) = (960, 560);

impl Exporter for Throughput {
    fn file_name(&self) -> String {
        FILE.to_owned()
    }

    fn export(&self, report: &Report) -> Result<String, ReportError> {
        let series = [Series::solid("output_throughput", "")];
        let y = y_axis(report, &series, "output throughput (tok/s)", false);
        svg(FILE, SIZE, |c| {
            figure(
                c,
                FILE,
                SIZE,
                "Output throughput (mean of trials, 95% CI)",
                y,
                report,
                &series,
            )
        })
    }
}
