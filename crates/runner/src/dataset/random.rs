//! Random prompts whose input length, as the server counts it, is the requested length.
//!
//! Prompt `i` of a trial is a prefix of an endless seeded word stream (ChaCha8, seed
//! `prompt_seed(workload seed, trial, point)`, stream `i + 1`; lengths come from stream 0),
//! so its text depends only on the seed and on how many words it takes. The number of words
//! is fitted to the target token count by asking the counter: start from the word count that
//! matched this length before (cached per length) or from the observed words-per-token ratio,
//! then correct by the difference (secant steps, kept inside the bracket found so far).
//! When no whole number of words gives the exact count (a word worth several tokens sits at
//! the boundary), the words that fit are kept and padded with `a` words. A prompt that still
//! misses keeps the server's exact count as its expected length and is counted in
//! [`BuildStats::length_misses`]: never silently off.

use std::collections::HashMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::DatasetError;
use super::lengths::LengthDist;
use super::prompt::{ChatMessage, Prompt, PromptBody, TrialPrompts, prompt_seed, warmup_seed};
use super::tokenize::TokenCounter;
use super::vocab::WORDS;

/// The random workload: input and output length distributions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RandomDataset {
    /// Input length per prompt.
    pub input_tokens: LengthDist,
    /// Output length (`max_tokens`) per prompt.
    pub output_tokens: LengthDist,
    /// Prompts go to the chat API (as one user message): the length fitted is the server's
    /// count of the rendered chat prompt, template tokens included, which is what its
    /// `usage.prompt_tokens` reports. Needs a counter that can count chat prompts; with one
    /// that cannot (no tokenizer), the raw text is fitted and lengths are approximate.
    pub chat: bool,
}

/// How fitting went, over the builder's life.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BuildStats {
    /// Prompts built.
    pub prompts: u64,
    /// Tokenizer requests made.
    pub round_trips: u64,
    /// Counts asked of the tokenizer (local or remote).
    pub counts: u64,
    /// Prompts whose server count differs from the target (their exact count is kept).
    pub length_misses: u64,
}

/// Builds random prompts for every trial of a workload, remembering per length how many
/// words matched (so later prompts of the same length usually take one round trip).
#[derive(Debug)]
pub struct RandomPromptBuilder<C> {
    spec: RandomDataset,
    counter: C,
    words_for_length: HashMap<u32, usize>,
    /// Σ words and Σ tokens of fitted prompts: the words-per-token ratio for new lengths.
    ratio: (u64, u64),
    stats: BuildStats,
    /// Chat prompts were fitted on their raw text (the counter cannot count chat prompts).
    chat_approximate: bool,
    /// With a local tokenizer: each vocabulary word's tokens as the first word of a prompt
    /// (special tokens included) and after another word, measured once (see `fit_by_words`).
    word_tokens: HashMap<&'static str, (i64, i64)>,
    /// Prompts fitted from word counts, and whether predictions are still trusted without a
    /// count of every prompt (the counter sums over words and no sampled check disagreed).
    by_words: u64,
    trust_sums: bool,
}

const MAX_ROUNDS: usize = 12;
/// With a counter that sums over words, one prompt in this many (the first included) is
/// still counted whole to check the prediction.
const CHECK_EVERY: u64 = 64;
const PAD: &str = "a";

impl<C: TokenCounter> RandomPromptBuilder<C> {
    /// A builder for `spec` counting with `counter`; refuses invalid length distributions.
    pub fn new(spec: RandomDataset, counter: C) -> Result<Self, DatasetError> {
        spec.input_tokens.validate()?;
        spec.output_tokens.validate()?;
        Ok(RandomPromptBuilder {
            spec,
            counter,
            words_for_length: HashMap::new(),
            ratio: (0, 0),
            stats: BuildStats::default(),
            chat_approximate: false,
            word_tokens: HashMap::new(),
            by_words: 0,
            trust_sums: true,
        })
    }

    /// How fitting went so far.
    pub fn stats(&self) -> BuildStats {
        BuildStats {
            round_trips: self.counter.round_trips(),
            ..self.stats
        }
    }

    /// The prompts of trial `trial` at sweep point `point`: `measured` from
    /// `prompt_seed(workload_seed, trial, point)`, `warmup` from the derived warm-up seed.
    pub async fn trial_prompts(
        &mut self,
        measured: usize,
        warmup: usize,
        workload_seed: u64,
        trial: u32,
        point: u32,
    ) -> Result<TrialPrompts, DatasetError> {
        let seed = prompt_seed(workload_seed, trial, point);
        Ok(TrialPrompts {
            measured: self.prompts(measured, seed).await?,
            warmup: self.prompts(warmup, warmup_seed(seed)).await?,
            send_offsets_ns: None,
            conversations: None,
        })
    }

