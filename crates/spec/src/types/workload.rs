//! `spec.workload`: the load of one trial.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::duration::HumanDuration;
use crate::rate::Rate;

/// The load of one trial at one sweep point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Where prompts come from and how long inputs and outputs are.
    pub dataset: Dataset,
    /// Ask the server to ignore end-of-sequence so every request generates exactly its
    /// output length (peers differ on this default; servebench makes it explicit).
    #[serde(default = "default_true")]
    pub ignore_eos: bool,
    /// Also send `min_tokens` equal to the output length (vLLM, SGLang and the simulator
    /// honour it).
    #[serde(default)]
    pub send_min_tokens: bool,
    /// Sampling temperature.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 2.0))]
    pub temperature: f64,
    /// Seed of prompt generation; trial t at sweep point p uses a seed derived from
    /// (seed, t, p), the same for every variant.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Measured requests per trial (after warm-up). Set this or `duration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub requests: Option<u32>,
    /// Length of a trial in time, as an alternative to `requests`: the requests due before
    /// it has passed (by `request_rate` and `arrival`, which must then be a number) are
    /// sent, and the trial ends when the last of them has finished. Their number is drawn
    /// from the trial's seeded schedule before it starts, so exactly those prompts are
    /// prepared. A sweep point with its own `requests` (`sweep.include[].requests`) is a
    /// trial by count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<HumanDuration>,
    /// Requests per second: a number > 0, or `inf` to send as fast as the concurrency
    /// limit allows.
    #[serde(default = "default_rate")]
    pub request_rate: Rate,
    /// Arrival process used when `request_rate` is a number.
    #[serde(default)]
    pub arrival: ArrivalProcess,
    /// Gamma shape with `arrival: gamma`: 1 is Poisson, < 1 burstier, > 1 more regular.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burstiness: Option<f64>,
    /// Requests sent before each trial's measurement (same limit, excluded from metrics).
    #[serde(default)]
    pub warmup_requests: u32,
    /// Hard limit on requests in flight. Leave out for no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_concurrency: Option<u32>,
    /// A request still running after this long is cut and counted as a timeout.
    #[serde(default = "default_request_timeout")]
    pub request_timeout: HumanDuration,
    /// A whole trial (warm-up included) is cut after this long; unfinished requests count
    /// as timeouts. Default: no deadline besides the per-request timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial_timeout: Option<HumanDuration>,
    /// Fields merged into the JSON body of every generation request (measured and warm-up):
    /// a mapping merged recursively over the body servebench builds, a `null` removing a key,
    /// e.g. `{chat_template_kwargs: {enable_thinking: false}}` or `{top_k: 20}`. Each
    /// variant's `request_body` is merged over it. A field servebench sets itself (`model`,
    /// `prompt`, `messages`, `stream`, `stream_options`, `max_tokens`, `temperature`,
    /// `ignore_eos`, `min_tokens`, `generation_config`) is refused unless
    /// `request_body_takes_over` names it. Never sent with readiness, verify or metrics
    /// requests (docs/spec.md, "Request bodies").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_body: Option<serde_json::Map<String, serde_json::Value>>,
    /// Fields servebench sets that `request_body` (here or in a variant) may set or remove
    /// instead, e.g. `[max_tokens]`: the result's stored spec says so, and so do `run` and
    /// `compare`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub request_body_takes_over: Vec<String>,
}

fn default_true() -> bool {
    true
}
fn default_seed() -> u64 {
    1
}
fn default_rate() -> Rate {
    Rate::Inf
}
fn default_request_timeout() -> HumanDuration {
    HumanDuration::from_secs(600)
}

/// How request arrival times are spaced when `request_rate` is a number.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalProcess {
    /// Exponential gaps (the default of vLLM's and SGLang's benchmark clients).
    #[default]
    Poisson,
    /// Equal gaps of 1/rate.
    Constant,
    /// Gamma-distributed gaps with shape `burstiness`.
    Gamma,
}

