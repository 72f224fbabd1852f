//! HDR histograms of a trial's latencies, for cluster bootstraps and CDFs across trials.
//!
//! Values are recorded in microseconds with 3 significant figures (relative error ≤ 0.1%),
//! auto-resizing, so any latency fits. Serialised by the stats crate's codec (base64 of the
//! HdrHistogram V2 deflate format), readable by any HdrHistogram implementation.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Significant figures of every latency histogram.
pub const SIGNIFICANT_FIGURES: u8 = 3;

/// The four latency histograms of a trial (successful measured requests), serialised.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyHistograms {
    /// Always `"us"`.
    pub unit: String,
    /// Precision of the histograms (HdrHistogram significant figures).
    pub significant_figures: u8,
    /// Time to first token, encoded.
    pub ttft: String,
    /// Time per output token, encoded.
    pub tpot: String,
    /// Inter-token latency (one value per gap between events), encoded.
    pub itl: String,
    /// End-to-end latency, encoded.
    pub e2e: String,
    /// Time to first reasoning token (requests that reasoned), encoded; empty when no
    /// request reasoned, and in files written before it was stored.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ttfr: String,
    /// Time to first answer token, encoded; empty when no request reasoned (it is then
    /// TTFT), and in files written before it was stored.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ttfa: String,
}

/// A histogram that could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum HistogramError {
    /// Not base64, or not a V2 histogram.
    #[error("histogram cannot be decoded: {0}")]
    Decode(String),
}

impl LatencyHistograms {
    /// The encoded histogram of a percentile family (`ttft`, `tpot`, `itl`, `e2e`, `ttfr`,
    /// `ttfa`); `None` for a family without one, or one not stored in this file.
    pub fn family(&self, family: &str) -> Option<&str> {
        let h = match family {
            "ttft" => &self.ttft,
            "tpot" => &self.tpot,
            "itl" => &self.itl,
            "e2e" => &self.e2e,
            "ttfr" => &self.ttfr,
            "ttfa" => &self.ttfa,
            _ => return None,
        };
        (!h.is_empty()).then_some(h.as_str())
    }

    /// The `q` quantile of `family` in ms, from its stored histogram (so any percentile of a
    /// committed result can be read); `None` without the histogram or with no value in it.
    pub fn quantile_ms(&self, family: &str, q: f64) -> Option<f64> {
        let h = Self::decode(self.family(family)?).ok()?;
        (!h.is_empty()).then(|| h.value_at_quantile(q) as f64 / 1000.0)
    }

    /// Decodes one of the serialised fields (the stats crate's codec: base64 of the V2
    /// deflate format).
    pub fn decode(encoded: &str) -> Result<Histogram<u64>, HistogramError> {
        servebench_stats::histogram_codec::decode_histogram(encoded)
            .map_err(|e| HistogramError::Decode(e.to_string()))
    }
}

/// Accumulates latencies in milliseconds.
#[derive(Debug)]
pub struct HistogramSet {
    /// Time to first token.
    pub ttft: Histogram<u64>,
    /// Time per output token.
    pub tpot: Histogram<u64>,
    /// Inter-token latency.
    pub itl: Histogram<u64>,
    /// End-to-end latency.
    pub e2e: Histogram<u64>,
    /// Time to first reasoning token.
    pub ttfr: Histogram<u64>,
    /// Time to first answer token.
    pub ttfa: Histogram<u64>,
}

fn new_histogram() -> Histogram<u64> {
    // Sigfig 3 is in hdrhistogram's accepted range (0..=5): cannot fail.
    Histogram::new(SIGNIFICANT_FIGURES).expect("3 significant figures is a valid precision")
}

impl Default for HistogramSet {
    fn default() -> Self {
        HistogramSet {
            ttft: new_histogram(),
            tpot: new_histogram(),
            itl: new_histogram(),
            e2e: new_histogram(),
            ttfr: new_histogram(),
            ttfa: new_histogram(),
        }
    }
}

/// Records a value in ms as whole microseconds (negative values, which only clock faults
/// could produce, are recorded as 0).
pub fn record_ms(h: &mut Histogram<u64>, value_ms: f64) {
    let us = (value_ms * 1000.0).round();
    let us = if us.is_finite() && us > 0.0 {
        us as u64
    } else {
        0
    };
    // Auto-resizing histograms accept any u64.
    let _ = h.record(us);
}

impl HistogramSet {
    /// Serialises all four.
    pub fn encode(&self) -> LatencyHistograms {
        LatencyHistograms {
            unit: "us".to_owned(),
            significant_figures: SIGNIFICANT_FIGURES,
            ttft: encode(&self.ttft),
            tpot: encode(&self.tpot),
            itl: encode(&self.itl),
            e2e: encode(&self.e2e),
            // Stored only when some request reasoned (older files and runs without
            // reasoning keep their shape).
            ttfr: if self.ttfr.is_empty() {
                String::new()
            } else {
                encode(&self.ttfr)
            },
            ttfa: if self.ttfr.is_empty() {
                String::new()
            } else {
                encode(&self.ttfa)
            },
        }
    }
}

/// The stats crate's codec; an empty string (rejected by `decode`) if encoding fails, so a
/// failure is visible rather than silent.
fn encode(h: &Histogram<u64>) -> String {
    servebench_stats::histogram_codec::encode_histogram(h).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_preserves_counts_and_precision() {
        let mut set = HistogramSet::default();
        for v in [0.5, 1.0, 12.345, 1000.0, 60_000.0] {
            record_ms(&mut set.ttft, v);
        }
        let enc = set.encode();
        let h = LatencyHistograms::decode(&enc.ttft).expect("decodes");
        assert_eq!(h.len(), 5);
        let max_us = h.max() as f64;
        assert!((max_us - 60_000_000.0).abs() / 60_000_000.0 < 1e-3);
        assert_eq!(
            LatencyHistograms::decode(&enc.itl)
                .expect("empty decodes")
                .len(),
            0
        );
        assert!(LatencyHistograms::decode("!!").is_err());
    }
}
