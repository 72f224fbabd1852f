//! The ceilings of [`crate::bounds`]: every size a spec asks for — a prompt's tokens, a
//! trial's requests and prompt tokens, trials per cell, a search's rounds — at most its
//! ceiling, refused with the key and the limit before anything is built from it.

use super::at;
use crate::bounds::{
    MAX_PROMPT_TOKENS, MAX_REQUESTS, MAX_SEARCH_ROUNDS, MAX_TRIAL_PROMPT_TOKENS, MAX_TRIALS,
    MAX_TURNS, grouped,
};
use crate::diagnostics::Diagnostic;
use crate::plan::sweep_points;
use crate::rate::Rate;
use crate::types::{DatasetKind, SearchAxis, SpecFile, TokenCount};

pub(super) fn check(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    tokens(spec, out);
    counts(spec, out);
    per_trial(spec, out);
    trials(spec, out);
}

/// `value` `what` (e.g. "tokens in a prompt") is above `limit`: the key, both numbers and
/// what to write.
fn over(key: &str, value: u64, what: &str, limit: u64, hint: &str) -> Diagnostic {
    Diagnostic::error(
        at(key),
        format!(
            "{} {what}: above servebench's ceiling of {}",
            grouped(value),
            grouped(limit)
        ),
    )
    .with_hint(format!(
        "{hint} (the ceiling keeps a typo from exhausting memory or running for ever; \
         docs/reliability.md lists them)"
    ))
}

fn token_key(key: &str, t: Option<TokenCount>, out: &mut Vec<Diagnostic>) {
    if let Some(t) = t
        && t.max() > MAX_PROMPT_TOKENS
    {
        out.push(over(
            key,
            u64::from(t.max()),
            "tokens in a prompt or an answer",
            u64::from(MAX_PROMPT_TOKENS),
            "write a length in tokens no server's context exceeds",
        ));
    }
}

/// Lengths in tokens, wherever the spec gives one.
fn tokens(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    let d = &s.workload.dataset;
    token_key("workload.dataset.input_tokens", d.input_tokens, out);
    token_key("workload.dataset.output_tokens", d.output_tokens, out);
    for (axis, list) in [
        ("input_tokens", &s.sweep.input_tokens),
        ("output_tokens", &s.sweep.output_tokens),
    ] {
        for (i, n) in list.iter().flatten().enumerate() {
            token_key(
                &format!("sweep.{axis}[{i}]"),
                Some(TokenCount::Fixed(*n)),
                out,
            );
        }
    }
    for (i, inc) in s.sweep.include.iter().enumerate() {
        for (axis, n) in [
            ("input_tokens", inc.input_tokens),
            ("output_tokens", inc.output_tokens),
        ] {
            token_key(
                &format!("sweep.include[{i}].{axis}"),
                n.map(TokenCount::Fixed),
                out,
            );
        }
    }
    if let Some(sp) = &d.shared_prefix {
        let key = "workload.dataset.shared_prefix";
        token_key(&format!("{key}.prefix_tokens"), Some(sp.prefix_tokens), out);
        token_key(&format!("{key}.suffix_tokens"), Some(sp.suffix_tokens), out);
        let whole = u64::from(sp.prefix_tokens.max()) + u64::from(sp.suffix_tokens.max());
        if sp.prefix_tokens.max() <= MAX_PROMPT_TOKENS
            && sp.suffix_tokens.max() <= MAX_PROMPT_TOKENS
            && whole > u64::from(MAX_PROMPT_TOKENS)
        {
            out.push(over(
                &format!("{key}.prefix_tokens"),
                whole,
                "tokens in the longest prompt (prefix + suffix)",
                u64::from(MAX_PROMPT_TOKENS),
                "shorten the prefix or the suffix",
            ));
        }
    }
    if let Some(m) = &d.multi_turn {
        let key = "workload.dataset.multi_turn";
        token_key(&format!("{key}.user_tokens"), Some(m.user_tokens), out);
        if m.turns.max() > MAX_TURNS {
            out.push(over(
                &format!("{key}.turns"),
                u64::from(m.turns.max()),
                "turns in a conversation",
                u64::from(MAX_TURNS),
                "fewer turns per conversation",
            ));
        } else {
            // The last turn resends the whole history: every user message and answer.
            let output = d
                .output_tokens
                .map(TokenCount::max)
                .into_iter()
                .chain(s.sweep.output_tokens.iter().flatten().copied())
                .max()
                .unwrap_or(0);
            let history =
                u64::from(m.turns.max()) * (u64::from(m.user_tokens.max()) + u64::from(output));
            if m.user_tokens.max() <= MAX_PROMPT_TOKENS && history > u64::from(MAX_PROMPT_TOKENS) {
                out.push(over(
                    &format!("{key}.turns"),
                    history,
                    "tokens in the last turn's history (turns × (user_tokens + output_tokens))",
                    u64::from(MAX_PROMPT_TOKENS),
                    "fewer turns, or shorter messages or answers",
                ));
            }
        }
    }
    if let Some(t) = &d.trace
        && t.block_tokens > MAX_PROMPT_TOKENS
    {
        out.push(over(
            "workload.dataset.trace.block_tokens",
            u64::from(t.block_tokens),
            "tokens in a block",
            u64::from(MAX_PROMPT_TOKENS),
            "write the trace's block size (512 in Mooncake's traces)",
        ));
    }
}

