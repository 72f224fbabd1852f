//! Per-turn figures of a multi-turn trial: requests, completions, mean TTFT and mean prompt
//! length of each turn across the conversations.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::derive::RequestMetrics;
use super::latency::LatencyStats;
use crate::record::RequestRecord;

/// One turn index of a `multi_turn` trial (`TrialSummary::turns`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TurnSummary {
    /// The turn index (0-based).
    pub turn: u32,
    /// Requests of that turn (one per conversation that reached it).
    pub requests: usize,
    /// Of them, the ones that succeeded.
    pub completed: usize,
    /// TTFT of the successful ones.
    pub ttft: Option<LatencyStats>,
    /// Mean `usage.prompt_tokens` of the successful ones that reported it.
    pub mean_prompt_tokens: Option<f64>,
}

/// Per-turn summaries of the records that carry a turn (`multi_turn`).
pub(crate) fn turn_summaries(
    records: &[RequestRecord],
    metrics: &[RequestMetrics],
) -> Vec<TurnSummary> {
    let mut by: BTreeMap<u32, (usize, usize, Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for (r, m) in records.iter().zip(metrics) {
        let Some(t) = r.turn else { continue };
        let e = by.entry(t.turn).or_default();
        e.0 += 1;
        if m.failure.is_none() {
            e.1 += 1;
            e.2.extend(m.ttft_ms);
            e.3.extend(r.usage.map(|u| f64::from(u.prompt_tokens)));
        }
    }
    by.into_iter()
        .map(|(turn, (requests, completed, ttft, prompt))| TurnSummary {
            turn,
            requests,
            completed,
            ttft: LatencyStats::from_values(ttft),
            mean_prompt_tokens: (!prompt.is_empty())
                .then(|| prompt.iter().sum::<f64>() / prompt.len() as f64),
        })
        .collect()
}
