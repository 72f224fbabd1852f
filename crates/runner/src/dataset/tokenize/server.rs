//! [`ServerTokenizer`]: counting with the server's own tokenize endpoint, where and in the
//! shape its engine profile says.

use reqwest::header::{AUTHORIZATION, HeaderValue};
use serde::Deserialize;
use serde::de::IgnoredAny;

use super::TokenCounter;
use crate::dataset::DatasetError;
use crate::dataset::prompt::ChatMessage;

/// The request shape of a `/tokenize` endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenizeStyle {
    /// Try `prompt`, fall back to `content` once on a 4xx or an empty answer.
    Auto,
    /// `{"prompt": text}` (vLLM, SGLang, TensorRT-LLM, the servebench simulator).
    Prompt,
    /// `{"content": text, "add_special": true}` (llama.cpp).
    Content,
    /// `{"inputs": text}` (TGI).
    Inputs,
}

impl From<servebench_engines::TokenizeBody> for TokenizeStyle {
    fn from(b: servebench_engines::TokenizeBody) -> Self {
        use servebench_engines::TokenizeBody as B;
        match b {
            B::Prompt => TokenizeStyle::Prompt,
            B::Content => TokenizeStyle::Content,
            B::Inputs => TokenizeStyle::Inputs,
            B::Either => TokenizeStyle::Auto,
        }
    }
}

/// Token counts from the server's tokenize endpoint.
pub struct ServerTokenizer {
    http: reqwest::Client,
    url: reqwest::Url,
    /// Where `{"messages"}` are counted; `None`: no chat tokenization.
    chat_url: Option<reqwest::Url>,
    model: Option<String>,
    auth: Option<HeaderValue>,
    headers: reqwest::header::HeaderMap,
    style: TokenizeStyle,
    round_trips: u64,
    /// Sent with every `{"messages"}` count: the request body's render fields.
    pub(crate) chat_fields: serde_json::Map<String, serde_json::Value>,
}

impl std::fmt::Debug for ServerTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTokenizer")
            .field("url", &self.url.as_str())
            .field(
                "chat_url",
                &self.chat_url.as_ref().map(reqwest::Url::as_str),
            )
            .field("style", &self.style)
            .field("round_trips", &self.round_trips)
            .finish_non_exhaustive()
    }
}

/// The client of `/tokenize` requests; nothing hangs: a tokenizer that does not answer fails
/// the dataset, with its URL.
fn http_client(ca_file: Option<&std::path::Path>) -> Result<reqwest::Client, DatasetError> {
    crate::tls::reqwest_builder(ca_file)
        .map_err(|e| DatasetError::Tokenize(e.to_string()))?
        .connect_timeout(std::time::Duration::from_secs(10))
        .timeout(std::time::Duration::from_secs(60))
        .build()
        .map_err(|e| DatasetError::Tokenize(format!("building HTTP client: {e}")))
}

/// A tokenize answer in any of the shapes engines send: `{count, tokens}` (SGLang, vLLM,
/// TensorRT-LLM), `{tokens}` (llama.cpp), a bare array of tokens (TGI's `/tokenize`),
/// `{tokenize_response: [...]}` (TGI's `/chat_tokenize`), `{input_tokens: N}` (llama.cpp
/// b11434's `/v1/chat/completions/input_tokens`, server-context.cpp:5993-5996).
#[derive(Deserialize)]
#[serde(untagged)]
enum TokenizeAnswer {
    Array(Vec<IgnoredAny>),
    Object(TokenizeObject),
}

#[derive(Deserialize)]
struct TokenizeObject {
    #[serde(default)]
    count: Option<u32>,
    #[serde(default)]
    input_tokens: Option<u32>,
    #[serde(default)]
    tokens: Option<Vec<IgnoredAny>>,
    #[serde(default)]
    tokenize_response: Option<Vec<IgnoredAny>>,
}

/// What one tokenize request got.
enum Answer {
    /// A count.
    Count(u32),
    /// A 4xx: the status and the start of the server's reply.
    Refused(u16, String),
}

fn len_u32<T>(v: &[T]) -> u32 {
    u32::try_from(v.len()).unwrap_or(u32::MAX)
}

