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
pub(crate) static TGI: Profile = Profile {
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
        accepts: None,
        // Not read at db931fcf: no image part is sent to TGI, and its simulator refuses them.
        images: false,
    },
    tokenize: Some(TokenizeFacts {
        path: "/tokenize",
        body: TokenizeBody::Inputs,
        chat_path: Some("/chat_tokenize"),
        chat_fields: &[],
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
