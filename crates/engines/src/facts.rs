//! The facts a profile holds, as types: what one engine accepts, where it tokenizes, where
//! it says its limits, its metrics and their semantics, its stream quirks, its profiler.

use crate::Engine;

/// How an engine treats a request field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// Accepted and acted on.
    Honoured,
    /// Accepted (or dropped silently) without effect.
    Ignored,
    /// Refused: the request fails with this HTTP status.
    Refused(u16),
}

/// What an engine does with a request field it does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnknownFields {
    /// Dropped silently.
    Dropped,
    /// The request fails with this HTTP status (transformers 422, TensorRT-LLM 400).
    Refused(u16),
}

/// The request fields that matter to a benchmark, beyond `model`, `prompt`/`messages`,
/// `max_tokens`, `stream` and `temperature` (which every engine takes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestFacts {
    /// `ignore_eos: true`: generate exactly `max_tokens`.
    pub ignore_eos: Field,
    /// `min_tokens`: no end-of-sequence before this many tokens.
    pub min_tokens: Field,
    /// `stream_options: {include_usage: true}`.
    pub stream_options: Field,
    /// Fields outside the engine's request type.
    pub unknown_fields: UnknownFields,
    /// Refuses a request whose `model` it does not serve (vLLM's 404 "The model `x` does not
    /// exist", transformers' 400 for a pinned server, the simulator's 404). The others serve
    /// their one model whatever the request names.
    pub checks_model: bool,
    /// Takes `generation_config`, a JSON string turned into a transformers
    /// `GenerationConfig`: `{"min_new_tokens": N, "max_new_tokens": N}` fixes the length where
    /// `ignore_eos` cannot be sent.
    pub generation_config: bool,
    /// Every request field it accepts, where that list is known (transformers serve's
    /// TypedDicts): a field outside it gets `unknown_fields`.
    pub accepts: Option<AcceptedFields>,
    /// Takes `image_url` content parts in chat messages (for a vision-language model).
    pub images: bool,
}

/// The complete lists of request fields an engine accepts, per API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcceptedFields {
    /// `/v1/chat/completions`.
    pub chat: &'static [&'static str],
    /// `/v1/completions`.
    pub completions: &'static [&'static str],
}

/// The body a tokenize endpoint takes for a completion prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenizeBody {
    /// `{"prompt": text}` (SGLang, vLLM, TensorRT-LLM, the simulator).
    Prompt,
    /// `{"content": text, "add_special": true}` (llama.cpp: BOS counted, as its `usage` does).
    Content,
    /// `{"inputs": text}` (TGI).
    Inputs,
    /// Not known: `{"prompt"}` first, `{"content"}` on a 4xx or an empty answer.
    Either,
}

/// Where and how an engine tokenizes. Answers are read in any of the shapes engines send:
/// `{count, tokens}`, `{tokens}`, a bare array of tokens (TGI), `{tokenize_response: […]}`
/// (TGI's `/chat_tokenize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenizeFacts {
    /// The endpoint of completion prompts.
    pub path: &'static str,
    /// Its request body.
    pub body: TokenizeBody,
    /// The endpoint that takes `{"messages": [...]}` and counts the rendered chat template,
    /// where there is one.
    pub chat_path: Option<&'static str>,
    /// The fields that change how a chat prompt renders (`request_body::RENDER_FIELDS`)
    /// the chat endpoint takes beside `messages`.
    pub chat_fields: &'static [&'static str],
}

/// Where an engine says the longest request (prompt + output) it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitSource {
    /// `GET /v1/models`: `max_model_len` of the model.
    ModelsMaxModelLen,
    /// `GET /props`: `default_generation_settings.n_ctx`, the context of one slot.
    PropsSlotContext,
    /// `GET /info`: `max_total_tokens`.
    InfoMaxTotalTokens,
}

/// Where an engine reports its version: `GET path`, the string at `pointer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionSource {
    /// The endpoint.
    pub path: &'static str,
    /// JSON pointer of the version string.
    pub pointer: &'static str,
}

/// Where a server argument is read back, tried in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgSource {
    /// `GET path`: a flat JSON object of every argument by name (SGLang's `/server_info`).
    Json {
        /// The endpoint.
        path: &'static str,
    },
    /// A start-up log line holding `marker` followed by a Python dict of arguments
    /// (`server_args={'moe_runner_backend': 'flashinfer_cutedsl', …}`, vLLM's `non-default
    /// args: {…}`).
    LogDict {
        /// The text before the dict.
        marker: &'static str,
    },
    /// A start-up log line holding `marker` followed by a Python dataclass repr
    /// (`server_args=ServerArgs(moe_runner_backend='flashinfer_cutedsl', …)`).
    LogRepr {
        /// The text before the repr's fields.
        marker: &'static str,
    },
}