impl ServerTokenizer {
    /// Extra headers sent with every request (`target.headers`); values are kept sensitive.
    pub fn set_headers(&mut self, headers: &[(String, String)]) -> Result<(), DatasetError> {
        for (k, v) in headers {
            let bad = || {
                DatasetError::Tokenize(format!(
                    "the header `{k}` of target.headers is not a valid HTTP header"
                ))
            };
            let name = reqwest::header::HeaderName::from_bytes(k.as_bytes()).map_err(|_| bad())?;
            let mut value = HeaderValue::from_str(v).map_err(|_| bad())?;
            value.set_sensitive(true);
            self.headers.append(name, value);
        }
        Ok(())
    }

    /// Trusts `ca_file`'s PEM certificates besides the system's roots (an `https://` server
    /// whose certificate a private CA signed).
    pub fn set_ca_file(&mut self, ca_file: Option<&std::path::Path>) -> Result<(), DatasetError> {
        self.http = http_client(ca_file)?;
        Ok(())
    }

    /// Where chat messages are counted (`base_url` + `path`), or `None` for a server without
    /// chat tokenization (TensorRT-LLM: chat prompts' lengths are then not known). By
    /// default the completions path takes them too.
    pub fn set_chat_path(
        &mut self,
        base_url: &str,
        path: Option<&str>,
    ) -> Result<(), DatasetError> {
        self.chat_url = path.map(|p| join(base_url, p)).transpose()?;
        Ok(())
    }

    /// `base_url` + `path` (normally `/tokenize`).
    pub fn new(
        base_url: &str,
        path: &str,
        model: Option<String>,
        api_key: Option<&str>,
        style: TokenizeStyle,
    ) -> Result<Self, DatasetError> {
        let url = join(base_url, path)?;
        let auth = match api_key {
            Some(k) => {
                let mut v = HeaderValue::from_str(&format!("Bearer {k}"))
                    .map_err(|_| DatasetError::Tokenize("API key is not a valid header".into()))?;
                v.set_sensitive(true);
                Some(v)
            }
            None => None,
        };
        // Nothing hangs: a tokenizer that does not answer fails the dataset, with its URL.
        let http = http_client(None)?;
        Ok(ServerTokenizer {
            http,
            chat_url: Some(url.clone()),
            url,
            model,
            auth,
            headers: reqwest::header::HeaderMap::new(),
            style,
            round_trips: 0,
            chat_fields: serde_json::Map::new(),
        })
    }

    async fn request(
        &mut self,
        url: &reqwest::Url,
        key: &str,
        value: serde_json::Value,
    ) -> Result<Answer, DatasetError> {
        self.request_with(url, key, value, &serde_json::Map::new())
            .await
    }

