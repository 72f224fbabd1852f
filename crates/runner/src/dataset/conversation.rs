//! `multi_turn` conversations (docs/workloads.md): per trial, `conversations` chats of a
//! drawn number of turns; each turn is a new user message of a drawn length. What the server
//! answers is carried into the next turn by the load generator
//! (`crate::loadgen::trial`, its `conversation` module), so only the user side is drawn here.
//!
//! Everything comes from the trial's prompt seed `s = prompt_seed(workload seed, trial,
//! point)`: turn counts, message and output lengths from `s` (last stream), conversation `c`'s
//! turn `k` words from `s`'s stream `c · 1024 + k + 1`. User messages are fitted to their
//! length alone (as the server counts the text); the prompt of a later turn is the whole
//! history rendered by the server's chat template, whose length the server reports in
//! `usage.prompt_tokens`.

use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::DatasetError;
use super::lengths::LengthDist;
use super::prompt::{Conversation, Conversations, UserTurn, prompt_seed, warmup_seed};
use super::random::{BuildStats, RandomDataset, RandomPromptBuilder};
use super::tokenize::TokenCounter;

/// The shape of a `multi_turn` trial.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MultiTurnDataset {
    /// Conversations per trial.
    pub conversations: u32,
    /// Turns per conversation, drawn per conversation.
    pub turns: LengthDist,
    /// Length of each user message, drawn per turn.
    pub user_tokens: LengthDist,
    /// Output length of each answer, drawn per turn.
    pub output_tokens: LengthDist,
    /// Pause between an answer and the next turn.
    pub think_time: Duration,
}

/// Most turns a conversation can have (the word streams of its turns are `c · 1024 + k + 1`).
pub const MAX_TURNS: u32 = 1024;

/// Builds the conversations of `multi_turn` trials.
#[derive(Debug)]
pub struct MultiTurnBuilder<C> {
    spec: MultiTurnDataset,
    fitter: RandomPromptBuilder<C>,
}

impl<C: TokenCounter> MultiTurnBuilder<C> {
    /// A builder counting with `counter`.
    pub fn new(spec: MultiTurnDataset, counter: C) -> Result<Self, DatasetError> {
        spec.turns.validate()?;
        spec.user_tokens.validate()?;
        if spec.conversations == 0 {
            return Err(DatasetError::InvalidLength(
                "a multi_turn dataset needs at least one conversation".into(),
            ));
        }
        let fitter = RandomPromptBuilder::new(
            RandomDataset {
                input_tokens: spec.user_tokens,
                output_tokens: spec.output_tokens,
                chat: false,
            },
            counter,
        )?;
        Ok(MultiTurnBuilder { spec, fitter })
    }

    /// How fitting went.
    pub fn stats(&self) -> BuildStats {
        self.fitter.stats()
    }

    /// Trial `trial` at `point`: its conversations and `warmup` one-turn warm-up ones.
    pub async fn trial_conversations(
        &mut self,
        warmup: usize,
        workload_seed: u64,
        trial: u32,
        point: u32,
    ) -> Result<Conversations, DatasetError> {
        let seed = prompt_seed(workload_seed, trial, point);
        let measured = self
            .conversations(seed, self.spec.conversations as usize, None)
            .await?;
        let warmup = self
            .conversations(warmup_seed(seed), warmup, Some(1))
            .await?;
        Ok(Conversations {
            measured,
            warmup,
            think_time: self.spec.think_time,
        })
    }

    async fn conversations(
        &mut self,
        seed: u64,
        n: usize,
        turns: Option<u32>,
    ) -> Result<Vec<Conversation>, DatasetError> {
        let mut lengths = ChaCha8Rng::seed_from_u64(seed);
        lengths.set_stream(u64::MAX);
        let mut out = Vec::with_capacity(n);
        for c in 0..n as u64 {
            let k = turns
                .unwrap_or_else(|| self.spec.turns.sample(&mut lengths))
                .min(MAX_TURNS);
            let mut conv = Conversation { turns: Vec::new() };
            for t in 0..u64::from(k) {
                let len = self.spec.user_tokens.sample(&mut lengths);
                let max_tokens = self.spec.output_tokens.sample(&mut lengths);
                let stream = c * u64::from(MAX_TURNS) + t + 1;
                let (user, _, _) = self.fitter.fit_text(None, 0, (seed, stream), len).await?;
                conv.turns.push(UserTurn { user, max_tokens });
            }
            out.push(conv);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::tokenize::WordCount;

    #[tokio::test]
    async fn conversations_are_seeded_per_trial_with_drawn_turns() {
        let spec = MultiTurnDataset {
            conversations: 4,
            turns: LengthDist::Uniform { min: 2, max: 4 },
            user_tokens: LengthDist::Fixed { tokens: 12 },
            output_tokens: LengthDist::Fixed { tokens: 5 },
            think_time: Duration::ZERO,
        };
        let mut b = MultiTurnBuilder::new(spec, WordCount).expect("valid");
        let c = b.trial_conversations(2, 1, 1, 0).await.expect("builds");
        assert_eq!(c.measured.len(), 4);
        assert_eq!(c.warmup.len(), 2);
        assert!(c.warmup.iter().all(|w| w.turns.len() == 1));
        for conv in &c.measured {
            assert!((2..=4).contains(&conv.turns.len()));
            for t in &conv.turns {
                assert_eq!(t.user.split(' ').count(), 12);
                assert_eq!(t.max_tokens, 5);
            }
        }
        assert_ne!(c.measured[0].turns[0], c.measured[0].turns[1]);
        let mut again = MultiTurnBuilder::new(spec, WordCount).expect("valid");
        assert_eq!(c, again.trial_conversations(2, 1, 1, 0).await.expect("ok"));
        let other = b.trial_conversations(2, 1, 2, 0).await.expect("ok");
        assert_ne!(c.measured, other.measured, "trials differ");
    }
}
