//! The trtllm profile (see the crate's documentation for how profiles are read).

use crate::Engine;
use crate::facts::*;

/// TensorRT-LLM's `trtllm-serve`, read in NVIDIA/TensorRT-LLM: tensorrt_llm/serve/
/// openai_protocol.py @0076e939 (OpenAIBaseModel `extra="forbid"`, so any unknown field is a
/// 400 through openai_server.py's RequestValidationError handler; CompletionRequest has
/// `ignore_eos`, `min_tokens`, `stream_options`; ModelCard `owned_by: "tensorrt_llm"`;
/// TokenizeRequest/Response of `POST /_internal/tokenize`, `{prompt}` only → `{count,
/// tokens}`; DeltaMessage has both `reasoning_content` and `reasoning`), openai_server.py
/// @00057725 (`/version`, `/health`, `[DONE]` after the last chunk, Prometheus at
/// `/prometheus/metrics` with `return_perf_metrics`, `/metrics` is JSON iteration stats),
/// metrics/collector.py @050f80de (names); metrics/collector.py and openai_server.py as the
/// search index holds them newest (2026 headers: `log_iteration_stats` sets the running,
/// waiting and KV gauges; the lifespan starts `_iteration_stats_collector_loop` only with
/// `enable_iter_perf_stats`, and the loop wakes when a request completes).
///
/// Read again in the newest copies the search index holds of openai_server.py (2026, with
/// `TokenizeRequest`, `allow_request_chat_template`) and postprocess_handlers.py (2026 header,
/// `_ensure_stream_metadata`); PyPI's 1.2.1 wheel lives on pypi.nvidia.com, out of reach here.
/// `openai_completion`'s `completion_generator` catches a generation error and sends
/// `data: {"error":{"message","type":"server_error","code":null,"param":null}}` then
/// `data: [DONE]` (its comment: the status is already 200); `openai_chat`'s
/// `chat_stream_generator` and `chat_harmony`'s `create_streaming_generator` log it and
/// re-raise, so uvicorn closes the connection mid-body: no error event, no `[DONE]`. Finish
/// reasons are `CompletionOutput.finish_reason` (executor/result.py: `stop`, `length`,
/// `timeout`, `cancelled`).
pub(crate) static TRTLLM: Profile = Profile {
    engine: Engine::Trtllm,
    name: "TensorRT-LLM",
    checked: "git (NVIDIA/TensorRT-LLM): tensorrt_llm/serve/openai_protocol.py @0076e939, openai_server.py @00057725 and the newest the search index holds (2026), postprocess_handlers.py (2026), metrics/collector.py @050f80de, executor/result.py",
    // tensorrt_llm/version.py as stored in the search index the facts came from.
    release: "1.0.0rc4",
    request: RequestFacts {
        ignore_eos: Field::Honoured,
        min_tokens: Field::Honoured,
        stream_options: Field::Honoured,
        unknown_fields: UnknownFields::Refused(400),
        checks_model: false,
        generation_config: false,
        accepts: None,
        // tensorrt_llm/serve/chat_utils.py @0c351902 `parse_chat_message_content_part`:
        // `image_url` parts loaded as image media, for a multimodal model.
        images: true,
        dropped: &[],
    },
    tokenize: Some(TokenizeFacts {
        path: "/_internal/tokenize",
        body: TokenizeBody::Prompt,
        chat_path: None,
        chat_fields: &[],
    }),
    context_limit: &[],
    context_flag: Some("--max_seq_len"),
    context_clip: None,
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
        // metrics/collector.py `log_iteration_stats` sets these gauges from iteration
        // statistics, which openai_server.py's lifespan collects only with
        // `enable_iter_perf_stats` (off by default on the PyTorch backend), in a loop woken
        // when a request finishes (`_iteration_stats_collector_loop`).
        series_need: Some("enable_iter_perf_stats: true (in --extra_llm_api_options)"),
        updated: Some("when a request finishes, not continuously"),
        // metrics/collector.py `log_metrics_dict`: the request-success counter (labelled with
        // `finished_reason`) is recorded when a request finishes, like every other series
        // (the token counters too, `_log_counter(self.counter_prompt_tokens, …)`); before the
        // first, the endpoint serves none of them.
        written_on_finish: Some("trtllm_request_success_total"),
        running: "trtllm_num_requests_running",
        waiting: "trtllm_num_requests_waiting",
        kv_usage: Some("trtllm_kv_cache_utilization"),
        preemptions: None,
        labels: &[],
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
        // openai_server.py (newest): `completion_generator` sends an error event and
        // `[DONE]`; `chat_stream_generator` re-raises, which ends the body unfinished.
        error_cuts_stream: PerApi {
            completions: false,
            chat: true,
        },
        finish_words: &[
            FinishWord {
                word: "timeout",
                on: PerApi::both(true),
                means: Ending::Abort,
                source: "executor/result.py `CompletionOutput.finish_reason`",
            },
            FinishWord {
                word: "cancelled",
                on: PerApi::both(true),
                means: Ending::Abort,
                source: "executor/result.py `CompletionOutput.finish_reason`",
            },
        ],
        // postprocess_handlers.py (newest, @01bf1923): `completion_stream_post_processor`
        // sends a chunk per output, its `text_diff` empty or not, the finish reason on the
        // last; `chat_stream_post_processor` opens with `yield_first_chat(role=…)` and keeps
        // "token-bearing chunks visible even when detokenization has no text to flush yet"
        // (`has_token_delta`), the finish reason on the last; usage is `choices: []`.
        token_chunks: PerApi {
            completions: TokenChunks {
                textless: true,
                opener: false,
                finish: true,
            },
            chat: TokenChunks {
                textless: true,
                opener: true,
                finish: true,
            },
        },
    },
    // TensorRT-LLM openai_protocol.py @54cf7be: completions refuse `logprobs` ("logprobs is
    // not supported", CompletionRequest.check_logprobs); chat takes `logprobs: true`, and
    // `top_logprobs` only on the PyTorch backend or with `gather_generation_logits`
    // (ChatCompletionRequest.to_sampling_params): the chosen token's only; `seed` on both.
    outputs: OutputFacts {
        seed: true,
        completions: OutputApi {
            logprobs: LogprobsAsk::None,
            top_max: 0,
            token_ids: None,
        },
        chat: OutputApi {
            logprobs: LogprobsAsk::Flag,
            top_max: 0,
            token_ids: None,
        },
    },
    profiler: Profiler::None {
        instead: "not read",
    },
};