    /// [`Self::request`] with `extra` fields beside `key`.
    async fn request_with(
        &mut self,
        url: &reqwest::Url,
        key: &str,
        value: serde_json::Value,
        extra: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Answer, DatasetError> {
        let mut body = extra.clone();
        body.insert(key.to_owned(), value);
        if key == "content" {
            // llama.cpp counts BOS in `usage.prompt_tokens`; ask /tokenize to count it too,
            // so the fitted length is the length the server reports.
            body.insert("add_special".to_owned(), true.into());
        }
        if let Some(m) = &self.model {
            body.insert("model".to_owned(), m.as_str().into());
        }
        let mut req = self.http.post(url.clone()).json(&body);
        if let Some(a) = &self.auth {
            req = req.header(AUTHORIZATION, a.clone());
        }
        for (k, v) in &self.headers {
            req = req.header(k, v.clone());
        }
        self.round_trips += 1;
        let resp = req.send().await.map_err(|e| {
            DatasetError::Tokenize(format!("POST {url}: {}", crate::net::describe(&e)))
        })?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(|e| {
            DatasetError::Tokenize(format!(
                "reading the answer of POST {url}: {}",
                crate::net::describe(&e)
            ))
        })?;
        if status.is_client_error() {
            return Ok(Answer::Refused(
                status.as_u16(),
                crate::net::body_excerpt(&bytes),
            ));
        }
        if !status.is_success() {
            return Err(DatasetError::Tokenize(format!(
                "POST {url} answered {status}: {}",
                crate::net::body_excerpt(&bytes)
            )));
        }
        let answer: TokenizeAnswer = serde_json::from_slice(&bytes).map_err(|e| {
            DatasetError::Tokenize(format!(
                "unexpected answer of POST {url} ({e}): {}",
                crate::net::body_excerpt(&bytes)
            ))
        })?;
        match answer {
            TokenizeAnswer::Array(t) => Ok(Answer::Count(len_u32(&t))),
            TokenizeAnswer::Object(TokenizeObject { count: Some(c), .. })
            | TokenizeAnswer::Object(TokenizeObject {
                input_tokens: Some(c),
                ..
            }) => Ok(Answer::Count(c)),
            TokenizeAnswer::Object(TokenizeObject {
                tokens: Some(t), ..
            })
            | TokenizeAnswer::Object(TokenizeObject {
                tokenize_response: Some(t),
                ..
            }) => Ok(Answer::Count(len_u32(&t))),
            TokenizeAnswer::Object(_) => Err(DatasetError::Tokenize(format!(
                "the answer of POST {url} has neither `count` nor `tokens`: {}",
                crate::net::body_excerpt(&bytes)
            ))),
        }
    }
}

/// `base_url` + `path`, one slash between.
fn join(base_url: &str, path: &str) -> Result<reqwest::Url, DatasetError> {
    let joined = format!(
        "{}/{}",
        base_url.trim_end_matches('/'),
        path.trim_start_matches('/')
    );
    reqwest::Url::parse(&joined)
        .map_err(|e| DatasetError::Tokenize(format!("invalid URL `{joined}`: {e}")))
}

impl TokenCounter for ServerTokenizer {
    async fn count(&mut self, text: &str) -> Result<u32, DatasetError> {
        let keys: &[(&str, TokenizeStyle)] = match self.style {
            TokenizeStyle::Prompt => &[("prompt", TokenizeStyle::Prompt)],
            TokenizeStyle::Content => &[("content", TokenizeStyle::Content)],
            TokenizeStyle::Inputs => &[("inputs", TokenizeStyle::Inputs)],
            TokenizeStyle::Auto => &[
                ("prompt", TokenizeStyle::Prompt),
                ("content", TokenizeStyle::Content),
            ],
        };
        let url = self.url.clone();
        let mut last = String::new();
        for &(key, style) in keys {
            match self.request(&url, key, text.into()).await? {
                // llama.cpp answers `{"prompt": …}` with 200 and no tokens: the wrong key.
                Answer::Count(0)
                    if !text.trim().is_empty() && self.style == TokenizeStyle::Auto =>
                {
                    last = format!("HTTP 200 with no tokens for `{key}`");
                }
                Answer::Count(n) => {
                    self.style = style;
                    return Ok(n);
                }
                Answer::Refused(status, body) => last = format!("HTTP {status}: {body}"),
            }
        }
        Err(DatasetError::Tokenize(format!(
            "POST {url} answered {last}"
        )))
    }

    /// `{"messages": [...]}` at the chat path (SGLang, vLLM, TGI's `/chat_tokenize`,
    /// llama.cpp's `/v1/chat/completions/input_tokens`, the simulator). `None` where there is none, on a 4xx, and on an empty count for messages
    /// that have text: llama.cpp (llama-cpp-python 0.3.36's server-context.cpp:5065-5103)
    /// answers a body without `content` with 200 `{"tokens": []}`, which is no count.
    async fn count_chat(&mut self, messages: &[ChatMessage]) -> Result<Option<u32>, DatasetError> {
        let Some(url) = self.chat_url.clone() else {
            return Ok(None);
        };
        let v = serde_json::to_value(messages)
            .map_err(|e| DatasetError::Tokenize(format!("serialising messages: {e}")))?;
        let has_text = messages.iter().any(|m| !m.content.trim().is_empty());
        let extra = std::mem::take(&mut self.chat_fields);
        let answer = self.request_with(&url, "messages", v, &extra).await;
        self.chat_fields = extra;
        Ok(match answer? {
            Answer::Count(0) if has_text => None,
            Answer::Count(n) => Some(n),
            Answer::Refused(..) => None,
        })
    }

    fn is_exact(&self) -> bool {
        true
    }

    fn round_trips(&self) -> u64 {
        self.round_trips
    }
}
