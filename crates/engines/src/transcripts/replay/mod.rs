//! The transcripts played through the simulator's dialects (found with [`crate::of`], driven
//! through [`Dialect`](crate::dialect::Dialect)): each check compares the dialect's answer with the transcript's
//! SHAPE (metric families, their `# TYPE`, sample names and label keys; status codes, SSE
//! events and JSON keys with their value types), not its values.
//!
//! Replayed through the client only (`servebench-runner`), the dialect not speaking them:
//! * `llamacpp/transcripts/b11434-router/*`: llama.cpp's router mode (several models,
//!   `/props` and `/metrics` per `?model=`) is not simulated: the dialect is one model's
//!   server. Its `metrics-model.txt` and `chat-input-tokens.json` (a child server's own
//!   answers) are replayed below.
//! * `sglang/transcripts/0.5.23/metrics-priority.txt`: priority scheduling (`priority`
//!   label) is not simulated.
//! * `transformers/transcripts/5.24.0/responses-stream.http`: the Responses API is not
//!   simulated; `startup-*.log`: the dialect prints no transformers start-up log;
//!   the 404s (`metrics-404.http`, …) are answered by the simulator's own fallback route
//!   (servebench-sim): only their restyling by the dialect is replayed here.
//! * `vllm/transcripts/0.26.0/startup.log` (the server-arg reader, `args::tests`),
//!   `metrics-under-load.http` (`telemetry::prom`) and `chat-stream.http`
//!   (`loadgen::stream::vllm_tests`) are replayed through the client as well as here. Not
//!   replayed: `chat-stream-logprobs.http`, `detokenize.http` and
//!   `tokenize-prompt-no-special.http` (their shapes are those of files replayed here). The
//!   dialect is 0.33.0's: the keys 0.33.0 adds are listed in `vllm::ONLY_0_33_0`.
//! * `sglang/transcripts/0.5.17/startup.log` (`args::tests`), `metrics-under-load.http`
//!   (`telemetry::prom`) and `chat-stream.http`, `completions-stream.http`
//!   (`loadgen::stream::sglang_tests`) are replayed through the client as well as here. Not
//!   replayed: `chat-stream-logprobs.http`, `profiled-completion.http` (shapes of files
//!   replayed here) and `tokenize-prompt-tokenizer-without-max-length.http` (a 500 of the
//!   first capture's tokenizer, README.md there). The dialect is 0.5.23's: the keys 0.5.23
//!   adds are listed in `sglang::ONLY_0_5_23`, those it cannot write in `NOT_SIMULATED`, the
//!   refusal messages it does not word as 0.5.17 did in `sglang_refusals::MESSAGE_NOT_SIMULATED`.
//!
//! Where the dialect and a transcript disagree, the difference is listed in `metrics::KNOWN`: the
//! test that finds it fails when a listed difference is gone as well as when a
//! new one appears, so the list is kept to what is true.

mod http;
mod metrics;
mod router;
mod sglang;
mod sglang_refusals;
mod tokenize;
mod vllm;

use crate::Engine;
use crate::dialect::{Served, Snapshot};

/// What the engine model says: `running`, `waiting`, requests `finished`, `preemptions`.
fn snapshot(running: u64, waiting: u64, finished: u64, preemptions: u64) -> Snapshot {
    Snapshot {
        running,
        waiting,
        decoding: running,
        kv_usage: 0.25,
        kv_used_tokens: 1024,
        preemptions,
        prompt_tokens: 128,
        generation_tokens: 64,
        steps: 70,
        requests: finished + running + waiting,
        finished,
        finished_stop: 0,
        by_priority: Vec::new(),
    }
}

/// A server of `model` speaking `engine`, its metrics switched on.
fn served(engine: Engine, model: &str) -> Served {
    let mut c = Served {
        model: model.into(),
        ..Served::default()
    };
    c.wire.engine = engine;
    c.wire.enable_metrics = true;
    c
}
