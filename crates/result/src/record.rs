//! The per-request record: raw instants and what the server said, nothing derived (the
//! load generator fills it, `servebench-runner`'s `loadgen`), and how a trial's reads were
//! dated ([`ReceiveStamps`]).
//!
//! Every instant is a nanosecond offset from the start of the trial's phase (measured
//! requests: the instant the arrival schedule counts from). Metrics (TTFT, ITL, …) are
//! derived from these records in [`crate::metrics`] only.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

mod events;
mod reasoning;

pub use events::EventTimes;
pub use reasoning::{CompletionTokensDetails, ReasoningRecord};

/// Why a request failed. Failures are data: they are counted by kind (`BTreeMap<ErrorKind,
/// usize>`), never folded into a bool. Conditions that do not make a request fail are
/// [`RequestFlag`]s.
///
/// Serialised as a short string: `connect`, `timeout`, `http_503`, …
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ErrorKind {
    /// The TCP connection could not be opened.
    Connect,
    /// The request did not finish within `request_timeout` (a stalled stream is cut).
    Timeout,
    /// Cut by the whole-trial deadline while in flight.
    TrialDeadline,
    /// Never sent: the trial deadline passed before its turn.
    NotSent,
    /// The server answered with a non-2xx status.
    Http {
        /// The HTTP status code.
        status: u16,
    },
    /// Another transport error before the response headers (reset, protocol error).
    Transport,
    /// The body ended or broke before `[DONE]` or a `finish_reason`.
    StreamDisconnected,
    /// The body broke off where the engine's profile says a generation error ends a stream
    /// with nothing said (TensorRT-LLM's chat: no error event, no `[DONE]`): the server
    /// failed the request; the network is not suspected (docs/engines.md).
    StreamCutByServer,
    /// An event's data is not the JSON expected, or the body is not SSE.
    MalformedEvent,
    /// The stream carried an error (`data: {"error": …}` or `event: error`), or a 2xx
    /// response was a JSON error body.
    ServerErrorEvent,
    /// The stream finished normally but carried no token.
    NoContent,
    /// Internal: the request task did not complete (a bug; reported, never hidden).
    Internal,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            ErrorKind::Connect => "connect",
            ErrorKind::Timeout => "timeout",
            ErrorKind::TrialDeadline => "trial_deadline",
            ErrorKind::NotSent => "not_sent",
            ErrorKind::Http { status } => return write!(f, "http_{status}"),
            ErrorKind::Transport => "transport",
            ErrorKind::StreamDisconnected => "stream_disconnected",
            ErrorKind::StreamCutByServer => "stream_cut_by_server",
            ErrorKind::MalformedEvent => "malformed_event",
            ErrorKind::ServerErrorEvent => "server_error_event",
            ErrorKind::NoContent => "no_content",
            ErrorKind::Internal => "internal",
        };
        f.write_str(s)
    }
}

/// An unknown error-kind name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown error kind `{0}`")]
pub struct UnknownErrorKind(pub String);

impl FromStr for ErrorKind {
    type Err = UnknownErrorKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "connect" => ErrorKind::Connect,
            "timeout" => ErrorKind::Timeout,
            "trial_deadline" => ErrorKind::TrialDeadline,
            "not_sent" => ErrorKind::NotSent,
            "transport" => ErrorKind::Transport,
            "stream_disconnected" => ErrorKind::StreamDisconnected,
            "stream_cut_by_server" => ErrorKind::StreamCutByServer,
            "malformed_event" => ErrorKind::MalformedEvent,
            "server_error_event" => ErrorKind::ServerErrorEvent,
            "no_content" => ErrorKind::NoContent,
            "internal" => ErrorKind::Internal,
            other => match other.strip_prefix("http_").map(str::parse::<u16>) {
                Some(Ok(status)) => ErrorKind::Http { status },
                _ => return Err(UnknownErrorKind(other.to_owned())),
            },
        })
    }
}

