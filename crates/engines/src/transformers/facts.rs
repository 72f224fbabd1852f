//! The transformers profile (see the crate's documentation for how profiles are read).

use crate::Engine;
use crate::facts::*;

/// transformers serve, 5.17.0 and 5.24.0 (PyPI wheels): cli/serving/utils.py
/// (`_validate_request`: a field outside the request TypedDict is a 422 "Unexpected fields in
/// the request" :1183-1187 in 5.24; `_build_generation_config`: `generation_config` is a JSON
/// string made into a `GenerationConfig` :1246; `model_owner`, `force_model` 400 on another
/// model; continuous batching applies only `max_new_tokens` and `eos_token_id` per request
/// and drops `MinNewTokensLengthLogitsProcessor`, generation/logits_process.py
/// `supports_continuous_batching = False`), cli/serving/chat_completion.py and completion.py
/// (`stream_options`, `logprobs` accepted and ignored with a warning; usage in the final
/// chunk; no `[DONE]`), cli/serving/server.py (routes: no tokenize, no version; `/health`;
/// `/v1/models` entries carry a `status` object); chat_completion.py:264-268,303-307 (5.24:
/// `CompletionUsage` with prompt, completion and total tokens only, written
/// `exclude_none`, so no `completion_tokens_details`).
pub(crate) static TRANSFORMERS: Profile = Profile {
    engine: Engine::Transformers,
    name: "transformers serve",
    checked: "5.17.0 and 5.24.0 (PyPI wheels): cli/serving/utils.py, chat_completion.py, completion.py, server.py, model_manager.py; generation/logits_process.py",
    release: "5.24.0",
    request: RequestFacts {
        ignore_eos: Field::Refused(422),
        min_tokens: Field::Refused(422),
        stream_options: Field::Ignored,
        unknown_fields: UnknownFields::Refused(422),
        checks_model: true,
        generation_config: true,
        accepts: Some(AcceptedFields {
            chat: &[
                // openai 3.57.0 types/chat/completion_create_params.py
                "messages",
                "model",
                "audio",
                "frequency_penalty",
                "function_call",
                "functions",
                "logit_bias",
                "logprobs",
                "max_completion_tokens",
                "max_tokens",
                "metadata",
                "modalities",
                "moderation",
                "n",
                "parallel_tool_calls",
                "prediction",
                "presence_penalty",
                "prompt_cache_key",
                "prompt_cache_options",
                "prompt_cache_retention",
                "reasoning_effort",
                "response_format",
                "safety_identifier",
                "seed",
                "service_tier",
                "stop",
                "store",
                "stream",
                "stream_options",
                "temperature",
                "tool_choice",
                "tools",
                "top_logprobs",
                "top_p",
                "user",
                "verbosity",
                "web_search_options",
                // transformers' own (cli/serving/chat_completion.py:63-66)
                "generation_config",
                "chat_template_kwargs",
            ],
            completions: &[
                // openai 3.57.0 types/completion_create_params.py
                "model",
                "prompt",
                "best_of",
                "echo",
                "frequency_penalty",
                "logit_bias",
                "logprobs",
                "max_tokens",
                "n",
                "presence_penalty",
                "seed",
                "stop",
                "stream_options",
                "suffix",
                "temperature",
                "top_p",
                "user",
                "stream",
                // transformers' own (cli/serving/completion.py:45-48)
                "generation_config",
            ],
        }),
        // cli/serving/utils.py:1318-1324 `get_processor_inputs_from_messages`: `image_url`
        // parts for a vision-language model (dropped for a text-only one).
        images: true,
        dropped: &[],
    },
    tokenize: None,
    context_limit: &[],
    context_flag: None,
    context_clip: None,
    readiness: "/health",
    info: &["/v1/models"],
    version: &[],
    server_args: &[],
    metrics: None,
    model_query: None,
    concurrency_limit: None,
    cached_tokens_flag: None,
    reports_cached_tokens: false,
    stream: StreamFacts {
        sends_done: false,
        empty_finish_reason: false,
        may_hold_back_text: true,
        reasoning_fields: &["reasoning_content"],
        reasoning_usage: ReasoningUsage::NotSent,
        usage: StreamUsage::Always,
        error_cuts_stream: PerApi::both(false),
        finish_words: &[],
        // 5.24.0 cli/serving: a chunk only where the detokenizer gave text (utils.py:601-610:
        // `DecodeStream.step` gives `None` until it has some); chat opens with
        // `{"role":"assistant"}` (chat_completion.py:209); the finish reason and usage come
        // apart after the last token (chat_completion.py:257-274, completion.py:162-173).
        token_chunks: TokenChunks::OPENAI,
    },
    // transformers 5.24.0 cli/serving: `logprobs` and `top_logprobs` are in the unused fields,
    // accepted and ignored (chat_completion.py:70-90, completion.py:53-61): outputs are
    // compared as text; `seed` is a field of both request types (:65, :47) and seeds torch
    // (utils.py:1259-1260).
    outputs: OutputFacts {
        seed: true,
        completions: OutputApi {
            logprobs: LogprobsAsk::None,
            top_max: 0,
            token_ids: None,
        },
        chat: OutputApi {
            logprobs: LogprobsAsk::None,
            top_max: 0,
            token_ids: None,
        },
    },
    // transformers serve 5.24.0 has no profiler route (cli/serving/server.py); servebench's
    // launcher `scripts/tserve_profiler.py` (and `scripts/gpu/tserve-moe.py`, which installs
    // it) adds `/start_profile` and `/stop_profile` of SGLang's shape and starts
    // torch.profiler on the generation threads (docs/kernels.md).
    profiler: Profiler::Endpoints(ProfilerFacts {
        start: "/start_profile",
        stop: "/stop_profile",
        dir_key: Some("output_dir"),
        // GPU kernels only where there is a GPU (the CPU operators of an eager MoE loop would
        // make the trace tens of times larger); the launcher records CPU operators on a CPU.
        start_body: r#"{"activities": ["GPU"]}"#,
        launch: Some(LaunchNeed {
            arg: "tserve",
            names_dir: false,
            hint: "launch it through servebench's `scripts/tserve_profiler.py` (or `scripts/gpu/tserve-moe.py`): transformers serve itself has no profiler route",
            lean_off: &[],
        }),
        files: "one `tserve-<pid>-<n>.pt.trace.json` a start (servebench's launcher; none natively)",
        // scripts/tserve_profiler.py writes `.pt.trace.json`; `.gz` if gzipped by hand.
        trace_suffixes: &[".pt.trace.json", ".pt.trace.json.gz"],
        // scripts/tserve_profiler.py's `/stop_profile` awaits `_export` (a temporary name,
        // renamed when complete) before it answers.
        written_by_stop: true,
        source: "5.24.0: cli/serving/server.py (no profiler route), cli/serving/utils.py:724-765 and generation/continuous_batching/continuous_api.py:1086-1155 (the generation threads the launcher profiles)",
    }),
};
