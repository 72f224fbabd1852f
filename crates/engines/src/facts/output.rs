//! The facts of an engine's answers: its stream, its reasoning count, how it returns a greedy
//! completion's tokens and log-probabilities, and how its profiler is driven.

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
    /// Where a generation error after the response began closes the connection mid-body,
    /// with no error event and no `[DONE]` (TensorRT-LLM's chat stream): a stream cut there
    /// is the server's failure, not the network's (`stream_cut_by_server`).
    pub error_cuts_stream: PerApi<bool>,
    /// The engine's `finish_reason` words that are not the OpenAI API's, with what each
    /// means; a word not listed is read as the OpenAI API's word of that name.
    pub finish_words: &'static [FinishWord],
    /// Which of its chunks carry a generated token although they carry no text: what the
    /// client counts as a token event (TTFT at the first, ITL between them; docs/metrics.md,
    /// "Token events").
    pub token_chunks: PerApi<TokenChunks>,
}

/// Which streamed chunks that have a choice but no text (`"text": ""`, `"content": ""`,
/// `"delta": {}`) still carry a generated token. A chunk with text is always one; a chunk
/// with no choice (`"choices": []`, the usage chunk) never is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenChunks {
    /// A chunk between the first and the finish carries a token whatever its text: the
    /// engine sends one per engine output, so a token that decodes to nothing (`<unk>`, a
    /// special token) or whose text is held back (a stop string's prefix) is a chunk with
    /// no text. `false`: such a token sends no chunk.
    pub textless: bool,
    /// A chat stream opens with a role chunk (`{"role": "assistant"}`, with `"content": ""`
    /// or `null`) that carries no token. Never on completions.
    pub opener: bool,
    /// The chunk with the finish reason carries the last token(s), with or without text.
    /// `false`: it comes after the last token, apart, and carries none.
    pub finish: bool,
}

impl TokenChunks {
    /// The OpenAI API's stream, servebench's reading of an engine it has no facts for: only
    /// chunks with text are tokens; chat opens with a role chunk; the finish comes apart.
    pub const OPENAI: PerApi<TokenChunks> = PerApi {
        completions: TokenChunks {
            textless: false,
            opener: false,
            finish: false,
        },
        chat: TokenChunks {
            textless: false,
            opener: true,
            finish: false,
        },
    };
}

/// One fact per API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerApi<T> {
    /// `/v1/completions`.
    pub completions: T,
    /// `/v1/chat/completions`.
    pub chat: T,
}

impl<T: Copy> PerApi<T> {
    /// The same for both APIs.
    pub const fn both(v: T) -> Self {
        PerApi {
            completions: v,
            chat: v,
        }
    }

    /// The fact of `chat` or completions.
    pub fn api(&self, chat: bool) -> T {
        if chat { self.chat } else { self.completions }
    }
}

/// Why a generation ended, in one vocabulary across engines: the OpenAI API's words, and
/// `abort` for a request the server ended before either (TensorRT-LLM's `timeout` and
/// `cancelled`). Exports and reports carry this word, the engine's own beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The model ended it: an end-of-sequence token or a stop string.
    Stop,
    /// It reached `max_tokens` (or the context).
    Length,
    /// The model called a tool.
    ToolCalls,
    /// A content filter ended it.
    ContentFilter,
    /// The server ended it before either (cancelled, timed out).
    Abort,
}

impl Ending {
    /// Every word of the vocabulary, in order.
    pub const ALL: [Ending; 5] = [
        Ending::Stop,
        Ending::Length,
        Ending::ToolCalls,
        Ending::ContentFilter,
        Ending::Abort,
    ];

    /// The word.
    pub fn as_str(self) -> &'static str {
        match self {
            Ending::Stop => "stop",
            Ending::Length => "length",
            Ending::ToolCalls => "tool_calls",
            Ending::ContentFilter => "content_filter",
            Ending::Abort => "abort",
        }
    }
}

/// An engine's own `finish_reason` word and what it means, on one API or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FinishWord {
    /// The word as the engine sends it.
    pub word: &'static str,
    /// Sent on the chat API, completions, or both.
    pub on: PerApi<bool>,
    /// What it means.
    pub means: Ending,
    /// Where it was read.
    pub source: &'static str,
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
    /// How its trace files' names end: kernel evidence reads only these, whatever else the
    /// directory holds (vLLM writes a text table `profiler_out_<rank>.txt` beside its traces).
    pub trace_suffixes: &'static [&'static str],
    /// `stop` answers only once its traces are written (the engine exports them before it
    /// answers), so they need not be watched until their sizes hold still.
    pub written_by_stop: bool,
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
    /// Settings of `arg` (keys of its JSON value, or `ARG.KEY=VALUE`) that are on unless
    /// turned off and make the traces larger and the probe heavier than kernel evidence
    /// needs (vLLM's `torch_profiler_with_stack`): `validate` warns unless each is `false`.
    pub lean_off: &'static [&'static str],
}

impl LaunchNeed {
    /// The [`LaunchNeed::lean_off`] settings that `argv` does not turn off: each must be
    /// `false` in the JSON value after `arg` (`ARG JSON` or `ARG=JSON`), or be given as
    /// `ARG.KEY=false` (or `ARG.KEY false`).
    pub fn left_on(&self, argv: &[&str]) -> Vec<&'static str> {
        self.lean_off
            .iter()
            .copied()
            .filter(|key| !turned_off(self.arg, key, argv))
            .collect()
    }
}

/// `key` of `arg` is `false` somewhere in `argv`.
fn turned_off(arg: &str, key: &str, argv: &[&str]) -> bool {
    let dotted = format!("{arg}.{key}");
    let is_false = |v: &str| v.trim().eq_ignore_ascii_case("false");
    argv.iter().enumerate().any(|(i, a)| {
        let next = argv.get(i + 1).copied().unwrap_or("");
        let json = if *a == arg {
            Some(next)
        } else {
            a.strip_prefix(arg).and_then(|r| r.strip_prefix('='))
        };
        let in_json = json
            .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
            .and_then(|v| v.get(key).and_then(serde_json::Value::as_bool))
            == Some(false);
        let flag = if *a == dotted {
            is_false(next)
        } else {
            a.strip_prefix(dotted.as_str())
                .and_then(|r| r.strip_prefix('='))
                .is_some_and(is_false)
        };
        in_json || flag
    })
}
