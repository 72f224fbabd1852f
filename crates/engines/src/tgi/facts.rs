//! The tgi profile (see the crate's documentation for how profiles are read).

use crate::Engine;
use crate::facts::*;

/// Text Generation Inference at git `db931fcf`: router/src/server.rs (completions chunks
/// with `finish_reason: ""` on every chunk but the last :857-875, usage in the final one;
/// `/tokenize` takes a GenerateRequest `{inputs}` and answers a JSON array of `{id, text,
/// start, stop}` :1304-1324; `/chat_tokenize` takes a chat request and answers
/// `{tokenize_response, templated_text}`; `/info` :157 with `router:
/// "text-generation-router"`, `version`, `max_total_tokens`; `/v1/models` `owned_by` is the
/// model id; `/metrics` always on; temperature 0 means greedy :741), router/src/validation.rs
/// :430 (`ignore_eos_token: false` hard-coded: no `ignore_eos`), router/src/lib.rs (serde
/// drops unknown fields; chat `stream_options`); a streamed request's validation or overload
/// error is an HTTP 200 event `data: {"error":{"message","http_status_code":422}}` then
/// `data: [DONE]` (infer/mod.rs:445-452, server.rs:890,981,1241-1244).
///
/// Read again at db931fcf (the newest commit; the repository is in maintenance mode since
/// 34988476, 2025-12-11): `/info` is `Info` (router/src/lib.rs:261-299), limits and ids only,
/// none of the launcher's other flags (`quantize`, `num_shard`, `dtype`,
/// `max_batch_prefill_tokens` …; the launcher prints them only as its multi-line `{:#?}` of
/// `Args`, launcher/src/main.rs:2079); `ChatRequest` (lib.rs:827-938) has no
/// `chat_template_kwargs`, `reasoning_effort` or `chat_template` and no
/// `deny_unknown_fields`, so serde drops them, at generation and at `/chat_tokenize`
/// (server.rs:199-217, the same `ChatRequest` through `try_into_generate`); finish reasons
/// are `FinishReason` (lib.rs:1412-1439: `length`, `eos_token`, `stop_sequence`), sent as
/// they are in completions streams (server.rs:858 `to_string()`) and with `eos_token` as
/// `stop` in chat streams (chat.rs:97-100 `format(true)`).
/// What to do instead of a chat render field TGI drops.
const TGI_TEMPLATE: &str = "TGI renders every chat with the model's own chat template and \
     takes no per-request template setting: to compare templates, start each variant with its \
     own `--tokenizer-config-path` (a tokenizer_config.json whose `chat_template` has the \
     setting), or measure this A/B on an engine that takes the field (SGLang, vLLM, llama.cpp)";

