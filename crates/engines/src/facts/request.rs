//! The facts of a request: which fields an engine takes, refuses or drops, where it tokenizes,
//! where it says its limits and its version, and where a server argument is read back.

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
    /// Fields a spec may mean to change the request with that the engine accepts and drops
    /// without effect, at generation and at its chat tokenize endpoint alike (TGI's chat
    /// request has no `chat_template_kwargs`): `validate` warns where a `request_body`
    /// sets one, saying what to use instead.
    pub dropped: &'static [DroppedField],
}

/// A request field an engine drops without effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DroppedField {
    /// The field.
    pub name: &'static str,
    /// What to use instead, for the warning.
    pub instead: &'static str,
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
    /// `GET path`: a JSON object holding these keys only, not the launch flags (TGI's
    /// `/info`: limits and ids, no `quantize` or `num_shard`); a `server_arg` rule naming
    /// another cannot hold, which `validate` says.
    JsonKeys {
        /// The endpoint.
        path: &'static str,
        /// Every key it holds.
        keys: &'static [&'static str],
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
