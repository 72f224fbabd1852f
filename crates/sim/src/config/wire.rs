//! Which engine's wire format the simulator speaks (`--engine`), and the settings that only
//! matter to that format: its start-up log, its metrics switch, the server arguments it
//! echoes.

use serde::Serialize;

use crate::SimError;

/// The engine whose HTTP dialect the simulator speaks. `Generic` is the simulator's own
/// OpenAI-compatible dialect (vLLM-shaped, as before personalities existed); every other
/// value follows that engine's source, version named in `docs/simulator.md`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Personality {
    /// The simulator's own dialect.
    #[default]
    Generic,
    /// SGLang 0.5.23 (`python -m sglang.launch_server`).
    Sglang,
    /// vLLM 0.33.0 (`vllm serve`).
    Vllm,
    /// llama.cpp's `llama-server` as vendored in llama-cpp-python 0.3.36.
    Llamacpp,
    /// Text Generation Inference at git `db931fcf` (3.3.6-dev0).
    Tgi,
    /// TensorRT-LLM's `trtllm-serve` (the version of its OpenAI server that serves
    /// `/_internal/tokenize`).
    Trtllm,
    /// `transformers serve` of transformers 5.24.0.
    Transformers,
}

impl Personality {
    /// The name written on the command line and in the info endpoint.
    pub fn name(self) -> &'static str {
        match self {
            Personality::Generic => "generic",
            Personality::Sglang => "sglang",
            Personality::Vllm => "vllm",
            Personality::Llamacpp => "llamacpp",
            Personality::Tgi => "tgi",
            Personality::Trtllm => "trtllm",
            Personality::Transformers => "transformers",
        }
    }

    /// The engine version whose wire format this personality follows (what its version
    /// endpoint reports unless `--engine-version` says otherwise).
    pub fn source_version(self) -> &'static str {
        match self {
            Personality::Generic => crate::VERSION,
            Personality::Sglang => "0.5.23",
            Personality::Vllm => "0.33.0",
            // llama.cpp built from the llama-cpp-python sdist has no git: build 0, commit
            // "unknown" (cmake/build-info.cmake), so llama_build_info() is "b0-unknown".
            Personality::Llamacpp => "b0-unknown",
            // router/Cargo.toml takes the workspace version, 3.3.6-dev0 at db931fcf.
            Personality::Tgi => "3.3.6-dev0",
            // tensorrt_llm/version.py as stored in the search index the facts came from.
            Personality::Trtllm => "1.0.0rc4",
            Personality::Transformers => "5.24.0",
        }
    }
}

/// How SGLang prints its server arguments at start-up (`--sglang-log-form`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SglangLogForm {
    /// SGLang ≥ 0.5.19: `server_args={'model_path': …, 'moe_runner_backend': …}`, a
    /// Python dict (`logger.info(f"server_args={…resolved_dict()}")`, entrypoints/engine.py
    /// :265,1098 in the 0.5.19 wheel, :311,1185 in 0.5.23).
    #[default]
    Dict,
    /// SGLang ≤ 0.5.18: `server_args=ServerArgs(model_path=…, moe_runner_backend=…)`, the
    /// dataclass repr (`logger.info(f"{server_args=}")`, entrypoints/engine.py:253,1095 in
    /// the 0.5.18 wheel).
    Dataclass,
}

/// llama.cpp's `--flash-attn` (`-fa`): `on`, `off`, `auto`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum FlashAttn {
    /// `auto` (llama.cpp's default).
    #[default]
    Auto,
    /// `on`.
    On,
    /// `off`.
    Off,
}

impl FlashAttn {
    /// `llama_flash_attn_type_name` (src/llama.cpp:38-46): `auto`, `enabled`, `disabled`.
    pub fn log_name(self) -> &'static str {
        match self {
            FlashAttn::Auto => "auto",
            FlashAttn::On => "enabled",
            FlashAttn::Off => "disabled",
        }
    }
}

