//! The generic profile (see the crate's documentation for how profiles are read).

use crate::Engine;
use crate::facts::*;

/// A plain OpenAI-compatible server, and servebench's simulator in its default dialect:
/// the spec's fields are sent as written; `/tokenize` is tried with `{prompt}` then
/// `{content}`, the limit in `/v1/models` then `/props`, every info endpoint in turn.
pub static GENERIC: Profile = Profile {
    engine: Engine::Openai,
    name: "OpenAI-compatible",
    checked: "the OpenAI API; servebench's simulator (crates/sim)",
    // servebench's own version: the simulator is the engine here.
    release: env!("CARGO_PKG_VERSION"),
    request: RequestFacts {
        ignore_eos: Field::Honoured,
        min_tokens: Field::Honoured,
        stream_options: Field::Honoured,
        unknown_fields: UnknownFields::Dropped,
        checks_model: true,
        generation_config: false,
        accepts: None,
        // The OpenAI API's `image_url` content parts (the simulator counts `--image-tokens` each).
        images: true,
        dropped: &[],
    },
    tokenize: Some(TokenizeFacts {
        path: "/tokenize",
        body: TokenizeBody::Either,
        chat_path: Some("/tokenize"),
        chat_fields: &[],
    }),
    context_limit: &[
        LimitSource::ModelsMaxModelLen,
        LimitSource::PropsSlotContext,
    ],
    context_flag: Some(
        "vLLM and the simulator --max-model-len, SGLang --context-length, llama.cpp --ctx-size",
    ),
    context_clip: None,
    readiness: "/v1/models",
    info: &[
        "/server_info",
        "/get_server_info",
        "/props",
        "/v1/sim/info",
        "/version",
        "/v1/models",
    ],
    version: &[
        VersionSource {
            path: "/v1/sim/info",
            pointer: "/version",
        },
        VersionSource {
            path: "/version",
            pointer: "/version",
        },
    ],
    server_args: &[ArgSource::Json {
        path: "/server_info",
    }],
    // The simulator's own dialect (crates/engines/src/dialect/metrics.rs, `generic`); a plain
    // OpenAI-compatible server without `/metrics` answers 404, and telemetry stops asking.
    metrics: Some(MetricsFacts {
        path: "/metrics",
        enable: None,
        series_need: None,
        updated: None,
        written_on_finish: None,
        running: "servebench_sim_requests_running",
        waiting: "servebench_sim_requests_waiting",
        kv_usage: Some("servebench_sim_kv_cache_usage_ratio"),
        preemptions: Some(Series {
            name: "servebench_sim_preemptions_total",
            kind: MetricKind::Counter,
        }),
        // An unknown server: the rank labels SGLang and vLLM use, read as they do.
        labels: &[
            ("engine", LabelRole::Part),
            ("dp_rank", LabelRole::Part),
            ("tp_rank", LabelRole::Replica),
            ("pp_rank", LabelRole::Replica),
            ("moe_ep_rank", LabelRole::Replica),
        ],
    }),
    model_query: None,
    concurrency_limit: None,
    cached_tokens_flag: None,
    reports_cached_tokens: true,
    stream: StreamFacts {
        sends_done: true,
        empty_finish_reason: false,
        may_hold_back_text: false,
        reasoning_fields: &["reasoning_content", "reasoning"],
        reasoning_usage: ReasoningUsage::NotChecked,
        usage: StreamUsage::WhenAsked,
        error_cuts_stream: PerApi::both(false),
        finish_words: &[],
        token_chunks: TokenChunks::OPENAI,
    },
    // The OpenAI API: completions `logprobs` up to 5, chat `logprobs` + `top_logprobs` up to
    // 20, `seed`; no token ids. The simulator answers in the shapes of docs/simulator.md.
    outputs: OutputFacts {
        seed: true,
        completions: OutputApi {
            logprobs: LogprobsAsk::Count,
            top_max: 5,
            token_ids: None,
        },
        chat: OutputApi {
            logprobs: LogprobsAsk::Flag,
            top_max: 20,
            token_ids: None,
        },
    },
    profiler: Profiler::None {
        instead: "none assumed",
    },
};
