//! Unit tests of random prompt fitting: exact lengths in few round trips, the word-count
//! path, chat prompts.

use super::*;
use crate::dataset::tokenize::WordCount;

/// Counts like a BPE tokenizer might: BOS + 1 per word, 2 for words longer than 6 bytes.
#[derive(Default)]
struct Lumpy {
    calls: u64,
    /// Counts as a local tokenizer does (the builder may predict from word counts).
    local: bool,
}

impl TokenCounter for Lumpy {
    async fn count(&mut self, text: &str) -> Result<u32, DatasetError> {
        self.calls += 1;
        Ok(1 + text
            .split_whitespace()
            .map(|w| if w.len() > 6 { 2 } else { 1 })
            .sum::<u32>())
    }
    async fn count_chat(&mut self, m: &[ChatMessage]) -> Result<Option<u32>, DatasetError> {
        // A template of 3 tokens around one message.
        Ok(Some(self.count(&m[0].content).await? + 3))
    }
    fn is_exact(&self) -> bool {
        true
    }
    fn round_trips(&self) -> u64 {
        self.calls
    }
    fn counts_locally(&self) -> bool {
        self.local
    }
}

fn spec(input: LengthDist) -> RandomDataset {
    RandomDataset {
        input_tokens: input,
        output_tokens: LengthDist::Fixed { tokens: 16 },
        chat: false,
    }
}

#[tokio::test]
async fn exact_lengths_with_a_lumpy_tokenizer_in_few_round_trips() {
    let input = LengthDist::Uniform { min: 5, max: 600 };
    let mut b = RandomPromptBuilder::new(spec(input), Lumpy::default()).expect("valid");
    let p = b.trial_prompts(40, 2, 1, 1, 0).await.expect("builds");
    let mut check = Lumpy::default();
    for pr in p.measured.iter().chain(&p.warmup) {
        let PromptBody::Text(t) = &pr.body else {
            panic!("text prompts")
        };
        let c = check.count(t).await.expect("counts");
        assert_eq!(Some(c), pr.expected_input_tokens);
        assert!(pr.input_tokens_exact);
        assert_eq!(pr.max_tokens, 16);
    }
    let s = b.stats();
    assert_eq!(s.length_misses, 0, "{s:?}");
    assert!(s.round_trips <= 4 * s.prompts, "{s:?}");
}

#[tokio::test]
async fn a_local_tokenizer_fits_from_word_counts_with_one_call_a_prompt_and_same_prompts() {
    let input = LengthDist::Uniform { min: 5, max: 300 };
    let local = Lumpy {
        local: true,
        ..Lumpy::default()
    };
    let mut fast = RandomPromptBuilder::new(spec(input), local).expect("valid");
    let mut slow = RandomPromptBuilder::new(spec(input), Lumpy::default()).expect("valid");
    // Warm the per-word counts, then count the calls of 500 prompts.
    let _ = fast.prompts(50, 7).await.expect("builds");
    let before = fast.stats().counts;
    let p = fast.prompts(500, 1).await.expect("builds");
    let calls = fast.stats().counts - before;
    assert_eq!(
        p,
        slow.prompts(500, 1).await.expect("builds"),
        "the same prompts"
    );
    let mut check = Lumpy::default();
    for pr in &p {
        let PromptBody::Text(t) = &pr.body else {
            panic!("text prompts")
        };
        assert_eq!(
            Some(check.count(t).await.expect("counts")),
            pr.expected_input_tokens
        );
    }
    // One call a prompt (a few more to count words not seen yet).
    assert!(calls <= 550, "{calls} calls for 500 prompts");
    assert!(slow.stats().counts > calls, "{:?}", slow.stats());
}

#[tokio::test]
async fn chat_prompts_are_fitted_with_their_template() {
    let mut sp = spec(LengthDist::Uniform { min: 8, max: 200 });
    sp.chat = true;
    let mut b = RandomPromptBuilder::new(sp, Lumpy::default()).expect("valid");
    let p = b.prompts(20, 3).await.expect("builds");
    let mut check = Lumpy::default();
    for pr in &p {
        let PromptBody::Text(t) = &pr.body else {
            panic!("text prompts")
        };
        let msg = [ChatMessage {
            role: "user".into(),
            content: t.clone(),
        }];
        let c = check.count_chat(&msg).await.expect("counts");
        assert_eq!(c, pr.expected_input_tokens);
        assert!(pr.input_tokens_exact);
    }
    assert_eq!(b.stats().length_misses, 0);
    // Without a tokenizer, chat lengths are approximate.
    let mut b = RandomPromptBuilder::new(sp, WordCount).expect("valid");
    assert!(!b.prompts(1, 3).await.expect("builds")[0].input_tokens_exact);
}

#[tokio::test]
async fn same_seed_same_prompts_other_trial_other_prompts() {
    let input = LengthDist::Fixed { tokens: 32 };
    let mut a = RandomPromptBuilder::new(spec(input), WordCount).expect("valid");
    let mut b = RandomPromptBuilder::new(spec(input), WordCount).expect("valid");
    let p1 = a.trial_prompts(5, 1, 9, 1, 2).await.expect("ok");
    assert_eq!(
        p1,
        b.trial_prompts(5, 1, 9, 1, 2).await.expect("ok"),
        "paired"
    );
    let p2 = a.trial_prompts(5, 1, 9, 2, 2).await.expect("ok");
    assert_ne!(p1.measured, p2.measured, "trials differ");
    assert_ne!(
        p1.measured[0], p1.warmup[0],
        "warm-up differs from measured"
    );
    assert!(
        !p1.measured[0].input_tokens_exact,
        "no tokenizer: approximate"
    );
    assert_eq!(p1.measured[0].expected_input_tokens, Some(32));
    // Cached per length: the second trial needs no new fitting round.
    assert_eq!(a.words_for_length.get(&32), Some(&32));
}