/// Where prompts come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Dataset {
    /// `random` (generated prompts of exact token length), `jsonl` (one `{"prompt"}` or
    /// `{"messages"}` object a line, optionally with images), `sharegpt` (ShareGPT
    /// conversations, optionally with an entry's `image`), `shared_prefix`
    /// (groups of prompts sharing a prefix), `multi_turn` (chat conversations) or `trace`
    /// (a timed request trace replayed on its own clock) or `image` (random prompts with
    /// random images). docs/workloads.md says more.
    pub kind: DatasetKind,
    /// Input length in tokens (`random` only): a number, or `{min, max}` drawn uniformly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<TokenCount>,
    /// Output length in tokens (`max_tokens`): a number, or `{min, max}` drawn uniformly.
    /// Required for `random`, `shared_prefix` and `multi_turn` (every turn); for files it
    /// overrides the lengths they carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<TokenCount>,
    /// Path of the prompt file (`jsonl`, `sharegpt`) or of the trace (`trace`), relative to
    /// the spec file. Image files a prompt file's lines name are relative to the prompt
    /// file, and hashed with it (`provenance.inputs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The groups of a `shared_prefix` dataset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_prefix: Option<SharedPrefix>,
    /// The conversations of a `multi_turn` dataset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multi_turn: Option<MultiTurn>,
    /// How a `trace` is read and replayed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<Trace>,
    /// The images of each request of an `image` dataset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageSpec>,
}

/// Kinds of dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DatasetKind {
    /// Random words, adjusted to an exact token count.
    Random,
    /// A JSON-lines file of prompts.
    Jsonl,
    /// A ShareGPT-format JSON file.
    Sharegpt,
    /// Groups of random prompts that share a prefix within a group (`shared_prefix`).
    SharedPrefix,
    /// Chat conversations of several turns, each turn sent after the previous answer with
    /// the history carried (`multi_turn`; needs `target.api: openai-chat`).
    MultiTurn,
    /// A JSONL trace of timed requests (`trace`), replayed open loop on its own clock.
    Trace,
    /// Random prompts of exact token length (as `random`), each with seeded random images
    /// (`image`: count, width × height, format) sent as data URLs in `image_url` content
    /// parts; needs `target.api: openai-chat`.
    Image,
}

/// `dataset.image`: the images of each request of an `image` dataset, made and encoded
/// before the trial from its prompt seed (random pixels: every request's images are its own,
/// so no image cache is hit across requests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImageSpec {
    /// Images per request.
    #[serde(default = "default_image_count")]
    #[schemars(range(min = 1, max = 64))]
    pub count: u32,
    /// Width in pixels.
    #[schemars(range(min = 1, max = 8192))]
    pub width: u32,
    /// Height in pixels.
    #[schemars(range(min = 1, max = 8192))]
    pub height: u32,
    /// `png` (8-bit RGB) or `bmp` (24-bit, uncompressed).
    #[serde(default)]
    pub format: ImageFormat,
}

fn default_image_count() -> u32 {
    1
}

/// How the images of an `image` dataset are encoded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ImageFormat {
    /// PNG, 8-bit RGB.
    #[default]
    Png,
    /// BMP, 24-bit, uncompressed.
    Bmp,
}

/// `dataset.shared_prefix`: a trial sends `groups × prompts_per_group` prompts; the prompts
/// of a group start with the same prefix, then a suffix of their own. Prefixes and suffixes
/// are drawn from the trial's prompt seed, so no trial or sweep point reuses another's
/// prefixes. The trial's requests go out in a seeded shuffled order, groups interleaved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SharedPrefix {
    /// Number of distinct prefixes.
    #[schemars(range(min = 1))]
    pub groups: u32,
    /// Prompts sharing each prefix.
    #[schemars(range(min = 1))]
    pub prompts_per_group: u32,
    /// Length of each group's prefix in tokens: a number, or `{min, max}` drawn per group.
    pub prefix_tokens: TokenCount,
    /// Length of each prompt's own suffix in tokens: a number, or `{min, max}` per prompt.
    pub suffix_tokens: TokenCount,
    /// Warm the cache for the measured prompts: the warm-up requests carry the measured
    /// groups' prefixes (with suffixes of their own). Off by default: warm-up prompts have
    /// prefixes of their own, so every measured group starts cold.
    #[serde(default)]
    pub prime: bool,
}

