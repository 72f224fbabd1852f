//! One scrape of an engine's Prometheus endpoint: the text format parsed by
//! `prom_text_format_parser` (names with colons as vLLM, SGLang and llama.cpp write them,
//! escaped label values, `NaN`/`+Inf`), mapped to the common series (running, waiting, KV
//! use, preemptions) by the names the engine's profile gives, with the raw gauge and counter
//! samples kept.
//!
//! Series are told apart by what the profile says their labels are
//! (servebench_engines::LabelRole): label sets that differ in a *part* label (vLLM's
//! `engine`, SGLang's `dp_rank`) or in a label the profile does not name are separate parts
//! of the server and are summed (KV use: the fullest part is taken); label sets that differ
//! only in *replica* labels (SGLang's `tp_rank`, `pp_rank`, `moe_ep_rank` within one
//! `dp_rank`) are one series, read from its lowest rank; a *breakdown* label (SGLang's
//! `priority`) is read only where it is empty, the total. The same name and labels twice in
//! one body is one series: its last value is read, not the sum.

use std::collections::BTreeMap;

use prom_text_format_parser::{Metric, Scrape, Type};
use servebench_engines::{LabelRole, MetricKind, MetricsFacts};

/// The names an engine serves its common series under, where, and what its labels say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricNames {
    /// The scrape path, with its query where the engine needs one (`/metrics?model=m`).
    pub path: String,
    /// Requests running.
    pub running: String,
    /// Requests waiting.
    pub waiting: String,
    /// KV-cache use (0–1), where the engine reports it.
    pub kv_usage: Option<String>,
    /// Preemptions, where the engine reports them.
    pub preemptions: Option<String>,
    /// Whether the preemptions series is a counter (read as its increase) or a gauge.
    pub preemptions_kind: MetricKind,
    /// What each named label says.
    pub labels: Vec<(String, LabelRole)>,
}

impl MetricNames {
    /// The names of an engine's `facts`, scraped at `path`.
    pub fn of(facts: &MetricsFacts, path: String) -> Self {
        MetricNames {
            path,
            running: facts.running.to_owned(),
            waiting: facts.waiting.to_owned(),
            kv_usage: facts.kv_usage.map(str::to_owned),
            preemptions: facts.preemptions.map(|p| p.name.to_owned()),
            preemptions_kind: facts.preemptions.map_or(MetricKind::Counter, |p| p.kind),
            labels: facts
                .labels
                .iter()
                .map(|(l, r)| ((*l).to_owned(), *r))
                .collect(),
        }
    }

    fn role(&self, label: &str) -> Option<LabelRole> {
        self.labels
            .iter()
            .find(|(l, _)| l == label)
            .map(|(_, r)| *r)
    }

    /// The common series `name` feeds (0 running, 1 waiting, 2 KV use, 3 preemptions).
    fn slot(&self, name: &str) -> Option<usize> {
        let is = |n: &Option<String>| n.as_deref() == Some(name);
        if name == self.running {
            Some(0)
        } else if name == self.waiting {
            Some(1)
        } else if is(&self.kv_usage) {
            Some(2)
        } else if is(&self.preemptions) {
            Some(3)
        } else {
            None
        }
    }
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
    /// Every gauge, counter and untyped sample as (`name{labels}`, value), each label set
    /// once (a repeated one keeps its last value).
    pub raw: Vec<(String, f64)>,
}

