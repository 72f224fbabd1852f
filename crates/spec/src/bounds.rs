//! Ceilings on the sizes a spec, or a file it names, may ask for. Each guards something that
//! is built or repeated before any server could refuse it: a prompt's text, a trial's
//! prompts and records, the plan's trials, a search's or a sequential run's looks. A value
//! above one is refused at `validate` with the key (or the file's line) and the limit, so a
//! typo (`input_tokens: 2000000000`, `max_rounds: 4000000000`) cannot exhaust memory or run
//! for ever. They are far above what a benchmark needs; docs/reliability.md lists them.

use std::time::Duration;

/// Tokens of one prompt (or one requested output): 2²⁴. A prompt is built as text before
/// it is sent (about 5 bytes a token of servebench's words), so this is about 80 MB of text.
pub const MAX_PROMPT_TOKENS: u32 = 1 << 24;

/// Prompt tokens of one trial, warm-up included, all built before its first request: 2³⁰,
/// about 5 GB of text. Split a larger trial into more trials or sweep points.
pub const MAX_TRIAL_PROMPT_TOKENS: u64 = 1 << 30;

/// Requests of one trial (measured, or warm-up). Each keeps a record of about 4.7 kB while
/// the trial runs (docs/reliability.md, "Resource bounds"), so this is about 47 GB.
pub const MAX_REQUESTS: u32 = 10_000_000;

/// Trials per cell: `trials.count` and a sequential run's `trials.until_decided.max`. A
/// sequential design spends its error over this many looks; beyond a few hundred each look
/// gets so little of it that no interval narrows.
pub const MAX_TRIALS: u32 = 1000;

/// Server starts per variant of a capacity search (`search.max_rounds`). Its intervals are
/// repeated over `max_rounds` looks, so a larger budget makes every look's interval wider,
/// not the estimate better.
pub const MAX_SEARCH_ROUNDS: u32 = 100;

/// Turns of one conversation (`multi_turn.turns`).
pub const MAX_TURNS: u32 = 10_000;

/// Trace time one replay may span, from its first request to its last: 31 days. A timestamp
/// further from the first is refused with its line (a unit mistake, `1e300`), so that no
/// replay waits for ever.
pub const MAX_TRACE_SPAN: Duration = Duration::from_secs(31 * 24 * 3600);

/// `n` with thousands separators, for messages: `16,777,216`.
pub fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn grouped_digits() {
        assert_eq!(super::grouped(0), "0");
        assert_eq!(super::grouped(999), "999");
        assert_eq!(super::grouped(1000), "1,000");
        assert_eq!(super::grouped(16_777_216), "16,777,216");
    }
}
