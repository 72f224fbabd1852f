//! [`Engine`]: the one list of engines servebench knows, made from the table of engines
//! ([`engines`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The table of engines, one row per engine: its [`Engine`] variant (the doc line says what it
/// is), its name in a spec, its folder, and the names of its profile and of its simulator
/// dialect in that folder. Adding an engine is its folder, its row here and its `mod` line in
/// lib.rs: `engines!` hands the rows to each macro that writes what is written once per engine
/// ([`Engine`] here; `profile` and `of` in the crate root), and every `match` on an engine
/// elsewhere is exhaustive, so the compiler lists what else must answer for it.
macro_rules! engines {
    ($then:ident) => {
        $then! {
            /// SGLang (`python -m sglang.launch_server`).
            Sglang = "sglang" in sglang: SGLANG, Sglang;
            /// vLLM (`vllm serve`).
            Vllm = "vllm" in vllm: VLLM, Vllm;
            /// llama.cpp's `llama-server`.
            Llamacpp = "llamacpp" in llamacpp: LLAMACPP, Llamacpp;
            /// TensorRT-LLM's `trtllm-serve`.
            Trtllm = "trtllm" in trtllm: TRTLLM, Trtllm;
            /// Hugging Face Text Generation Inference.
            Tgi = "tgi" in tgi: TGI, Tgi;
            /// Hugging Face transformers' `transformers serve`.
            Transformers = "transformers" in transformers: TRANSFORMERS, Transformers;
            /// A plain OpenAI-compatible server (and servebench's simulator): the spec's fields are
            /// sent as written, and every known tokenize and limit endpoint is tried.
            Openai = "openai" in generic: GENERIC, Generic;
        }
    };
}
pub(crate) use engines;

/// [`Engine`], its list [`Engine::KNOWN`] and its names, from the rows of [`engines`].
macro_rules! engine_type {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal in $room:ident: $profile:ident, $dialect:ident;)*) => {
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
            $($(#[doc = $doc])* $variant,)*
        }

        impl Engine {
            /// Every engine with a profile (all but `auto`), in the order docs list them.
            pub const KNOWN: [Engine; [$($name),*].len()] = [$(Engine::$variant),*];

            /// The name as written in a spec (`sglang`, `llamacpp`, …).
            pub fn as_str(self) -> &'static str {
                match self {
                    Engine::Auto => "auto",
                    $(Engine::$variant => $name,)*
                }
            }
        }
    };
}

engines!(engine_type);

impl Engine {
    /// `auto` (the default, not written into the canonical spec).
    pub fn is_auto(&self) -> bool {
        *self == Engine::Auto
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
                let names: Vec<&str> = std::iter::once(Engine::Auto)
                    .chain(Engine::KNOWN)
                    .map(Engine::as_str)
                    .collect();
                format!("unknown engine `{s}`: write one of {}", names.join(", "))
            })
    }
}