/// How a Prometheus series is read: a gauge is a level (read as it is), a counter only
/// rises (read as its increase over the trial: a level would be everything since the server
/// started).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// A level: running requests, KV use, a gauge of the last retraction.
    Gauge,
    /// Cumulative since the server started: read as its increase.
    Counter,
}

/// One series a benchmark reads: its name and how it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Series {
    /// The sample name as served (`vllm:num_preemptions_total`).
    pub name: &'static str,
    /// Gauge or counter.
    pub kind: MetricKind,
}

/// What a label of an engine's series says about the series that carry it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelRole {
    /// Each value is a separate part of the server, its own requests (vLLM's `engine`,
    /// SGLang's `dp_rank`): the parts are summed (KV use: the fullest part).
    Part,
    /// Each value is a rank that repeats another's view of the same requests (SGLang's
    /// `tp_rank`, `pp_rank`, `moe_ep_rank` within one `dp_rank`): one is read, the lowest.
    Replica,
    /// A breakdown of a total the engine also serves with this label empty (SGLang's
    /// `priority` with `--enable-priority-scheduling`): only the empty value is read.
    Breakdown,
}

/// An engine's Prometheus metrics: where, how they are turned on, the names of the series a
/// benchmark reads (running, waiting and KV use are gauges; preemptions say their kind), and
/// what the labels say (a series served twice with the same name and labels is one series,
/// not two).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricsFacts {
    /// The scrape path.
    pub path: &'static str,
    /// The server flag that turns the endpoint on, where it is off by default.
    pub enable: Option<&'static str>,
    /// What else must be set for the running/waiting/KV series to be served, where the
    /// endpoint answers without them by default (TensorRT-LLM's `enable_iter_perf_stats`).
    pub series_need: Option<&'static str>,
    /// When the engine updates them, where it is not continuously (for the docs and the
    /// block-start check).
    pub updated: Option<&'static str>,
    /// A series the engine writes only once a request has finished, where none of its series
    /// has a sample before one has (TensorRT-LLM: its collector records at a request's end,
    /// and prometheus_client writes no family without samples). Without a sample of it the
    /// endpoint cannot be judged yet: a freshly started server has served no request.
    pub written_on_finish: Option<&'static str>,
    /// Requests running (a gauge).
    pub running: &'static str,
    /// Requests waiting (a gauge).
    pub waiting: &'static str,
    /// KV-cache use, 0–1 (a gauge), where the engine reports it.
    pub kv_usage: Option<&'static str>,
    /// Preemptions, where the engine reports them.
    pub preemptions: Option<Series>,
    /// Labels that tell parts, replicas and breakdowns apart; any other label is part of a
    /// series' identity (series that differ in it are summed).
    pub labels: &'static [(&'static str, LabelRole)],
}

/// Where an engine says how many requests it takes at once, and what happens beyond.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConcurrencyLimit {
    /// `GET path`.
    pub path: &'static str,
    /// JSON pointer of the number.
    pub pointer: &'static str,
    /// The server flag that sets it.
    pub flag: &'static str,
    /// A request beyond it fails (TGI); else it waits in the engine's queue.
    pub refuses: bool,
}

/// When an engine sends `usage` in a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamUsage {
    /// Only when asked with `stream_options.include_usage`.
    WhenAsked,
    /// In the final chunk whether asked or not.
    Always,
    /// Completions always, chat only when asked (llama.cpp).
    CompletionsAlwaysChatWhenAsked,
}

/// What an engine's stream looks like, beyond the OpenAI chunk shapes servebench reads for
/// every engine (`choices[].text`, `delta.content`, `reasoning_content`/`reasoning`,
/// `tool_calls`, `usage`, `{"error"}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamFacts {
    /// Ends with `data: [DONE]`. Where it does not, a stream that sent a `finish_reason` and
    /// ended is a normal end.
    pub sends_done: bool,
    /// Sends `"finish_reason": ""` on every chunk but the last (TGI's completions), which is
    /// not a finish: a stream cut after one is `stream_disconnected`.
    pub empty_finish_reason: bool,
    /// May end a stream with no content chunk although `usage` counts its tokens (a
    /// streaming detokenizer holding back incomplete bytes): counted, flagged
    /// `content_held_back` (docs/metrics.md).
    pub may_hold_back_text: bool,
    /// The chat delta field(s) of reasoning text.
    pub reasoning_fields: &'static [&'static str],
    /// Whether the final `usage` counts reasoning tokens
    /// (`completion_tokens_details.reasoning_tokens`).
    pub reasoning_usage: ReasoningUsage,
    /// When `usage` is sent.
    pub usage: StreamUsage,
}

