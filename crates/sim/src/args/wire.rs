//! Flags of the engine personality (`--engine` and what only an engine's dialect uses).

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

use crate::config::{
    Engine, FlashAttn, ProfilerParams, SglangLogForm, WireParams, engine_named, engine_names,
};

/// Which engine's wire format to speak, and its own settings.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Engine personality")]
pub struct WireArgs {
    /// Speak this engine's wire format: chunk shapes, request validation, tokenize, info and
    /// version endpoints, readiness, start-up log lines, metrics (docs/simulator.md,
    /// "Personalities"). `generic` is the simulator's own dialect.
    #[arg(long, value_parser = engine_parser(), default_value = "generic")]
    pub engine: Engine,
    /// The version the engine's version endpoints report (default: the version its
    /// personality was read from).
    #[arg(long, value_name = "VERSION")]
    pub engine_version: Option<String>,
    /// SGLang's start-up log form: `dict` (0.5.19 and later) or `dataclass` (0.5.18 and
    /// earlier).
    #[arg(long, value_enum, default_value_t = SglangLogForm::Dict)]
    pub sglang_log_form: SglangLogForm,
    /// MoE backend to echo in the start-up log and the info endpoints (SGLang
    /// `--moe-runner-backend`, vLLM `--moe-backend`); it changes no timing.
    #[arg(long, value_name = "NAME", alias = "moe-backend")]
    pub moe_runner_backend: Option<String>,
    /// Model path to echo where the engine reports it (default: the served model name).
    #[arg(long, value_name = "PATH")]
    pub model_path: Option<String>,
    /// Tensor-parallel size to echo in the server arguments; it changes no timing.
    #[arg(long = "tp", value_name = "N", default_value_t = 1,
          aliases = ["tp-size", "tensor-parallel-size"])]
    pub tp_size: u32,
    /// SGLang's `--dp` with `--enable-dp-attention`: each of N data-parallel ranks serves its
    /// own share of the requests and reports its own metrics series (`dp_rank`); echoed in
    /// the server arguments; it changes no timing.
    #[arg(long = "dp", value_name = "N", default_value_t = 1,
          aliases = ["dp-size", "data-parallel-size"])]
    pub dp_size: u32,
    /// Serve Prometheus metrics where the engine needs a switch for them (SGLang
    /// `--enable-metrics`, llama.cpp `--metrics`, TensorRT-LLM `return_perf_metrics`).
    #[arg(long, alias = "metrics")]
    pub enable_metrics: bool,
    /// TensorRT-LLM's `enable_iter_perf_stats: true`: without it its `/prometheus/metrics`
    /// serves no running, waiting or KV-cache gauge.
    #[arg(long)]
    pub enable_iter_perf_stats: bool,
    /// Report cached prompt tokens (`usage.prompt_tokens_details.cached_tokens`) where the
    /// engine needs a switch for it (SGLang `--enable-cache-report`, vLLM
    /// `--enable-prompt-tokens-details`).
    #[arg(long, alias = "enable-prompt-tokens-details")]
    pub enable_cache_report: bool,
    /// Share of streams whose text is held back: no content chunk at all, only the finish
    /// and usage, although usage counts every token (as seen from `transformers serve`).
    #[arg(long, value_name = "F", default_value_t = 0.0)]
    pub held_back_rate: f64,
    /// Share of tokens whose text decodes to nothing (a `<unk>`), under the vllm
    /// personality: each is a chunk with empty text, as vLLM 0.26.0 sends one.
    #[arg(long, value_name = "F", default_value_t = 0.0)]
    pub empty_text_rate: f64,
    /// llama.cpp's flash attention (`-fa`), echoed in its `llama_context: flash_attn`
    /// log line; it changes no timing.
    #[arg(long, value_enum, default_value_t = FlashAttn::Auto)]
    pub flash_attn: FlashAttn,
    /// Send an SSE comment `:` after this many ms without an event (default: the engine's,
    /// llama.cpp 30 000, TGI 15 000, the others never).
    #[arg(long, value_name = "MS")]
    pub sse_ping_ms: Option<u64>,
    /// Prompt tokens each `image_url` part of a chat message counts for (its prefill time
    /// grows with them), under every personality whose engine takes images (all but `tgi`).
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub image_tokens: u32,
    /// llama.cpp's router mode (`--engine llamacpp`): list this model too, besides the served
    /// `--model` (repeat for more). The router answers `/v1/models` with every model and its
    /// status, `/props` for itself unless asked `?model=`, `/metrics` only with `?model=`,
    /// and refuses a request naming no model or one it does not list; the other models are
    /// served by the same engine model (loaded when asked).
    #[arg(long = "router-model", value_name = "NAME")]
    pub router_models: Vec<String>,
    /// SGLang's `--enable-priority-scheduling` (`--engine sglang`): a request's `priority`
    /// is read, and the metrics count running and waiting requests per priority besides the
    /// total (`priority=""`); it changes no scheduling.
    #[arg(long)]
    pub enable_priority_scheduling: bool,
    /// SGLang's `--default-priority-value`: the priority of a request that gives none
    /// (without it SGLang gives such a request the lowest priority, -2^63).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub default_priority_value: Option<i64>,
    /// The simulated profilers (docs/simulator.md, "Profilers").
    #[command(flatten)]
    pub profiler: ProfilerArgs,
}

