//! `shared_prefix` prompts: groups of prompts that start with the same prefix, each followed
//! by a suffix of its own (docs/workloads.md).
//!
//! Everything is drawn from the trial's prompt seed `s = prompt_seed(workload seed, trial,
//! point)`: the groups' prefix lengths from `s` (stream 0), the prompts' suffix and output
//! lengths from `s` (last stream), group `g`'s prefix words from `prefix_seed(s)` (stream
//! `g + 1`), prompt `i`'s suffix words from `s` (stream `i + 1`). So no trial or sweep point
//! shares a prefix with another, and variants get the same prompts. A prefix is fitted to its
//! exact length alone, then each prompt (the prefix verbatim, a space, the suffix words) is
//! fitted to prefix + suffix tokens, both as the server counts them.
//!
//! The measured prompts go out in a seeded shuffled order (groups interleaved, as requests of
//! many users sharing system prompts would). Warm-up prompts come from the warm-up seed with
//! prefixes of their own, so every measured group starts cold; with `prime` they carry the
//! measured groups' prefixes instead (suffixes still their own), so the measured requests find
//! their prefixes cached.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::DatasetError;
use super::lengths::LengthDist;
use super::prompt::{Prompt, PromptBody, TrialPrompts, prompt_seed, splitmix64, warmup_seed};
use super::random::{BuildStats, RandomDataset, RandomPromptBuilder};
use super::tokenize::TokenCounter;

/// The shape of a `shared_prefix` trial.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SharedPrefixDataset {
    /// Distinct prefixes per trial.
    pub groups: u32,
    /// Prompts per prefix.
    pub prompts_per_group: u32,
    /// Prefix length in tokens, drawn per group.
    pub prefix_tokens: LengthDist,
    /// Suffix length in tokens, drawn per prompt.
    pub suffix_tokens: LengthDist,
    /// Output length (`max_tokens`), drawn per prompt.
    pub output_tokens: LengthDist,
    /// Warm-up prompts carry the measured prefixes.
    pub prime: bool,
    /// Prompts go to the chat API (lengths are the rendered chat prompt's, as for `random`).
    pub chat: bool,
}

/// One drawn group: its prefix text and exact token count.
#[derive(Debug, Clone)]
struct Group {
    text: String,
    tokens: u32,
}

/// Builds the prompts of `shared_prefix` trials.
#[derive(Debug)]
pub struct SharedPrefixBuilder<C> {
    spec: SharedPrefixDataset,
    fitter: RandomPromptBuilder<C>,
}

impl<C: TokenCounter> SharedPrefixBuilder<C> {
    /// A builder counting with `counter`; refuses empty groups and invalid lengths.
    pub fn new(spec: SharedPrefixDataset, counter: C) -> Result<Self, DatasetError> {
        if spec.groups == 0 || spec.prompts_per_group == 0 {
            return Err(DatasetError::InvalidLength(
                "a shared_prefix dataset needs at least one group of one prompt".into(),
            ));
        }
        spec.prefix_tokens.validate()?;
        spec.suffix_tokens.validate()?;
        let fitter = RandomPromptBuilder::new(
            RandomDataset {
                input_tokens: spec.suffix_tokens,
                output_tokens: spec.output_tokens,
                chat: spec.chat,
            },
            counter,
        )?;
        Ok(SharedPrefixBuilder { spec, fitter })
    }

    /// How fitting went (prefixes and prompts both count as fitted prompts).
    pub fn stats(&self) -> BuildStats {
        self.fitter.stats()
    }

    /// Measured prompts per trial: `groups × prompts_per_group`.
    pub fn requests(&self) -> usize {
        self.spec.groups as usize * self.spec.prompts_per_group as usize
    }

    /// The prompts of trial `trial` at sweep point `point`: every measured prompt, and
    /// `warmup` warm-up prompts (module docs).
    pub async fn trial_prompts(
        &mut self,
        warmup: usize,
        workload_seed: u64,
        trial: u32,
        point: u32,
    ) -> Result<TrialPrompts, DatasetError> {
        let seed = prompt_seed(workload_seed, trial, point);
        let n = self.requests();
        let groups = self.groups(seed).await?;
        let order: Vec<usize> = {
            let mut v: Vec<usize> = (0..n).collect();
            v.shuffle(&mut ChaCha8Rng::seed_from_u64(splitmix64(seed ^ ORDER)));
            v
        };
        // Prompt i belongs to group i / prompts_per_group; sent in `order`.
        let per = self.spec.prompts_per_group as usize;
        let group_of: Vec<usize> = (0..n).map(|i| i / per).collect();
        let mut measured = self.prompts(seed, &groups, &group_of).await?;
        let mut sent = Vec::with_capacity(n);
        for i in order {
            sent.push(std::mem::replace(&mut measured[i], Prompt::text("", 1)));
        }
        let wseed = warmup_seed(seed);
        let warm_groups = if self.spec.prime {
            groups
        } else {
            self.groups(wseed).await?
        };
        let warm_of: Vec<usize> = (0..warmup).map(|j| j % warm_groups.len()).collect();
        let warmup = self.prompts(wseed, &warm_groups, &warm_of).await?;
        Ok(TrialPrompts {
            measured: sent,
            warmup,
            send_offsets_ns: None,
            conversations: None,
        })
    }

