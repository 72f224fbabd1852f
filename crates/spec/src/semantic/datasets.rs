//! The workload datasets of real traffic: `shared_prefix`, `multi_turn` and `trace`
//! (docs/workloads.md). Their files are read by the runner before the first server starts;
//! here only what the spec itself says is checked.

use super::at;
use crate::diagnostics::Diagnostic;
use crate::rate::Rate;
use crate::types::{ApiKind, DatasetKind, SpecFile, TokenCount};

/// Checks of the three kinds, and of their blocks given with another kind.
pub(super) fn check(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    let d = &s.workload.dataset;
    let blocks = [
        (
            "shared_prefix",
            d.shared_prefix.is_some(),
            DatasetKind::SharedPrefix,
        ),
        ("multi_turn", d.multi_turn.is_some(), DatasetKind::MultiTurn),
        ("trace", d.trace.is_some(), DatasetKind::Trace),
        ("image", d.image.is_some(), DatasetKind::Image),
    ];
    for (name, given, kind) in blocks {
        if given && d.kind != kind {
            out.push(
                Diagnostic::error(
                    at(&format!("workload.dataset.{name}")),
                    format!("`{name}` is only read with `kind: {name}`"),
                )
                .with_hint(format!("set `kind: {name}`, or remove the `{name}` block")),
            );
        }
    }
    if d.kind == DatasetKind::Image {
        if d.image.is_none() {
            out.push(
                Diagnostic::error(
                    at("workload.dataset"),
                    "an `image` dataset needs its `image` block",
                )
                .with_hint("e.g. `image: {count: 1, width: 512, height: 512, format: png}`"),
            );
        }
        if let Some(img) = &d.image {
            image_bytes(spec, img, out);
        }
        if let Some(p) = crate::engine::profile(s.target.engine)
            && !p.request.images
        {
            out.push(
                Diagnostic::warning(
                    at("workload.dataset.kind"),
                    format!(
                        "{} takes no `image_url` parts (its engine profile): the requests will \
                         be refused",
                        p.name
                    ),
                )
                .with_hint("benchmark images on an engine that takes them (docs/engines.md)"),
            );
        }
        if s.target.api != ApiKind::OpenaiChat {
            out.push(
                Diagnostic::error(
                    at("workload.dataset.kind"),
                    "images are sent as `image_url` parts of chat messages, which the \
                     completions API has not",
                )
                .with_hint("set `target.api: openai-chat`"),
            );
        }
    }
    if let Some(speeds) = &s.sweep.trace_speed {
        if d.kind != DatasetKind::Trace {
            out.push(
                Diagnostic::error(
                    at("sweep.trace_speed"),
                    "`sweep.trace_speed` needs a `trace` dataset",
                )
                .with_hint("remove it, or replay a trace with `kind: trace`"),
            );
        }
        for (i, v) in speeds.iter().enumerate() {
            if !(v.is_finite() && *v > 0.0) {
                out.push(Diagnostic::error(
                    at(&format!("sweep.trace_speed[{i}]")),
                    format!("a replay speed is a number > 0 (2 = twice as fast); got {v}"),
                ));
            }
        }
    }
    if !matches!(
        d.kind,
        DatasetKind::SharedPrefix | DatasetKind::MultiTurn | DatasetKind::Trace
    ) {
        return;
    }
    let kind = match d.kind {
        DatasetKind::SharedPrefix => "shared_prefix",
        DatasetKind::MultiTurn => "multi_turn",
        _ => "trace",
    };
    if d.input_tokens.is_some() || s.sweep.input_tokens.is_some() {
        let key = if d.input_tokens.is_some() {
            "workload.dataset.input_tokens"
        } else {
            "sweep.input_tokens"
        };
        let hint = match d.kind {
            DatasetKind::SharedPrefix => "a prompt's length is `prefix_tokens` + `suffix_tokens`",
            DatasetKind::MultiTurn => "each new user message is `multi_turn.user_tokens` long",
            _ => "each request's input length is the trace's",
        };
        out.push(
            Diagnostic::error(at(key), format!("a `{kind}` dataset has no `input_tokens`"))
                .with_hint(hint),
        );
    }
    for (i, inc) in s.sweep.include.iter().enumerate() {
        if inc.requests.is_some() {
            out.push(
                Diagnostic::error(
                    at(&format!("sweep.include[{i}].requests")),
                    format!("the request count of a `{kind}` trial comes from the dataset"),
                )
                .with_hint("remove `requests` here"),
            );
        }
    }
    match d.kind {
        DatasetKind::SharedPrefix => shared_prefix(spec, out),
        DatasetKind::MultiTurn => multi_turn(spec, out),
        _ => trace(spec, out),
    }
}