/// Whether an engine's `usage` counts reasoning tokens in
/// `completion_tokens_details.reasoning_tokens` (servebench prefers that count to the
/// stream's, docs/metrics.md "Reasoning and answer").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningUsage {
    /// Never: the stream's count is the only one.
    NotSent,
    /// When the server runs a reasoning parser (`flag`); `zero_when_none`: it then sends the
    /// field even as 0 (vLLM), else only when some (SGLang); `note`: how it counts.
    WithParser {
        /// The server flag.
        flag: &'static str,
        /// Sent as 0 for a request that did not reason.
        zero_when_none: bool,
        /// How the count is made, for docs/engines.md.
        note: &'static str,
    },
    /// Not read in the engine's source: whatever the server sends is read.
    NotChecked,
}

/// How an engine is asked for a completion's log-probabilities on one API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogprobsAsk {
    /// Not to be asked: the engine ignores or refuses the fields there.
    None,
    /// `"logprobs": K`, K the number of top tokens (the legacy completions form; llama.cpp's
    /// alias of `n_probs`).
    Count,
    /// `"logprobs": true, "top_logprobs": K` (the chat form).
    Flag,
}

/// A request field that makes a non-streamed response carry the completion's token ids, and
/// the field of `choices[0]` they come back in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenIds {
    /// The request field, sent as `true`.
    pub request: &'static str,
    /// The field of `choices[0]` holding the ids.
    pub response: &'static str,
}

/// What the output-equivalence probe may ask on one API (docs/equivalence.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputApi {
    /// How log-probabilities are asked.
    pub logprobs: LogprobsAsk,
    /// The most top tokens per position it returns (0: only the chosen token's).
    pub top_max: u32,
    /// Token ids in their own field, where the engine has one (llama.cpp's come in each
    /// log-probability entry's `id` instead).
    pub token_ids: Option<TokenIds>,
}

/// How an engine returns a greedy completion's tokens, per API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputFacts {
    /// Takes a `seed` request field.
    pub seed: bool,
    /// `/v1/completions`.
    pub completions: OutputApi,
    /// `/v1/chat/completions`.
    pub chat: OutputApi,
}

impl OutputFacts {
    /// The facts of `chat` or completions.
    pub fn api(&self, chat: bool) -> &OutputApi {
        if chat { &self.chat } else { &self.completions }
    }
}

/// How an engine's profiler is driven for kernel evidence (`evidence.kernels`,
/// docs/kernels.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profiler {
    /// `POST start` and `POST stop` endpoints that write PyTorch profiler traces.
    Endpoints(ProfilerFacts),
    /// No profiler servebench can drive; `instead` says what the engine offers, for
    /// docs/engines.md.
    None {
        /// What it offers instead, or that it was not read.
        instead: &'static str,
    },
}

/// An engine's profiler endpoints and what they need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfilerFacts {
    /// `POST` path that starts it.
    pub start: &'static str,
    /// `POST` path that stops it (and writes the traces).
    pub stop: &'static str,
    /// The start body's key naming the output directory (servebench sends a folder per
    /// start); `None`: the directory is fixed at launch (`launch`).
    pub dir_key: Option<&'static str>,
    /// Other fields of the start body, as JSON text (`{}` for none).
    pub start_body: &'static str,
    /// What the server's launch must hold for the endpoints to exist: a text of its
    /// arguments (a flag, or the launcher script), and whether the evidence directory must
    /// be named there too.
    pub launch: Option<LaunchNeed>,
    /// The files it writes, for people (one per rank, gzip…).
    pub files: &'static str,
    /// Where the facts were read.
    pub source: &'static str,
}

/// A text the server's arguments must contain for its profiler to work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchNeed {
    /// e.g. `--profiler-config`.
    pub arg: &'static str,
    /// The evidence directory must appear in the arguments too (vLLM's
    /// `torch_profiler_dir`).
    pub names_dir: bool,
    /// What to write, for the message.
    pub hint: &'static str,
}

