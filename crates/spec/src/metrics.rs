//! The metric catalogue: every metric a spec, a result or a comparison may name.
//!
//! Definitions are in `docs/metrics.md`; the load generator derives every metric from raw
//! per-request instants, the stats crate summarises them. Stats is told a metric's
//! direction; it does not know this catalogue.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
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
    /// What it is, in one sentence (the schema's completion text, docs/spec.md's list).
    pub description: String,
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

const LATENCIES: [(&str, &str); 8] = [
    ("ttft", "time to first token"),
    ("tpot", "time per output token"),
    ("itl", "inter-token latency (per chunk)"),
    ("itl_per_token", "inter-token latency per token"),
    ("e2e", "end-to-end latency"),
    ("queue_time", "client queue time"),
    ("ttfr", "time to first reasoning token"),
    ("ttfa", "time to first answer token"),
];

/// Per-request token counts, summarised like the latencies (docs/metrics.md, "Reasoning and
/// answer"): descriptive, neither more nor fewer is better in general.
const COUNTS: [(&str, &str); 2] = [
    ("reasoning_tokens", "reasoning tokens per request"),
    ("answer_tokens", "answer tokens per request"),
];

/// What each latency family measures, per request (docs/metrics.md, "Per request").
fn family_definition(base: &str) -> &'static str {
    match base {
        "ttft" => "time from the send to the first token-bearing event",
        "tpot" => "(E2E − TTFT) / (output tokens − 1), requests with 2 or more output tokens",
        "itl" => "each gap between consecutive token-bearing events",
        "itl_per_token" => "each gap between token events divided by the tokens of the later event",
        "e2e" => "time from the send to the last token-bearing event",
        "ttfr" => {
            "time from the send to the first reasoning delta (`reasoning_content` or \
             `reasoning`), requests that reasoned"
        }
        "ttfa" => {
            "time from the send to the first answer delta (content, text or a tool call); \
             TTFT for a request without reasoning"
        }
        "reasoning_tokens" => {
            "output tokens that were reasoning (usage's `completion_tokens_details.\
             reasoning_tokens` where sent, else the stream's count); only when a request \
             reasoned"
        }
        "answer_tokens" => "output tokens minus reasoning tokens",
        _ => "time from the scheduled arrival to the send (the client's own wait)",
    }
}

