//! The output tokens of one response: every token's id and text, known from its position.
//!
//! Sampled text (any temperature but 0) is drawn from the server seed and the request
//! number, as before. Greedy text (`temperature: 0`) is a function of the model's identity
//! (`--model-path`, else `--model`) and the prompt's token ids only, so two servers with the
//! same settings answer a prompt with the same tokens. Two knobs change that on purpose:
//! `--numerics-change F` (a share F of prompts, chosen by prompt hash, continue differently
//! from a position drawn per prompt, as a kernel or precision change flips an argmax) and
//! `--batch-variance F` (a share F of prompts continue, from their own drawn position, by a
//! path that depends on how many sequences shared that step: no batch invariance). With
//! `--answers`, a prompt of the answers file whose draw (by prompt hash) falls below
//! `--answer-accuracy` and that no numerics change picked starts its greedy text with the
//! answer and a newline (token 0's text; its id is unchanged): a changed path is taken to
//! have flipped the answer.

use crate::dialect::rng::{mix3, splitmix64, unit};
use crate::dialect::tokenizer::{self, VOCAB_SIZE};

/// Purposes of the text's hashes.
mod salt {
    pub(crate) const GREEDY: u64 = 0x4752_4545;
    pub(crate) const NUMERICS_PICK: u64 = 0x4e55_4d50;
    pub(crate) const NUMERICS_AT: u64 = 0x4e55_4d41;
    pub(crate) const NUMERICS: u64 = 0x4e55_4d53;
    pub(crate) const BATCH_PICK: u64 = 0x4241_5450;
    pub(crate) const BATCH_AT: u64 = 0x4241_5441;
    pub(crate) const BATCH: u64 = 0x4241_5453;
    pub(crate) const LOGPROB: u64 = 0x4c4f_4750;
    pub(crate) const ANSWER: u64 = 0x414e_5357;
}

/// The ids and texts of one response's output tokens. Each is a pure function of the
/// response's seeds and the token's position (and, under `--batch-variance`, of the batch
/// size at one position), so any part of the server can ask for token `i`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenText {
    seed: u64,
    /// From this position on, the greedy path a numerics change took: (position, seed).
    numerics: Option<(u32, u64)>,
    /// From this position on, the path depends on the batch size at that position.
    variance_at: Option<u32>,
    /// The batch size seen at `variance_at` (1 until known: the batch-invariant path).
    batch: u32,
    /// The reference answer token 0 spells (`--answers`).
    answer: Option<&'static str>,
}

/// How a greedy response's text is made.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Greedy {
    /// The model's identity (a hash of its path or name).
    pub identity: u64,
    /// A hash of the prompt's token ids.
    pub prompt: u64,
    /// The request's `max_tokens`, over which the knobs' positions are drawn.
    pub max_tokens: u32,
    /// `--numerics-change`.
    pub numerics_change: f64,
    /// `--batch-variance`.
    pub batch_variance: f64,
    /// The prompt's reference answer (`--answers`), if it has one.
    pub answer: Option<&'static str>,
    /// `--answer-accuracy`.
    pub answer_accuracy: f64,
}

impl TokenText {
    /// Tokens drawn from `seed` (the server seed and the request number).
    pub fn sampled(seed: u64) -> Self {
        TokenText {
            seed,
            numerics: None,
            variance_at: None,
            batch: 1,
            answer: None,
        }
    }

    /// The greedy tokens of a prompt for a model.
    pub fn greedy(g: &Greedy) -> Self {
        let seed = mix3(g.identity, g.prompt, salt::GREEDY);
        let draw = |pick: u64, at: u64, share: f64| {
            (share > 0.0 && unit(mix3(g.prompt, pick, 0)) < share)
                .then(|| position(unit(mix3(g.prompt, at, 0)), g.max_tokens))
        };
        let numerics = draw(salt::NUMERICS_PICK, salt::NUMERICS_AT, g.numerics_change)
            .map(|at| (at, mix3(seed, salt::NUMERICS, 0)));
        let right = unit(mix3(g.prompt, salt::ANSWER, 0)) < g.answer_accuracy;
        TokenText {
            seed,
            numerics,
            variance_at: draw(salt::BATCH_PICK, salt::BATCH_AT, g.batch_variance),
            batch: 1,
            answer: g.answer.filter(|_| right && numerics.is_none()),
        }
    }

