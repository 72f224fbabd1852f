//! The table's requests-flagged section: what each request flag means and what to do.

use std::fmt::Write;

use servebench_spec::TokenizerSource;

use crate::RunResult;
use crate::metrics::InputMismatch;
use crate::record::RequestFlag;

/// What a request flag means and what to do about it, for `count` requests; `mismatch` are
/// the lengths of the input-length mismatches, `tokenizer` the spec's tokenizer source.
pub fn flag_advice(
    flag: RequestFlag,
    count: usize,
    mismatch: Option<InputMismatch>,
    tokenizer: TokenizerSource,
) -> String {
    let what = match flag {
        RequestFlag::InputLengthMismatch => {
            let counted = mismatch.map_or_else(String::new, |m| {
                format!(
                    " (server counted {} prompt tokens for {} sent)",
                    m.counted_tokens, m.sent_tokens
                )
            });
            let why = match tokenizer {
                TokenizerSource::Server => {
                    "the server's /tokenize count differs from what its completions endpoint \
                     counts (a chat template or a BOS token added?): check the endpoint, or \
                     set `target.tokenizer: local` with the model's tokenizer.json"
                }
                _ => {
                    "the server's tokenizer differs from the one used to build prompts; set \
                     `target.tokenizer: server` (the server's /tokenize) or point \
                     `target.tokenizer_path` at the served model's tokenizer.json"
                }
            };
            format!("input length mismatch{counted}: {why}")
        }
        RequestFlag::NoUsage => "no usage from the server: output lengths are the client's count \
             of token events (one token each); enable usage in the server's streamed responses"
            .to_owned(),
        RequestFlag::ShortOutput => "output under 90% of the requested length (the server \
             stopped early): set `workload.ignore_eos: true` where the server supports it"
            .to_owned(),
        RequestFlag::LongOutput => "output over 110% of the requested length: the server did \
             not honour max_tokens, or counts output tokens differently"
            .to_owned(),
        RequestFlag::ReasoningCountMismatch => "the server's count of reasoning tokens \
             (usage.completion_tokens_details.reasoning_tokens) and the stream's disagree: the \
             server's is used unless it says 0 of a stream that reasoned (docs/metrics.md, \
             \"Reasoning and answer\"); check the server's reasoning parser"
            .to_owned(),
        RequestFlag::LengthCut => "ended for its length (finish_reason `length`) with fewer \
             tokens than its max_tokens: the server cut max_tokens short (vLLM 0.33.0 lowers it \
             to what its context leaves after the prompt, without an error); shorten the prompts \
             or outputs, or give the server a longer context"
            .to_owned(),
        RequestFlag::ContentHeldBack => "no content chunk although usage counted the output \
             tokens (a streaming detokenizer held back incomplete bytes to the end): counted as \
             completed, TTFT is the final chunk's arrival, no TPOT or ITL (docs/metrics.md); a \
             tokenizer whose every token decodes on its own avoids it"
            .to_owned(),
    };
    format!(
        "{count} request{}: {what}",
        if count == 1 { "" } else { "s" }
    )
}

/// Requests that completed with a flag (not failures), summed over the trials, with what
/// to do about each.
pub(super) fn flags_section(out: &mut String, result: &RunResult) {
    let mut counts: std::collections::BTreeMap<RequestFlag, usize> = Default::default();
    let mut mismatch = None;
    let mut completed = 0usize;
    for s in result.trials.iter().filter_map(|t| t.summary.as_ref()) {
        for (f, n) in &s.flags {
            *counts.entry(*f).or_insert(0) += n;
        }
        mismatch = mismatch.or(s.input_mismatch);
        completed += s.all.completed;
    }
    if counts.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nrequests flagged (completed and measured, but not as asked):"
    );
    for (f, n) in counts {
        // The share of held-back streams says how much of TTFT is the final chunk's.
        let share = if completed > 0 && f == RequestFlag::ContentHeldBack {
            format!(
                " ({:.1}% of completed)",
                100.0 * n as f64 / completed as f64
            )
        } else {
            String::new()
        };
        let advice = flag_advice(f, n, mismatch, result.spec.spec.target.tokenizer);
        // "N requests: …" → "N requests (x% of completed): …"
        let advice = match advice.split_once(": ") {
            Some((head, rest)) => format!("{head}{share}: {rest}"),
            None => advice,
        };
        let _ = writeln!(out, "  {advice}");
    }
}
