//! What a dialect reads of the simulator's settings: [`Served`] (the served model, the
//! address, the limits) and [`WireParams`], which engine's wire format is spoken
//! (`--engine`) with the settings that only matter to that format: its start-up log, its
//! metrics switch, the server arguments it echoes.

use std::net::{IpAddr, Ipv4Addr};

use serde::Serialize;

use crate::Engine;

/// The simulator's settings a dialect reads: `servebench-sim`'s configuration narrowed to
/// them (`SimConfig::served`).
#[derive(Debug, Clone, PartialEq)]
pub struct Served {
    /// The served model's name (`--model`).
    pub model: String,
    /// The address it listens on.
    pub host: IpAddr,
    /// The port it listens on (0 until bound).
    pub port: u16,
    /// The context window in tokens (`--max-model-len`).
    pub max_model_len: u32,
    /// Most sequences running at once (`--max-num-seqs`).
    pub max_num_seqs: u32,
    /// Most tokens in one step (`--max-batched-tokens`).
    pub max_batched_tokens: u32,
    /// `max_tokens` of a request that leaves it out.
    pub default_max_tokens: u32,
    /// KV cache capacity in tokens.
    pub kv_capacity_tokens: u64,
    /// A prefix cache is kept (`--prefix-cache`).
    pub prefix_cache: bool,
    /// The server seed (`--seed`).
    pub seed: u64,
    /// An API key is required (`--api-key`); the key itself is not handed to dialects.
    pub api_key: bool,
    /// The engine spoken and its own settings.
    pub wire: WireParams,
}

impl Default for Served {
    /// The simulator's defaults: `sim-model` on loopback, port 0, the `default` preset's
    /// limits, no prefix cache, the generic dialect.
    fn default() -> Self {
        Served {
            model: "sim-model".into(),
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            max_model_len: 8192,
            max_num_seqs: 256,
            max_batched_tokens: 8192,
            default_max_tokens: 256,
            kv_capacity_tokens: 262_144,
            prefix_cache: false,
            seed: 0,
            api_key: false,
            wire: WireParams::default(),
        }
    }
}

/// The engines `--engine` takes, as written on the command line, in the order `--help`
/// lists them: `generic` ([`Engine::Openai`], the simulator's own OpenAI-compatible dialect,
/// vLLM-shaped), then every other known engine, each following that engine's source.
pub fn engine_names() -> impl Iterator<Item = (&'static str, Engine)> {
    std::iter::once(Engine::Openai)
        .chain(Engine::KNOWN.into_iter().filter(|e| *e != Engine::Openai))
        .map(|e| (engine_name(e), e))
}

/// The engine `--engine NAME` names.
pub fn engine_named(name: &str) -> Option<Engine> {
    engine_names().find(|(n, _)| *n == name).map(|(_, e)| e)
}

/// The name of the engine's dialect, as written on the command line and reported by the
/// info endpoint: `generic` for the simulator's own (an `openai` or `auto` engine).
pub fn engine_name(e: Engine) -> &'static str {
    match e {
        Engine::Auto | Engine::Openai => "generic",
        _ => e.as_str(),
    }
}

/// Serialises an engine by its dialect name (`generic`, `sglang`, …).
fn ser_engine<S: serde::Serializer>(e: &Engine, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(engine_name(*e))
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
    /// The dialect: the engine whose wire format is spoken ([`Engine::Openai`]: the
    /// simulator's own, `generic`).
    #[serde(serialize_with = "ser_engine")]
    pub engine: Engine,
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
    /// Share of generated tokens whose text decodes to nothing (a `<unk>` or a special
    /// token), streamed as the engine streams such a token. Only the vllm dialect draws it: a
    /// chunk with empty text, as vLLM 0.26.0 sent on an H100 (docs/engines.md, finding 46).
    pub empty_text_rate: f64,
    /// llama.cpp's flash-attention setting, echoed in its `llama_context` log lines; no
    /// effect on timing.
    pub flash_attn: FlashAttn,
    /// Milliseconds of silence after which a stream gets an SSE comment (`:`) to keep it
    /// alive; `None`: the engine's default (llama.cpp 30 s, TGI 15 s, others never).
    pub sse_ping_ms: Option<u64>,
    /// Prompt tokens each `image_url` part of a chat message counts for (its prefill time
    /// grows with them), under every personality whose engine takes images.
    pub image_tokens: u32,
    /// llama.cpp's router mode (`llama-server` started without a model, serving several):
    /// the models it lists besides the served one, which it loads when asked. Empty: one
    /// model, no router.
    pub router_models: Vec<String>,
    /// SGLang's `--enable-priority-scheduling`: requests carry a priority and the metrics
    /// count running and waiting requests by priority; it changes no scheduling here.
    pub priority_scheduling: bool,
    /// SGLang's `--default-priority-value`: the priority of a request that gives none.
    pub default_priority: Option<i64>,
    /// What the simulated profilers read.
    pub profiler: ProfilerParams,
}

