//! The facts, one profile per engine, each read in the engine's source: the version and the
//! files are in `checked`; docs/engines.md is generated from this table (a test keeps them
//! in step).

use super::{
    ArgSource, Engine, Field, LimitSource, MetricsFacts, Profile, RequestFacts, StreamFacts,
    StreamUsage, TokenizeBody, TokenizeFacts, UnknownFields, VersionSource,
};

/// The profile of `engine`; `auto` has none (it is resolved by detection first).
pub fn profile(engine: Engine) -> Option<&'static Profile> {
    Some(match engine {
        Engine::Auto => return None,
        Engine::Sglang => &SGLANG,
        Engine::Vllm => &VLLM,
        Engine::Llamacpp => &LLAMACPP,
        Engine::Trtllm => &TRTLLM,
        Engine::Tgi => &TGI,
        Engine::Transformers => &TRANSFORMERS,
        Engine::Openai => &GENERIC,
    })
}

/// SGLang 0.5.23: srt/entrypoints/openai/protocol.py (CompletionRequest, ChatCompletionRequest
/// :365,909 — `min_tokens` :399, `ignore_eos` :407; unknown fields dropped by pydantic's
/// default; TokenizeRequest :1744), srt/entrypoints/http_server.py (`/tokenize` and
/// `/v1/tokenize` :1907-1912, `/server_info` :863 with `version`, deprecated
/// `/get_server_info` :853, `/v1/models` `max_model_len = context_len` :2005, `/health` 503
/// until warmed up :721), srt/utils/common.py:3584 (`build_server_info`: the flat
/// `resolved_dict()` of server arguments), srt/entrypoints/engine.py (`server_args={…}` log
/// line from 0.5.19, `server_args=ServerArgs(…)` up to 0.5.18), usage_processor.py:75-82
/// (`cached_tokens` with `--enable-cache-report`).
static SGLANG: Profile = Profile {
    engine: Engine::Sglang,
    name: "SGLang",
    checked: "0.5.23 (PyPI wheel): srt/entrypoints/openai/protocol.py, srt/entrypoints/http_server.py, srt/entrypoints/engine.py, srt/utils/common.py",
    request: RequestFacts {
        ignore_eos: Field::Honoured,
        min_tokens: Field::Honoured,
        stream_options: Field::Honoured,
        unknown_fields: UnknownFields::Dropped,
        checks_model: false,
        generation_config: false,
    },
    tokenize: Some(TokenizeFacts {
        path: "/tokenize",
        body: TokenizeBody::Prompt,
        chat_path: Some("/tokenize"),
    }),
    context_limit: &[LimitSource::ModelsMaxModelLen],
    context_flag: Some("--context-length"),
    readiness: "/health",
    info: &[
        "/server_info",
        "/get_server_info",
        "/model_info",
        "/v1/models",
    ],
    version: &[
        VersionSource {
            path: "/server_info",
            pointer: "/version",
        },
        VersionSource {
            path: "/get_server_info",
            pointer: "/version",
        },
    ],
    server_args: &[
        ArgSource::Json {
            path: "/server_info",
        },
        ArgSource::Json {
            path: "/get_server_info",
        },
        ArgSource::LogDict {
            marker: "server_args=",
        },
        ArgSource::LogRepr {
            marker: "server_args=ServerArgs(",
        },
    ],
    metrics: Some(MetricsFacts {
        path: "/metrics",
        enable: Some("--enable-metrics"),
        running: "sglang:num_running_reqs",
        waiting: "sglang:num_queue_reqs",
        kv_usage: Some("sglang:token_usage"),
        preemptions: Some("sglang:num_retracted_reqs"),
    }),
    cached_tokens_flag: Some("--enable-cache-report"),
    reports_cached_tokens: true,
    stream: StreamFacts {
        sends_done: true,
        empty_finish_reason: false,
        may_hold_back_text: false,
        reasoning_fields: &["reasoning_content"],
        usage: StreamUsage::WhenAsked,
    },
};

