//! The facts, one profile per engine, each read in the engine's source: the version and the
//! files are in `checked`; docs/engines.md is generated from this table (a test keeps them
//! in step).
mod generic;
mod llamacpp;
mod sglang;
mod tgi;
mod transformers;
mod trtllm;
mod vllm;

use super::{Engine, Profile};
pub use generic::GENERIC;
use llamacpp::LLAMACPP;
use sglang::SGLANG;
use tgi::TGI;
use transformers::TRANSFORMERS;
use trtllm::TRTLLM;
use vllm::VLLM;

/// The profile of `engine`; `auto` has none (it is resolved by detection first).
pub fn profile(engine: Engine) -> Option<&'static Profile> {
    Some(match engine {
        Engine::Auto => return None,
        Engine::Sglang => &SGLANG,
        Engine::Vllm => &VLLM,
        Engine::Llamacpp => &LLAMACPP,
        Engine::Trtllm => &TRTLLM,
        Engine::Tgi => &TGI,
        Engine::Transformers => &TRANSFORMERS,
        Engine::Openai => &GENERIC,
    })
}
