//! What one request sends, and the per-trial prompt seed.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The message text.
    pub content: String,
}

/// The input of one request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptBody {
    /// A completion prompt; sent to the chat API as one `user` message.
    Text(String),
    /// Chat messages; the completions API cannot send these.
    Messages(Vec<ChatMessage>),
}

/// One prompt of a trial.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prompt {
    /// What the request sends.
    pub body: PromptBody,
    /// The input length in tokens, when known.
    pub expected_input_tokens: Option<u32>,
    /// `expected_input_tokens` is the server's (or the model tokenizer's) own count of this
    /// text, rather than an approximation (word count without a tokenizer).
    pub input_tokens_exact: bool,
    /// `max_tokens` sent with the request: the requested output length.
    pub max_tokens: u32,
    /// Images sent with it (chat only) as `image_url` content parts after the text: data
    /// URLs made before the trial, or URLs. Their token count is the server's alone
    /// (`usage.prompt_tokens`): a prompt with images has no expected input length.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    /// The order of the last user message's parts when a prompt file's line gives it (an
    /// OpenAI-style `content` array, images among the text); `None`: the text, then
    /// `images`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<Vec<ContentPart>>,
}

/// One part of a user message that carries images, in the order sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContentPart {
    /// A `text` part.
    Text(String),
    /// An `image_url` part: the prompt's image at this index.
    Image(usize),
}

impl Prompt {
    /// A text prompt with unknown input length.
    pub fn text(text: impl Into<String>, max_tokens: u32) -> Self {
        Prompt {
            body: PromptBody::Text(text.into()),
            expected_input_tokens: None,
            input_tokens_exact: false,
            max_tokens,
            images: Vec::new(),
            parts: None,
        }
    }
}

/// The prompts of one trial: measured ones, and distinct ones for warm-up (so warm-up does
/// not pre-fill a prefix cache with the measured prompts).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialPrompts {
    /// Prompts of the measured requests, in order.
    pub measured: Vec<Prompt>,
    /// Prompts of the warm-up requests.
    pub warmup: Vec<Prompt>,
    /// Send times of the measured requests (ns from the trial start), when the dataset sets
    /// them (a `trace` replay); `None`: the arrival schedule of the trial's `LoadConfig`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_offsets_ns: Option<Vec<u64>>,
    /// A `multi_turn` trial: its conversations, sent turn by turn instead of `measured` and
    /// `warmup` (which are then empty).
    #[serde(skip)]
    pub conversations: Option<Conversations>,
}

/// One user turn: the message and the answer's `max_tokens`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserTurn {
    /// The new user message.
    pub user: String,
    /// `max_tokens` of the answer.
    pub max_tokens: u32,
}

/// One conversation: its user turns in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    /// The turns.
    pub turns: Vec<UserTurn>,
}

/// The conversations of one trial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversations {
    /// Measured conversations; their first turns follow the arrival schedule.
    pub measured: Vec<Conversation>,
    /// Warm-up conversations (one turn each), sent before the measured ones.
    pub warmup: Vec<Conversation>,
    /// Pause between an answer's end and the next turn's send.
    pub think_time: Duration,
}

/// The seed of the prompts of trial `trial` at sweep point `point`, from the workload seed.
///
/// Paired design: every variant gets the same prompts at the same `(trial, point)`; prompts
/// differ across trials (a prefix cache cannot turn trial 2 into a replay of trial 1) and
/// across points. It is the spec crate's [`servebench_spec::plan::prompt_seed`] — the seed
/// `servebench plan` prints — so there is one definition; it is part of the result format:
/// changing it changes every published prompt set.
pub fn prompt_seed(workload_seed: u64, trial: u32, point: u32) -> u64 {
    servebench_spec::plan::prompt_seed(workload_seed, trial, point as usize)
}

/// The seed of a trial's warm-up prompts: disjoint from every measured stream.
pub fn warmup_seed(prompt_seed: u64) -> u64 {
    splitmix64(prompt_seed ^ 0x7761_726d_7570_0000) // "warmup"
}

/// SplitMix64's output function: a bijective 64-bit mixer.
pub(crate) fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_vector() {
        // SplitMix64 with state 0: first output is 0xe220a8397b1dcdaf (Vigna's reference).
        assert_eq!(splitmix64(0), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn prompt_seed_is_stable_paired_and_distinct() {
        // Pinned: published prompt sets depend on it.
        assert_eq!(prompt_seed(1, 1, 0), prompt_seed(1, 1, 0));
        // Independent reference: the same SplitMix64 chain computed in Python.
        let golden = prompt_seed(1, 2, 3);
        assert_eq!(golden, 0xd156_a85a_6a91_425a);
        let mut seen = std::collections::HashSet::new();
        for t in 0..20 {
            for p in 0..20 {
                assert!(seen.insert(prompt_seed(7, t, p)), "collision at {t},{p}");
            }
        }
        assert_ne!(prompt_seed(1, 1, 0), prompt_seed(2, 1, 0));
        assert_ne!(warmup_seed(golden), golden);
    }
}