pub(crate) static TGI: Profile = Profile {
    engine: Engine::Tgi,
    name: "TGI",
    checked: "git db931fcf (huggingface/text-generation-inference, the newest commit): router/src/server.rs, router/src/validation.rs, router/src/lib.rs, router/src/chat.rs, launcher/src/main.rs",
    // router/Cargo.toml takes the workspace version, 3.3.6-dev0 at db931fcf.
    release: "3.3.6-dev0",
    request: RequestFacts {
        ignore_eos: Field::Ignored,
        min_tokens: Field::Ignored,
        stream_options: Field::Honoured,
        unknown_fields: UnknownFields::Dropped,
        checks_model: false,
        generation_config: false,
        accepts: None,
        // Not read at db931fcf: no image part is sent to TGI, and its simulator refuses them.
        images: false,
        // router/src/lib.rs:827-938: `ChatRequest` has none of these fields and no
        // `deny_unknown_fields`; `/chat_tokenize` (server.rs:199-217) parses the same type.
        dropped: &[
            DroppedField {
                name: "chat_template_kwargs",
                instead: TGI_TEMPLATE,
            },
            DroppedField {
                name: "reasoning_effort",
                instead: TGI_TEMPLATE,
            },
            DroppedField {
                name: "chat_template",
                instead: TGI_TEMPLATE,
            },
        ],
    },
    tokenize: Some(TokenizeFacts {
        path: "/tokenize",
        body: TokenizeBody::Inputs,
        chat_path: Some("/chat_tokenize"),
        chat_fields: &[],
    }),
    context_limit: &[LimitSource::InfoMaxTotalTokens],
    context_flag: Some("--max-total-tokens"),
    context_clip: None,
    readiness: "/health",
    info: &["/info", "/v1/models"],
    version: &[VersionSource {
        path: "/info",
        pointer: "/version",
    }],
    // router/src/lib.rs:261-299: `Info`, every key it holds; no other launcher flag.
    server_args: &[ArgSource::JsonKeys {
        path: "/info",
        keys: &[
            "model_id",
            "model_sha",
            "model_pipeline_tag",
            "max_concurrent_requests",
            "max_best_of",
            "max_stop_sequences",
            "max_input_tokens",
            "max_total_tokens",
            "validation_workers",
            "max_client_batch_size",
            "router",
            "version",
            "sha",
            "docker_label",
        ],
    }],
    metrics: Some(MetricsFacts {
        path: "/metrics",
        enable: None,
        series_need: None,
        updated: None,
        written_on_finish: None,
        running: "tgi_batch_current_size",
        waiting: "tgi_queue_size",
        kv_usage: None,
        preemptions: None,
        labels: &[],
    }),
    model_query: None,
    // router/src/infer/mod.rs:84,115 (a semaphore of `--max-concurrent-requests`,
    // launcher/src/main.rs:645-649, default 128; `try_acquire_owned` fails at once: "Model is
    // overloaded"), router/src/lib.rs:276 (`/info` `max_concurrent_requests`).
    concurrency_limit: Some(ConcurrencyLimit {
        path: "/info",
        pointer: "/max_concurrent_requests",
        flag: "--max-concurrent-requests",
        refuses: true,
    }),
    cached_tokens_flag: None,
    reports_cached_tokens: false,
    stream: StreamFacts {
        sends_done: true,
        empty_finish_reason: true,
        may_hold_back_text: false,
        reasoning_fields: &[],
        reasoning_usage: ReasoningUsage::NotChecked,
        usage: StreamUsage::CompletionsAlwaysChatWhenAsked,
        error_cuts_stream: PerApi::both(false),
        finish_words: &[
            FinishWord {
                word: "eos_token",
                on: PerApi {
                    completions: true,
                    chat: false,
                },
                means: Ending::Stop,
                source: "router/src/lib.rs:1412-1430, server.rs:858 (completions streams send `to_string()`)",
            },
            FinishWord {
                word: "stop_sequence",
                on: PerApi::both(true),
                means: Ending::Stop,
                source: "router/src/lib.rs:1418-1439, chat.rs:97-100 (`format(true)` turns only `eos_token` into `stop`)",
            },
        ],
        // db931fcf router/src: a chunk per generated token on both APIs, the last one with
        // the finish reason (server.rs:846-880); a chat chunk of a special token (EOS) has
        // `"content": ""` (chat.rs:86-90, 122-126) and every chat delta names the role, so
        // there is no opener; usage is `choices: []` (chat.rs:268-294).
        token_chunks: PerApi::both(TokenChunks {
            textless: true,
            opener: false,
            finish: true,
        }),
    },
    // TGI db931fcf router/src/lib.rs: chat `logprobs`, `top_logprobs` (:857-863) answered
    // `{content: [{token, logprob, top_logprobs}]}` (:607-677), at most `--max-top-n-tokens`
    // (5 by default, launcher/src/main.rs:670); completions send `logprobs: None`
    // (server.rs:860, 876); `seed` on both (:523).
    outputs: OutputFacts {
        seed: true,
        completions: OutputApi {
            logprobs: LogprobsAsk::None,
            top_max: 0,
            token_ids: None,
        },
        chat: OutputApi {
            logprobs: LogprobsAsk::Flag,
            top_max: 5,
            token_ids: None,
        },
    },
    profiler: Profiler::None {
        instead: "not read",
    },
};