/// vLLM 0.33.0: entrypoints/openai/completion/protocol.py:85-86 (`ignore_eos`, `min_tokens`),
/// entrypoints/serve/engine/protocol.py (OpenAIBaseModel `extra="allow"`: unknown fields
/// accepted with a warning; ModelCard `owned_by: "vllm"`, `max_model_len` :109-112),
/// entrypoints/serve/tokenize/ (`/tokenize` `{prompt|messages}` → `{count, max_model_len,
/// tokens}`), entrypoints/serve/instrumentator/basic.py:53 (`/version`), common/startup.py:94-96
/// (`non-default args: {…}`, printed by the head only), generate/base/protocol.py:359 (delta
/// field `reasoning`), `--enable-prompt-tokens-details` for `cached_tokens`.
static VLLM: Profile = Profile {
    engine: Engine::Vllm,
    name: "vLLM",
    checked: "0.33.0 (PyPI wheel): entrypoints/openai/completion/protocol.py, entrypoints/serve/engine/protocol.py, entrypoints/serve/tokenize/, entrypoints/serve/instrumentator/basic.py, common/startup.py",
    request: RequestFacts {
        ignore_eos: Field::Honoured,
        min_tokens: Field::Honoured,
        stream_options: Field::Honoured,
        unknown_fields: UnknownFields::Dropped,
        checks_model: true,
        generation_config: false,
    },
    tokenize: Some(TokenizeFacts {
        path: "/tokenize",
        body: TokenizeBody::Prompt,
        chat_path: Some("/tokenize"),
    }),
    context_limit: &[LimitSource::ModelsMaxModelLen],
    context_flag: Some("--max-model-len"),
    readiness: "/health",
    info: &["/version", "/v1/models"],
    version: &[VersionSource {
        path: "/version",
        pointer: "/version",
    }],
    server_args: &[ArgSource::LogDict {
        marker: "non-default args:",
    }],
    metrics: Some(MetricsFacts {
        path: "/metrics",
        enable: None,
        running: "vllm:num_requests_running",
        waiting: "vllm:num_requests_waiting",
        kv_usage: Some("vllm:kv_cache_usage_perc"),
        preemptions: Some("vllm:num_preemptions_total"),
    }),
    cached_tokens_flag: Some("--enable-prompt-tokens-details"),
    reports_cached_tokens: true,
    stream: StreamFacts {
        sends_done: true,
        empty_finish_reason: false,
        may_hold_back_text: false,
        reasoning_fields: &["reasoning"],
        usage: StreamUsage::WhenAsked,
    },
};

/// llama.cpp as vendored in llama-cpp-python 0.3.36 (vendor/llama.cpp/tools/server/):
/// server-schema.cpp:44-47,475 (`max_tokens` an alias of `n_predict`, `ignore_eos`; unknown
/// fields such as `min_tokens` ignored), server-context.cpp:5065-5103 (`/tokenize` takes
/// `{content, add_special}` → `{tokens}`; a body without `content` answers 200
/// `{"tokens":[]}`), :4533 (`owned_by: "llamacpp"`), :4585-4614 (`/props`:
/// `default_generation_settings.n_ctx` per slot, `build_info`), server-task.cpp:365-372,461-522
/// (completions' final chunk always carries `usage`, chat only with `include_usage`;
/// `cached_tokens` always), server.cpp:251-277 (routes; `/metrics` needs `--metrics`),
/// server-http.cpp:307-326 (503 `Loading model` on every route while loading).
static LLAMACPP: Profile = Profile {
    engine: Engine::Llamacpp,
    name: "llama.cpp",
    checked: "llama-cpp-python 0.3.36's vendored llama.cpp: tools/server/server-context.cpp, server-schema.cpp, server-task.cpp, server.cpp, server-http.cpp",
    request: RequestFacts {
        ignore_eos: Field::Honoured,
        min_tokens: Field::Ignored,
        stream_options: Field::Honoured,
        unknown_fields: UnknownFields::Dropped,
        checks_model: false,
        generation_config: false,
    },
    tokenize: Some(TokenizeFacts {
        path: "/tokenize",
        body: TokenizeBody::Content,
        chat_path: None,
    }),
    context_limit: &[LimitSource::PropsSlotContext],
    context_flag: Some("--ctx-size (which --parallel divides among its slots)"),
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
        running: "llamacpp:requests_processing",
        waiting: "llamacpp:requests_deferred",
        kv_usage: None,
        preemptions: None,
    }),
    cached_tokens_flag: None,
    reports_cached_tokens: true,
    stream: StreamFacts {
        sends_done: true,
        empty_finish_reason: false,
        may_hold_back_text: false,
        reasoning_fields: &["reasoning_content"],
        usage: StreamUsage::CompletionsAlwaysChatWhenAsked,
    },
};

