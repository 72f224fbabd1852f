//! One scrape of an engine's Prometheus endpoint: the text format parsed by
//! `prom_text_format_parser` (names with colons as vLLM, SGLang and llama.cpp write them,
//! escaped label values, `NaN`/`+Inf`), mapped to the common series (running, waiting, KV
//! use, preemptions) by the names the engine's profile gives, with the raw gauge and counter
//! samples kept.
//!
//! A series with several label sets (vLLM's one per engine of a data-parallel server) is
//! summed for running, waiting and preemptions and its largest value taken for KV use; label
//! sets of a tensor- or pipeline-parallel rank other than 0 (SGLang's `tp_rank`, `pp_rank`,
//! `moe_ep_rank`) repeat rank 0's and are not added again.

use prom_text_format_parser::{Metric, Scrape, Type};

/// The names an engine serves its common series under, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricNames {
    /// The scrape path (`/metrics`).
    pub path: String,
    /// Requests running.
    pub running: String,
    /// Requests waiting.
    pub waiting: String,
    /// KV-cache use (0–1), where the engine reports it.
    pub kv_usage: Option<String>,
    /// Preemptions, where the engine reports them.
    pub preemptions: Option<String>,
}

/// What one scrape gave.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mapped {
    /// Requests running.
    pub running: Option<f64>,
    /// Requests waiting.
    pub waiting: Option<f64>,
    /// KV-cache use.
    pub kv_usage: Option<f64>,
    /// Preemptions.
    pub preemptions: Option<f64>,
    /// Every gauge, counter and untyped sample as (`name{labels}`, value).
    pub raw: Vec<(String, f64)>,
}

const RANK_LABELS: [&str; 3] = ["tp_rank", "pp_rank", "moe_ep_rank"];

/// Parses the whole text; a text with a line the parser refuses is read line by line, the
/// lines it refuses left out. `Err` when nothing in it is a sample.
fn parse(text: &str) -> Result<Vec<Metric>, String> {
    // Collect errors (a counter's TYPE line naming `x`, its sample `x_total`) still give the
    // samples: parse_scrape returns them beside the errors.
    let (metrics, err) = prom_text_format_parser::parse_scrape(text);
    if err.is_none() || !metrics.is_empty() {
        return Ok(metrics);
    }
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
        if let Ok(s) = Scrape::parse(line) {
            out.extend(s.metrics);
        }
    }
    if out.is_empty() && !text.trim().is_empty() {
        return Err(format!(
            "not the Prometheus text format ({})",
            err.map_or_else(|| "no sample".to_owned(), |e| format!("{e:?}"))
                .chars()
                .take(200)
                .collect::<String>()
        ));
    }
    Ok(out)
}

fn value(v: &prom_text_format_parser::Value) -> Option<f64> {
    v.value.parse::<f64>().ok()
}