    /// `n` prompts from `seed`.
    pub async fn prompts(&mut self, n: usize, seed: u64) -> Result<Vec<Prompt>, DatasetError> {
        let mut lengths = ChaCha8Rng::seed_from_u64(seed);
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let input = self.spec.input_tokens.sample(&mut lengths);
            let output = self.spec.output_tokens.sample(&mut lengths);
            let mut words = ChaCha8Rng::seed_from_u64(seed);
            words.set_stream(i as u64 + 1);
            let (text, count) = self.fit(WordStream::new(words), input, 0).await?;
            let exact = self.counter.is_exact() && !self.chat_approximate;
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

    /// Text of `target` tokens from `seed`'s word stream `stream`, after `lead` (a shared
    /// prefix of `base` tokens, kept verbatim) when given: the text, its exact count when the
    /// fit succeeded (else the closest count, counted in `length_misses`), and whether that
    /// count is the server's own.
    pub(crate) async fn fit_text(
        &mut self,
        lead: Option<&str>,
        base: u32,
        (seed, stream): (u64, u64),
        target: u32,
    ) -> Result<(String, u32, bool), DatasetError> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        let mut words = WordStream::new(rng);
        words.lead = lead.map(str::to_owned);
        let (text, count) = self.fit(words, target, base).await?;
        Ok((
            text,
            count,
            self.counter.is_exact() && !self.chat_approximate,
        ))
    }

    /// Fits `words` to `target` tokens; `base` of them are the stream's lead (its words-per-
    /// token memory is kept for the part after the lead).
    async fn fit(
        &mut self,
        mut words: WordStream,
        target: u32,
        base: u32,
    ) -> Result<(String, u32), DatasetError> {
        self.stats.prompts += 1;
        if base == 0
            && words.lead.is_none()
            && !self.spec.chat
            && self.counter.counts_locally()
            && let Some(fitted) = self.fit_by_words(&mut words, target).await?
        {
            return Ok(fitted);
        }
        let t = i64::from(target);
        let own = target.saturating_sub(base);
        let mut n = match self.words_for_length.get(&own) {
            Some(&n) => n,
            None if self.ratio.1 > 0 => {
                (f64::from(own) * self.ratio.0 as f64 / self.ratio.1 as f64).round() as usize
            }
            None => own as usize,
        }
        .max(1);
        let mut lo: Option<(usize, i64)> = None; // most words known to give < target
        let mut hi: Option<(usize, i64)> = None; // fewest words known to give > target
        let mut best: Option<(String, i64)> = None;
        for _ in 0..MAX_ROUNDS {
            let text = words.text(n);
            let c = self.count(&text).await?;
            if c == t {
                self.remember(own, n, c - i64::from(base));
                return Ok((text, target));
            }
            if best
                .as_ref()
                .is_none_or(|(_, b)| (c - t).abs() < (b - t).abs())
            {
                best = Some((text, c));
            }
            if c < t {
                lo = lo.filter(|l| l.0 > n).or(Some((n, c)));
            } else {
                hi = hi.filter(|h| h.0 < n).or(Some((n, c)));
            }
            // Secant step from the words-per-token slope seen so far (≈1 for this vocabulary).
            let slope = match (lo, hi) {
                (Some(l), Some(h)) if h.1 > l.1 => (h.0 - l.0) as f64 / (h.1 - l.1) as f64,
                _ => n as f64 / c.max(1) as f64,
            };
            let mut next = (n as f64 + (t - c) as f64 * slope).round().max(1.0) as usize;
            if let (Some(l), Some(h)) = (lo, hi) {
                if h.0 <= l.0 + 1 {
                    break; // no whole word count gives exactly the target
                }
                if next <= l.0 || next >= h.0 {
                    next = (l.0 + h.0) / 2;
                }
            }
            if next == n {
                next = if c < t {
                    n + 1
                } else {
                    n.saturating_sub(1).max(1)
                };
            }
            n = next;
        }
        // Pad the longest prefix that stays under the target with single-token words.
        if let Some((ln, lc)) = lo {
            let mut text = words.text(ln);
            for _ in 0..(t - lc) {
                text.push(' ');
                text.push_str(PAD);
            }
            let c = self.count(&text).await?;
            if c == t {
                self.remember(own, ln, c - i64::from(base));
                return Ok((text, target));
            }
            if best
                .as_ref()
                .is_none_or(|(_, b)| (c - t).abs() < (b - t).abs())
            {
                best = Some((text, c));
            }
        }
        self.stats.length_misses += 1;
        let (text, c) = best.unwrap_or_default();
        Ok((text, u32::try_from(c.max(0)).unwrap_or(u32::MAX)))
    }