    /// The prefixes drawn from `seed`.
    async fn groups(&mut self, seed: u64) -> Result<Vec<Group>, DatasetError> {
        let mut lengths = ChaCha8Rng::seed_from_u64(seed);
        let mut out = Vec::with_capacity(self.spec.groups as usize);
        for g in 0..self.spec.groups {
            let len = self.spec.prefix_tokens.sample(&mut lengths);
            let (text, tokens, _) = self
                .fitter
                .fit_text(None, 0, (prefix_seed(seed), u64::from(g) + 1), len)
                .await?;
            out.push(Group { text, tokens });
        }
        Ok(out)
    }

    /// Prompt `i` of `seed`: group `group_of[i]`'s prefix and suffix `i`.
    async fn prompts(
        &mut self,
        seed: u64,
        groups: &[Group],
        group_of: &[usize],
    ) -> Result<Vec<Prompt>, DatasetError> {
        let mut lengths = ChaCha8Rng::seed_from_u64(seed);
        lengths.set_stream(u64::MAX);
        let mut out = Vec::with_capacity(group_of.len());
        for (i, &g) in group_of.iter().enumerate() {
            let suffix = self.spec.suffix_tokens.sample(&mut lengths);
            let output = self.spec.output_tokens.sample(&mut lengths);
            let group = &groups[g];
            let (text, count, exact) = self
                .fitter
                .fit_text(
                    Some(&group.text),
                    group.tokens,
                    (seed, i as u64 + 1),
                    group.tokens + suffix,
                )
                .await?;
            out.push(Prompt {
                body: PromptBody::Text(text),
                expected_input_tokens: Some(count),
                input_tokens_exact: exact,
                max_tokens: output,
                images: Vec::new(),
                parts: None,
            });
        }
        Ok(out)
    }
}

/// Domain separation of the order shuffle.
const ORDER: u64 = 0x6f72_6465_7200_0000; // "order"

/// The seed of a trial's prefix words: disjoint from its suffix streams.
fn prefix_seed(seed: u64) -> u64 {
    splitmix64(seed ^ 0x7072_6566_6978_0000) // "prefix"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::tokenize::WordCount;

    fn spec(prime: bool) -> SharedPrefixDataset {
        SharedPrefixDataset {
            groups: 3,
            prompts_per_group: 4,
            prefix_tokens: LengthDist::Fixed { tokens: 40 },
            suffix_tokens: LengthDist::Uniform { min: 5, max: 9 },
            output_tokens: LengthDist::Fixed { tokens: 8 },
            prime,
            chat: false,
        }
    }

    fn text(p: &Prompt) -> &str {
        match &p.body {
            PromptBody::Text(t) => t,
            PromptBody::Messages(_) => panic!("text prompts"),
        }
    }

    /// The first 40 words: the prefix (one word is one token for `WordCount`).
    fn prefix(p: &Prompt) -> String {
        text(p).split(' ').take(40).collect::<Vec<_>>().join(" ")
    }

    #[tokio::test]
    async fn groups_share_exactly_their_prefix_and_lengths_add_up() {
        let mut b = SharedPrefixBuilder::new(spec(false), WordCount).expect("valid");
        let p = b.trial_prompts(3, 1, 1, 0).await.expect("builds");
        assert_eq!(p.measured.len(), 12);
        let mut by_prefix = std::collections::BTreeMap::new();
        for pr in &p.measured {
            *by_prefix.entry(prefix(pr)).or_insert(0) += 1;
            let words = text(pr).split(' ').count() as u32;
            assert_eq!(pr.expected_input_tokens, Some(words));
            assert!((45..=49).contains(&words), "{words}");
            assert_eq!(pr.max_tokens, 8);
        }
        assert_eq!(by_prefix.len(), 3, "three groups");
        assert!(by_prefix.values().all(|n| *n == 4), "{by_prefix:?}");
        // Shuffled: the first four sent are not all one group.
        let first: std::collections::BTreeSet<_> = p.measured[..4].iter().map(prefix).collect();
        assert!(first.len() > 1, "groups interleaved");
        // Warm-up prefixes are their own.
        for w in &p.warmup {
            assert!(!by_prefix.contains_key(&prefix(w)), "warm-up starts cold");
        }
    }

    #[tokio::test]
    async fn prime_warms_with_the_measured_prefixes_and_trials_differ() {
        let mut b = SharedPrefixBuilder::new(spec(true), WordCount).expect("valid");
        let p = b.trial_prompts(3, 1, 1, 0).await.expect("builds");
        let measured: std::collections::BTreeSet<_> = p.measured.iter().map(prefix).collect();
        for w in &p.warmup {
            assert!(measured.contains(&prefix(w)), "primed");
            assert!(!p.measured.contains(w), "own suffixes");
        }
        let mut again = SharedPrefixBuilder::new(spec(true), WordCount).expect("valid");
        assert_eq!(
            p,
            again.trial_prompts(3, 1, 1, 0).await.expect("ok"),
            "paired"
        );
        let other = b.trial_prompts(3, 1, 2, 0).await.expect("ok");
        let other: std::collections::BTreeSet<_> = other.measured.iter().map(prefix).collect();
        assert!(measured.is_disjoint(&other), "trial 2 has its own prefixes");
    }
}
