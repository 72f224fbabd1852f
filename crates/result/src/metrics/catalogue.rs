//! The metric catalogue's names and their lookup in a trial summary (`ttft_p50`,
//! `output_throughput`, `cache_hit_ratio`, …).

use super::latency::STAT_NAMES;
use super::summary::{TrialSummary, WindowSummary};

/// Names accepted by [`TrialSummary::metric`] (the catalogue's).
pub fn metric_names() -> Vec<String> {
    let mut v: Vec<String> = SCALARS.iter().map(|s| (*s).to_owned()).collect();
    for fam in FAMILIES {
        for st in STAT_NAMES {
            v.push(format!("{fam}_{st}"));
        }
    }
    v
}

const SCALARS: [&str; 10] = [
    "output_throughput",
    "total_throughput",
    "request_throughput",
    "goodput",
    "error_rate",
    "peak_concurrency",
    "mean_concurrency",
    "cache_hit_ratio",
    "output_tokens_per_joule",
    "joules_per_output_token",
];
const FAMILIES: [&str; 10] = [
    "ttft",
    "tpot",
    "itl",
    "itl_per_token",
    "e2e",
    "queue_time",
    "ttfr",
    "ttfa",
    "reasoning_tokens",
    "answer_tokens",
];

impl WindowSummary {
    /// A metric by catalogue name (`output_throughput`, `ttft_p50`, `itl_per_token_p99`,
    /// …); `None` for an unknown name or a metric with no value in this window.
    pub fn metric(&self, name: &str) -> Option<f64> {
        match name {
            "output_throughput" => self.output_throughput,
            "total_throughput" => self.total_throughput,
            "request_throughput" => self.request_throughput,
            "goodput" => self.goodput,
            "error_rate" => self.error_rate,
            "peak_concurrency" => Some(self.peak_concurrency as f64),
            "mean_concurrency" => self.mean_concurrency,
            _ => {
                let (family, stat) = name.rsplit_once('_')?;
                let stats = match family {
                    "ttft" => self.ttft,
                    "tpot" => self.tpot,
                    "itl" => self.itl,
                    "itl_per_token" => self.itl_per_token,
                    "e2e" => self.e2e,
                    "queue_time" => self.queue_time,
                    "ttfr" => self.ttfr,
                    "ttfa" => self.ttfa,
                    "reasoning_tokens" => self.reasoning_tokens,
                    "answer_tokens" => self.answer_tokens,
                    _ => return None,
                };
                stats?.get(stat)
            }
        }
    }
}

impl TrialSummary {
    /// A metric over all measured requests, by catalogue name.
    pub fn metric(&self, name: &str) -> Option<f64> {
        if name == "cache_hit_ratio" {
            return self.tokens.cache_hit_ratio();
        }
        if let Some(v) = self.telemetry.as_ref().and_then(|t| t.metric(name)) {
            return Some(v);
        }
        self.all
            .metric(name)
            .or_else(|| self.reported.get(name).copied())
            .or_else(|| self.any_percentile(name))
    }

    /// A percentile outside the summary's fixed set (`ttft_p95`, `e2e_p99_9`), read from the
    /// trial's stored histogram of its family (TTFT, TPOT, ITL, E2E, and the reasoning ones
    /// TTFR and TTFA), so committed results answer it too; `None` for other families.
    fn any_percentile(&self, name: &str) -> Option<f64> {
        let (family, q) = servebench_spec::metrics::percentile(name)?;
        // The catalogue's own percentiles are the summary's exact order statistics, or absent.
        if [0.5, 0.9, 0.99].contains(&q) {
            return None;
        }
        self.histograms.quantile_ms(family, q)
    }

    /// A metric over the steady window, by catalogue name.
    pub fn steady_metric(&self, name: &str) -> Option<f64> {
        self.steady.metric(name)
    }
}
