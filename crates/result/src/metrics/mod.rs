//! Every metric of a trial, derived from its raw [`crate::record::RequestRecord`]s in this
//! one place (STYLE rule 4: store instants, derive metrics).
//!
//! [`derive()`] gives each request's TTFT, TPOT, ITL, E2E, queue time and flags;
//! [`concurrency`] the peak and mean in-flight counts and the steady window; [`summary`] the
//! [`TrialSummary`] with the catalogue's metric names; [`histograms`] the HDR histograms.

mod catalogue;
pub mod concurrency;
pub mod derive;
pub mod histograms;
pub mod latency;
mod reasoning;
mod sending;
pub mod summary;
mod turns;

pub use catalogue::metric_names;
pub use derive::{RequestMetrics, derive, itl_gaps};
pub use histograms::LatencyHistograms;
pub use latency::LatencyStats;
pub use summary::{
    InputMismatch, Slo, SummaryOptions, TokenAccounting, TrialSummary, WindowSummary, summarize,
};
pub use turns::TurnSummary;

#[cfg(test)]
mod reasoning_tests;
#[cfg(test)]
mod tests;
