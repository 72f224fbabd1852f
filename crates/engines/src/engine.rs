//! [`Engine`]: the one list of engines servebench knows.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The engine serving the target (docs/engines.md holds what servebench knows of each).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// Detected from what the server answers (`/v1/models`' `owned_by`, `/info`, `/props`,
    /// `/server_info`, `/version`); a server that says nothing engine-specific is `openai`.
    #[default]
    Auto,
    /// SGLang (`python -m sglang.launch_server`).
    Sglang,
    /// vLLM (`vllm serve`).
    Vllm,
    /// llama.cpp's `llama-server`.
    Llamacpp,
    /// TensorRT-LLM's `trtllm-serve`.
    Trtllm,
    /// Hugging Face Text Generation Inference.
    Tgi,
    /// Hugging Face transformers' `transformers serve`.
    Transformers,
    /// A plain OpenAI-compatible server (and servebench's simulator): the spec's fields are
    /// sent as written, and every known tokenize and limit endpoint is tried.
    Openai,
}

impl Engine {
    /// Every engine with a profile (all but `auto`), in the order docs list them.
    pub const KNOWN: [Engine; 7] = [
        Engine::Sglang,
        Engine::Vllm,
        Engine::Llamacpp,
        Engine::Trtllm,
        Engine::Tgi,
        Engine::Transformers,
        Engine::Openai,
    ];

    /// `auto` (the default, not written into the canonical spec).
    pub fn is_auto(&self) -> bool {
        *self == Engine::Auto
    }

    /// The name as written in a spec (`sglang`, `llamacpp`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Auto => "auto",
            Engine::Sglang => "sglang",
            Engine::Vllm => "vllm",
            Engine::Llamacpp => "llamacpp",
            Engine::Trtllm => "trtllm",
            Engine::Tgi => "tgi",
            Engine::Transformers => "transformers",
            Engine::Openai => "openai",
        }
    }
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Engine {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        std::iter::once(Engine::Auto)
            .chain(Engine::KNOWN)
            .find(|e| e.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown engine `{s}`: write one of auto, sglang, vllm, llamacpp, trtllm, \
                     tgi, transformers, openai"
                )
            })
    }
}
