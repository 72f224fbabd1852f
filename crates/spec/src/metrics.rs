//! The metric catalogue: every metric a spec, a result or a comparison may name.
//!
//! Definitions are in `docs/metrics.md`; the load generator derives every metric from raw
//! per-request instants, the stats crate summarises them. Stats is told a metric's
//! direction; it does not know this catalogue.

use serde::Serialize;

/// Which way is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Throughput-like: larger is better.
    HigherIsBetter,
    /// Latency-like: smaller is better.
    LowerIsBetter,
    /// Descriptive only (e.g. concurrency actually reached).
    Neutral,
}

/// How a per-trial value is aggregated across requests.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregate {
    /// A rate or ratio over the whole trial.
    Trial,
    /// Arithmetic mean over requests.
    Mean,
    /// A quantile over requests (0 < q < 1).
    Quantile(f64),
    /// The smallest value over requests.
    Min,
    /// The largest value over requests.
    Max,
}

/// One catalogue entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metric {
    /// Name used in specs and results, e.g. `ttft_p99`.
    pub name: String,
    /// Unit of the stored value.
    pub unit: &'static str,
    /// Which way is better.
    pub direction: Direction,
    /// The per-request field (or trial quantity) it is derived from.
    pub source: &'static str,
    /// How requests are aggregated into the trial value.
    pub aggregate: Aggregate,
    /// Whether the value can be 0 (then means and t intervals are arithmetic, not
    /// geometric).
    pub can_be_zero: bool,
}

impl Metric {
    /// Requests one trial needs before its quantile is reportable (see
    /// [`min_requests_for_quantile`]); 1 for non-quantile metrics.
    pub fn min_requests(&self) -> u64 {
        match self.aggregate {
            Aggregate::Quantile(q) => min_requests_for_quantile(q, 0.99),
            _ => 1,
        }
    }
}

/// Smallest n with 1 − qⁿ ≥ c, i.e. n ≥ ln(1−c)/ln q: with fewer requests the sample
/// maximum is below the true q-quantile more than 1 − c of the time (MLPerf LoadGen's rule;
/// docs/statistics-method.md). At c = 0.99: 44 for p90, 459 for p99, 4603 for p99.9.
pub fn min_requests_for_quantile(q: f64, c: f64) -> u64 {
    if !(0.0 < q && q < 1.0 && 0.0 < c && c < 1.0) {
        return 1;
    }
    ((1.0 - c).ln() / q.ln()).ceil() as u64
}

const LATENCIES: [(&str, &str); 5] = [
    ("ttft", "time to first token"),
    ("tpot", "time per output token"),
    ("itl", "inter-token latency (per chunk)"),
    ("itl_per_token", "inter-token latency per token"),
    ("e2e", "end-to-end latency"),
];

const SUFFIXES: [(&str, Aggregate); 6] = [
    ("mean", Aggregate::Mean),
    ("p50", Aggregate::Quantile(0.5)),
    ("p90", Aggregate::Quantile(0.9)),
    ("p99", Aggregate::Quantile(0.99)),
    ("min", Aggregate::Min),
    ("max", Aggregate::Max),
];

/// The whole catalogue, in a stable order.
pub fn catalogue() -> Vec<Metric> {
    let mut out = vec![
        trial(
            "output_throughput",
            "tok/s",
            Direction::HigherIsBetter,
            "usage.completion_tokens / duration",
            false,
        ),
        trial(
            "total_throughput",
            "tok/s",
            Direction::HigherIsBetter,
            "(usage.prompt_tokens + usage.completion_tokens) / duration",
            false,
        ),
        trial(
            "request_throughput",
            "req/s",
            Direction::HigherIsBetter,
            "successful requests / duration",
            false,
        ),
        trial(
            "goodput",
            "req/s",
            Direction::HigherIsBetter,
            "requests meeting every SLO / duration",
            true,
        ),
        trial(
            "error_rate",
            "fraction",
            Direction::LowerIsBetter,
            "failed requests / all requests",
            true,
        ),
        trial(
            "peak_concurrency",
            "requests",
            Direction::Neutral,
            "sweep line over [t_send, t_end)",
            false,
        ),
        trial(
            "mean_concurrency",
            "requests",
            Direction::Neutral,
            "sum of E2E / duration",
            false,
        ),
        trial(
            "cache_hit_ratio",
            "fraction",
            Direction::Neutral,
            "prompt tokens served from the prefix cache / prompt tokens (as the server reports)",
            true,
        ),
        trial(
            "output_tokens_per_joule",
            "tok/J",
            Direction::HigherIsBetter,
            "output tokens / GPU energy over the trial (telemetry)",
            false,
        ),
        trial(
            "joules_per_output_token",
            "J/tok",
            Direction::LowerIsBetter,
            "GPU energy over the trial (telemetry) / output tokens",
            false,
        ),
    ];
    for (base, what) in LATENCIES
        .iter()
        .chain([("queue_time", "client queue time")].iter())
    {
        for (suffix, agg) in SUFFIXES {
            out.push(Metric {
                name: format!("{base}_{suffix}"),
                unit: "ms",
                direction: Direction::LowerIsBetter,
                source: what,
                aggregate: agg,
                can_be_zero: *base == "queue_time",
            });
        }
    }
    out
}

fn trial(
    name: &'static str,
    unit: &'static str,
    direction: Direction,
    source: &'static str,
    can_be_zero: bool,
) -> Metric {
    Metric {
        name: name.to_owned(),
        unit,
        direction,
        source,
        aggregate: Aggregate::Trial,
        can_be_zero,
    }
}

/// Look a metric up by name.
pub fn metric(name: &str) -> Option<Metric> {
    catalogue().into_iter().find(|m| m.name == name)
}

/// Every metric name, in catalogue order.
pub fn metric_names() -> Vec<String> {
    catalogue().into_iter().map(|m| m.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_request_minimums_match_statistics_md() {
        assert_eq!(min_requests_for_quantile(0.9, 0.99), 44);
        assert_eq!(min_requests_for_quantile(0.99, 0.99), 459);
        assert_eq!(min_requests_for_quantile(0.999, 0.99), 4603);
    }

    #[test]
    fn catalogue_has_unique_names_and_directions() {
        let names = metric_names();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len());
        assert_eq!(
            metric("ttft_p99").map(|m| m.direction),
            Some(Direction::LowerIsBetter)
        );
        assert_eq!(
            metric("output_throughput").map(|m| m.direction),
            Some(Direction::HigherIsBetter)
        );
        assert_eq!(
            metric("itl_per_token_p90").map(|m| m.min_requests()),
            Some(44)
        );
        assert!(metric("ttft_p95").is_none());
    }
}
