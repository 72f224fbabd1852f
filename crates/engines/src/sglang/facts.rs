//! The sglang profile (see the crate's documentation for how profiles are read).

use crate::Engine;
use crate::facts::*;

/// SGLang 0.5.23: srt/entrypoints/openai/protocol.py (CompletionRequest, ChatCompletionRequest
/// :365,909 — `min_tokens` :399, `ignore_eos` :407; unknown fields dropped by pydantic's
/// default; TokenizeRequest :1744), srt/entrypoints/http_server.py (`/tokenize` and
/// `/v1/tokenize` :1907-1912, `/server_info` :863 with `version`, deprecated
/// `/get_server_info` :853, `/v1/models` `max_model_len = context_len` :2005, `/health` 503
/// until warmed up :721), srt/utils/common.py:3584 (`build_server_info`: the flat
/// `resolved_dict()` of server arguments), srt/entrypoints/engine.py (`server_args={…}` log
/// line from 0.5.19, `server_args=ServerArgs(…)` up to 0.5.18), usage_processor.py:75-82
/// (`cached_tokens` with `--enable-cache-report`), :120-131 (`completion_tokens_details.
/// reasoning_tokens` when some), sse_utils.py (`delta.reasoning_content`).
pub(crate) static SGLANG: Profile = Profile {
    engine: Engine::Sglang,
    name: "SGLang",
    checked: "0.5.17 against the real server (transcripts/0.5.17, H100, replayed in transcripts/replay/sglang.rs); 0.5.23 (PyPI wheel): srt/entrypoints/openai/protocol.py, srt/entrypoints/http_server.py, srt/entrypoints/engine.py, srt/utils/common.py, srt/entrypoints/openai/usage_processor.py, sse_utils.py, srt/managers/schedule_batch.py",
    release: "0.5.23",
    request: RequestFacts {
        ignore_eos: Field::Honoured,
        min_tokens: Field::Honoured,
        stream_options: Field::Honoured,
        unknown_fields: UnknownFields::Dropped,
        checks_model: false,
        generation_config: false,
        accepts: None,
        // protocol.py:640-642 ChatCompletionMessageContentImagePart (`image_url`), for a
        // multimodal model.
        images: true,
        dropped: &[],
    },
    tokenize: Some(TokenizeFacts {
        path: "/tokenize",
        body: TokenizeBody::Prompt,
        chat_path: Some("/tokenize"),
        // protocol.py:1752-1758: TokenizeRequest takes `tools`, `tool_choice`,
        // `reasoning_effort`, `chat_template_kwargs` beside `messages`.
        chat_fields: &[
            "chat_template_kwargs",
            "tools",
            "tool_choice",
            "reasoning_effort",
        ],
    }),
    context_limit: &[LimitSource::ModelsMaxModelLen],
    context_flag: Some("--context-length"),
    context_clip: None,
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
        series_need: None,
        updated: None,
        written_on_finish: None,
        running: "sglang:num_running_reqs",
        waiting: "sglang:num_queue_reqs",
        kv_usage: Some("sglang:token_usage"),
        // observability/metrics_collector.py:552-561 (0.5.23): `sglang:num_retracted_reqs` is
        // a gauge of the last retraction, reset at each stats log (managers/scheduler_
        // components/metrics_reporter.py:874-876); the counter is this one (:1513-1519).
        preemptions: Some(Series {
            name: "sglang:num_retracted_requests_total",
            kind: MetricKind::Counter,
        }),
        // metrics_collector.py:1381-1392: every scheduler that logs (attn_tp_rank 0, or all
        // with --enable-metrics-for-all-schedulers) labels its series with its `tp_rank`,
        // `pp_rank`, `moe_ep_rank`, and `dp_rank` when there is one (DP attention: each DP
        // rank its own requests); `priority` "" is the total, "<n>" its breakdown (:1388-1390,
        // :1417-1428).
        labels: &[
            ("dp_rank", LabelRole::Part),
            ("tp_rank", LabelRole::Replica),
            ("pp_rank", LabelRole::Replica),
            ("moe_ep_rank", LabelRole::Replica),
            ("priority", LabelRole::Breakdown),
        ],
    }),
    model_query: None,
    concurrency_limit: None,
    cached_tokens_flag: Some("--enable-cache-report"),
    reports_cached_tokens: true,
    stream: StreamFacts {
        sends_done: true,
        empty_finish_reason: false,
        may_hold_back_text: false,
        reasoning_fields: &["reasoning_content"],
        reasoning_usage: ReasoningUsage::WithParser {
            flag: "--reasoning-parser",
            zero_when_none: false,
            note: "counted by the scheduler up to and including the think-end token (managers/schedule_batch.py `update_reasoning_tokens`); also a top-level `usage.reasoning_tokens`; entrypoints/openai/usage_processor.py `calculate_token_usage`",
        },
        usage: StreamUsage::WhenAsked,
        error_cuts_stream: PerApi::both(false),
        finish_words: &[],
        // 0.5.23 srt/entrypoints/openai: completions send a chunk per output step, its text
        // the step's delta, empty or not, the finish reason on the last
        // (serving_completions.py:349-404). Chat opens with `{"role":"assistant",
        // "content":""}` (serving_chat.py:2582-2600), sends content only where the delta is
        // not empty (:1033-1050), and the finish reason apart, with no delta, after the last
        // step (:2641-2660). Usage is `choices: []` (:2793; serving_completions.py:491).
        token_chunks: PerApi {
            completions: TokenChunks {
                textless: true,
                opener: false,
                finish: true,
            },
            chat: TokenChunks {
                textless: false,
                opener: true,
                finish: false,
            },
        },
    },
    // SGLang 0.5.23 entrypoints/openai/protocol.py: completions `logprobs: int` (:377),
    // `return_token_ids` (:394) → `choices[].token_ids` (serving_completions.py:622); chat
    // `logprobs: bool`, `top_logprobs` (:926-927), `return_token_ids` (:963) →
    // `choices[].response_token_ids` (serving_chat.py:2981-3015, non-streamed only :1315);
    // `seed` (:381, :941).
    outputs: OutputFacts {
        seed: true,
        completions: OutputApi {
            logprobs: LogprobsAsk::Count,
            top_max: 20,
            token_ids: Some(TokenIds {
                request: "return_token_ids",
                response: "token_ids",
            }),
        },
        chat: OutputApi {
            logprobs: LogprobsAsk::Flag,
            top_max: 20,
            token_ids: Some(TokenIds {
                request: "return_token_ids",
                response: "response_token_ids",
            }),
        },
    },
    // SGLang 0.5.23 (0.5.17's lines in brackets): srt/entrypoints/http_server.py:1221-1240
    // [1137-1155] (`/start_profile` takes an optional `ProfileReq`; `/stop_profile` awaits
    // the tokenizer manager's stop, whatever its "This will take some time" says);
    // srt/managers/io_struct.py:2374-2399 [1973-1997] (`output_dir`, `num_steps`,
    // `activities` among `CPU`, `GPU`, `MEM`, `RPD`, `with_stack`, `record_shapes`);
    // srt/managers/tokenizer_control_mixin.py:408-428 [376-396] (`with_stack` and
    // `record_shapes` are true unless the request says `false` or
    // `SGLANG_PROFILE_WITH_STACK`/`SGLANG_PROFILE_RECORD_SHAPES` are off, both default true,
    // srt/environ.py:456-457 [315-316]; the stop awaits the schedulers' answer);
    // srt/managers/scheduler_components/profiler_manager.py:131-133 [122-125] (no
    // `output_dir`: `SGLANG_TORCH_PROFILER_DIR`, default `/tmp`, srt/environ.py:471 [352]),
    // :318-411 [298-385] (`_stop_profile`, on the default path: `SGLANG_PROFILE_V2` is off,
    // srt/environ.py:458 [317], exports one `<id>-TP-<rank>[-DP-…][-PP-…][-EP-…].trace.json.gz`
    // per rank with `export_chrome_trace`, :361 [340], before it answers).
    profiler: Profiler::Endpoints(ProfilerFacts {
        start: "/start_profile",
        stop: "/stop_profile",
        dir_key: Some("output_dir"),
        // No stacks, no shapes: kernel names and times are all the evidence reads, and both
        // default to on (above), which makes the trace larger and the probe heavier.
        start_body: r#"{"activities": ["CPU", "GPU"], "with_stack": false, "record_shapes": false}"#,
        launch: None,
        files: "one `…-TP-<rank>….trace.json.gz` per rank, in the request's `output_dir`",
        trace_suffixes: &[".trace.json.gz", ".trace.json"],
        written_by_stop: true,
        source: "0.5.23: srt/entrypoints/http_server.py:1221-1240, srt/managers/io_struct.py:2374-2399, srt/managers/tokenizer_control_mixin.py:408-428, srt/managers/scheduler_components/profiler_manager.py:131-133,318-411, srt/environ.py:456-458,471",
    }),
};