/// TensorRT-LLM's `trtllm-serve`, read in NVIDIA/TensorRT-LLM: tensorrt_llm/serve/
/// openai_protocol.py @0076e939 (OpenAIBaseModel `extra="forbid"`, so any unknown field is a
/// 400 through openai_server.py's RequestValidationError handler; CompletionRequest has
/// `ignore_eos`, `min_tokens`, `stream_options`; ModelCard `owned_by: "tensorrt_llm"`;
/// TokenizeRequest/Response of `POST /_internal/tokenize`, `{prompt}` only → `{count,
/// tokens}`; DeltaMessage has both `reasoning_content` and `reasoning`), openai_server.py
/// @00057725 (`/version`, `/health`, `[DONE]` after the last chunk, Prometheus at
/// `/prometheus/metrics` with `return_perf_metrics`, `/metrics` is JSON iteration stats),
/// metrics/collector.py @050f80de (names).
static TRTLLM: Profile = Profile {
    engine: Engine::Trtllm,
    name: "TensorRT-LLM",
    checked: "git (NVIDIA/TensorRT-LLM): tensorrt_llm/serve/openai_protocol.py @0076e939, openai_server.py @00057725, metrics/collector.py @050f80de",
    request: RequestFacts {
        ignore_eos: Field::Honoured,
        min_tokens: Field::Honoured,
        stream_options: Field::Honoured,
        unknown_fields: UnknownFields::Refused(400),
        checks_model: false,
        generation_config: false,
    },
    tokenize: Some(TokenizeFacts {
        path: "/_internal/tokenize",
        body: TokenizeBody::Prompt,
        chat_path: None,
    }),
    context_limit: &[],
    context_flag: Some("--max_seq_len"),
    readiness: "/health",
    info: &["/version", "/v1/models"],
    version: &[VersionSource {
        path: "/version",
        pointer: "/version",
    }],
    server_args: &[],
    metrics: Some(MetricsFacts {
        path: "/prometheus/metrics",
        enable: Some("return_perf_metrics: true (in --extra_llm_api_options)"),
        running: "trtllm_num_requests_running",
        waiting: "trtllm_num_requests_waiting",
        kv_usage: Some("trtllm_kv_cache_utilization"),
        preemptions: None,
    }),
    cached_tokens_flag: None,
    reports_cached_tokens: true,
    stream: StreamFacts {
        sends_done: true,
        empty_finish_reason: false,
        may_hold_back_text: false,
        reasoning_fields: &["reasoning_content", "reasoning"],
        usage: StreamUsage::WhenAsked,
    },
};

/// Text Generation Inference at git `db931fcf`: router/src/server.rs (completions chunks
/// with `finish_reason: ""` on every chunk but the last :857-875, usage in the final one;
/// `/tokenize` takes a GenerateRequest `{inputs}` and answers a JSON array of `{id, text,
/// start, stop}` :1304-1324; `/chat_tokenize` takes a chat request and answers
/// `{tokenize_response, templated_text}`; `/info` :157 with `router:
/// "text-generation-router"`, `version`, `max_total_tokens`; `/v1/models` `owned_by` is the
/// model id; `/metrics` always on; temperature 0 means greedy :741), router/src/validation.rs
/// :430 (`ignore_eos_token: false` hard-coded: no `ignore_eos`), router/src/lib.rs (serde
/// drops unknown fields; chat `stream_options`).
static TGI: Profile = Profile {
    engine: Engine::Tgi,
    name: "TGI",
    checked: "git db931fcf (huggingface/text-generation-inference): router/src/server.rs, router/src/validation.rs, router/src/lib.rs",
    request: RequestFacts {
        ignore_eos: Field::Ignored,
        min_tokens: Field::Ignored,
        stream_options: Field::Honoured,
        unknown_fields: UnknownFields::Dropped,
        checks_model: false,
        generation_config: false,
    },
    tokenize: Some(TokenizeFacts {
        path: "/tokenize",
        body: TokenizeBody::Inputs,
        chat_path: Some("/chat_tokenize"),
    }),
    context_limit: &[LimitSource::InfoMaxTotalTokens],
    context_flag: Some("--max-total-tokens"),
    readiness: "/health",
    info: &["/info", "/v1/models"],
    version: &[VersionSource {
        path: "/info",
        pointer: "/version",
    }],
    server_args: &[ArgSource::Json { path: "/info" }],
    metrics: Some(MetricsFacts {
        path: "/metrics",
        enable: None,
        running: "tgi_batch_current_size",
        waiting: "tgi_queue_size",
        kv_usage: None,
        preemptions: None,
    }),
    cached_tokens_flag: None,
    reports_cached_tokens: false,
    stream: StreamFacts {
        sends_done: true,
        empty_finish_reason: true,
        may_hold_back_text: false,
        reasoning_fields: &[],
        usage: StreamUsage::CompletionsAlwaysChatWhenAsked,
    },
};

