//! An uninformative probe: a baseline whose greedy completion is the same for most of the
//! probe's distinct prompts. Its outputs do not depend on what it is asked (a random-weight
//! model collapsed onto one token, a prompt format the model does not read, a server that
//! ignores the prompt), so a candidate that keeps the collapse looks unchanged whatever its
//! kernels compute: `unchanged` cannot be claimed from such a probe (docs/equivalence.md,
//! "An uninformative probe"). Seen on an H200 with a random-weight MoE: all 16 prompts gave
//! one completion at every start of both experts backends.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use servebench_result::ProbeRecord;

use super::on_basis;

/// Fewer probed prompts than this are never called collapsed (two of three alike is chance).
pub(super) const MIN_PROMPTS: usize = 4;

/// The baseline's largest group of distinct prompts with one and the same completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Collapse {
    /// Prompts answered at the baseline's first probed start.
    pub prompts: usize,
    /// Of them, how many got the most common completion.
    pub same_output: usize,
}

impl Collapse {
    /// The sentence compare prints and the report shows.
    pub fn sentence(&self, variant: &str) -> String {
        format!(
            "uninformative probe: `{variant}` gave one and the same completion to {} of its {} \
             distinct prompts, so its outputs do not follow its input and a candidate that \
             keeps them cannot be told apart from one that computes something else; \
             `unchanged` is not claimed",
            self.same_output, self.prompts
        )
    }
}

/// `Some` when more than half of the prompts (and at least [`MIN_PROMPTS`]) got the
/// completion most of them got, at the baseline's first probed start, on `basis`.
pub(super) fn collapse(baseline: &[&ProbeRecord], basis: &str) -> Option<Collapse> {
    let first = baseline.first()?;
    let mut counts: HashMap<String, usize> = HashMap::new();
    let mut prompts = 0;
    for o in &first.outputs {
        if let Some(k) = on_basis(o, basis).key() {
            prompts += 1;
            *counts.entry(k).or_default() += 1;
        }
    }
    let same_output = counts.values().copied().max().unwrap_or(0);
    (prompts >= MIN_PROMPTS && 2 * same_output > prompts).then_some(Collapse {
        prompts,
        same_output,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use servebench_result::ProbeOutput;

    fn rec(texts: &[&str]) -> ProbeRecord {
        let outputs = texts
            .iter()
            .enumerate()
            .map(|(i, t)| ProbeOutput {
                prompt: i,
                text: Some((*t).to_owned()),
                token_ids: None,
                logprobs: None,
                tokens: None,
                error: None,
                correct: None,
            })
            .collect();
        ProbeRecord {
            block: 0,
            variant: "eager".into(),
            repetition: 1,
            concurrency: 1,
            started_at: String::new(),
            compared_by: "text".into(),
            outputs,
        }
    }

    #[test]
    fn one_completion_for_every_prompt_is_a_collapse() {
        let r = rec(&["ban ban ban"; 16]);
        let c = collapse(&[&r], "text").expect("collapsed");
        assert_eq!((c.prompts, c.same_output), (16, 16));
        assert!(c.sentence("eager").contains("16 of its 16"));
    }

    #[test]
    fn prompt_dependent_outputs_and_small_probes_are_not() {
        let distinct = rec(&["a", "b", "c", "d", "e", "f"]);
        assert_eq!(collapse(&[&distinct], "text"), None);
        // Half alike is not more than half.
        let half = rec(&["x", "x", "x", "a", "b", "c"]);
        assert_eq!(collapse(&[&half], "text"), None);
        let most = rec(&["x", "x", "x", "x", "b", "c"]);
        assert_eq!(collapse(&[&most], "text").map(|c| c.same_output), Some(4));
        let tiny = rec(&["x", "x", "x"]);
        assert_eq!(collapse(&[&tiny], "text"), None);
        assert_eq!(collapse(&[], "text"), None);
    }

    #[test]
    fn failed_requests_are_not_counted() {
        let mut r = rec(&["x", "x", "x", "a", "b"]);
        r.outputs[3].error = Some("HTTP 500".into());
        r.outputs[4].error = Some("HTTP 500".into());
        // 3 answered, below the minimum.
        assert_eq!(collapse(&[&r], "text"), None);
    }
}