    /// The position whose batch size the text waits for (`--batch-variance`).
    pub fn variance_at(&self) -> Option<u32> {
        self.variance_at
    }

    /// Records the batch size of the step that made token `variance_at`.
    pub fn set_batch(&mut self, batch: u32) {
        self.batch = batch.max(1);
    }

    /// The seed of token `index`; a change that starts at `skip` is left out.
    fn seed_at(&self, index: u32, skip: Option<u32>) -> u64 {
        let mut s = self.seed;
        if let Some((at, numerics)) = self.numerics
            && index >= at
            && skip != Some(at)
        {
            s = numerics;
        }
        if let Some(at) = self.variance_at
            && index >= at
            && self.batch > 1
            && skip != Some(at)
        {
            s = mix3(s, u64::from(self.batch), salt::BATCH);
        }
        s
    }

    /// True when a change of path starts at `index`.
    fn changes_at(&self, index: u32) -> bool {
        self.numerics.is_some_and(|(at, _)| at == index)
            || (self.variance_at == Some(index) && self.batch > 1)
    }

    /// The id of token `index`. Where a changed path starts, its token differs from the one
    /// the unchanged path has there, as an argmax that flipped does.
    pub fn id(&self, index: u32) -> u32 {
        let id = tokenizer::generated_id(self.seed_at(index, None), index);
        if self.changes_at(index)
            && id == tokenizer::generated_id(self.seed_at(index, Some(index)), index)
        {
            return (id + 1) % VOCAB_SIZE;
        }
        id
    }

    /// Appends the text of token `index` (a space and its word) to `out`.
    pub fn push(&self, index: u32, out: &mut String) {
        out.push(' ');
        if let (0, Some(a)) = (index, self.answer) {
            out.push_str(a);
            out.push('\n');
            return;
        }
        tokenizer::push_word(self.id(index), out);
    }

    /// The log-probabilities of token `index`, and the `top` most likely tokens (itself
    /// first, then `top - 1` others; none when `top` is 0). The token itself is always the most likely (a greedy
    /// choice); the numbers are made up but fixed by the text's seed.
    pub fn logprobs(&self, index: u32, top: u32) -> TokenLogprobs {
        let id = self.id(index);
        let h = mix3(self.seed_at(index, None), u64::from(index), salt::LOGPROB);
        // p in [0.35, 0.95): the others share the rest, halving down the list, so none
        // reaches the chosen token's.
        let p = 0.35 + 0.6 * unit(h);
        let want = top as usize;
        let mut top_list = Vec::with_capacity(want);
        if want > 0 {
            top_list.push((id, p.ln()));
        }
        let mut rest = 1.0 - p;
        let mut k = h;
        while top_list.len() < want {
            k = splitmix64(k);
            let alt = (k % u64::from(VOCAB_SIZE)) as u32;
            if alt == id || top_list.iter().any(|&(i, _)| i == alt) {
                continue;
            }
            rest /= 2.0;
            top_list.push((alt, rest.ln()));
        }
        TokenLogprobs {
            logprob: p.ln(),
            top: top_list,
        }
    }
}

/// A position in `[0, max_tokens)` from a uniform draw.
fn position(u: f64, max_tokens: u32) -> u32 {
    ((u * f64::from(max_tokens.max(1))) as u32).min(max_tokens.saturating_sub(1))
}

/// The log-probabilities reported with one token.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenLogprobs {
    /// The token's own.
    pub logprob: f64,
    /// (id, logprob) of the most likely tokens, the chosen one first.
    pub top: Vec<(u32, f64)>,
}

/// A hash of prompt token ids (FNV-1a over their bytes).
pub fn prompt_hash(ids: &[u32]) -> u64 {
    tokenizer::prompt_hash(ids)
}