/// Parses the whole text; a text with a line the parser refuses is read line by line, the
/// lines it refuses left out. `Err` when nothing in it is a sample.
fn parse(text: &str) -> Result<Vec<Metric>, String> {
    // Collect errors (a text whose counter's TYPE line names `x` and its sample `x_total`,
    // as hand-written exporters do; prometheus_client names `x_total` in both) still give
    // the samples: parse_scrape returns them beside the errors.
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

/// `name{k="v",…}`, labels sorted.
fn key(name: &str, labels: &[(&str, &str)]) -> String {
    if labels.is_empty() {
        return name.to_owned();
    }
    let inner: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    format!("{name}{{{}}}", inner.join(","))
}

/// One series of a common quantity: its identity (the labels but replica ones) and its
/// replica ranks (the lowest is read).
struct Identity {
    id: String,
    ranks: Vec<u64>,
}

/// Where a sample of a common series belongs, or `None` for a breakdown's part.
fn identity(name: &str, labels: &[(&str, &str)], names: &MetricNames) -> Option<Identity> {
    let mut kept = Vec::new();
    let mut ranks = Vec::new();
    for &(k, v) in labels {
        match names.role(k) {
            Some(LabelRole::Breakdown) if !v.is_empty() => return None,
            Some(LabelRole::Breakdown) => {}
            Some(LabelRole::Replica) => ranks.push(v.parse::<u64>().unwrap_or(u64::MAX)),
            Some(LabelRole::Part) | None => kept.push((k, v)),
        }
    }
    Some(Identity {
        id: key(name, &kept),
        ranks,
    })
}

/// Reads one scrape's text.
pub fn read_scrape(text: &str, names: &MetricNames) -> Result<Mapped, String> {
    let metrics = parse(text)?;
    let mut out = Mapped::default();
    // (slot, identity) → (replica ranks, value): one value per series.
    let mut series: BTreeMap<(usize, String), (Vec<u64>, f64)> = BTreeMap::new();
    let mut raw: BTreeMap<String, (usize, f64)> = BTreeMap::new();
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
            let n = raw.len();
            raw.entry(key(&m.name, &labels))
                .and_modify(|e| e.1 = v)
                .or_insert((n, v));
            let Some(slot) = names.slot(&m.name) else {
                continue;
            };
            if !v.is_finite() {
                continue;
            }
            let Some(ident) = identity(&m.name, &labels, names) else {
                continue;
            };
            series
                .entry((slot, ident.id))
                .and_modify(|e| {
                    // The lowest rank is read; the same rank again (the same series
                    // repeated) replaces it.
                    if ident.ranks <= e.0 {
                        *e = (ident.ranks.clone(), v);
                    }
                })
                .or_insert((ident.ranks, v));
        }
    }
    let mut raw: Vec<(String, (usize, f64))> = raw.into_iter().collect();
    raw.sort_by_key(|(_, (i, _))| *i);
    out.raw = raw.into_iter().map(|(k, (_, v))| (k, v)).collect();
    for ((slot, _), (_, v)) in series {
        let (target, largest) = match slot {
            0 => (&mut out.running, false),
            1 => (&mut out.waiting, false),
            2 => (&mut out.kv_usage, true),
            _ => (&mut out.preemptions, false),
        };
        *target = Some(match *target {
            None => v,
            Some(x) if largest => x.max(v),
            Some(x) => x + v,
        });
    }
    Ok(out)
}

/// The names of the common series `names` asks for that a scrape's `text` lacks (for the
/// block-start check: an endpoint that answers without them).
pub fn missing(text: &str, names: &MetricNames) -> Vec<String> {
    let Ok(metrics) = parse(text) else {
        return vec![names.running.clone(), names.waiting.clone()];
    };
    let served: std::collections::BTreeSet<&str> = metrics
        .iter()
        .filter(|m| !m.samples.is_empty())
        .map(|m| m.name.as_str())
        .collect();
    [
        Some(&names.running),
        Some(&names.waiting),
        names.kv_usage.as_ref(),
    ]
    .into_iter()
    .flatten()
    .filter(|n| !served.contains(n.as_str()))
    .cloned()
    .collect()
}