fn range(key: &str, t: TokenCount, out: &mut Vec<Diagnostic>) {
    if let TokenCount::Range(r) = t
        && r.min > r.max
    {
        out.push(
            Diagnostic::error(
                at(key),
                format!("the range has min {} above max {}", r.min, r.max),
            )
            .with_hint(format!("write `{{min: {}, max: {}}}`", r.max, r.min)),
        );
    }
}

fn needs_output(spec: &SpecFile, kind: &str, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    if s.workload.dataset.output_tokens.is_none() && s.sweep.output_tokens.is_none() {
        out.push(
            Diagnostic::error(
                at("workload.dataset"),
                format!("a `{kind}` dataset needs `output_tokens`"),
            )
            .with_hint("e.g. `output_tokens: 128`"),
        );
    }
}

fn no_path(spec: &SpecFile, kind: &str, out: &mut Vec<Diagnostic>) {
    if spec.spec.workload.dataset.path.is_some() {
        out.push(
            Diagnostic::error(
                at("workload.dataset.path"),
                format!("a `{kind}` dataset reads no file"),
            )
            .with_hint("remove `path`, or set `kind: jsonl` / `kind: trace`"),
        );
    }
}

fn shared_prefix(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let w = &spec.spec.workload;
    needs_output(spec, "shared_prefix", out);
    no_path(spec, "shared_prefix", out);
    let Some(sp) = &w.dataset.shared_prefix else {
        out.push(
            Diagnostic::error(
                at("workload.dataset"),
                "a `shared_prefix` dataset needs its `shared_prefix` block",
            )
            .with_hint(
                "e.g. `shared_prefix: {groups: 8, prompts_per_group: 16, prefix_tokens: 1024, suffix_tokens: 64}`",
            ),
        );
        return;
    };
    range(
        "workload.dataset.shared_prefix.prefix_tokens",
        sp.prefix_tokens,
        out,
    );
    range(
        "workload.dataset.shared_prefix.suffix_tokens",
        sp.suffix_tokens,
        out,
    );
    let n = u64::from(sp.groups) * u64::from(sp.prompts_per_group);
    if let Some(r) = w.requests
        && u64::from(r) != n
    {
        out.push(
            Diagnostic::error(
                at("workload.requests"),
                format!(
                    "a `shared_prefix` trial sends groups × prompts_per_group = {n} requests, not {r}"
                ),
            )
            .with_hint(format!("remove `requests`, or write `requests: {n}`")),
        );
    }
    if w.duration.is_some() {
        out.push(
            Diagnostic::error(
                at("workload.duration"),
                "a `shared_prefix` trial is its groups × prompts_per_group requests, not a time",
            )
            .with_hint("remove `duration`"),
        );
    }
}