/// The identity of a model: a hash of its path or name.
pub fn identity(name: &str) -> u64 {
    prompt_hash(&name.bytes().map(u32::from).collect::<Vec<_>>())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(prompt: u64, numerics: f64, variance: f64) -> Greedy {
        Greedy {
            identity: identity("m"),
            prompt,
            max_tokens: 32,
            numerics_change: numerics,
            batch_variance: variance,
            answer: None,
            answer_accuracy: 1.0,
        }
    }

    fn ids(t: &TokenText) -> Vec<u32> {
        (0..32).map(|i| t.id(i)).collect()
    }

    #[test]
    fn greedy_text_depends_on_the_prompt_and_model_only() {
        let a = TokenText::greedy(&g(1, 0.0, 0.0));
        assert_eq!(ids(&a), ids(&TokenText::greedy(&g(1, 0.0, 0.0))));
        assert_ne!(ids(&a), ids(&TokenText::greedy(&g(2, 0.0, 0.0))));
        let mut other = g(1, 0.0, 0.0);
        other.identity = identity("n");
        assert_ne!(ids(&a), ids(&TokenText::greedy(&other)));
    }

    #[test]
    fn a_numerics_change_keeps_the_prefix_and_changes_the_rest() {
        let n = 4000u64;
        let mut changed = 0;
        for p in 0..n {
            let base = ids(&TokenText::greedy(&g(p, 0.0, 0.0)));
            let t = TokenText::greedy(&g(p, 0.25, 0.0));
            let got = ids(&t);
            if let Some((at, _)) = t.numerics {
                changed += 1;
                let at = at as usize;
                assert_eq!(got[..at], base[..at]);
                assert_ne!(got[at], base[at]);
            } else {
                assert_eq!(got, base);
            }
        }
        let share = f64::from(changed) / n as f64;
        assert!((share - 0.25).abs() < 0.02, "{share}");
    }

    #[test]
    fn batch_variance_needs_a_batch_of_more_than_one() {
        let mut hit = None;
        for p in 0..100 {
            let t = TokenText::greedy(&g(p, 0.0, 0.5));
            if let Some(at) = t.variance_at() {
                hit = Some((t, at));
                break;
            }
        }
        let (t, at) = hit.unwrap_or_else(|| panic!("no prompt selected"));
        let base = ids(&t);
        let mut one = t;
        one.set_batch(1);
        assert_eq!(ids(&one), base, "batch 1 is the invariant path");
        let mut eight = t;
        eight.set_batch(8);
        let got = ids(&eight);
        assert_eq!(got[..at as usize], base[..at as usize]);
        assert_ne!(got[at as usize], base[at as usize]);
        let mut eight_again = t;
        eight_again.set_batch(8);
        assert_eq!(ids(&eight_again), got, "the same batch, the same path");
    }

    #[test]
    fn the_chosen_token_is_the_most_likely_one() {
        let t = TokenText::sampled(5);
        for i in 0..200 {
            let lp = t.logprobs(i, 5);
            assert_eq!(lp.top.len(), 5);
            assert_eq!(lp.top[0], (t.id(i), lp.logprob));
            assert!(lp.top.windows(2).all(|w| w[0].1 > w[1].1), "{lp:?}");
            assert!(lp.logprob < 0.0);
        }
        assert!(t.logprobs(0, 0).top.is_empty(), "top_logprobs 0: none");
    }

    #[test]
    fn an_answer_is_given_for_its_share_and_a_numerics_change_flips_it() {
        let n = 4000u64;
        let (mut right, mut flipped) = (0, 0);
        for p in 0..n {
            let mut a = g(p, 0.0, 0.0);
            a.answer = Some("42");
            a.answer_accuracy = 0.75;
            let t = TokenText::greedy(&a);
            let mut s = String::new();
            t.push(0, &mut s);
            t.push(1, &mut s);
            if t.answer.is_some() {
                right += 1;
                assert!(s.starts_with(" 42\n "), "{s:?}");
                a.numerics_change = 0.5;
                let changed = TokenText::greedy(&a);
                if changed.numerics.is_some() {
                    flipped += 1;
                    assert_eq!(changed.answer, None);
                } else {
                    assert_eq!(changed.answer, Some("42"));
                }
            } else {
                assert!(!s.contains("42"), "{s:?}");
            }
        }
        let share = f64::from(right) / n as f64;
        assert!((share - 0.75).abs() < 0.03, "{share}");
        let flip = f64::from(flipped) / f64::from(right);
        assert!((flip - 0.5).abs() < 0.04, "{flip}");
    }
}