    /// With a local tokenizer, predict the word count from per-word token counts (a word's
    /// tokens as the first word, and what it adds after another word: tokenizers that split
    /// on whitespace before merging add them up), then confirm with one count of the text.
    /// `None` when no word count is predicted to hit the target or the confirmation
    /// disagrees: the secant search then fits as always, so prompts stay exact either way.
    /// One tokenizer call a prompt instead of several; none for most prompts when the
    /// counter shows that its counts are sums over words (`TokenCounter::sums_over_words`):
    /// then one prompt in `CHECK_EVERY` is counted, and a disagreement ends the trust
    /// (docs/performance.md).
    async fn fit_by_words(
        &mut self,
        words: &mut WordStream,
        target: u32,
    ) -> Result<Option<(String, u32)>, DatasetError> {
        let t = i64::from(target);
        let mut sum = 0i64;
        let mut below = 0i64;
        let mut n = 0;
        while sum < t {
            below = sum;
            let (first, after) = self.word_counts(words.word(n)).await?;
            sum += if n == 0 { first } else { after };
            n += 1;
            if n > 64 * target as usize + 64 {
                return Ok(None);
            }
        }
        // No whole word count hits the target: pad the words under it with single-token
        // words, as the search ends up doing (so the prompt is the same either way).
        let (n, pad) = if sum == t { (n, 0) } else { (n - 1, t - below) };
        if n == 0 {
            return Ok(None);
        }
        let mut text = words.text(n);
        for _ in 0..pad {
            text.push(' ');
            text.push_str(PAD);
        }
        // The padding is predicted as one token a pad word; only checked when unsure.
        let pad_is_one = pad == 0 || self.word_counts(PAD).await?.1 == 1;
        let sums = self.trust_sums && self.counter.sums_over_words() && pad_is_one;
        if !sums || self.by_words.is_multiple_of(CHECK_EVERY) {
            let c = self.count(&text).await?;
            if c != t {
                // A tokenizer that should sum over words did not: count every prompt.
                if sums {
                    self.trust_sums = false;
                }
                return Ok(None);
            }
        }
        self.by_words += 1;
        self.remember(target, n, t);
        Ok(Some((text, target)))
    }

    /// `w`'s tokens as the first word of a prompt and after another word, counted once.
    async fn word_counts(&mut self, w: &'static str) -> Result<(i64, i64), DatasetError> {
        if let Some(&c) = self.word_tokens.get(w) {
            return Ok(c);
        }
        let anchor = WORDS[0];
        let first = i64::from(self.counter.count(w).await?);
        let pair = i64::from(self.counter.count(&format!("{anchor} {w}")).await?);
        let alone = i64::from(self.counter.count(anchor).await?);
        let c = (first, pair - alone);
        self.word_tokens.insert(w, c);
        Ok(c)
    }

    /// The server's count of `text` as it will be sent.
    async fn count(&mut self, text: &str) -> Result<i64, DatasetError> {
        self.stats.counts += 1;
        if self.spec.chat {
            let msg = [ChatMessage {
                role: "user".into(),
                content: text.to_owned(),
            }];
            if let Some(n) = self.counter.count_chat(&msg).await? {
                return Ok(i64::from(n));
            }
            self.chat_approximate = true;
        }
        Ok(i64::from(self.counter.count(text).await?))
    }

    fn remember(&mut self, target: u32, words: usize, tokens: i64) {
        self.words_for_length.insert(target, words);
        self.ratio.0 += words as u64;
        self.ratio.1 += tokens.max(0) as u64;
    }
}

/// The endless word sequence of one prompt; words are drawn on demand and kept.
struct WordStream {
    rng: ChaCha8Rng,
    words: Vec<&'static str>,
    /// Text every prompt of the stream starts with (a shared prefix), then a space.
    lead: Option<String>,
}

impl WordStream {
    fn new(rng: ChaCha8Rng) -> Self {
        WordStream {
            rng,
            words: Vec::new(),
            lead: None,
        }
    }

    /// Word `i` of the stream (drawn when first needed).
    fn word(&mut self, i: usize) -> &'static str {
        while self.words.len() <= i {
            self.words
                .push(WORDS[self.rng.random_range(0..WORDS.len())]);
        }
        self.words[i]
    }

    /// The lead, if any, then the first `n` words, space-separated.
    fn text(&mut self, n: usize) -> String {
        while self.words.len() < n {
            self.words
                .push(WORDS[self.rng.random_range(0..WORDS.len())]);
        }
        let lead = self.lead.as_deref().unwrap_or("");
        let mut s = String::with_capacity(lead.len() + 1 + n * 6);
        s.push_str(lead);
        for (i, w) in self.words[..n].iter().enumerate() {
            if i > 0 || !lead.is_empty() {
                s.push(' ');
            }
            s.push_str(w);
        }
        s
    }
}

#[cfg(test)]
mod tests;
