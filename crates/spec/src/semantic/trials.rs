//! Trials: the count, the order, the restart policy and the budget of sequential trials.

use super::at;
use crate::diagnostics::Diagnostic;
use crate::types::{ServerRestart, SpecFile, TrialDesign, TrialOrder};

pub(super) fn check(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    let t = &s.trials;
    if super::variants::is_plain_load(spec) {
        // One variant, one trial: nothing to warn about (see `is_plain_load`).
    } else if t.count < 3 {
        out.push(Diagnostic::warning(at("trials.count"), format!("{} trial{} per cell: no confidence interval can be given (3 at least, 5 recommended)", t.count, if t.count == 1 { "" } else { "s" })));
    } else if t.count < 5 {
        out.push(Diagnostic::warning(at("trials.count"), format!("{} trials per cell: intervals will be wide and a rank test cannot reach p < 0.05 (5 recommended)", t.count)));
    }
    let sequential = t.until_decided.is_some();
    if t.order == TrialOrder::Blocked && s.variants.len() > 1 && !sequential {
        out.push(Diagnostic::warning(at("trials.order"), "`order: blocked` measures all of one variant before the next: drift over time will look like a difference between variants").with_hint("use `order: interleaved` (the default)"));
    }
    if t.server_restart == ServerRestart::Once && !sequential {
        out.push(Diagnostic::warning(at("trials.server_restart"), "`server_restart: once`: variation between server starts is not captured, so intervals are too narrow").with_hint("use `server_restart: per_block` (the default)"));
    }
    if t.seed.is_some() && t.order != TrialOrder::Random {
        out.push(Diagnostic::warning(
            at("trials.seed"),
            "`trials.seed` is only used with `order: random`",
        ));
    }
    if let Some(u) = &t.until_decided {
        until_decided(spec, u, out);
    }
    nested(spec, out);
}

/// Trials per start and the optimized design: a bound, the stated values it needs, and the
/// restart policies that have no starts to repeat within.
fn nested(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let t = &spec.spec.trials;
    if t.per_start > MAX_PER_START {
        out.push(
            Diagnostic::error(
                at("trials.per_start"),
                format!(
                    "`per_start: {}` is above {MAX_PER_START}: past a few tens of trials per \
                     start only more starts narrow the interval",
                    t.per_start
                ),
            )
            .with_hint("write e.g. `per_start: 4`, or let `design: optimize` choose it"),
        );
    }
    if t.per_start > 1 && t.server_restart == ServerRestart::Once {
        out.push(Diagnostic::warning(at("trials.per_start"), "`per_start` with `server_restart: once`: every trial shares one start, so repeats within it add nothing a larger `count` would not").with_hint("use `server_restart: per_block`"));
    }
    match (t.design, &t.optimize) {
        (TrialDesign::Optimize, None) => out.push(
            Diagnostic::error(
                at("trials.design"),
                "`design: optimize` chooses `count` and `per_start` from stated values, but \
                 `trials.optimize` is missing",
            )
            .with_hint(
                "run `servebench plan SPEC --optimize --from PILOT.json` on a pilot with \
                 `per_start: 2` or more and paste the `optimize:` block it prints",
            ),
        ),
        (TrialDesign::Fixed, Some(_)) => out.push(Diagnostic::warning(
            at("trials.optimize"),
            "`trials.optimize` is read only with `design: optimize`",
        )),
        (TrialDesign::Optimize, Some(o)) if o.sd_between + o.sd_within <= 0.0 => out.push(
            Diagnostic::error(
                at("trials.optimize"),
                "both `sd_between` and `sd_within` are 0: any design decides at once",
            )
            .with_hint("state the SDs a pilot measured (`plan --optimize --from PILOT.json`)"),
        ),
        (TrialDesign::Optimize, Some(o)) => optimize_bounds(o, out),
        _ => {}
    }
}