impl Serialize for ErrorKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ErrorKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A condition of a request that does not make it fail: the request counts as completed
/// and its latencies are measured, but a number derived from it may not mean what it seems
/// (request records from version 2 carry them, `RequestLine::flags`; trial summaries count
/// them, `TrialSummary::flags`). Serialised as `no_usage`, `short_output`, `long_output`,
/// `input_length_mismatch`, `content_held_back`, `reasoning_count_mismatch`, `length_cut`.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum RequestFlag {
    /// The server sent no `usage`; N_out falls back to the client's event count, never to
    /// the requested length.
    NoUsage,
    /// N_out below 90% of the requested output length.
    ShortOutput,
    /// N_out above 110% of the requested output length.
    LongOutput,
    /// The server's `usage.prompt_tokens` differs from the prompt's exact expected count.
    InputLengthMismatch,
    /// The stream carried no content chunk, but its `usage` counted output tokens (a
    /// streaming detokenizer holding back incomplete bytes, seen with transformers serve):
    /// the request counts as completed, its tokens arrive with the final chunk; TTFT is that
    /// chunk's arrival, TPOT and ITL are not defined (docs/metrics.md).
    ContentHeldBack,
    /// The server's count of reasoning tokens (`usage.completion_tokens_details.
    /// reasoning_tokens`) and the stream's disagree: one says none and the other some, or
    /// they differ by more than 10% and 2 tokens (docs/metrics.md, "Reasoning and answer").
    ReasoningCountMismatch,
    /// The server ended the reply for its length (`finish_reason: length`) with fewer tokens
    /// than the request's `max_tokens` (usage's count): something cut `max_tokens` short,
    /// such as vLLM 0.33.0 lowering it to what its context leaves after the prompt, silently
    /// (docs/engines.md, finding 48).
    LengthCut,
}

impl RequestFlag {
    /// Every flag, in order.
    pub const ALL: [RequestFlag; 7] = [
        RequestFlag::NoUsage,
        RequestFlag::ShortOutput,
        RequestFlag::LongOutput,
        RequestFlag::InputLengthMismatch,
        RequestFlag::ContentHeldBack,
        RequestFlag::ReasoningCountMismatch,
        RequestFlag::LengthCut,
    ];

    /// The flag's name as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            RequestFlag::NoUsage => "no_usage",
            RequestFlag::ShortOutput => "short_output",
            RequestFlag::LongOutput => "long_output",
            RequestFlag::InputLengthMismatch => "input_length_mismatch",
            RequestFlag::ContentHeldBack => "content_held_back",
            RequestFlag::ReasoningCountMismatch => "reasoning_count_mismatch",
            RequestFlag::LengthCut => "length_cut",
        }
    }
}

impl fmt::Display for RequestFlag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One token-bearing SSE event: when its network chunk was read, and how many tokens it
/// carried. Serialised as `[t_ns, tokens]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "(u64, u32)", into = "(u64, u32)")]
pub struct TokenEvent {
    /// Arrival of the event, in ns from the trial start.
    pub t_ns: u64,
    /// Tokens in this event: the `usage.completion_tokens` delta when the server streams
    /// usage with every chunk, else 1 (see [`RequestRecord::chunk_tokens_from_usage`]).
    pub tokens: u32,
}

impl From<(u64, u32)> for TokenEvent {
    fn from((t_ns, tokens): (u64, u32)) -> Self {
        TokenEvent { t_ns, tokens }
    }
}

impl From<TokenEvent> for (u64, u32) {
    fn from(e: TokenEvent) -> Self {
        (e.t_ns, e.tokens)
    }
}

/// The server's `usage` object.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Usage {
    /// Tokens of the prompt as the server counted them.
    #[serde(default)]
    pub prompt_tokens: u32,
    /// Tokens generated.
    #[serde(default)]
    pub completion_tokens: u32,
    /// `usage.prompt_tokens_details` (OpenAI, vLLM, SGLang, llama.cpp): the prompt tokens
    /// the server took from its prefix cache. Absent when the server did not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
    /// `usage.completion_tokens_details` (OpenAI, vLLM and SGLang with a reasoning parser):
    /// the output tokens the server counted as reasoning. Absent when the server did not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens_details: Option<CompletionTokensDetails>,
}