/// Everything servebench knows of one engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// The engine.
    pub engine: Engine,
    /// Its name for people.
    pub name: &'static str,
    /// The version and source files the facts were read in.
    pub checked: &'static str,
    /// Request fields.
    pub request: RequestFacts,
    /// Tokenize endpoint, where there is one.
    pub tokenize: Option<TokenizeFacts>,
    /// Where the context limit is read, in order.
    pub context_limit: &'static [LimitSource],
    /// The server flag that sets the context limit.
    pub context_flag: Option<&'static str>,
    /// The readiness probe that answers only once the engine can generate.
    pub readiness: &'static str,
    /// What the server says about itself, for the result file, richest first.
    pub info: &'static [&'static str],
    /// Where the version is reported.
    pub version: &'static [VersionSource],
    /// Where server arguments are read back for `verify: [{server_arg: …}]`.
    pub server_args: &'static [ArgSource],
    /// Prometheus metrics.
    pub metrics: Option<MetricsFacts>,
    /// A query parameter naming the model that `GET` reads of one model's facts carry
    /// (`/props?model=M`, `/metrics?model=M`): llama.cpp's router (several models) answers
    /// 400 or a placeholder without it; a one-model server ignores it.
    pub model_query: Option<&'static str>,
    /// The most requests the engine takes at once, where it says so: a request beyond it
    /// fails (TGI's "Model is overloaded") or waits in the engine's queue.
    pub concurrency_limit: Option<ConcurrencyLimit>,
    /// The flag that makes `usage.prompt_tokens_details.cached_tokens` appear, where it is
    /// off by default (`None`: always sent, or never).
    pub cached_tokens_flag: Option<&'static str>,
    /// Whether it reports cached prompt tokens at all.
    pub reports_cached_tokens: bool,
    /// Stream quirks.
    pub stream: StreamFacts,
    /// How a completion's token ids and log-probabilities are asked (the
    /// output-equivalence probe).
    pub outputs: OutputFacts,
    /// Its profiler, for kernel evidence.
    pub profiler: Profiler,
}

impl Profile {
    /// Whether `tokenizer: server` can work: the engine has a tokenize endpoint.
    pub fn can_tokenize(&self) -> bool {
        self.tokenize.is_some()
    }

    /// Whether `verify: [{server_arg: …}]` can be read back.
    pub fn reads_server_args(&self) -> bool {
        !self.server_args.is_empty()
    }

    /// The HTTP status it answers a request carrying field `key` with, where the list of
    /// fields it accepts is known and `key` is not in it.
    pub fn refuses_field(&self, key: &str, chat: bool) -> Option<u16> {
        let status = self.refuses_unknown()?;
        let a = self.request.accepts?;
        let list = if chat { a.chat } else { a.completions };
        (!list.contains(&key)).then_some(status)
    }

    /// The HTTP status it answers a request carrying a field it does not know with, where
    /// it refuses such requests (transformers serve 422, TensorRT-LLM 400).
    pub fn refuses_unknown(&self) -> Option<u16> {
        match self.request.unknown_fields {
            UnknownFields::Refused(status) => Some(status),
            UnknownFields::Dropped => None,
        }
    }

    /// Whether the chat tokenize endpoint takes every field of `fields` (render fields).
    pub fn tokenizes_with(&self, fields: &[&str]) -> bool {
        fields.is_empty()
            || self.tokenize.is_some_and(|t| {
                t.chat_path.is_some() && fields.iter().all(|f| t.chat_fields.contains(f))
            })
    }

    /// `path` with the model query the engine needs (`/props?model=m` for llama.cpp, whose
    /// router needs it and whose one-model server ignores it); `path` itself elsewhere.
    pub fn model_path(&self, path: &str, model: &str) -> String {
        match self.model_query {
            Some(q) => {
                let sep = if path.contains('?') { '&' } else { '?' };
                format!("{path}{sep}{q}={}", query_escape(model))
            }
            None => path.to_owned(),
        }
    }

    /// Where its Prometheus metrics are scraped for `model`.
    pub fn metrics_path(&self, model: &str) -> Option<String> {
        self.metrics.map(|m| self.model_path(m.path, model))
    }

    /// The request fields it refuses with an HTTP error, with the status.
    pub fn refused_fields(&self) -> Vec<(&'static str, u16)> {
        let r = &self.request;
        [
            ("ignore_eos", r.ignore_eos),
            ("min_tokens", r.min_tokens),
            ("stream_options", r.stream_options),
        ]
        .into_iter()
        .filter_map(|(name, f)| match f {
            Field::Refused(s) => Some((name, s)),
            _ => None,
        })
        .collect()
    }
}

/// `s` percent-encoded for a URL query value (RFC 3986 unreserved characters kept).
fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
