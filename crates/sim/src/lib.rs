//! servebench-sim: an OpenAI-compatible server that behaves like a continuous-batching LLM
//! engine. Requests queue, batch and stream in real time according to a small engine model
//! (see [`engine`]), so latency and throughput respond to load the way a real server's do.
//! It is `servebench sim`, the default benchmark target and the test bed of the runner.
//! Of servebench's crates it depends only on `servebench-engines` with its `dialect` feature:
//! the one list of engines (which `--engine` names) and each engine's dialect, the code of
//! how that engine speaks on the wire, in the engine's own folder beside the facts the client
//! reads. The runner reaches the simulator over HTTP only (and uses it in tests).
//!
//! * [`SimArgs`] are the CLI flags; [`run`] serves until SIGTERM/SIGINT (with `--worker`, it
//!   plays a worker rank of a multi-node server instead: no HTTP, alive while its head is).
//! * [`spawn`] starts an in-process server for tests and returns a [`SimHandle`].
//! * The engine's step function ([`engine::Engine::advance`]) is pure and runs on virtual
//!   time; a tokio loop (the `driver` module) runs it in real time.
//!
//! See `docs/simulator.md` for the model, the flags, the tokenizer and the wire format.

mod args;
mod config;
mod driver;
pub mod engine;
mod error;
mod feed;
mod prefix_cache;
mod rlimit;
use servebench_engines::dialect::rng;
mod server;
pub use servebench_engines::dialect::tokenizer;
mod worker;

pub use args::{EngineArgs, FaultArgs, OutputArgs, SimArgs, WireArgs};
pub use config::{
    ApiKey, EngineParams, FaultParams, FlashAttn, OutputParams, Preset, RequestRange,
    SglangLogForm, SimConfig, TlsFiles, WireParams, engine_name,
};
pub use engine::Timings;
pub use error::SimError;
pub use prefix_cache::PrefixCacheParams;
pub use rlimit::raise_nofile_limit;
pub use server::encode::CompletionChunkEncoder;
pub use server::{SimHandle, SimInfo, SimStats, TestPki, TokenizerInfo, run, run_until, spawn};

/// The crate version, reported by the info endpoint.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