fn multi_turn(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    let w = &s.workload;
    needs_output(spec, "multi_turn", out);
    no_path(spec, "multi_turn", out);
    if s.target.api != ApiKind::OpenaiChat {
        out.push(
            Diagnostic::error(
                at("target.api"),
                "a `multi_turn` dataset carries a chat history: it needs the chat API",
            )
            .with_hint("set `target.api: openai-chat`"),
        );
    }
    for (key, given) in [
        ("requests", w.requests.is_some()),
        ("duration", w.duration.is_some()),
    ] {
        if given {
            out.push(
                Diagnostic::error(
                    at(&format!("workload.{key}")),
                    "a `multi_turn` trial is its conversations, not a request count or a time",
                )
                .with_hint("remove it and set `multi_turn.conversations`"),
            );
        }
    }
    let Some(m) = &w.dataset.multi_turn else {
        out.push(
            Diagnostic::error(
                at("workload.dataset"),
                "a `multi_turn` dataset needs its `multi_turn` block",
            )
            .with_hint("e.g. `multi_turn: {conversations: 32, turns: 4, user_tokens: 64}`"),
        );
        return;
    };
    range("workload.dataset.multi_turn.turns", m.turns, out);
    range(
        "workload.dataset.multi_turn.user_tokens",
        m.user_tokens,
        out,
    );
}

fn trace(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    let w = &s.workload;
    if w.dataset
        .path
        .as_deref()
        .is_none_or(|p| p.trim().is_empty())
    {
        out.push(
            Diagnostic::error(at("workload.dataset"), "a `trace` dataset needs `path`")
                .with_hint("add `path: trace.jsonl` (relative to the spec file)"),
        );
    }
    for (key, given) in [
        ("requests", w.requests.is_some()),
        ("duration", w.duration.is_some()),
    ] {
        if given {
            out.push(
                Diagnostic::error(
                    at(&format!("workload.{key}")),
                    "a `trace` trial replays the trace: its window is set in the `trace` block",
                )
                .with_hint(format!("write `trace: {{{key}: …}}` (and `start`) instead")),
            );
        }
    }
    let numeric = |r: &Rate| !matches!(r, Rate::Inf);
    if numeric(&w.request_rate) || s.sweep.request_rate.is_some() {
        let key = if s.sweep.request_rate.is_some() {
            "sweep.request_rate"
        } else {
            "workload.request_rate"
        };
        out.push(
            Diagnostic::error(
                at(key),
                "a `trace` sets its own send times: a request rate does not apply",
            )
            .with_hint("scale the trace's clock with `trace.speed` or `sweep.trace_speed`"),
        );
    }
    let Some(t) = &w.dataset.trace else { return };
    if !(t.speed.is_finite() && t.speed > 0.0) {
        out.push(Diagnostic::error(
            at("workload.dataset.trace.speed"),
            format!(
                "`speed` is a number > 0 (2 = twice as fast); got {}",
                t.speed
            ),
        ));
    }
    if t.duration.is_some_and(|d| d.is_zero()) {
        out.push(Diagnostic::error(
            at("workload.dataset.trace.duration"),
            "`duration` must be greater than 0",
        ));
    }
}

/// Most bytes of raw pixels the images of one trial (warm-up included) may hold: they are
/// made and encoded before the trial and held in memory while it runs.
pub(crate) const MAX_IMAGE_BYTES_PER_TRIAL: u64 = 1 << 30;

fn image_bytes(spec: &SpecFile, img: &crate::types::ImageSpec, out: &mut Vec<Diagnostic>) {
    let w = &spec.spec.workload;
    let per_request = u64::from(img.count) * u64::from(img.width) * u64::from(img.height) * 3;
    let requests = crate::plan::sweep_points(spec)
        .iter()
        .filter_map(|p| p.requests)
        .max()
        .unwrap_or(0);
    let total = per_request * (u64::from(requests) + u64::from(w.warmup_requests));
    if total > MAX_IMAGE_BYTES_PER_TRIAL {
        out.push(
            Diagnostic::error(
                at("workload.dataset.image"),
                format!(
                    "a trial's images would hold {:.1} GiB of pixels ({} requests × {} images \
                     × {}×{}×3 bytes); servebench makes them before the trial and holds at most \
                     1 GiB",
                    total as f64 / f64::from(1u32 << 30),
                    u64::from(requests) + u64::from(w.warmup_requests),
                    img.count,
                    img.width,
                    img.height
                ),
            )
            .with_hint("use smaller or fewer images, or fewer requests per trial"),
        );
    }
}
