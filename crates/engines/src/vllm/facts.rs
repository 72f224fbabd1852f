//! The vllm profile (see the crate's documentation for how profiles are read).

use crate::Engine;
use crate::facts::*;

/// vLLM 0.33.0: entrypoints/openai/completion/protocol.py:85-86 (`ignore_eos`, `min_tokens`),
/// entrypoints/serve/engine/protocol.py (OpenAIBaseModel `extra="allow"`: unknown fields
/// accepted with a warning; ModelCard `owned_by: "vllm"`, `max_model_len` :109-112),
/// entrypoints/serve/tokenize/ (`/tokenize` `{prompt|messages}` → `{count, max_model_len,
/// tokens}`), entrypoints/serve/instrumentator/basic.py:53 (`/version`), common/startup.py:94-96
/// (`non-default args: {…}`, printed by the head only), generate/base/protocol.py:359 (delta
/// field `reasoning`), chat_completion/serving.py:165,854-873 (`completion_tokens_details.
/// reasoning_tokens` with `--reasoning-parser`), `--enable-prompt-tokens-details` for
/// `cached_tokens`.
pub(crate) static VLLM: Profile = Profile {
    engine: Engine::Vllm,
    name: "vLLM",
    checked: "0.26.0 against the real server (transcripts/0.26.0, H100, replayed in transcripts/replay/vllm.rs); 0.33.0 (PyPI wheel): entrypoints/openai/completion/protocol.py, entrypoints/serve/engine/protocol.py, entrypoints/serve/tokenize/, entrypoints/serve/instrumentator/basic.py, common/startup.py, entrypoints/openai/chat_completion/serving.py, reasoning/abs_reasoning_parsers.py",
    release: "0.33.0",
    request: RequestFacts {
        ignore_eos: Field::Honoured,
        min_tokens: Field::Honoured,
        stream_options: Field::Honoured,
        unknown_fields: UnknownFields::Dropped,
        checks_model: true,
        generation_config: false,
        accepts: None,
        // renderers/chat_utils/content_parser.py:182-183: an `image_url` part is fetched
        // (a data URL decoded), for a multimodal model.
        images: true,
        dropped: &[],
    },
    tokenize: Some(TokenizeFacts {
        path: "/tokenize",
        body: TokenizeBody::Prompt,
        chat_path: Some("/tokenize"),
        // serve/tokenize/protocol.py:87-114: TokenizeChatRequest takes `chat_template`,
        // `chat_template_kwargs`, `tools` beside `messages`.
        chat_fields: &["chat_template_kwargs", "chat_template", "tools"],
    }),
    context_limit: &[LimitSource::ModelsMaxModelLen],
    context_flag: Some("--max-model-len"),
    // 0.33.0 takes a prompt that fits whatever its `max_tokens`: `max_input_tokens` is the
    // whole context (renderers/params.py:225-236), and `get_max_tokens` lowers `max_tokens`
    // to what the context leaves (serve/utils/api_utils.py:233-264); only a prompt beyond
    // the context alone is refused (renderers/params.py:537-551). 0.26.0 refuses such a
    // request (renderers/params.py:433-452; transcripts/0.26.0/
    // completions-context-overflow.http). The versions between were not read.
    context_clip: Some(ContextClip {
        flag: "--max-model-len",
        clips_in: "0.33.0",
        refuses_in: "0.26.0",
    }),
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
        series_need: None,
        updated: None,
        written_on_finish: None,
        running: "vllm:num_requests_running",
        waiting: "vllm:num_requests_waiting",
        kv_usage: Some("vllm:kv_cache_usage_perc"),
        preemptions: Some(Series {
            name: "vllm:num_preemptions_total",
            kind: MetricKind::Counter,
        }),
        // v1/metrics/loggers.py: one label set per engine of a data-parallel server.
        labels: &[("engine", LabelRole::Part)],
    }),
    model_query: None,
    concurrency_limit: None,
    cached_tokens_flag: Some("--enable-prompt-tokens-details"),
    reports_cached_tokens: true,
    stream: StreamFacts {
        sends_done: true,
        empty_finish_reason: false,
        may_hold_back_text: false,
        reasoning_fields: &["reasoning"],
        reasoning_usage: ReasoningUsage::WithParser {
            flag: "--reasoning-parser",
            zero_when_none: true,
            note: "the parser's `count_reasoning_tokens`, 0 for parsers that do not implement it (reasoning/abs_reasoning_parsers.py:133-150); chat_completion/serving.py:854-873",
        },
        usage: StreamUsage::WhenAsked,
        error_cuts_stream: PerApi::both(false),
        finish_words: &[],
        // 0.26.0 (the wheel; transcripts/0.26.0/chat-stream-logprobs.http shows it): a chunk
        // per engine output with token ids, its text empty where the token decodes to nothing
        // (`<unk>`); only an output with no token before the first is skipped
        // (chat_completion/serving.py:594-602, 619; completion/serving.py:374-380). The chat
        // stream opens with `{"role":"assistant","content":""}` (chat_completion/serving.py:
        // 497-523); the finish reason rides on the last output's chunk (:694-722; completion/
        // serving.py:398-413); usage is `choices: []` (:788; :478). Outputs merge when the
        // server falls behind (v1/engine/output_processor.py:62-72, outputs.py:152-175), so a
        // chunk may carry several tokens: usage gives the count.
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
    // vLLM 0.33.0: completions `logprobs: int` (completion/protocol.py:63), chat `logprobs`,
    // `top_logprobs` (chat_completion/protocol.py:242-243), at most `--max-logprobs` (20 by
    // default, config/model.py:286); `return_token_ids` (completion/protocol.py:172,
    // chat_completion/protocol.py:436) → `choices[].token_ids` (:686, :128); `seed` (:67, :253).
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
                response: "token_ids",
            }),
        },
    },
    // vLLM 0.33.0: entrypoints/serve/profile/api_router.py:20-31 (`StartProfileRequest`:
    // `profile_prefix`, `delay_iterations`, `max_iterations`, `profiler_kwargs`, all optional),
    // :38-55 (`POST /start_profile`, `POST /stop_profile`), :58-67 (the routes exist only when
    // `--profiler-config` sets a profiler); config/profiler.py:70-77 (`profiler: torch`,
    // `torch_profiler_dir`, an absolute path: "Both AsyncLLM's CPU traces and worker's traces
    // (CPU & GPU) will be saved under this directory"), :125 (`torch_profiler_use_gzip`,
    // default true), :239-240 (torch without a directory is refused); profiler/wrapper.py:266
    // (`tensorboard_trace_handler` per worker: one file per worker).
    profiler: Profiler::Endpoints(ProfilerFacts {
        start: "/start_profile",
        stop: "/stop_profile",
        dir_key: None,
        start_body: "{}",
        launch: Some(LaunchNeed {
            arg: "--profiler-config",
            names_dir: true,
            hint: r#"add `--profiler-config '{"profiler": "torch", "torch_profiler_dir": "DIR", "torch_profiler_with_stack": false}'` with DIR the spec's `evidence.kernels.dir`"#,
            // 0.26.0: config/profiler.py:48-51 (`torch_profiler_with_stack`, default true:
            // every operator's Python stack in the trace), used by the workers'
            // profiler/wrapper.py:218-226 and the API process's v1/engine/async_llm.py:188-198.
            // (`torch_profiler_record_shapes` is off by default, :62.)
            lean_off: &["torch_profiler_with_stack"],
        }),
        files: "one `*.pt.trace.json.gz` per worker (rank) and one of the API process (CPU only, not a rank), in `torch_profiler_dir`, and beside them a text table `profiler_out_<rank>.txt` per worker (not a trace)",
        // 0.26.0: profiler/wrapper.py:188-196 (torch's `tensorboard_trace_handler`, which
        // names a file `<worker>.<ns>.pt.trace.json`, `.gz` added with
        // `torch_profiler_use_gzip`), :251-259 and :266-275 (`profiler_out_<rank>.txt`
        // written at every stop while `torch_profiler_dump_cuda_time_total`, default true).
        trace_suffixes: &[".pt.trace.json.gz", ".pt.trace.json"],
        // Not read to the end: the API awaits the engine core's `profile` utility call
        // (0.26.0 v1/engine/async_llm.py:911-915, v1/engine/core_client.py:1141-1144), whose
        // workers stop torch's profiler (v1/worker/gpu_worker.py:1180-1240), but when torch's
        // trace handler runs was not read in torch's source: watched until they hold still.
        written_by_stop: false,
        source: "0.33.0: entrypoints/serve/profile/api_router.py:20-67, config/profiler.py:70-77,125,239-240, profiler/wrapper.py:266",
    }),
};