/// Requests of a trial: counts given, and the arrivals a trial by `duration` would send.
fn counts(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    let w = &s.workload;
    let limit = u64::from(MAX_REQUESTS);
    let hint = "split the measurement into more trials or sweep points";
    if let Some(n) = w.requests
        && n > MAX_REQUESTS
    {
        out.push(over(
            "workload.requests",
            n.into(),
            "requests in a trial",
            limit,
            hint,
        ));
    }
    for (i, inc) in s.sweep.include.iter().enumerate() {
        if let Some(n) = inc.requests
            && n > MAX_REQUESTS
        {
            let key = format!("sweep.include[{i}].requests");
            out.push(over(&key, n.into(), "requests in a trial", limit, hint));
        }
    }
    if w.warmup_requests > MAX_REQUESTS {
        out.push(over(
            "workload.warmup_requests",
            w.warmup_requests.into(),
            "warm-up requests",
            limit,
            "a few requests warm a server up",
        ));
    }
    let d = &w.dataset;
    if let Some(sp) = &d.shared_prefix {
        let n = u64::from(sp.groups) * u64::from(sp.prompts_per_group);
        if n > limit {
            out.push(over(
                "workload.dataset.shared_prefix.groups",
                n,
                "requests in a trial (groups × prompts_per_group)",
                limit,
                hint,
            ));
        }
    }
    if let Some(m) = &d.multi_turn {
        let n = u64::from(m.conversations) * u64::from(m.turns.max().min(MAX_TURNS));
        if n > limit {
            out.push(over(
                "workload.dataset.multi_turn.conversations",
                n,
                "requests in a trial (conversations × turns)",
                limit,
                hint,
            ));
        }
    }
    // A trial by time sends the arrivals due before it ends: about rate × duration.
    if let Some(dur) = w.duration {
        let secs = dur.get().as_secs_f64();
        let mut rates: Vec<f64> = sweep_points(spec)
            .iter()
            .filter(|p| p.requests.is_none())
            .filter_map(|p| match p.request_rate {
                Rate::PerSecond(r) => Some(r),
                Rate::Inf => None,
            })
            .collect();
        if let Some(q) = &s.search
            && q.axis == SearchAxis::RequestRate
        {
            rates.push(q.upper);
        }
        let rate = rates.into_iter().fold(0.0_f64, f64::max);
        let n = rate * secs;
        if n.is_finite() && n > limit as f64 {
            out.push(over(
                "workload.duration",
                n as u64,
                &format!("requests in a trial ({secs} s at {rate} requests/s)"),
                limit,
                "a shorter `duration`, or a lower request rate",
            ));
        }
    }
}

/// Prompt tokens a trial builds before its first request, where the spec says them.
fn per_trial(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    let w = &s.workload;
    let d = &w.dataset;
    let warm = u64::from(w.warmup_requests.min(MAX_REQUESTS));
    let (key, requests, tokens): (&str, u64, u64) = match d.kind {
        DatasetKind::Random => {
            let worst = sweep_points(spec)
                .iter()
                .filter_map(|p| {
                    let n = u64::from(p.requests?.min(MAX_REQUESTS)) + warm;
                    let len = u64::from(p.input_tokens?.max().min(MAX_PROMPT_TOKENS));
                    Some((n, len))
                })
                .max_by_key(|(n, len)| n * len);
            let Some((n, len)) = worst else { return };
            ("workload.requests", n, len)
        }
        DatasetKind::SharedPrefix => {
            let Some(sp) = &d.shared_prefix else { return };
            let n = (u64::from(sp.groups) * u64::from(sp.prompts_per_group))
                .min(MAX_REQUESTS as u64)
                + warm;
            let len = u64::from(sp.prefix_tokens.max().min(MAX_PROMPT_TOKENS))
                + u64::from(sp.suffix_tokens.max().min(MAX_PROMPT_TOKENS));
            ("workload.dataset.shared_prefix", n, len)
        }
        _ => return,
    };
    let total = requests * tokens;
    if total > MAX_TRIAL_PROMPT_TOKENS {
        out.push(over(
            key,
            total,
            &format!(
                "prompt tokens in a trial ({} requests of up to {} tokens, warm-up included)",
                grouped(requests),
                grouped(tokens)
            ),
            MAX_TRIAL_PROMPT_TOKENS,
            "they are all built before the trial's first request: fewer requests per trial \
             (more trials or sweep points), or shorter prompts",
        ));
    }
}

/// Trials per cell and a search's rounds.
fn trials(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    let t = &s.trials;
    let limit = u64::from(MAX_TRIALS);
    if t.count > MAX_TRIALS {
        out.push(over(
            "trials.count",
            t.count.into(),
            "trials per cell",
            limit,
            "5 to 30 trials per cell give useful intervals; `until_decided` adds trials only \
             where needed",
        ));
    }
    if let Some(u) = &t.until_decided
        && u.max > MAX_TRIALS
    {
        out.push(over(
            "trials.until_decided.max",
            u.max.into(),
            "trials per cell",
            limit,
            "the design spends its error over `max` looks: a budget this large leaves each \
             look too little to decide anything; write e.g. `max: 30`",
        ));
    }
    if let Some(q) = &s.search {
        for (key, v) in [("max_rounds", q.max_rounds), ("min_rounds", q.min_rounds)] {
            if v > MAX_SEARCH_ROUNDS {
                out.push(over(
                    &format!("search.{key}"),
                    v.into(),
                    "server starts per variant",
                    MAX_SEARCH_ROUNDS.into(),
                    "each round is a server start per variant, and the intervals are repeated \
                     over `max_rounds` looks, so more rounds widen every look's interval; \
                     write e.g. `max_rounds: 10`",
                ));
            }
        }
    }
}