/// `usage.prompt_tokens_details`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct PromptTokensDetails {
    /// Prompt tokens served from the prefix cache (prefill skipped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u32>,
}

/// Per-request timings reported by the server itself (llama.cpp's and the simulator's
/// `timings` object). Unknown fields are ignored; absent ones stay `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServerTimings {
    /// Prompt tokens processed (llama.cpp counts only those not served from its cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_n: Option<u64>,
    /// Time spent processing the prompt, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_ms: Option<f64>,
    /// Tokens generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_n: Option<u64>,
    /// Time spent generating, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_ms: Option<f64>,
    /// Generation time per token, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_per_token_ms: Option<f64>,
    /// Time the request waited in the server's queue before being scheduled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_ms: Option<f64>,
    /// The server's own time to first token (receipt of the request → first token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
    /// The server's own end-to-end time (receipt of the request → last token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e_ms: Option<f64>,
    /// Prompt tokens taken from the prefix cache (llama.cpp's `timings.cache_n`; then
    /// `prompt_n` counts only the tokens prefilled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_n: Option<u64>,
}

/// Everything observed about one request. Fields are raw; see the module docs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RequestRecord {
    /// Position in the trial's request sequence (0-based).
    pub index: u32,
    /// Which prompt of the trial's prompt list was sent.
    pub prompt_index: u32,
    /// Scheduled arrival.
    pub intended_ns: u64,
    /// Just before the request was written, after the concurrency gate. `None`: never sent.
    pub send_ns: Option<u64>,
    /// Response headers received.
    pub headers_ns: Option<u64>,
    /// Token-bearing events (non-empty text, content, reasoning or tool call), in order.
    /// Role-only, usage-only and `[DONE]` events are not here. Written compactly
    /// ([`EventTimes`]: the first instant in ns, then gaps in µs); read in either form.
    #[serde(with = "events::event_wire")]
    #[schemars(with = "events::EventsWire")]
    pub events: Vec<TokenEvent>,
    /// The response fully consumed, or the request failed.
    pub end_ns: Option<u64>,
    /// `max_tokens` sent.
    pub max_tokens: u32,
    /// The output length this request is meant to produce (set when `ignore_eos` or
    /// `min_tokens` fixes it); checked against N_out at 90–110%.
    pub output_target: Option<u32>,
    /// The prompt's input length as known to the dataset, and whether that count is the
    /// server's own (exact) or an approximation.
    pub expected_input_tokens: Option<u32>,
    /// `expected_input_tokens` is the server's (or the model tokenizer's) own count.
    pub input_tokens_exact: bool,
    /// The server's final `usage`, if it sent one.
    pub usage: Option<Usage>,
    /// True when `usage` arrived with token-bearing chunks (continuous usage stats), so the
    /// per-event token counts are the server's deltas rather than 1 per event.
    pub chunk_tokens_from_usage: bool,
    /// The finish reason of the last choice in servebench's one vocabulary (`stop`,
    /// `length`, `tool_calls`, `content_filter`, `abort`), read through the engine's profile
    /// (servebench_engines `Ending`); a word neither the profile nor the OpenAI API
    /// knows is kept as sent.
    pub finish_reason: Option<String>,
    /// The engine's own word where it is not `finish_reason`'s (TGI's `eos_token`, read as
    /// `stop`); absent where they agree, and in records written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason_sent: Option<String>,
    /// The stream finished with no content chunk although its `usage` counted output
    /// tokens: `events` then holds one event, the final chunk, carrying all of them
    /// ([`RequestFlag::ContentHeldBack`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub content_held_back: bool,
    /// The stream carried reasoning deltas: where they and the answer began, and their
    /// tokens. Absent for every other request (and in records written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<ReasoningRecord>,
    /// A fatal error, if the request failed.
    pub error: Option<ErrorKind>,
    /// What the server or transport said about the error (truncated).
    pub error_detail: Option<String>,
    /// The server's own timings, where it reports them.
    pub server_timings: Option<ServerTimings>,
    /// `multi_turn` datasets: the conversation and turn this request is (docs/workloads.md);
    /// absent for every other dataset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<TurnRef>,
    /// Images the request carried (`image_url` parts); its input tokens are then the
    /// server's `usage.prompt_tokens` alone, with no local estimate. 0 (absent) otherwise.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub images: u32,
    /// The generated text, collected only while a conversation needs it for its next turn
    /// (the load generator sets it to `Some("")` to ask for it); never written.
    #[serde(skip)]
    #[schemars(skip)]
    pub answer: Option<String>,
}