/// transformers serve, 5.17.0 and 5.24.0 (PyPI wheels): cli/serving/utils.py
/// (`_validate_request`: a field outside the request TypedDict is a 422 "Unexpected fields in
/// the request" :1183-1187 in 5.24; `_build_generation_config`: `generation_config` is a JSON
/// string made into a `GenerationConfig` :1246; `model_owner`, `force_model` 400 on another
/// model; continuous batching applies only `max_new_tokens` and `eos_token_id` per request
/// and drops `MinNewTokensLengthLogitsProcessor`, generation/logits_process.py
/// `supports_continuous_batching = False`), cli/serving/chat_completion.py and completion.py
/// (`stream_options`, `logprobs` accepted and ignored with a warning; usage in the final
/// chunk; no `[DONE]`), cli/serving/server.py (routes: no tokenize, no version; `/health`;
/// `/v1/models` entries carry a `status` object).
static TRANSFORMERS: Profile = Profile {
    engine: Engine::Transformers,
    name: "transformers serve",
    checked: "5.17.0 and 5.24.0 (PyPI wheels): cli/serving/utils.py, chat_completion.py, completion.py, server.py, model_manager.py; generation/logits_process.py",
    request: RequestFacts {
        ignore_eos: Field::Refused(422),
        min_tokens: Field::Refused(422),
        stream_options: Field::Ignored,
        unknown_fields: UnknownFields::Refused(422),
        checks_model: true,
        generation_config: true,
    },
    tokenize: None,
    context_limit: &[],
    context_flag: None,
    readiness: "/health",
    info: &["/v1/models"],
    version: &[],
    server_args: &[],
    metrics: None,
    cached_tokens_flag: None,
    reports_cached_tokens: false,
    stream: StreamFacts {
        sends_done: false,
        empty_finish_reason: false,
        may_hold_back_text: true,
        reasoning_fields: &["reasoning_content"],
        usage: StreamUsage::Always,
    },
};

/// A plain OpenAI-compatible server, and servebench's simulator in its default dialect:
/// the spec's fields are sent as written; `/tokenize` is tried with `{prompt}` then
/// `{content}`, the limit in `/v1/models` then `/props`, every info endpoint in turn.
pub static GENERIC: Profile = Profile {
    engine: Engine::Openai,
    name: "OpenAI-compatible",
    checked: "the OpenAI API; servebench's simulator (crates/sim)",
    request: RequestFacts {
        ignore_eos: Field::Honoured,
        min_tokens: Field::Honoured,
        stream_options: Field::Honoured,
        unknown_fields: UnknownFields::Dropped,
        checks_model: true,
        generation_config: false,
    },
    tokenize: Some(TokenizeFacts {
        path: "/tokenize",
        body: TokenizeBody::Either,
        chat_path: Some("/tokenize"),
    }),
    context_limit: &[
        LimitSource::ModelsMaxModelLen,
        LimitSource::PropsSlotContext,
    ],
    context_flag: Some(
        "vLLM and the simulator --max-model-len, SGLang --context-length, llama.cpp --ctx-size",
    ),
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
    metrics: None,
    cached_tokens_flag: None,
    reports_cached_tokens: true,
    stream: StreamFacts {
        sends_done: true,
        empty_finish_reason: false,
        may_hold_back_text: false,
        reasoning_fields: &["reasoning_content", "reasoning"],
        usage: StreamUsage::WhenAsked,
    },
};
