//! Counting tokens the way the server does, before a trial.
//!
//! - [`ServerTokenizer`]: the server's own tokenize endpoint, where and in the shape its
//!   engine profile says (servebench_engines): SGLang, vLLM and TensorRT-LLM
//!   (`/_internal/tokenize`) take `{"prompt": text}` and answer `{"count": n, "tokens":
//!   [...]}`; llama.cpp takes `{"content": text}` and answers `{"tokens": [...]}`; TGI takes
//!   `{"inputs": text}` and answers a JSON array of tokens. Every answer shape is read
//!   whatever the request; with [`TokenizeStyle::Auto`] the first request tries `prompt` and
//!   falls back to `content` on a 4xx or an empty answer, then keeps what worked.
//! - [`LocalTokenizer`]: a Hugging Face `tokenizer.json` read with the `tokenizers` crate,
//!   counting with special tokens added (the BOS a server adds to a completion prompt), for
//!   servers without `/tokenize`.
//! - [`WordCount`]: no tokenizer; whitespace-separated words, flagged approximate.

use std::future::Future;
use std::path::PathBuf;

use super::DatasetError;
use super::prompt::ChatMessage;

mod server;

pub use server::{ServerTokenizer, TokenizeStyle};

/// Counts the tokens of a text.
pub trait TokenCounter: Send {
    /// Tokens of `text` as a completion prompt.
    fn count(&mut self, text: &str) -> impl Future<Output = Result<u32, DatasetError>> + Send;
    /// Tokens of a chat prompt as the server renders it (template included); `None` when
    /// this counter cannot tell (no tokenizer, or a server without chat tokenization).
    fn count_chat(
        &mut self,
        messages: &[ChatMessage],
    ) -> impl Future<Output = Result<Option<u32>, DatasetError>> + Send;
    /// Whether counts are the server's (or the model tokenizer's) own.
    fn is_exact(&self) -> bool;
    /// Requests made so far (0 for local counters).
    fn round_trips(&self) -> u64 {
        0
    }
    /// Whether a count is a local computation (no request): the random builder may then
    /// count each vocabulary word once and predict a prompt's length from them.
    fn counts_locally(&self) -> bool {
        false
    }
    /// Whether a text of ASCII-letter words joined by single spaces is counted as the sum of
    /// its words: the first word's count alone (special tokens included) plus, for each later
    /// word, what it adds after another. True for a local tokenizer that splits at those
    /// spaces before merging and looks across nothing else (see
    /// [`LocalTokenizer::open`]); the random builder then checks only a sample of its
    /// predictions instead of every prompt (docs/performance.md, "Preparing prompts").
    fn sums_over_words(&self) -> bool {
        false
    }
}

/// Which tokenizer a dataset uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenizerSpec {
    /// The target server's `/tokenize` endpoint.
    Server {
        /// The server's base URL.
        base_url: String,
        /// The tokenize endpoint's path (`/tokenize`).
        path: String,
        /// Its request body.
        style: TokenizeStyle,
        /// The endpoint that counts `{"messages": [...]}` as the chat template renders them,
        /// where the engine has one.
        chat_path: Option<String>,
        /// Fields sent with `messages` that change how they render (`request_body`'s
        /// `chat_template_kwargs`, `tools`, …), where the chat endpoint takes them.
        chat_fields: serde_json::Map<String, serde_json::Value>,
        /// The `model` field sent, where the server wants one.
        model: Option<String>,
        /// Bearer token, if the server needs one.
        api_key: Option<String>,
        /// Extra headers sent with every request (`target.headers`, resolved).
        headers: Vec<(String, String)>,
        /// PEM CA certificates trusted besides the system's roots (`target.tls.ca_file`).
        ca_file: Option<PathBuf>,
    },
    /// A local Hugging Face `tokenizer.json`.
    Local {
        /// Path of the `tokenizer.json`.
        path: PathBuf,
    },
    /// No tokenizer: approximate lengths (whitespace words), flagged as approximate.
    None,
}

/// Approximate counts without a tokenizer: whitespace-separated words.
#[derive(Debug, Clone, Copy, Default)]
pub struct WordCount;

impl TokenCounter for WordCount {
    async fn count(&mut self, text: &str) -> Result<u32, DatasetError> {
        Ok(u32::try_from(text.split_whitespace().count()).unwrap_or(u32::MAX))
    }

    async fn count_chat(&mut self, _: &[ChatMessage]) -> Result<Option<u32>, DatasetError> {
        Ok(None)
    }

    fn is_exact(&self) -> bool {
        false
    }
}

/// Counts with a local Hugging Face `tokenizer.json`, special tokens included (as a server
/// counts a completion prompt: BOS and the like). Chat prompts are not counted (`None`):
/// the chat template lives beside the tokenizer, not in it.
pub struct LocalTokenizer {
    path: PathBuf,
    tok: tokenizers::Tokenizer,
    /// See [`TokenCounter::sums_over_words`].
    sums_over_words: bool,
}