/// Which conversation (0-based, in the trial) and which turn of it (0-based) a request is.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct TurnRef {
    /// The conversation.
    pub conversation: u32,
    /// The turn.
    pub turn: u32,
}

impl RequestRecord {
    /// Prompt tokens the server reported taken from its prefix cache, and the prompt's
    /// length they are a part of: `usage.prompt_tokens_details.cached_tokens` over
    /// `usage.prompt_tokens`, else llama.cpp's `timings.cache_n` over `cache_n + prompt_n`.
    /// `None` when the server reported neither.
    pub fn cached_prompt_tokens(&self) -> Option<(u64, u64)> {
        if let Some(u) = self.usage
            && let Some(c) = u.prompt_tokens_details.and_then(|d| d.cached_tokens)
        {
            return Some((u64::from(c), u64::from(u.prompt_tokens)));
        }
        let t = self.server_timings?;
        let c = t.cache_n?;
        Some((c, c + t.prompt_n.unwrap_or(0)))
    }

    /// Reasoning tokens the server counted (`usage.completion_tokens_details.
    /// reasoning_tokens`), where it said.
    pub fn usage_reasoning_tokens(&self) -> Option<u32> {
        self.usage?.completion_tokens_details?.reasoning_tokens
    }

    /// Output tokens counted by the client: the sum of per-event token counts.
    pub fn client_output_tokens(&self) -> u64 {
        self.events.iter().map(|e| u64::from(e.tokens)).sum()
    }

    /// Marks the request failed with `kind` and what was said about it (truncated to
    /// [`MAX_DETAIL`] bytes). The first failure wins: later ones are ignored.
    pub fn fail(&mut self, kind: ErrorKind, detail: impl Into<String>) {
        if self.error.is_none() {
            self.error = Some(kind);
            let mut d: String = detail.into();
            truncate_utf8(&mut d, MAX_DETAIL);
            if !d.is_empty() {
                self.error_detail = Some(d);
            }
        }
    }
}

/// Longest error detail kept per request.
pub const MAX_DETAIL: usize = 512;

/// Cuts `s` to at most `max` bytes, on a character boundary.
pub fn truncate_utf8(s: &mut String, max: usize) {
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
}

/// How a trial's reads were dated: by the kernel's receive stamp, or by reading the clock
/// after the read (no stamp asked for, none given, or one not believed).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct ReceiveStamps {
    /// Reads dated by the kernel's receive stamp (`SO_TIMESTAMPNS`).
    pub kernel: u64,
    /// Reads dated by a clock reading.
    pub clock: u64,
}

impl schemars::JsonSchema for ErrorKind {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ErrorKind".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "A failure kind: connect, timeout, trial_deadline, not_sent, http_<status>, transport, stream_disconnected, stream_cut_by_server, malformed_event, server_error_event, no_content, internal.",
            "pattern": "^([a-z_]+|http_[0-9]{3})$"
        })
    }
}

impl schemars::JsonSchema for TokenEvent {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "TokenEvent".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut s = <(u64, u32)>::json_schema(generator);
        s.insert(
            "description".into(),
            "A token-bearing event: [t_ns from the trial start, tokens in the event].".into(),
        );
        s
    }
}

#[cfg(test)]
mod tests;

fn is_zero(n: &u32) -> bool {
    *n == 0
}