/// What the simulated profilers read (docs/simulator.md, "Profilers").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfilerParams {
    /// The MoE backend whose kernels the traces hold (`--sim-kernels`); `None`: the one the
    /// server runs (`--moe-backend`), else `auto`. Another than the server's: a fallback
    /// the server does not own up to.
    pub kernels: Option<String>,
    /// vLLM's `--profiler-config` (its JSON form): the routes exist only where it names
    /// `profiler: torch`, with its `torch_profiler_dir`.
    pub vllm_config: Option<String>,
    /// The routes servebench's launcher `scripts/tserve_profiler.py` adds to transformers
    /// serve (`--tserve-profiler`).
    pub tserve: bool,
    /// SGLang's `SGLANG_TORCH_PROFILER_DIR`: where a start that names no `output_dir` writes.
    pub sglang_dir: String,
}

impl Default for ProfilerParams {
    fn default() -> Self {
        ProfilerParams {
            kernels: None,
            vllm_config: None,
            tserve: false,
            // SGLang 0.5.23 srt/environ.py:471.
            sglang_dir: "/tmp".into(),
        }
    }
}

impl Default for WireParams {
    fn default() -> Self {
        WireParams {
            engine: Engine::Openai,
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
            empty_text_rate: 0.0,
            flash_attn: FlashAttn::Auto,
            sse_ping_ms: None,
            image_tokens: 256,
            router_models: Vec::new(),
            priority_scheduling: false,
            default_priority: None,
            profiler: ProfilerParams::default(),
        }
    }
}

impl WireParams {
    /// llama.cpp's router mode is on ([`WireParams::router_models`]).
    pub fn router(&self) -> bool {
        !self.router_models.is_empty()
    }

    /// Checks ranges and that each setting belongs to the engine spoken; what the engine
    /// itself would refuse at start-up is its dialect's [`crate::dialect::Dialect::check_wire`].
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.held_back_rate) {
            return Err(format!(
                "held_back_rate is a share of streams in [0, 1], got {}",
                self.held_back_rate
            ));
        }
        if !(0.0..=1.0).contains(&self.empty_text_rate) {
            return Err(format!(
                "empty_text_rate is a share of tokens in [0, 1], got {}",
                self.empty_text_rate
            ));
        }
        if self.tp_size == 0 {
            return Err("tp_size must be at least 1".into());
        }
        if self.dp_size == 0 || !self.tp_size.is_multiple_of(self.dp_size) {
            return Err(format!(
                "--dp {} must be at least 1 and divide --tp {} (SGLang's data-parallel \
                 attention splits the tensor-parallel ranks)",
                self.dp_size, self.tp_size
            ));
        }
        if self.sse_ping_ms == Some(0) {
            return Err(
                "sse_ping_ms must be at least 1 ms (leave --sse-ping-ms out for the engine's \
                 default)"
                    .into(),
            );
        }
        if !self.router_models.is_empty() && self.engine != Engine::Llamacpp {
            return Err(format!(
                "--router-model is llama.cpp's router mode: add --engine llamacpp, or leave \
                 --router-model out (the {} personality serves one model)",
                engine_name(self.engine)
            ));
        }
        if (self.priority_scheduling || self.default_priority.is_some())
            && self.engine != Engine::Sglang
        {
            return Err(format!(
                "--enable-priority-scheduling and --default-priority-value are SGLang's: add \
                 --engine sglang, or leave them out (the {} personality has no priorities)",
                engine_name(self.engine)
            ));
        }
        if let Some(m) = self.router_models.iter().find(|m| m.is_empty()) {
            return Err(format!("--router-model needs a model name, got `{m}`"));
        }
        for b in [&self.moe_backend, &self.profiler.kernels]
            .into_iter()
            .flatten()
        {
            if b.is_empty() || b.contains(char::is_whitespace) {
                return Err(format!(
                    "the MoE backend is one word such as flashinfer_cutedsl, got `{b}`"
                ));
            }
        }
        self.validate_profiler()
    }

    /// The profiler flags belong to the engine spoken.
    fn validate_profiler(&self) -> Result<(), String> {
        let p = &self.profiler;
        if p.vllm_config.is_some() && self.engine != Engine::Vllm {
            return Err(format!(
                "--profiler-config is vLLM's: add --engine vllm, or leave it out (the {} \
                 personality has no such flag)",
                engine_name(self.engine)
            ));
        }
        if p.tserve && self.engine != Engine::Transformers {
            return Err(format!(
                "--tserve-profiler is servebench's transformers serve launcher: add --engine \
                 transformers, or leave it out (the {} personality is not launched through it)",
                engine_name(self.engine)
            ));
        }
        Ok(())
    }
}