/// The costs and the difference `design: optimize` reads, each within what a design can be
/// computed from: a cost above a week, or a θ below 0.1%, asks for millions of starts (the
/// search ended in "no solution up to 1000000", naming no key).
fn optimize_bounds(o: &crate::types::OptimizeDesign, out: &mut Vec<Diagnostic>) {
    const WEEK: f64 = 7.0 * 86_400.0;
    for (key, v) in [
        ("start_seconds", o.start_seconds),
        ("trial_seconds", o.trial_seconds),
    ] {
        if v > WEEK {
            out.push(
                Diagnostic::error(
                    at(&format!("trials.optimize.{key}")),
                    format!("`{key}: {}` is above a week ({WEEK} s)", short(v)),
                )
                .with_hint("write the seconds measured (`plan --optimize --from PILOT.json`)"),
            );
        }
    }
    if let Some(theta) = o.theta
        && !(0.001..1.0).contains(&theta)
    {
        out.push(
            Diagnostic::error(
                at("trials.optimize.theta"),
                format!(
                    "`theta: {}` is outside [0.001, 1): the relative difference to detect, \
                     e.g. 0.05 for 5%; below 0.1% no design of a sane number of starts detects it",
                    short(theta)
                ),
            )
            .with_hint("write e.g. `theta: 0.05`"),
        );
    }
    if o.trial_seconds <= 0.0 {
        out.push(
            Diagnostic::error(
                at("trials.optimize.trial_seconds"),
                "`trial_seconds` must be above 0",
            )
            .with_hint(
                "write the seconds one trial of every point takes, e.g. `trial_seconds: 20`",
            ),
        );
    }
}

/// A number as a person writes it: `0.05`, `604800`; `1e300` and `1e-9` in exponent form.
fn short(v: f64) -> String {
    if v == 0.0 || (1e-3..1e9).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// Most trials of a cell in one server start.
pub(crate) const MAX_PER_START: u32 = 100;

/// The sequential budget: at least the first stage, metrics that are compared, and an order
/// and restart policy whose rounds are interleaved blocks.
fn until_decided(spec: &SpecFile, u: &crate::types::UntilDecided, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    let t = &s.trials;
    if u.max < t.count {
        out.push(
            Diagnostic::error(
                at("trials.until_decided.max"),
                format!(
                    "the budget `max: {}` is below the first stage `trials.count: {}`: it is the \
                     most trials per cell, the first stage included",
                    u.max, t.count
                ),
            )
            .with_hint(format!(
                "write `max: {}` or more (e.g. `max: {}`), or lower `trials.count`",
                t.count,
                (t.count * 4).max(t.count + 1)
            )),
        );
    } else if u.max == t.count {
        out.push(Diagnostic::warning(
            at("trials.until_decided.max"),
            format!(
                "`max: {}` equals `trials.count`: no round can follow the first stage",
                u.max
            ),
        ));
    }
    if t.count < 3 {
        out.push(
            Diagnostic::error(
                at("trials.count"),
                format!(
                    "sequential trials look at intervals after the first stage, which needs 3 \
                     trials per cell at least; `count` is {}",
                    t.count
                ),
            )
            .with_hint("write `count: 3` or more (5 recommended)"),
        );
    }
    if let Some(metrics) = &u.metrics {
        if metrics.is_empty() {
            out.push(
                Diagnostic::error(
                    at("trials.until_decided.metrics"),
                    "`until_decided.metrics` lists no metric",
                )
                .with_hint("leave it out to require every metric of `compare.metrics`"),
            );
        }
        for (i, m) in metrics.iter().enumerate() {
            if !s.compare.metrics.contains(m) {
                out.push(
                    Diagnostic::error(
                        at(&format!("trials.until_decided.metrics[{i}]")),
                        format!("`{m}` is not compared: `compare.metrics` does not list it"),
                    )
                    .with_hint(format!(
                        "use one of {}, or add `{m}` to `compare.metrics`",
                        s.compare
                            .metrics
                            .iter()
                            .map(|m| format!("`{m}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                );
            }
        }
    }
    if t.server_restart == ServerRestart::Once {
        out.push(
            Diagnostic::error(
                at("trials.server_restart"),
                "`server_restart: once` cannot take sequential trials: every round is a new \
                 block of each variant, started afresh",
            )
            .with_hint("use `server_restart: per_block` (the default) or `per_trial`"),
        );
    }
    if t.order == TrialOrder::Blocked {
        out.push(
            Diagnostic::error(
                at("trials.order"),
                "`order: blocked` cannot take sequential trials: each round interleaves the \
                 variants, so that drift hits both arms alike",
            )
            .with_hint("use `order: interleaved` (the default) or `random`"),
        );
    }
    if s.variants.len() < 2 {
        out.push(
            Diagnostic::error(
                at("trials.until_decided"),
                "sequential trials decide comparisons, and this spec has one variant",
            )
            .with_hint("add a variant to compare, or remove `until_decided`"),
        );
    }
}