/// Reads one scrape's text.
pub fn read_scrape(text: &str, names: &MetricNames) -> Result<Mapped, String> {
    let metrics = parse(text)?;
    let mut out = Mapped::default();
    let add = |slot: &mut Option<f64>, v: f64, largest: bool| {
        *slot = Some(match *slot {
            None => v,
            Some(x) if largest => x.max(v),
            Some(x) => x + v,
        });
    };
    for m in &metrics {
        if matches!(m.kind, Type::Histogram | Type::Summary) {
            continue;
        }
        for s in &m.samples {
            let Some(v) = value(&s.value) else { continue };
            let mut labels: Vec<(&str, &str)> = s
                .labels
                .iter()
                .map(|l| (l.key.as_str(), l.value.as_str()))
                .collect();
            labels.sort_unstable();
            let key = if labels.is_empty() {
                m.name.clone()
            } else {
                let inner: Vec<String> =
                    labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
                format!("{}{{{}}}", m.name, inner.join(","))
            };
            out.raw.push((key, v));
            let replica = labels
                .iter()
                .any(|(k, v)| RANK_LABELS.contains(k) && *v != "0");
            if replica || !v.is_finite() {
                continue;
            }
            let is = |n: &Option<String>| n.as_deref() == Some(m.name.as_str());
            if m.name == names.running {
                add(&mut out.running, v, false);
            } else if m.name == names.waiting {
                add(&mut out.waiting, v, false);
            } else if is(&names.kv_usage) {
                add(&mut out.kv_usage, v, true);
            } else if is(&names.preemptions) {
                add(&mut out.preemptions, v, false);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vllm() -> MetricNames {
        MetricNames {
            path: "/metrics".into(),
            running: "vllm:num_requests_running".into(),
            waiting: "vllm:num_requests_waiting".into(),
            kv_usage: Some("vllm:kv_cache_usage_perc".into()),
            preemptions: Some("vllm:num_preemptions_total".into()),
        }
    }

    // The shape of vLLM 0.33.0's /metrics (v1/metrics/loggers.py; prometheus_client's text
    // format: a counter's TYPE line names it without `_total`, histograms with buckets).
    const VLLM: &str =
        "# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 3.0
vllm:num_requests_running{engine=\"1\",model_name=\"m\"} 2.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine=\"0\",model_name=\"m\"} 4.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.25
vllm:kv_cache_usage_perc{engine=\"1\",model_name=\"m\"} 0.5
# HELP vllm:num_preemptions Cumulative number of preemption from the engine.
# TYPE vllm:num_preemptions counter
vllm:num_preemptions_total{engine=\"0\",model_name=\"m\"} 7.0
# HELP vllm:e2e_request_latency_seconds Histogram of e2e request latency in seconds.
# TYPE vllm:e2e_request_latency_seconds histogram
vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"0.3\",model_name=\"m\"} 1.0
vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"+Inf\",model_name=\"m\"} 2.0
vllm:e2e_request_latency_seconds_count{engine=\"0\",model_name=\"m\"} 2.0
vllm:e2e_request_latency_seconds_sum{engine=\"0\",model_name=\"m\"} 0.9
";

    #[test]
    fn a_vllm_scrape_maps_to_the_common_series() {
        let m = read_scrape(VLLM, &vllm()).unwrap();
        assert_eq!(m.running, Some(5.0));
        assert_eq!(m.waiting, Some(4.0));
        assert_eq!(m.kv_usage, Some(0.5));
        assert_eq!(m.preemptions, Some(7.0));
        assert!(
            m.raw.contains(&(
                "vllm:num_requests_running{engine=\"0\",model_name=\"m\"}".into(),
                3.0
            )),
            "{:?}",
            m.raw
        );
        assert!(
            !m.raw.iter().any(|(k, _)| k.contains("latency")),
            "{:?}",
            m.raw
        );
    }

    #[test]
    fn a_rank_other_than_0_is_not_counted_twice() {
        let names = MetricNames {
            path: "/metrics".into(),
            running: "sglang:num_running_reqs".into(),
            waiting: "sglang:num_queue_reqs".into(),
            kv_usage: Some("sglang:token_usage".into()),
            preemptions: None,
        };
        let text = "sglang:num_running_reqs{tp_rank=\"0\"} 6.0\nsglang:num_running_reqs{tp_rank=\"1\"} 6.0\n";
        assert_eq!(read_scrape(text, &names).unwrap().running, Some(6.0));
    }

    #[test]
    fn a_line_the_parser_refuses_costs_only_that_line() {
        let names = MetricNames {
            path: "/metrics".into(),
            running: "llamacpp:requests_processing".into(),
            waiting: "llamacpp:requests_deferred".into(),
            kv_usage: None,
            preemptions: None,
        };
        let text = "llamacpp:requests_processing 2\nthis is { not a sample\nllamacpp:requests_deferred 1\n";
        let m = read_scrape(text, &names).unwrap();
        assert_eq!((m.running, m.waiting), (Some(2.0), Some(1.0)));
        assert!(read_scrape("<html>Not Found</html>", &names).is_err());
    }
}
