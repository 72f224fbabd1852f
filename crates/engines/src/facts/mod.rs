//! The facts a profile holds, as types: what one engine accepts, where it tokenizes, where
//! it says its limits (`request`), its metrics and their semantics (`metrics`), its
//! stream quirks, outputs and profiler (`output`); [`Profile`] holds them all.

mod metrics;
mod output;
mod request;

pub use metrics::*;
pub use output::*;
pub use request::*;

use crate::Engine;

/// Everything servebench knows of one engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// The engine.
    pub engine: Engine,
    /// Its name for people.
    pub name: &'static str,
    /// The version and source files the facts were read in.
    pub checked: &'static str,
    /// The engine release whose facts these are (the newest `checked` names; where the
    /// engine reports it is [`Profile::version`]): what the simulator's dialect of it reports,
    /// unless the dialect says why it differs (llama.cpp built without git) or
    /// `--engine-version` overrides it.
    pub release: &'static str,
    /// Request fields.
    pub request: RequestFacts,
    /// Tokenize endpoint, where there is one.
    pub tokenize: Option<TokenizeFacts>,
    /// Where the context limit is read, in order.
    pub context_limit: &'static [LimitSource],
    /// The server flag that sets the context limit.
    pub context_flag: Option<&'static str>,
    /// Where the engine, asked for more output than its context leaves after the prompt,
    /// cuts `max_tokens` to what is left instead of refusing: such a request returns fewer
    /// tokens than asked, with no error (`validate` warns). `None`: no such cut read in its
    /// source.
    pub context_clip: Option<ContextClip>,
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

    /// Every argument name a `server_arg` rule can read, where the sources hold a closed list
    /// (TGI's `/info`); `None` where any name may be found.
    pub fn server_arg_names(&self) -> Option<Vec<&'static str>> {
        let mut names = Vec::new();
        for s in self.server_args {
            match s {
                ArgSource::JsonKeys { keys, .. } => names.extend_from_slice(keys),
                _ => return None,
            }
        }
        (!names.is_empty()).then_some(names)
    }

    /// The field `key` if the engine drops it without effect.
    pub fn drops_field(&self, key: &str) -> Option<&'static DroppedField> {
        self.request.dropped.iter().find(|d| d.name == key)
    }

    /// `finish_reason` as the engine sent it on `chat` or completions, in servebench's one
    /// vocabulary ([`Ending`]): the engine's own words by its profile, the OpenAI API's as
    /// they are; `None` for a word neither knows.
    pub fn ending(&self, word: &str, chat: bool) -> Option<Ending> {
        if let Some(w) = self
            .stream
            .finish_words
            .iter()
            .find(|w| w.word == word && w.on.api(chat))
        {
            return Some(w.means);
        }
        Ending::ALL.into_iter().find(|e| e.as_str() == word)
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

    /// Whether the chat tokenize endpoint counts the prompts generation renders with every
    /// field of `fields` (render fields): it takes each, or the engine drops it at both.
    pub fn tokenizes_with(&self, fields: &[&str]) -> bool {
        fields.is_empty()
            || self.tokenize.is_some_and(|t| {
                t.chat_path.is_some()
                    && fields
                        .iter()
                        .all(|f| t.chat_fields.contains(f) || self.drops_field(f).is_some())
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

/// An engine that cuts `max_tokens` to what its context leaves after the prompt, in the
/// versions it was read in ([`Profile::context_clip`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextClip {
    /// The server flag that sets the context, as written on its command line.
    pub flag: &'static str,
    /// The version read that cuts silently.
    pub clips_in: &'static str,
    /// An earlier version read that refuses such a request instead (HTTP 400).
    pub refuses_in: &'static str,
}
