//! The simulator's tokenizer: deterministic, documented and trivial to predict.
//!
//! * Every whitespace-separated word is one token (Unicode whitespace, as
//!   [`str::split_whitespace`]); `"a b  c\n"` is 3 tokens, `""` is 0.
//! * The vocabulary has [`VOCAB_SIZE`] ids. Id `n` is spelled in bijective base 26 with
//!   lowercase letters: 0 → `a`, 25 → `z`, 26 → `aa`, 701 → `zz`, 702 → `aaa`, …
//! * Encoding maps a word spelled that way to its id; any other word maps to a stable hash
//!   of it in `[0, VOCAB_SIZE)` (so encoding is lossy for such words, and never fails).
//! * Decoding joins the words of the ids with single spaces, so
//!   `encode(decode(ids)) == ids` for every valid id list: a client can build a prompt of an
//!   exact token count from any ids.
//! * Chat messages are rendered with a fixed template, one line per message,
//!   `<|{role}|> {content} <|end|>`, followed by `<|assistant|>`; the prompt is the tokens
//!   of that text, i.e. the content words plus [`CHAT_TOKENS_PER_MESSAGE`] per message plus
//!   [`CHAT_REPLY_TOKENS`] (for a one-word role).
//! * Generated tokens are vocabulary words with a leading space (`" abc"`), so a completion
//!   text has exactly as many tokens as the engine generated.

use std::fmt::Write as _;

/// Number of token ids.
pub const VOCAB_SIZE: u32 = 50_000;
/// Template tokens around every chat message (`<|role|>` and `<|end|>`).
pub const CHAT_TOKENS_PER_MESSAGE: u32 = 2;
/// Template tokens after the last chat message (`<|assistant|>`).
pub const CHAT_REPLY_TOKENS: u32 = 1;

/// An id outside the vocabulary was given to [`decode`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("token id {id} is outside the vocabulary [0, {VOCAB_SIZE})")]
pub struct UnknownToken {
    /// The offending id.
    pub id: u64,
}

/// Number of tokens of `text`.
pub fn count(text: &str) -> usize {
    text.split_whitespace().count()
}

/// Token ids of `text`.
pub fn encode(text: &str) -> Vec<u32> {
    text.split_whitespace().map(word_id).collect()
}

/// Text of `ids`: their words joined with single spaces.
pub fn decode(ids: &[u64]) -> Result<String, UnknownToken> {
    let mut out = String::with_capacity(ids.len() * 5);
    for (i, &id) in ids.iter().enumerate() {
        let id = u32::try_from(id)
            .ok()
            .filter(|&v| v < VOCAB_SIZE)
            .ok_or(UnknownToken { id })?;
        if i > 0 {
            out.push(' ');
        }
        push_word(id, &mut out);
    }
    Ok(out)
}

/// Appends the word of `id` (must be < [`VOCAB_SIZE`]) to `out`.
pub fn push_word(id: u32, out: &mut String) {
    // Bijective base 26: at most 4 letters below 475_254.
    let mut buf = [0u8; 8];
    let mut n = u64::from(id) + 1;
    let mut len = 0;
    while n > 0 {
        n -= 1;
        buf[len] = b'a' + (n % 26) as u8;
        len += 1;
        n /= 26;
    }
    for &b in buf[..len].iter().rev() {
        out.push(char::from(b));
    }
}

/// Appends the text of generated token `index` of a response whose text seed is
/// `text_seed`: a space and a vocabulary word drawn from a hash of both.
pub fn push_generated(text_seed: u64, index: u32, out: &mut String) {
    out.push(' ');
    push_word(generated_id(text_seed, index), out);
}

/// The id of generated token `index` of a response whose text seed is `text_seed`.
pub fn generated_id(text_seed: u64, index: u32) -> u32 {
    (crate::dialect::rng::mix3(text_seed, u64::from(index), crate::dialect::rng::salt::TEXT)
        % u64::from(VOCAB_SIZE)) as u32
}

/// A hash of prompt token ids (FNV-1a over their bytes): what the greedy text of a prompt
/// is drawn from.
pub fn prompt_hash(ids: &[u32]) -> u64 {
    ids.iter().fold(0xcbf2_9ce4_8422_2325, |h, id| {
        id.to_le_bytes().iter().fold(h, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    })
}

/// The id of one word.
fn word_id(word: &str) -> u32 {
    let b = word.as_bytes();
    if (1..=4).contains(&b.len()) && b.iter().all(u8::is_ascii_lowercase) {
        let mut n: u64 = 0;
        for &c in b {
            n = n * 26 + u64::from(c - b'a') + 1;
        }
        if let Some(v) = u32::try_from(n - 1).ok().filter(|&v| v < VOCAB_SIZE) {
            return v;
        }
    }
    // FNV-1a, folded into the vocabulary.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &c in b {
        h ^= u64::from(c);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (h % u64::from(VOCAB_SIZE)) as u32
}

/// Renders chat messages `(role, content)` with the fixed template.
pub fn render_chat<'a>(messages: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut out = String::new();
    for (role, content) in messages {
        // Writing to a String cannot fail.
        let _ = writeln!(out, "<|{role}|> {content} <|end|>");
    }
    out.push_str("<|assistant|>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_tokens() {
        assert_eq!(count(""), 0);
        assert_eq!(count("  hello \n world\tagain  "), 3);
        assert_eq!(encode("a z aa zz aaa"), vec![0, 25, 26, 701, 702]);
    }

    #[test]
    fn decode_then_encode_is_identity() {
        let ids: Vec<u64> = (0..VOCAB_SIZE as u64)
            .step_by(7)
            .chain([VOCAB_SIZE as u64 - 1])
            .collect();
        let text = decode(&ids).unwrap_or_else(|e| panic!("{e}"));
        let back: Vec<u64> = encode(&text).into_iter().map(u64::from).collect();
        assert_eq!(back, ids);
        assert_eq!(count(&text), ids.len());
    }

    #[test]
    fn out_of_vocabulary_ids_are_rejected_and_words_are_hashed_in_range() {
        assert_eq!(
            decode(&[u64::from(VOCAB_SIZE)]),
            Err(UnknownToken {
                id: u64::from(VOCAB_SIZE)
            })
        );
        for w in ["Hello,", "zzzz", "日本", "<|user|>"] {
            let id = encode(w)[0];
            assert!(id < VOCAB_SIZE);
            assert_eq!(encode(w)[0], id, "stable");
        }
    }

    #[test]
    fn generated_tokens_are_one_token_each() {
        let mut text = String::new();
        for i in 0..1000 {
            push_generated(7, i, &mut text);
        }
        assert_eq!(count(&text), 1000);
        assert!(text.starts_with(' '));
    }

    #[test]
    fn chat_template_overhead_is_fixed() {
        let text = render_chat([("system", "be brief"), ("user", "one two three")]);
        assert_eq!(
            count(&text),
            5 + 2 * CHAT_TOKENS_PER_MESSAGE as usize + CHAT_REPLY_TOKENS as usize
        );
        assert_eq!(count(&render_chat([("user", "")])), 3);
    }
}