/// The personality and what only it uses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WireParams {
    /// The dialect.
    pub engine: Personality,
    /// The version the version endpoints report; `None`: the personality's source version.
    pub engine_version: Option<String>,
    /// SGLang's start-up log form.
    pub sglang_log_form: SglangLogForm,
    /// The MoE backend a spec's variant passes (`--moe-runner-backend` for SGLang,
    /// `--moe-backend` for vLLM): echoed in the start-up log and the info endpoints, no
    /// effect on timing.
    pub moe_backend: Option<String>,
    /// The model path the engine would load (`--model-path`); default: the served model.
    pub model_path: Option<String>,
    /// Tensor-parallel size echoed in the server arguments (`--tp`); no effect on timing.
    pub tp_size: u32,
    /// SGLang's data-parallel attention ranks (`--dp`): the metrics are written per rank,
    /// labelled `dp_rank`; no effect on timing.
    pub dp_size: u32,
    /// Serve Prometheus metrics where the engine needs a switch for them (SGLang
    /// `--enable-metrics`, llama.cpp `--metrics`, TensorRT-LLM `return_perf_metrics`);
    /// engines that always serve them ignore it.
    pub enable_metrics: bool,
    /// TensorRT-LLM's `enable_iter_perf_stats`: its running, waiting and KV gauges are
    /// served only with it.
    pub iter_perf_stats: bool,
    /// Report cached prompt tokens where the engine needs a switch for it (SGLang
    /// `--enable-cache-report`, vLLM `--enable-prompt-tokens-details`).
    pub cache_report: bool,
    /// Share of streams whose text is held back to the end: no content chunk at all, the
    /// finish (and usage) only, as a byte-level detokenizer can leave a short stream of
    /// `transformers serve`.
    pub held_back_rate: f64,
    /// llama.cpp's flash-attention setting, echoed in its `llama_context` log lines; no
    /// effect on timing.
    pub flash_attn: FlashAttn,
    /// Milliseconds of silence after which a stream gets an SSE comment (`:`) to keep it
    /// alive; `None`: the engine's default (llama.cpp 30 s, TGI 15 s, others never).
    pub sse_ping_ms: Option<u64>,
    /// Prompt tokens each `image_url` part of a chat message counts for (its prefill time
    /// grows with them), under every personality whose engine takes images.
    pub image_tokens: u32,
}

impl Default for WireParams {
    fn default() -> Self {
        WireParams {
            engine: Personality::Generic,
            engine_version: None,
            sglang_log_form: SglangLogForm::Dict,
            moe_backend: None,
            model_path: None,
            tp_size: 1,
            dp_size: 1,
            enable_metrics: false,
            iter_perf_stats: false,
            cache_report: false,
            held_back_rate: 0.0,
            flash_attn: FlashAttn::Auto,
            sse_ping_ms: None,
            image_tokens: 256,
        }
    }
}

impl WireParams {
    /// The version the version endpoints report.
    pub fn version(&self) -> &str {
        self.engine_version
            .as_deref()
            .unwrap_or_else(|| self.engine.source_version())
    }

    /// Checks ranges.
    pub fn validate(&self) -> Result<(), SimError> {
        if !(0.0..=1.0).contains(&self.held_back_rate) {
            return Err(SimError::InvalidConfig(format!(
                "held_back_rate is a share of streams in [0, 1], got {}",
                self.held_back_rate
            )));
        }
        if self.tp_size == 0 {
            return Err(SimError::InvalidConfig("tp_size must be at least 1".into()));
        }
        if self.dp_size == 0 || !self.tp_size.is_multiple_of(self.dp_size) {
            return Err(SimError::InvalidConfig(format!(
                "--dp {} must be at least 1 and divide --tp {} (SGLang's data-parallel \
                 attention splits the tensor-parallel ranks)",
                self.dp_size, self.tp_size
            )));
        }
        if self.sse_ping_ms == Some(0) {
            return Err(SimError::InvalidConfig(
                "sse_ping_ms must be at least 1 ms (leave --sse-ping-ms out for the engine's \
                 default)"
                    .into(),
            ));
        }
        if let Some(b) = &self.moe_backend
            && (b.is_empty() || b.contains(char::is_whitespace))
        {
            return Err(SimError::InvalidConfig(format!(
                "the MoE backend is one word such as flashinfer_cutedsl, got `{b}`"
            )));
        }
        Ok(())
    }
}