impl std::fmt::Debug for LocalTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalTokenizer")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl LocalTokenizer {
    /// Reads `path`; a missing or unreadable file and one that is not a tokenizer.json are
    /// errors that name the file.
    pub fn open(path: &std::path::Path) -> Result<Self, DatasetError> {
        let bytes = std::fs::read(path).map_err(|source| DatasetError::Io {
            path: path.to_path_buf(),
            error: source,
        })?;
        let tok = tokenizers::Tokenizer::from_bytes(&bytes).map_err(|e| {
            DatasetError::Tokenize(format!(
                "{} is not a Hugging Face tokenizer.json ({e}); point `target.tokenizer_path` at the model's tokenizer.json, or use `tokenizer: server`",
                path.display()
            ))
        })?;
        Ok(LocalTokenizer {
            path: path.to_path_buf(),
            sums_over_words: splits_at_spaces(&tok),
            tok,
        })
    }
}

/// Whether `tok` counts a text of ASCII-letter words joined by single spaces as the sum of
/// its words' counts: no normalizer (it could rewrite across words), a pre-tokenizer that
/// splits at each such space (GPT-2's byte-level regex, or whitespace splitting) so that the
/// model merges within one word, no added token that such a text could contain (they are
/// cut out before pre-tokenizing, and could span words), and no truncation or padding. A
/// post-processor only adds the same special tokens to every text, which the first word's
/// count includes.
fn splits_at_spaces(tok: &tokenizers::Tokenizer) -> bool {
    use tokenizers::PreTokenizerWrapper as P;
    let splits = match tok.get_pre_tokenizer() {
        Some(P::ByteLevel(b)) => b.use_regex,
        Some(P::Whitespace(_) | P::WhitespaceSplit(_)) => true,
        _ => false,
    };
    let letters_only = |s: &str| s.bytes().all(|b| b.is_ascii_alphabetic() || b == b' ');
    splits
        && tok.get_normalizer().is_none()
        && tok.get_truncation().is_none()
        && tok.get_padding().is_none()
        && !tok
            .get_added_tokens_decoder()
            .values()
            .any(|t| letters_only(&t.content))
}

impl TokenCounter for LocalTokenizer {
    async fn count(&mut self, text: &str) -> Result<u32, DatasetError> {
        let enc = self
            .tok
            .encode_fast(text, true)
            .map_err(|e| DatasetError::Tokenize(format!("{}: {e}", self.path.display())))?;
        Ok(u32::try_from(enc.len()).unwrap_or(u32::MAX))
    }

    async fn count_chat(&mut self, _: &[ChatMessage]) -> Result<Option<u32>, DatasetError> {
        Ok(None)
    }

    fn is_exact(&self) -> bool {
        true
    }

    fn counts_locally(&self) -> bool {
        true
    }

    fn sums_over_words(&self) -> bool {
        self.sums_over_words
    }
}

/// A counter chosen at run time from a [`TokenizerSpec`].
#[derive(Debug)]
pub enum AnyCounter {
    /// Counts through the server's `/tokenize`.
    Server(Box<ServerTokenizer>),
    /// Counts with a local `tokenizer.json`.
    Local(Box<LocalTokenizer>),
    /// Counts whitespace-separated words (approximate).
    Approximate(WordCount),
}

impl AnyCounter {
    /// The counter `spec` names (loads a local tokenizer, builds the HTTP client).
    pub fn from_spec(spec: &TokenizerSpec) -> Result<Self, DatasetError> {
        match spec {
            TokenizerSpec::Server {
                base_url,
                path,
                style,
                chat_path,
                chat_fields,
                model,
                api_key,
                headers,
                ca_file,
            } => {
                let mut t = ServerTokenizer::new(
                    base_url,
                    path,
                    model.clone(),
                    api_key.as_deref(),
                    *style,
                )?;
                t.set_chat_path(base_url, chat_path.as_deref())?;
                t.chat_fields.clone_from(chat_fields);
                t.set_headers(headers)?;
                if ca_file.is_some() {
                    t.set_ca_file(ca_file.as_deref())?;
                }
                Ok(AnyCounter::Server(Box::new(t)))
            }
            TokenizerSpec::Local { path } => {
                Ok(AnyCounter::Local(Box::new(LocalTokenizer::open(path)?)))
            }
            TokenizerSpec::None => Ok(AnyCounter::Approximate(WordCount)),
        }
    }
}

impl TokenCounter for AnyCounter {
    async fn count(&mut self, text: &str) -> Result<u32, DatasetError> {
        match self {
            AnyCounter::Server(s) => s.count(text).await,
            AnyCounter::Local(l) => l.count(text).await,
            AnyCounter::Approximate(w) => w.count(text).await,
        }
    }

    async fn count_chat(&mut self, messages: &[ChatMessage]) -> Result<Option<u32>, DatasetError> {
        match self {
            AnyCounter::Server(s) => s.count_chat(messages).await,
            AnyCounter::Local(l) => l.count_chat(messages).await,
            AnyCounter::Approximate(w) => w.count_chat(messages).await,
        }
    }

    fn is_exact(&self) -> bool {
        matches!(self, AnyCounter::Server(_) | AnyCounter::Local(_))
    }

    fn sums_over_words(&self) -> bool {
        matches!(self, AnyCounter::Local(l) if l.sums_over_words())
    }

    fn counts_locally(&self) -> bool {
        matches!(self, AnyCounter::Local(_))
    }

    fn round_trips(&self) -> u64 {
        match self {
            AnyCounter::Server(s) => s.round_trips(),
            AnyCounter::Local(_) | AnyCounter::Approximate(_) => 0,
        }
    }
}
