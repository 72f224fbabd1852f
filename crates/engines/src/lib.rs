//! servebench-engines: one room per engine, below every other servebench crate.
//!
//! [`Engine`] is the one list of engines: the spec's `target.engine` and the simulator's
//! `--engine` both name an engine with it. Each engine is one folder (`sglang/`, `vllm/`,
//! `llamacpp/`, `trtllm/`, `tgi/`, `transformers/`, and `generic/` for a plain
//! OpenAI-compatible server): its facts (`facts.rs`, a [`Profile`]), each read in that
//! engine's source; its simulator dialect (`dialect/` or `dialect.rs`, with the `dialect`
//! feature, which only the simulator turns on; [`dialect`] holds the trait and what the
//! dialects share); and the transcripts of what the real engine sent (`transcripts/`), which
//! tests replay through the client's parsers and the dialect. The folders are rooms
//! (`scripts/check-layers`): they use the crate's shared modules and never reach back up.
//! Adding an engine is one folder, its row in the table of engines (`engine.rs`) and its
//! `mod` line below: the table makes [`Engine`], [`profile`] and [`of`].
//!
//! Each engine servebench's users run (SGLang, vLLM, llama.cpp, TensorRT-LLM, TGI,
//! transformers serve) speaks "the OpenAI API" a little differently: which request fields it
//! accepts or refuses, where it tokenizes and in what shape, where it says its context limit,
//! how a server argument is read back, where its Prometheus metrics are, and what its stream
//! looks like. A [`Profile`] holds those facts for one engine, each read in that engine's
//! source (the version and files are in [`Profile::checked`] and docs/engines.md); the rest
//! of servebench asks the profile instead of testing an engine's name.
//!
//! Pure data and pure functions: the runner does the I/O (it fetches what [`detect`] reads,
//! sends the bodies [`body`] plans, reads back what [`args`] parses).

pub mod args;
pub mod body;
pub mod detect;
#[cfg(feature = "dialect")]
pub mod dialect;
pub mod doc;
mod engine;
pub mod facts;
mod generic;
mod llamacpp;
mod sglang;
mod tgi;
mod transformers;
mod trtllm;
mod vllm;

pub use body::BodyPlan;
pub use engine::Engine;
pub use facts::*;
pub use generic::GENERIC;

/// [`profile`] and [`of`], from the rows of the table of engines (`engine.rs`).
macro_rules! rooms {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal in $room:ident: $profile:ident, $dialect:ident;)*) => {
        /// The profile of `engine`; `auto` has none (it is resolved by detection first).
        pub fn profile(engine: Engine) -> Option<&'static Profile> {
            match engine {
                Engine::Auto => None,
                $(Engine::$variant => Some(&$room::$profile),)*
            }
        }

        /// The simulator's dialect of `engine`: the one place an engine is turned into its
        /// dialect. `auto` (which `--engine` does not take) speaks the simulator's own, as
        /// `openai` does.
        #[cfg(feature = "dialect")]
        pub fn of(engine: Engine) -> &'static dyn dialect::Dialect {
            match engine {
                Engine::Auto => &generic::Generic,
                $(Engine::$variant => &$room::$dialect,)*
            }
        }
    };
}

engine::engines!(rooms);

#[cfg(all(test, feature = "dialect"))]
mod dialects_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod transcripts;