fn aggregate_words(a: Aggregate) -> String {
    match a {
        Aggregate::Trial => "over the trial".into(),
        Aggregate::Mean => "mean".into(),
        Aggregate::Quantile(q) => {
            let pct = (q * 100_000.0).round() / 1000.0;
            format!("{pct}th percentile")
        }
        Aggregate::Min => "smallest".into(),
        Aggregate::Max => "largest".into(),
    }
}

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
    for (base, what) in LATENCIES {
        for (suffix, agg) in SUFFIXES {
            let over = if base == "queue_time" {
                "a trial's requests"
            } else {
                "a trial's successful requests"
            };
            let description = format!(
                "{} {what} over {over} (ms, lower is better): {}",
                capitalize(&aggregate_words(agg)),
                family_definition(base)
            );
            out.push(Metric {
                name: format!("{base}_{suffix}"),
                unit: "ms",
                direction: Direction::LowerIsBetter,
                source: what,
                aggregate: agg,
                can_be_zero: base == "queue_time",
                description,
            });
        }
    }
    for (base, what) in COUNTS {
        for (suffix, agg) in SUFFIXES {
            let description = format!(
                "{} {what} over a trial's successful requests (tokens, descriptive): {}",
                capitalize(&aggregate_words(agg)),
                family_definition(base)
            );
            out.push(Metric {
                name: format!("{base}_{suffix}"),
                unit: "tokens",
                direction: Direction::Neutral,
                source: what,
                aggregate: agg,
                can_be_zero: true,
                description,
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
    let description = format!(
        "{} ({unit}, {}): {source}",
        trial_words(name),
        direction_words(direction)
    );
    Metric {
        name: name.to_owned(),
        unit,
        direction,
        source,
        aggregate: Aggregate::Trial,
        can_be_zero,
        description,
    }
}

fn trial_words(name: &str) -> &'static str {
    match name {
        "output_throughput" => "Output tokens per second",
        "total_throughput" => "Input and output tokens per second",
        "request_throughput" => "Successful requests per second",
        "goodput" => "Requests per second that met every SLO of `spec.slo`",
        "error_rate" => "Share of requests that failed",
        "peak_concurrency" => "Most requests in flight at once",
        "mean_concurrency" => "Mean requests in flight",
        "cache_hit_ratio" => "Share of prompt tokens served from the prefix cache",
        _ => "A trial quantity",
    }
}

fn direction_words(d: Direction) -> &'static str {
    match d {
        Direction::HigherIsBetter => "higher is better",
        Direction::LowerIsBetter => "lower is better",
        Direction::Neutral => "descriptive",
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Look a metric up by name: a catalogue name, or any percentile of a per-request family
/// written `<family>_pNN` (`ttft_p95`, `e2e_p99_9` for the 99.9th; see [`percentile`]).
pub fn metric(name: &str) -> Option<Metric> {
    catalogue()
        .into_iter()
        .find(|m| m.name == name)
        .or_else(|| percentile_metric(name))
}

/// The families whose every percentile can be named: those whose per-trial histogram the
/// result stores (TTFT, TPOT, ITL, E2E, and the reasoning ones TTFR and TTFA), so the
/// percentile is read from it, for committed results too.
pub const PERCENTILE_FAMILIES: [&str; 6] = ["ttft", "tpot", "itl", "e2e", "ttfr", "ttfa"];

fn percentile_families() -> impl Iterator<Item = &'static str> {
    PERCENTILE_FAMILIES.into_iter()
}

/// The regular expression of a percentile's suffix: `p` and a level from 1 to 99 with up to
/// three decimals after `_` (`p95`, `p99_9`, `p99_99`).
pub const PERCENTILE_SUFFIX: &str = "p[1-9][0-9]?(_[0-9]{1,3})?";

/// `<family>_pNN` as (family, quantile): `ttft_p95` → (`ttft`, 0.95), `e2e_p99_9` → (`e2e`,
/// 0.999). `None` for anything else (`p0`, `p100`, `p050`, an unknown family).
pub fn percentile(name: &str) -> Option<(&'static str, f64)> {
    let (family, level) = name.rsplit_once("_p").and_then(|(f, l)| {
        // `e2e_p99_9`: the family is before the last `_p` whose rest is a level.
        Some((f, l)).filter(|_| !l.is_empty())
    })?;
    let family = percentile_families().find(|f| *f == family)?;
    let (whole, frac) = match level.split_once('_') {
        Some((w, f)) => (w, Some(f)),
        None => (level, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || whole.len() > 2 || whole.starts_with('0') {
        return None;
    }
    if let Some(f) = frac
        && (!digits(f) || f.len() > 3)
    {
        return None;
    }
    // In thousandths of a percent, so 99.9 is 99 900 exactly and q = 0.999 is the double
    // nearest 0.999.
    let whole: u64 = whole.parse().ok()?;
    let frac: u64 = match frac {
        Some(f) => format!("{f:0<3}").parse().ok()?,
        None => 0,
    };
    let milli = whole * 1000 + frac;
    (milli > 0 && milli < 100_000).then_some((family, milli as f64 / 100_000.0))
}

/// A percentile outside the catalogue's fixed set, as a metric of its family.
fn percentile_metric(name: &str) -> Option<Metric> {
    let (family, q) = percentile(name)?;
    let template = catalogue()
        .into_iter()
        .find(|m| m.name == format!("{family}_p50"))?;
    let words = aggregate_words(Aggregate::Quantile(q));
    let description = template.description.replacen("50th percentile", &words, 1);
    Some(Metric {
        name: name.to_owned(),
        aggregate: Aggregate::Quantile(q),
        description,
        ..template
    })
}

/// Every metric name, in catalogue order.
pub fn metric_names() -> Vec<String> {
    catalogue().into_iter().map(|m| m.name).collect()
}

/// A metric name as a spec writes it (`compare.metrics`, `trials.until_decided.metrics`): in
/// the schema, the catalogue as an `enum`, each name with its description
/// (`markdownEnumDescriptions`, which editors show beside the completion). The Rust field
/// stays a `String`; an unknown name is refused by the schema check with a suggestion.
#[derive(Debug)]
pub struct MetricName;

impl JsonSchema for MetricName {
    fn schema_name() -> Cow<'static, str> {
        "MetricName".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let all = catalogue();
        let names: Vec<&str> = all.iter().map(|m| m.name.as_str()).collect();
        let docs: Vec<&str> = all.iter().map(|m| m.description.as_str()).collect();
        let families: Vec<&str> = percentile_families().collect();
        let pattern = format!("^({})_{PERCENTILE_SUFFIX}$", families.join("|"));
        json_schema!({
            "description": "A metric of the catalogue (docs/metrics.md; docs/spec.md lists them with their units), or any percentile of a per-request family: `ttft_p95`, `e2e_p99_9` (99.9th).",
            "anyOf": [
                {
                    "type": "string",
                    "enum": names,
                    "markdownEnumDescriptions": docs
                },
                {
                    "type": "string",
                    "pattern": pattern,
                    "description": "Any percentile: `<family>_pNN` (`ttft_p95`), decimals after `_` (`ttft_p99_9`)."
                }
            ]
        })
    }
}

/// `compare.thresholds` in the schema: a map whose keys are catalogue metric names.
#[derive(Debug)]
pub struct MetricThresholds;

impl JsonSchema for MetricThresholds {
    fn schema_name() -> Cow<'static, str> {
        "MetricThresholds".into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let name = generator.subschema_for::<MetricName>();
        json_schema!({
            "type": "object",
            "propertyNames": name,
            "additionalProperties": {"type": "number"}
        })
    }
}

/// Whether `options` (an `enum` of the schema) is the metric catalogue.
pub fn is_catalogue(options: &[String]) -> bool {
    let names = metric_names();
    options.len() == names.len() && options.iter().zip(&names).all(|(a, b)| a == b)
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
        assert_eq!(
            metric("ttft_p95").map(|m| (m.aggregate, m.min_requests(), m.direction)),
            Some((Aggregate::Quantile(0.95), 90, Direction::LowerIsBetter))
        );
        assert!(metric("ttft_p95").is_some_and(|m| m.description.starts_with("95th percentile")));
        assert_eq!(percentile("e2e_p99_9"), Some(("e2e", 0.999)));
        assert_eq!(percentile("itl_p75"), Some(("itl", 0.75)));
        assert_eq!(percentile("itl_per_token_p75"), None);
        assert_eq!(percentile("ttfa_p1"), Some(("ttfa", 0.01)));
        for bad in [
            "ttft_p0",
            "ttft_p100",
            "ttft_p050",
            "ttft_p9_",
            "ttft_p99_1234",
            "foo_p95",
            "output_throughput_p95",
            "ttft_p",
            "ttft_p9x",
        ] {
            assert!(metric(bad).is_none(), "{bad}");
        }
        assert_eq!(
            metric("ttfa_p50").map(|m| m.direction),
            Some(Direction::LowerIsBetter)
        );
        assert_eq!(
            metric("reasoning_tokens_mean").map(|m| (m.unit, m.direction)),
            Some(("tokens", Direction::Neutral))
        );
    }
}