/// Whether `text` holds a sample of the series `name` (a sample line, whatever its labels).
pub fn has_sample(text: &str, name: &str) -> bool {
    text.lines().map(str::trim_start).any(|l| {
        !l.starts_with('#')
            && l.split(|c: char| c == '{' || c.is_whitespace())
                .next()
                .is_some_and(|n| n == name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use servebench_engines::Engine;
    use servebench_engines::profile;

    fn names(engine: Engine) -> MetricNames {
        let facts = profile(engine).and_then(|p| p.metrics).expect("metrics");
        MetricNames::of(&facts, facts.path.to_owned())
    }

    // The shape of vLLM 0.33.0's /metrics (v1/metrics/loggers.py; prometheus_client 0.26.0's
    // text format: a counter's HELP and TYPE lines name its `_total` sample, exposition.py:
    // 321-323; histograms with buckets).
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
# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.
# TYPE vllm:num_preemptions_total counter
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
        let m = read_scrape(VLLM, &names(Engine::Vllm)).unwrap();
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

    /// SGLang 0.5.23's own collector rendered (crates/engines/src/sglang/transcripts/0.5.23,
    /// README.md says how).
    fn sglang(file: &str) -> String {
        let path = format!(
            "{}/../engines/src/sglang/transcripts/0.5.23/{file}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).expect(&path)
    }

    #[test]
    fn sglang_dp_attention_ranks_are_summed() {
        // --tp 4 --dp 4 --enable-dp-attention: four schedulers, each its own requests,
        // labelled dp_rank 0-3 with tp_rank 0-3. Before: only tp_rank 0 was read (3 of 16).
        let m = read_scrape(&sglang("metrics-dp-attention.txt"), &names(Engine::Sglang)).unwrap();
        assert_eq!(m.running, Some(16.0));
        assert_eq!(m.waiting, Some(7.0));
        assert_eq!(m.kv_usage, Some(0.75), "the fullest DP rank");
    }

    #[test]
    fn sglang_tp_replicas_are_read_once() {
        // --tp 2 with --enable-metrics-for-all-schedulers: rank 1 repeats rank 0's batch.
        let m = read_scrape(
            &sglang("metrics-tp-all-schedulers.txt"),
            &names(Engine::Sglang),
        )
        .unwrap();
        assert_eq!((m.running, m.waiting), (Some(4.0), Some(2.0)));
    }

    #[test]
    fn sglang_priority_breakdowns_are_not_added_to_the_total() {
        // --enable-priority-scheduling: the total under priority="", per priority under "0",
        // "1". Before: 5 + 2 + 3 = 10 running.
        let m = read_scrape(&sglang("metrics-priority.txt"), &names(Engine::Sglang)).unwrap();
        assert_eq!((m.running, m.waiting), (Some(5.0), Some(3.0)));
    }

    #[test]
    fn sglang_retractions_are_read_from_the_counter() {
        // 3 then 2 retractions, a stats log after each and one more: the gauge
        // `sglang:num_retracted_reqs` is back to 0 at the scrape, the counter says 5.
        let n = names(Engine::Sglang);
        assert_eq!(n.preemptions_kind, MetricKind::Counter);
        let before = read_scrape(&sglang("metrics-retract-before.txt"), &n).unwrap();
        let after = read_scrape(&sglang("metrics-retract-after.txt"), &n).unwrap();
        assert_eq!(before.preemptions, None, "no retraction yet: no sample");
        assert_eq!(after.preemptions, Some(5.0));
    }

    #[test]
    fn a_series_repeated_in_one_body_is_one_series() {
        // One line of SGLang 0.5.23's rendered body, written three times (a body that
        // repeats a series: the server said 1 running, the sum said 3).
        let line = sglang("metrics-retract-after.txt")
            .lines()
            .find(|l| l.starts_with("sglang:num_running_reqs{"))
            .expect("line")
            .replace("} 7.0", "} 1.0");
        let text = format!("{line}\n{line}\n{line}\n");
        let m = read_scrape(&text, &names(Engine::Sglang)).unwrap();
        assert_eq!(m.running, Some(1.0));
        assert_eq!(m.raw.len(), 1, "{:?}", m.raw);
        // And for an engine whose profile names no label.
        let text = "llamacpp:requests_processing 1\nllamacpp:requests_processing 1\n";
        let m = read_scrape(text, &names(Engine::Llamacpp)).unwrap();
        assert_eq!(m.running, Some(1.0));
    }

    #[test]
    fn missing_series_are_named() {
        let n = names(Engine::Sglang);
        assert!(missing(&sglang("metrics-dp-attention.txt"), &n).is_empty());
        let m = missing("sglang:num_queue_reqs 1\n", &n);
        assert_eq!(m, vec!["sglang:num_running_reqs", "sglang:token_usage"]);
    }

    #[test]
    fn a_line_the_parser_refuses_costs_only_that_line() {
        let names = names(Engine::Llamacpp);
        let text = "llamacpp:requests_processing 2\nthis is { not a sample\nllamacpp:requests_deferred 1\n";
        let m = read_scrape(text, &names).unwrap();
        assert_eq!((m.running, m.waiting), (Some(2.0), Some(1.0)));
        assert!(read_scrape("<html>Not Found</html>", &names).is_err());
    }

    /// vLLM 0.26.0's real `/metrics` under load (crates/engines/src/vllm/transcripts/0.26.0/
    /// metrics-under-load.http): one API server, so prometheus_client's default registry,
    /// with a `_created` gauge family beside each counter.
    #[test]
    fn a_real_vllm_0_26_0_scrape_is_read() {
        let path = format!(
            "{}/../engines/src/vllm/transcripts/0.26.0/metrics-under-load.http",
            env!("CARGO_MANIFEST_DIR")
        );
        let http = std::fs::read_to_string(&path).expect(&path);
        let (_, body) = http.split_once("\r\n\r\n").expect("headers, then the body");
        assert!(body.contains("vllm:num_preemptions_created{"));
        let names = names(Engine::Vllm);
        assert!(
            missing(body, &names).is_empty(),
            "{:?}",
            missing(body, &names)
        );
        let m = read_scrape(body, &names).unwrap();
        assert_eq!(m.running, Some(16.0));
        assert_eq!(m.waiting, Some(0.0));
        assert_eq!(m.kv_usage, Some(0.0009256982512981793));
        assert_eq!(m.preemptions, Some(0.0));
    }

    /// SGLang 0.5.17's real `/metrics` (crates/engines/src/sglang/transcripts/0.5.17/
    /// metrics-under-load.http): one scheduler's gauges with `engine_type`, `moe_ep_rank`,
    /// `pp_rank`, `tp_rank` labels, the retraction counter with a `pid` label. Taken when
    /// the load had finished (its counters equal metrics-after-load.http's): the gauges are
    /// 0. Nothing was retracted, so `sglang:num_retracted_requests_total` is not written
    /// (0.5.17 observability/metrics_collector.py:462-467, a labelled Counter whose child is
    /// made by its first `.labels(…).inc()`, :1206): no preemptions series, not a 0.
    #[test]
    fn a_real_sglang_0_5_17_scrape_is_read() {
        let path = format!(
            "{}/../engines/src/sglang/transcripts/0.5.17/metrics-under-load.http",
            env!("CARGO_MANIFEST_DIR")
        );
        let http = std::fs::read_to_string(&path).expect(&path);
        let (_, body) = http.split_once("\r\n\r\n").expect("headers, then the body");
        let names = names(Engine::Sglang);
        assert!(
            missing(body, &names).is_empty(),
            "{:?}",
            missing(body, &names)
        );
        let m = read_scrape(body, &names).unwrap();
        assert_eq!(m.running, Some(0.0));
        assert_eq!(m.waiting, Some(0.0));
        assert_eq!(m.kv_usage, Some(0.0));
        assert_eq!(m.preemptions, None);
        assert!(!body.contains("sglang:num_retracted_requests_total"));
    }
}
