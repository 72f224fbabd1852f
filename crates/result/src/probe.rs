//! The output-equivalence probe's record (`spec.equivalence`, docs/equivalence.md): per
//! server start and probe concurrency, every probe prompt's greedy completion.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One server start's probe at one concurrency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeRecord {
    /// The block (server start), from 0.
    pub block: usize,
    /// Its variant.
    pub variant: String,
    /// The block's repetition (its trials' `trial`).
    pub repetition: u32,
    /// Requests in flight while probing.
    pub concurrency: u32,
    /// UTC RFC 3339 when the probe began.
    pub started_at: String,
    /// What the completions were compared by: `token_ids` where the engine returned them
    /// for every prompt, else `text`.
    pub compared_by: String,
    /// One entry per probe prompt, in prompt order.
    pub outputs: Vec<ProbeOutput>,
}

/// One prompt's completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeOutput {
    /// The prompt, from 0 (the same prompt at every start and variant).
    pub prompt: usize,
    /// The completion's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The completion's token ids, where the engine returned them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_ids: Option<Vec<u64>>,
    /// The chosen tokens' log-probabilities, where the engine returned them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<Vec<f64>>,
    /// The tokens as the engine spelled them in its log-probabilities (the position of a
    /// first difference is counted in these), where it returned them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Vec<String>>,
    /// Why there is no completion (the request failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// With `equivalence.reference`: whether the completion gave the reference answer (the
    /// rule is in docs/equivalence.md); absent without a reference or for a failed request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correct: Option<bool>,
}

impl ProbeOutput {
    /// The key two completions are compared by: their ids, else their tokens, else their
    /// text; `None` for a failed request.
    pub fn key(&self) -> Option<String> {
        if self.error.is_some() {
            return None;
        }
        if let Some(ids) = &self.token_ids {
            return Some(format!("ids:{ids:?}"));
        }
        if let Some(t) = &self.tokens {
            return Some(format!("tokens:{}", t.join("\u{1}")));
        }
        self.text.as_ref().map(|t| format!("text:{t}"))
    }

    /// The sequence a first difference is counted in: token ids, else tokens, else the
    /// text's whitespace-separated words.
    pub fn units(&self) -> Vec<String> {
        if let Some(ids) = &self.token_ids {
            return ids.iter().map(u64::to_string).collect();
        }
        if let Some(t) = &self.tokens {
            return t.clone();
        }
        self.text
            .as_deref()
            .map(|t| t.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default()
    }
}

/// The position (in [`ProbeOutput::units`]) of the first difference of two completions,
/// `None` when they are identical.
pub fn first_difference(a: &ProbeOutput, b: &ProbeOutput) -> Option<usize> {
    if a.key() == b.key() {
        return None;
    }
    let (ua, ub) = (a.units(), b.units());
    let common = ua.iter().zip(&ub).take_while(|(x, y)| x == y).count();
    Some(common)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> ProbeOutput {
        ProbeOutput {
            prompt: 0,
            text: Some(t.into()),
            token_ids: None,
            logprobs: None,
            tokens: None,
            error: None,
            correct: None,
        }
    }

    #[test]
    fn the_first_difference_is_counted_in_words_of_text() {
        assert_eq!(first_difference(&text("a b c"), &text("a b c")), None);
        assert_eq!(first_difference(&text("a b c"), &text("a x c")), Some(1));
        assert_eq!(first_difference(&text("a b"), &text("a b c")), Some(2));
    }

    #[test]
    fn ids_win_over_text_and_a_failure_has_no_key() {
        let mut a = text("same");
        a.token_ids = Some(vec![1, 2]);
        let mut b = text("same");
        b.token_ids = Some(vec![1, 3]);
        assert_eq!(first_difference(&a, &b), Some(1));
        b.error = Some("503".into());
        assert_eq!(b.key(), None);
    }
}
