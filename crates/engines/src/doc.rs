//! docs/engines.md's table of engines × guarantees, generated from the profiles (a test keeps
//! the document in step with them).

use super::{
    ArgSource, Engine, Field, LimitSource, Profile, Profiler, ReasoningUsage, StreamUsage,
    TokenChunks, TokenizeBody, UnknownFields, profile,
};

/// The marker before the generated table in docs/engines.md.
pub const BEGIN: &str =
    "<!-- BEGIN generated engine table: cargo test -p servebench-spec --test it engines_doc -->";
/// The marker after it.
pub const END: &str = "<!-- END generated engine table -->";

/// The engines of the table, in column order (the generic profile is described apart).
const COLUMNS: [Engine; 6] = [
    Engine::Sglang,
    Engine::Vllm,
    Engine::Llamacpp,
    Engine::Trtllm,
    Engine::Tgi,
    Engine::Transformers,
];

fn field(f: Field) -> String {
    match f {
        Field::Honoured => "honoured".into(),
        Field::Ignored => "not available (ignored)".into(),
        Field::Refused(s) => format!("not available (HTTP {s}: never sent)"),
    }
}

fn fixed_length(p: &Profile) -> String {
    let plan = p.body_plan(true, false);
    if plan.ignore_eos {
        "holds (`ignore_eos`)".into()
    } else if plan.generation_config {
        "holds (`generation_config` min_new_tokens), not under `--continuous-batching`".into()
    } else {
        "not available: lengths end at EOS, a warning says so".into()
    }
}

fn tokenize(p: &Profile) -> String {
    match p.tokenize {
        None => "not available: `tokenizer: local`".into(),
        Some(t) => {
            let body = match t.body {
                TokenizeBody::Prompt => "`{prompt}`",
                TokenizeBody::Content => "`{content, add_special}`",
                TokenizeBody::Inputs => "`{inputs}` → array",
                TokenizeBody::Either => "`{prompt}`, else `{content}`",
            };
            format!("`{}` {body}", t.path)
        }
    }
}

fn chat_tokenize(p: &Profile) -> String {
    match p.tokenize.and_then(|t| t.chat_path) {
        Some(path) => format!("`{path}` `{{messages}}`"),
        None => "not available: chat prompt lengths are estimates".into(),
    }
}

/// The `request_body` fields that change a chat prompt's rendering, which the chat
/// tokenize endpoint takes beside `messages` (docs/spec.md, "Request bodies").
fn chat_tokenize_fields(p: &Profile) -> String {
    match p.tokenize {
        Some(t) if t.chat_path.is_some() && !t.chat_fields.is_empty() => t
            .chat_fields
            .iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(", "),
        Some(t) if t.chat_path.is_some() => "none: lengths with them are estimates".into(),
        _ => "—".into(),
    }
}

fn accepted(p: &Profile) -> String {
    match p.request.accepts {
        Some(a) => format!(
            "a closed list ({} chat, {} completions fields): `validate` warns on a \
             `request_body` field outside it",
            a.chat.len(),
            a.completions.len()
        ),
        None => "not listed".into(),
    }
}

fn images(p: &Profile) -> String {
    if p.request.images {
        "taken by a vision-language model".into()
    } else {
        "not taken: `validate` warns on an image workload".into()
    }
}

fn limit(p: &Profile) -> String {
    if p.context_limit.is_empty() {
        return "not available".into();
    }
    let srcs: Vec<&str> = p
        .context_limit
        .iter()
        .map(|s| match s {
            LimitSource::ModelsMaxModelLen => "`/v1/models` `max_model_len`",
            LimitSource::PropsSlotContext => "`/props` `n_ctx` (per slot)",
            LimitSource::InfoMaxTotalTokens => "`/info` `max_total_tokens`",
        })
        .collect();
    let mut s = srcs.join(", ");
    if let Some(c) = p.context_clip {
        s.push_str(&format!(
            "; prompt + `max_tokens` beyond it: {} cuts `max_tokens` silently ({} refuses), \
             `validate` warns at `{}`",
            c.clips_in, c.refuses_in, c.flag
        ));
    }
    s
}