/// `dataset.multi_turn`: `conversations` chat conversations per trial; every turn sends
/// the whole history (earlier user messages and the answers the server gave) plus a new
/// user message, after the previous answer has arrived and `think_time` has passed.
/// `max_concurrency` counts conversations (docs/workloads.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MultiTurn {
    /// Conversations per trial; their first turns start on the arrival schedule
    /// (`request_rate`, `arrival`).
    #[schemars(range(min = 1))]
    pub conversations: u32,
    /// Turns per conversation: a number, or `{min, max}` drawn per conversation.
    pub turns: TokenCount,
    /// Length of each new user message in tokens: a number, or `{min, max}` per turn.
    pub user_tokens: TokenCount,
    /// Pause between an answer's end and the next turn's send.
    #[serde(default = "zero_duration")]
    pub think_time: HumanDuration,
}

fn zero_duration() -> HumanDuration {
    HumanDuration::from_secs(0)
}

/// `dataset.trace`: how a trace file is read and replayed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    /// `plain` (`{"timestamp", "input_tokens", "output_tokens"}` a line) or `mooncake`
    /// (`{"timestamp", "input_length", "output_length", "hash_ids"}`).
    #[serde(default)]
    pub format: TraceFormat,
    /// Unit of `timestamp`: `ms` (default; Mooncake's traces are in milliseconds) or `s`.
    #[serde(default)]
    pub timestamp_unit: TimestampUnit,
    /// Replay speed: 2 sends the trace twice as fast (gaps halved). `sweep.trace_speed`
    /// sweeps it.
    #[serde(default = "one")]
    pub speed: f64,
    /// Skip the trace's first part: replay from this far into it (trace time).
    #[serde(default = "zero_duration")]
    pub start: HumanDuration,
    /// Replay at most this much of the trace from `start` (trace time, before `speed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<HumanDuration>,
    /// Replay at most this many requests from `start`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub requests: Option<u32>,
    /// Tokens per `hash_ids` block of a Mooncake trace (512 in Mooncake's published traces):
    /// equal ids are equal token blocks.
    #[serde(default = "default_block_tokens")]
    #[schemars(range(min = 1))]
    pub block_tokens: u32,
}

fn one() -> f64 {
    1.0
}
fn default_block_tokens() -> u32 {
    512
}

/// Layout of a trace line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// `{"timestamp": 0, "input_tokens": 512, "output_tokens": 64}`.
    #[default]
    Plain,
    /// Mooncake's `{"timestamp": 0, "input_length": 1024, "output_length": 64, "hash_ids":
    /// [0, 1]}`.
    Mooncake,
}

/// Unit of trace timestamps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TimestampUnit {
    /// Milliseconds.
    #[default]
    Ms,
    /// Seconds.
    S,
}

/// A token count: fixed, or drawn uniformly from an inclusive range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum TokenCount {
    /// Exactly this many tokens.
    Fixed(#[schemars(range(min = 1))] u32),
    /// Uniform on `min..=max`.
    Range(TokenRange),
}

/// An inclusive range of token counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenRange {
    /// Smallest count.
    #[schemars(range(min = 1))]
    pub min: u32,
    /// Largest count.
    #[schemars(range(min = 1))]
    pub max: u32,
}

impl TokenCount {
    /// The largest count this can produce.
    pub fn max(self) -> u32 {
        match self {
            TokenCount::Fixed(n) => n,
            TokenCount::Range(r) => r.max,
        }
    }
    /// The smallest count this can produce.
    pub fn min(self) -> u32 {
        match self {
            TokenCount::Fixed(n) => n,
            TokenCount::Range(r) => r.min,
        }
    }
}
