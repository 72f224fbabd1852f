//! `spec.equivalence`: the probe's sizes, its concurrencies, its prompt source, and what the
//! rest of the spec must give it (server starts of the baseline to measure its own
//! repeatability against).

use super::at;
use crate::bounds::{MAX_PROBE_PROMPTS, MAX_PROMPT_TOKENS, MAX_REQUESTS, grouped};
use crate::diagnostics::Diagnostic;
use crate::types::{DEFAULT_PROBE_PROMPTS, Equivalence, ServerRestart, SpecFile};

pub(super) fn check(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let Some(e) = &spec.spec.equivalence else {
        return;
    };
    sizes(e, out);
    concurrency(e, out);
    if e.prompts_file.is_some() && e.reference.is_some() {
        out.push(
            Diagnostic::error(
                at("equivalence.reference"),
                "`prompts_file` and `reference` both name the probe's prompts: give one",
            )
            .with_hint(
                "keep `reference` (its prompts are sent, and accuracy is compared too), or \
                 keep `prompts_file` and drop `reference`",
            ),
        );
    }
    for (key, path) in [
        ("prompts_file", &e.prompts_file),
        ("reference", &e.reference),
    ] {
        if path.as_deref().is_some_and(|p| p.trim().is_empty()) {
            out.push(
                Diagnostic::error(
                    at(&format!("equivalence.{key}")),
                    format!("`{key}` is empty"),
                )
                .with_hint("give a JSONL file's path, relative to the spec's folder"),
            );
        }
    }
    if !(e.margin > 0.0 && e.margin < 1.0) {
        out.push(
            Diagnostic::error(
                at("equivalence.margin"),
                format!(
                    "`margin: {}` must be a share of prompts strictly between 0 and 1",
                    e.margin
                ),
            )
            .with_hint("e.g. `margin: 0.25` (the default)"),
        );
    }
    if !(e.accuracy_margin > 0.0 && e.accuracy_margin < 1.0) {
        out.push(
            Diagnostic::error(
                at("equivalence.accuracy_margin"),
                format!(
                    "`accuracy_margin: {}` must be strictly between 0 and 1",
                    e.accuracy_margin
                ),
            )
            .with_hint("e.g. `accuracy_margin: 0.05` (the default)"),
        );
    }
    rest_of_spec(spec, out);
}

fn sizes(e: &Equivalence, out: &mut Vec<Diagnostic>) {
    if let Some(n) = e.prompts
        && n > MAX_PROBE_PROMPTS
    {
        out.push(
            Diagnostic::error(
                at("equivalence.prompts"),
                format!(
                    "`prompts: {}` is above the ceiling of {} probe prompts",
                    grouped(n.into()),
                    grouped(MAX_PROBE_PROMPTS.into())
                ),
            )
            .with_hint(format!(
                "the probe is cheap by design: {DEFAULT_PROBE_PROMPTS} to a few hundred prompts \
                 tell a changed output apart (docs/equivalence.md)"
            )),
        );
    }
    if e.output_tokens > MAX_PROMPT_TOKENS {
        out.push(
            Diagnostic::error(
                at("equivalence.output_tokens"),
                format!(
                    "`output_tokens: {}` is above the ceiling of {} tokens",
                    grouped(e.output_tokens.into()),
                    grouped(MAX_PROMPT_TOKENS.into())
                ),
            )
            .with_hint("e.g. `output_tokens: 64` (the default)"),
        );
    }
    // The probe's warm-up and concurrencies are counts of requests, bounded as
    // `workload.warmup_requests` and a trial's requests are.
    if e.warmup_requests > MAX_REQUESTS {
        out.push(
            Diagnostic::error(
                at("equivalence.warmup_requests"),
                format!(
                    "`warmup_requests: {}` is above servebench's ceiling of {} requests",
                    grouped(e.warmup_requests.into()),
                    grouped(MAX_REQUESTS.into())
                ),
            )
            .with_hint(
                "a few requests warm a server up, e.g. `warmup_requests: 2` (the default) \
                 (the ceiling keeps a typo from running for ever; docs/reliability.md lists them)",
            ),
        );
    }
    for (i, c) in e.concurrency.iter().enumerate() {
        if *c > MAX_REQUESTS {
            out.push(
                Diagnostic::error(
                    at(&format!("equivalence.concurrency[{i}]")),
                    format!(
                        "a probe concurrency of {} is above servebench's ceiling of {} requests",
                        grouped((*c).into()),
                        grouped(MAX_REQUESTS.into())
                    ),
                )
                .with_hint("e.g. `concurrency: [1, 8]`"),
            );
        }
    }
}

fn concurrency(e: &Equivalence, out: &mut Vec<Diagnostic>) {
    if e.concurrency.contains(&0) {
        out.push(
            Diagnostic::error(
                at("equivalence.concurrency"),
                "a probe concurrency of 0 sends nothing: each is the number of requests in flight",
            )
            .with_hint("e.g. `concurrency: [1]`, or `[1, 8]` to judge batch invariance too"),
        );
    }
    if let [a, b] = e.concurrency.as_slice()
        && a == b
    {
        out.push(
            Diagnostic::error(
                at("equivalence.concurrency"),
                format!("the two probe concurrencies are the same ({a})"),
            )
            .with_hint(format!(
                "give one, `[{a}]`, or two different ones, e.g. `[1, 8]`"
            )),
        );
    }
    let prompts = e.prompts.unwrap_or(DEFAULT_PROBE_PROMPTS);
    if e.prompts_file.is_none()
        && e.reference.is_none()
        && let Some(c) = e.concurrency.iter().find(|c| **c > prompts)
    {
        out.push(Diagnostic::warning(
            at("equivalence.concurrency"),
            format!(
                "a concurrency of {c} with {prompts} probe prompts never has {c} requests in \
                 flight: the batch it measures is at most {prompts}"
            ),
        ));
    }
}

fn rest_of_spec(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    if s.search.is_some() {
        out.push(
            Diagnostic::error(
                at("equivalence"),
                "the equivalence probe runs at the server starts of a sweep's blocks; a \
                 capacity search (`search`) starts its servers per round and step, and is not \
                 probed",
            )
            .with_hint(
                "measure equivalence in a spec of its own with `sweep` (docs/equivalence.md), \
                 or drop `equivalence` here",
            ),
        );
    }
    let starts = if s.trials.server_restart == ServerRestart::Once {
        1
    } else {
        s.trials.count
    };
    if starts < 2 && s.variants.len() > 1 {
        out.push(
            Diagnostic::warning(
                at("equivalence"),
                "the baseline is probed in one server start only: its own repeatability \
                 across starts is not measured, so `compare` cannot judge a variant's \
                 outputs against it (inconclusive)",
            )
            .with_hint(
                "probe at least two starts of each variant: `trials.count: 2` or more with \
                 `server_restart: per_block` (the default)",
            ),
        );
    }
}
