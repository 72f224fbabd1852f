//! The output tokens of one response: every token's id and text, known from its position.

use crate::tokenizer;

/// The ids and texts of one response's output tokens. Each is a pure function of the
/// response's text seed and the token's position, so any part of the server can ask for
/// token `i` without keeping the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TokenText {
    seed: u64,
}

impl TokenText {
    /// Tokens drawn from `seed` (the server seed and the request number).
    pub(crate) fn sampled(seed: u64) -> Self {
        TokenText { seed }
    }

    /// The id of token `index`.
    pub(crate) fn id(&self, index: u32) -> u32 {
        tokenizer::generated_id(self.seed, index)
    }

    /// Appends the text of token `index` (a space and its word) to `out`.
    pub(crate) fn push(&self, index: u32, out: &mut String) {
        out.push(' ');
        tokenizer::push_word(self.id(index), out);
    }
}