/// Flags of the simulated profilers.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Profiler (kernel evidence)")]
pub struct ProfilerArgs {
    /// The MoE backend whose kernels the profiler's traces hold (default: --moe-backend's,
    /// else `auto`): set it to another than --moe-backend to play a server that claims one
    /// backend and runs another.
    #[arg(long, value_name = "BACKEND")]
    pub sim_kernels: Option<String>,
    /// vLLM's `--profiler-config` as JSON (`--engine vllm`): with `"profiler": "torch"` and
    /// `"torch_profiler_dir"`, `/start_profile` and `/stop_profile` are served and the stop
    /// writes a trace per worker (`--tp`), the API process's and a table per worker there.
    #[arg(long, value_name = "JSON")]
    pub profiler_config: Option<String>,
    /// Serve the profiler routes of servebench's launcher `scripts/tserve_profiler.py`
    /// (`--engine transformers`).
    #[arg(long)]
    pub tserve_profiler: bool,
    /// SGLang's trace directory when a start names no `output_dir` (`--engine sglang`).
    #[arg(
        long,
        value_name = "DIR",
        env = "SGLANG_TORCH_PROFILER_DIR",
        default_value = "/tmp"
    )]
    pub sglang_torch_profiler_dir: String,
}

impl Default for ProfilerArgs {
    fn default() -> Self {
        let d = ProfilerParams::default();
        ProfilerArgs {
            sim_kernels: d.kernels,
            profiler_config: d.vllm_config,
            tserve_profiler: d.tserve,
            sglang_torch_profiler_dir: d.sglang_dir,
        }
    }
}

impl ProfilerArgs {
    fn to_params(&self) -> ProfilerParams {
        ProfilerParams {
            kernels: self.sim_kernels.clone(),
            vllm_config: self.profiler_config.clone(),
            tserve: self.tserve_profiler,
            sglang_dir: self.sglang_torch_profiler_dir.clone(),
        }
    }
}

/// `--engine`'s parser: the dialect names of [`engine_names`], each with its dialect's help
/// line.
fn engine_parser() -> impl TypedValueParser<Value = Engine> {
    let values = engine_names()
        .map(|(name, e)| PossibleValue::new(name).help(servebench_engines::of(e).about()));
    PossibleValuesParser::new(values)
        .try_map(|name| engine_named(&name).ok_or_else(|| format!("unknown engine `{name}`")))
}

impl Default for WireArgs {
    fn default() -> Self {
        let d = WireParams::default();
        WireArgs {
            engine: d.engine,
            engine_version: d.engine_version,
            sglang_log_form: d.sglang_log_form,
            moe_runner_backend: d.moe_backend,
            model_path: d.model_path,
            tp_size: d.tp_size,
            dp_size: d.dp_size,
            enable_metrics: d.enable_metrics,
            enable_iter_perf_stats: d.iter_perf_stats,
            enable_cache_report: d.cache_report,
            held_back_rate: d.held_back_rate,
            empty_text_rate: d.empty_text_rate,
            flash_attn: d.flash_attn,
            sse_ping_ms: d.sse_ping_ms,
            image_tokens: d.image_tokens,
            router_models: d.router_models,
            enable_priority_scheduling: d.priority_scheduling,
            default_priority_value: d.default_priority,
            profiler: ProfilerArgs::default(),
        }
    }
}

impl WireArgs {
    pub(crate) fn to_params(&self) -> WireParams {
        WireParams {
            engine: self.engine,
            engine_version: self.engine_version.clone(),
            sglang_log_form: self.sglang_log_form,
            moe_backend: self.moe_runner_backend.clone(),
            model_path: self.model_path.clone(),
            tp_size: self.tp_size,
            dp_size: self.dp_size,
            enable_metrics: self.enable_metrics,
            iter_perf_stats: self.enable_iter_perf_stats,
            cache_report: self.enable_cache_report,
            held_back_rate: self.held_back_rate,
            empty_text_rate: self.empty_text_rate,
            flash_attn: self.flash_attn,
            sse_ping_ms: self.sse_ping_ms,
            image_tokens: self.image_tokens,
            router_models: self.router_models.clone(),
            priority_scheduling: self.enable_priority_scheduling,
            default_priority: self.default_priority_value,
            profiler: self.profiler.to_params(),
        }
    }
}