fn args(p: &Profile) -> String {
    if p.server_args.is_empty() {
        return "not available: `log_contains` or `json`".into();
    }
    let srcs: Vec<String> = p
        .server_args
        .iter()
        .map(|s| match s {
            ArgSource::Json { path } => format!("`{path}`"),
            ArgSource::JsonKeys { path, keys } => format!(
                "`{path}`, which holds only {}: a rule naming another cannot hold, `validate` \
                 warns",
                keys.iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ArgSource::LogDict { marker } => format!("log `{marker} {{…}}`"),
            ArgSource::LogRepr { marker } => format!("log `{marker}…)`"),
        })
        .collect();
    srcs.join(", then ")
}

fn version(p: &Profile) -> String {
    match p.version.first() {
        Some(v) => format!("`{}` `{}`", v.path, v.pointer.trim_start_matches('/')),
        None => "not reported".into(),
    }
}

fn metrics(p: &Profile) -> String {
    use super::{LabelRole, MetricKind};
    let Some(m) = p.metrics else {
        return "not available".into();
    };
    let mut s = format!("`{}`", m.path);
    if let Some(q) = p.model_query {
        s.push_str(&format!("`?{q}=MODEL`"));
    }
    if let Some(f) = m.enable {
        s.push_str(&format!(" with {f}"));
    }
    s.push_str(&format!(": `{}`, `{}`", m.running, m.waiting));
    if let Some(k) = m.kv_usage {
        s.push_str(&format!(", `{k}`"));
    }
    if let Some(k) = m.preemptions {
        let kind = match k.kind {
            MetricKind::Counter => "counter: its increase",
            MetricKind::Gauge => "gauge: its peak",
        };
        s.push_str(&format!(", `{}` ({kind})", k.name));
    }
    if let Some(need) = m.series_need {
        s.push_str(&format!("; the gauges need {need}"));
    }
    if let Some(u) = m.updated {
        s.push_str(&format!("; updated {u}"));
    }
    let role = |r: LabelRole| {
        m.labels
            .iter()
            .filter(|(_, x)| *x == r)
            .map(|(l, _)| format!("`{l}`"))
            .collect::<Vec<_>>()
    };
    for (r, what) in [
        (LabelRole::Part, "summed over"),
        (LabelRole::Replica, "one read of"),
        (LabelRole::Breakdown, "total only of"),
    ] {
        let ls = role(r);
        if !ls.is_empty() {
            s.push_str(&format!("; {what} {}", ls.join(", ")));
        }
    }
    s
}

fn concurrency(p: &Profile) -> String {
    match p.concurrency_limit {
        None => "not published".into(),
        Some(c) => format!(
            "`{}` `{}` ({}); beyond it a request {}",
            c.path,
            c.pointer.trim_start_matches('/'),
            c.flag,
            if c.refuses {
                "fails: a point above it is refused before load"
            } else {
                "waits in the engine's queue: a warning"
            }
        ),
    }
}

fn cached(p: &Profile) -> String {
    match (p.reports_cached_tokens, p.cached_tokens_flag) {
        (false, _) => "not available".into(),
        (true, Some(f)) => format!("needs `{f}`"),
        (true, None) => "holds".into(),
    }
}

fn usage(p: &Profile) -> String {
    match p.stream.usage {
        StreamUsage::WhenAsked => "with `include_usage` (sent)".into(),
        StreamUsage::Always => "always (final chunk)".into(),
        StreamUsage::CompletionsAlwaysChatWhenAsked => {
            "completions always, chat with `include_usage` (sent)".into()
        }
    }
}

fn stream_end(p: &Profile) -> String {
    let mut s = if p.stream.sends_done {
        "`[DONE]`".to_owned()
    } else {
        "no `[DONE]`: a finish_reason ends it".to_owned()
    };
    if p.stream.empty_finish_reason {
        s.push_str("; `finish_reason: \"\"` mid-stream is no finish");
    }
    if p.stream.may_hold_back_text {
        s.push_str("; may hold back all content (counted, `content_held_back`)");
    }
    s
}

/// Which chunks without text the client counts as token events, per API.
fn token_chunks(p: &Profile) -> String {
    let api = |t: TokenChunks| {
        let mut s = if t.textless {
            "every chunk with a choice".to_owned()
        } else {
            "chunks with text".to_owned()
        };
        match (t.finish, t.textless) {
            (true, false) => s.push_str(" and the finish chunk"),
            (false, true) => s.push_str(", not the finish chunk"),
            _ => {}
        }
        if t.opener {
            s.push_str(", not the role opener");
        }
        s
    };
    let (c, ch) = (
        api(p.stream.token_chunks.completions),
        api(p.stream.token_chunks.chat),
    );
    if c == ch {
        c
    } else {
        format!("completions: {c}; chat: {ch}")
    }
}

/// Fields it takes and drops without effect, which `validate` warns about.
fn dropped(p: &Profile) -> String {
    if p.request.dropped.is_empty() {
        return "none known".into();
    }
    let names: Vec<String> = p
        .request
        .dropped
        .iter()
        .map(|d| format!("`{}`", d.name))
        .collect();
    format!(
        "{}, at generation and chat tokenize: `validate` warns",
        names.join(", ")
    )
}

/// Its own finish-reason words, and the word exports give each.
fn finish_words(p: &Profile) -> String {
    if p.stream.finish_words.is_empty() {
        return "the OpenAI API's".into();
    }
    let words: Vec<String> = p
        .stream
        .finish_words
        .iter()
        .map(|w| {
            let on = match (w.on.completions, w.on.chat) {
                (true, false) => " (completions)",
                (false, true) => " (chat)",
                _ => "",
            };
            format!("`{}`{on} → `{}`", w.word, w.means.as_str())
        })
        .collect();
    words.join(", ")
}

/// How a stream ends when generation fails after it began.
fn stream_error(p: &Profile) -> String {
    match (
        p.stream.error_cuts_stream.completions,
        p.stream.error_cuts_stream.chat,
    ) {
        (false, false) => "an error event".into(),
        (c, h) => {
            let which = match (c, h) {
                (true, true) => "both APIs",
                (false, _) => "chat (completions: an error event, then `[DONE]`)",
                _ => "completions (chat: an error event)",
            };
            format!(
                "{which}: the connection closes mid-body, nothing said; recorded as \
                 `stream_cut_by_server`"
            )
        }
    }
}

fn unknown(p: &Profile) -> String {
    match p.request.unknown_fields {
        UnknownFields::Dropped => "dropped".into(),
        UnknownFields::Refused(s) => format!("HTTP {s}"),
    }
}

fn reasoning(p: &Profile) -> String {
    if p.stream.reasoning_fields.is_empty() {
        return "none".into();
    }
    p.stream
        .reasoning_fields
        .iter()
        .map(|f| format!("`{f}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn reasoning_usage(p: &Profile) -> String {
    match p.stream.reasoning_usage {
        ReasoningUsage::NotSent => "not sent".into(),
        ReasoningUsage::WithParser {
            flag,
            zero_when_none,
            note,
        } => {
            let zero = if zero_when_none {
                "sent as 0 when none"
            } else {
                "only when some"
            };
            format!("with `{flag}`, {zero}: {note}")
        }
        ReasoningUsage::NotChecked => "not checked (read where sent)".into(),
    }
}

fn kernel_evidence(p: &Profile) -> String {
    match &p.profiler {
        Profiler::None { instead } => format!("not available: {instead}"),
        Profiler::Endpoints(f) => {
            let launch = f.launch.map_or_else(String::new, |l| {
                if l.arg.starts_with('-') {
                    format!(" with `{}` naming the directory", l.arg)
                } else {
                    " through servebench's launcher `scripts/tserve_profiler.py`".to_owned()
                }
            });
            let written = if f.written_by_stop {
                "; the stop answers once they are written"
            } else {
                ""
            };
            format!(
                "`POST {}` / `{}`{launch}: {}{written} ({})",
                f.start, f.stop, f.files, f.source
            )
        }
    }
}

/// The table, as Markdown: one row per guarantee or fact, one column per engine.
pub fn engines_table() -> String {
    let profiles: Vec<&Profile> = COLUMNS.iter().filter_map(|e| profile(*e)).collect();
    type Row = (&'static str, fn(&Profile) -> String);
    let rows: &[Row] = &[
        ("`target.engine`", |p| format!("`{}`", p.engine)),
        ("output length fixed", fixed_length),
        ("`min_tokens`", |p| field(p.request.min_tokens)),
        ("unknown request fields", unknown),
        ("fields dropped without effect", dropped),
        ("request fields accepted", accepted),
        ("images (`image_url` parts)", images),
        ("`model` checked", |p| {
            if p.request.checks_model {
                "yes: the model check refuses a run".into()
            } else {
                "no: any name answers".into()
            }
        }),
        ("stream ends", stream_end),
        ("usage in the stream", usage),
        ("token events (chunks without text)", token_chunks),
        ("generation error mid-stream", stream_error),
        ("finish reasons (exported as)", finish_words),
        ("tokenize (completions)", tokenize),
        ("tokenize (chat)", chat_tokenize),
        (
            "`request_body` fields at chat tokenize",
            chat_tokenize_fields,
        ),
        ("context limit", limit),
        ("`server_arg` read from", args),
        ("version", version),
        ("readiness probe", |p| format!("`{}`", p.readiness)),
        ("Prometheus metrics", metrics),
        ("requests at once", concurrency),
        ("cached prompt tokens", cached),
        ("reasoning delta field", reasoning),
        ("reasoning tokens in usage", reasoning_usage),
        ("kernel evidence (docs/kernels.md)", kernel_evidence),
        ("checked against", |p| p.checked.to_owned()),
    ];
    let mut out = String::from("| | ");
    out.push_str(
        &profiles
            .iter()
            .map(|p| p.name.to_owned())
            .collect::<Vec<_>>()
            .join(" | "),
    );
    out.push_str(" |\n|---|");
    out.push_str(&"---|".repeat(profiles.len()));
    out.push('\n');
    for (name, f) in rows {
        out.push_str(&format!("| {name} | "));
        out.push_str(
            &profiles
                .iter()
                .map(|p| f(p))
                .collect::<Vec<_>>()
                .join(" | "),
        );
        out.push_str(" |\n");
    }
    out
}
