//! `spec.search`: find each variant's capacity under the SLOs instead of measuring fixed sweep
//! points (docs/search.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A capacity search: for every variant, the highest load at which the share of a trial's
/// requests meeting every objective of `spec.slo` (its *attainment*) is at least
/// `attainment`. It replaces `sweep`: each server start (one block per variant and round)
/// bisects the load axis between `lower` and `upper` on a grid of step `precision`, rounds
/// are interleaved like the blocks of a sweep, and rounds are added until every variant's
/// capacity interval is as narrow as `precision` asks, or the budget is spent
/// (docs/search.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Search {
    /// The load that varies: `request_rate` (requests per second, open loop) or
    /// `max_concurrency` (requests in flight, closed loop with `request_rate: inf`).
    pub axis: SearchAxis,
    /// Lowest load tried (> 0; a whole number on the `max_concurrency` axis).
    #[schemars(range(min = 0.0))]
    pub lower: f64,
    /// Highest load tried (above `lower`).
    #[schemars(range(min = 0.0))]
    pub upper: f64,
    /// The attainment target: the share of a trial's requests (failed ones count as missing)
    /// that must meet every objective of `spec.slo` for the load to count as sustained.
    #[serde(default = "default_attainment")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub attainment: f64,
    /// The precision wanted: the half-width of each variant's capacity interval, relative
    /// (`{relative: 0.05}`: within ±5%, on the log scale) or absolute in the axis's unit
    /// (`{absolute: 2}`); it is also the step of the grid each server start bisects.
    pub precision: Precision,
    /// Fewest rounds (server starts per variant) before the search may stop; at least 3, the
    /// fewest that give an interval.
    #[serde(default = "default_min_rounds")]
    #[schemars(range(min = 1))]
    pub min_rounds: u32,
    /// Most rounds: the budget of server starts per variant, and the horizon of the
    /// sequential design that keeps the intervals valid however early the search stops.
    #[serde(default = "default_max_rounds")]
    #[schemars(range(min = 1))]
    pub max_rounds: u32,
    /// Most trials per variant over the whole search (default: what `max_rounds` server
    /// starts may need). A round starts only if every variant in it can afford a whole
    /// bisection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_trials: Option<u32>,
}

/// The load axis of a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchAxis {
    /// `workload.request_rate`, in requests per second.
    RequestRate,
    /// `workload.max_concurrency`, in requests in flight.
    MaxConcurrency,
}

impl SearchAxis {
    /// The spec key the axis sets.
    pub fn key(self) -> &'static str {
        match self {
            SearchAxis::RequestRate => "request_rate",
            SearchAxis::MaxConcurrency => "max_concurrency",
        }
    }

    /// The unit of a load on this axis, as printed after a number.
    pub fn unit(self) -> &'static str {
        match self {
            SearchAxis::RequestRate => "req/s",
            SearchAxis::MaxConcurrency => "in flight",
        }
    }
}

/// The precision of a capacity: relative or absolute.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Precision {
    /// A share of the capacity, e.g. `0.05` for ±5% (the interval's ends within a factor
    /// 1.05 of the estimate).
    Relative(#[schemars(range(min = 0.0, max = 1.0))] f64),
    /// In the axis's unit, e.g. `2` for ±2 req/s (a whole number on the `max_concurrency`
    /// axis).
    Absolute(#[schemars(range(min = 0.0))] f64),
}

fn default_attainment() -> f64 {
    0.99
}
fn default_min_rounds() -> u32 {
    3
}
fn default_max_rounds() -> u32 {
    10
}
