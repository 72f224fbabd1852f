//! The HTTP side: one streaming request over reqwest, recorded into a [`RequestRecord`].
//!
//! [`Executor`] is the narrow interface the trial driver sends through; [`HttpClient`] is the
//! real one, tests substitute scripted executors (with a paused clock) to check scheduling
//! and the concurrency limit exactly.

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use servebench_result::record::{ErrorKind, ReceiveStamps, RequestRecord};
use tokio::time::Instant;

use super::config::Target;
use super::stream::{Flow, StreamConsumer};
use servebench_engines::TokenChunks;

/// The trial's time origin; instants are stored as nanoseconds since it.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    origin: Instant,
}

impl Clock {
    /// A clock whose zero is now.
    pub fn start() -> Self {
        Clock {
            origin: Instant::now(),
        }
    }

    /// The origin as an instant.
    pub fn origin(&self) -> Instant {
        self.origin
    }

    /// Nanoseconds since the origin (saturating; a trial longer than 584 years is not
    /// supported).
    pub fn now_ns(&self) -> u64 {
        self.ns_at(Instant::now())
    }

    /// Nanoseconds from the origin to `t`.
    pub fn ns_at(&self, t: Instant) -> u64 {
        u64::try_from(t.saturating_duration_since(self.origin).as_nanos()).unwrap_or(u64::MAX)
    }
}

/// Sends one prepared request and records what happens, until the response is fully
/// consumed or has failed. Implementations set `send_ns` immediately before writing the
/// request, `headers_ns`, the token events, `end_ns`, and `error` on failure. The caller
/// enforces timeouts by dropping the future.
pub trait Executor: Send + Sync + 'static {
    /// Sends `body` and fills `rec` as the response streams in (times from `clock`).
    fn execute(
        &self,
        body: Bytes,
        rec: &mut RequestRecord,
        clock: Clock,
    ) -> impl Future<Output = ()> + Send;

    /// How the reads so far were dated, for executors that count them.
    fn receive_stamps(&self) -> Option<ReceiveStamps> {
        None
    }
}

/// Failure to set up the HTTP client.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The base URL does not parse.
    #[error("invalid target URL `{url}`: {message}")]
    InvalidUrl {
        /// The URL given.
        url: String,
        /// Why it does not parse.
        message: String,
    },
    /// The API key cannot be sent as a header.
    #[error("the API key is not a valid HTTP header value")]
    InvalidApiKey,
    /// A `target.headers` entry cannot be sent (its value is not shown: it may be secret).
    #[error(
        "the header `{0}` of target.headers is not a valid HTTP header (a name of letters, digits \
         and `-`, a value without line breaks)"
    )]
    InvalidHeader(String),
    /// TLS could not be set up.
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsError),
    /// The HTTP client could not be built.
    #[error("building the HTTP client: {0}")]
    Build(String),
}

/// The real executor: HTTP/1.1 (over TLS for `https://`) through a pooled reqwest client,
/// `stream: true`.
#[derive(Debug, Clone)]
pub struct HttpClient {
    http: reqwest::Client,
    url: reqwest::Url,
    auth: Option<HeaderValue>,
    headers: reqwest::header::HeaderMap,
    /// Which chunks are token events ([`StreamConsumer::reading`]).
    chunks: TokenChunks,
}

/// Longest error body kept from a non-2xx response.
const MAX_ERROR_BODY: usize = 4096;

impl HttpClient {
    /// A client for `target`'s generation endpoint.
    pub fn new(target: &Target) -> Result<Self, ClientError> {
        let joined = format!(
            "{}{}",
            target.base_url.trim_end_matches('/'),
            target.api.path()
        );
        let url = reqwest::Url::parse(&joined).map_err(|e| ClientError::InvalidUrl {
            url: joined.clone(),
            message: e.to_string(),
        })?;
        let auth = match &target.api_key {
            Some(k) => {
                let mut v = HeaderValue::from_str(&format!("Bearer {k}"))
                    .map_err(|_| ClientError::InvalidApiKey)?;
                v.set_sensitive(true);
                Some(v)
            }
            None => None,
        };
        let http = crate::tls::reqwest_builder(target.ca_file.as_deref())?
            .http1_only()
            .tcp_nodelay(true)
            .pool_max_idle_per_host(usize::MAX)
            .pool_idle_timeout(Duration::from_secs(90))
            .build()
            .map_err(|e| ClientError::Build(e.to_string()))?;
        let mut headers = reqwest::header::HeaderMap::new();
        for (k, v) in &target.headers {
            let bad = || ClientError::InvalidHeader(k.clone());
            let name = reqwest::header::HeaderName::from_bytes(k.as_bytes()).map_err(|_| bad())?;
            let mut value = HeaderValue::from_str(v).map_err(|_| bad())?;
            value.set_sensitive(true);
            headers.append(name, value);
        }
        Ok(HttpClient {
            http,
            url,
            auth,
            headers,
            chunks: TokenChunks::OPENAI.api(target.api == super::config::ApiKind::Chat),
        })
    }

    /// Reads token events as `chunks` says (the engine's facts for the API driven).
    pub fn with_token_chunks(mut self, chunks: TokenChunks) -> Self {
        self.chunks = chunks;
        self
    }

    fn request(&self, body: Bytes) -> reqwest::Request {
        let mut req = reqwest::Request::new(reqwest::Method::POST, self.url.clone());
        let h = req.headers_mut();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        if let Some(a) = &self.auth {
            h.insert(AUTHORIZATION, a.clone());
        }
        for (k, v) in &self.headers {
            h.append(k, v.clone());
        }
        *req.body_mut() = Some(reqwest::Body::from(body));
        req
    }
}

impl Executor for HttpClient {
    async fn execute(&self, body: Bytes, rec: &mut RequestRecord, clock: Clock) {
        let req = self.request(body);
        rec.send_ns = Some(clock.now_ns());
        let mut resp = match self.http.execute(req).await {
            Ok(r) => r,
            Err(e) => {
                rec.end_ns = Some(clock.now_ns());
                rec.fail(classify(&e), error_chain(&e));
                return;
            }
        };
        rec.headers_ns = Some(clock.now_ns());
        let status = resp.status();
        let json_body = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("application/json"));
        if !status.is_success() || json_body {
            let text = read_bounded(&mut resp).await;
            rec.end_ns = Some(clock.now_ns());
            let kind = if !status.is_success() {
                ErrorKind::Http {
                    status: status.as_u16(),
                }
            } else if text.contains("\"error\"") {
                ErrorKind::ServerErrorEvent
            } else {
                ErrorKind::MalformedEvent
            };
            rec.fail(kind, text);
            return;
        }
        let mut consumer = StreamConsumer::reading(self.chunks);
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    let t = clock.now_ns();
                    if consumer.on_chunk(t, &chunk, rec) == Flow::Stop {
                        rec.end_ns = Some(t);
                        return;
                    }
                }
                Ok(None) => {
                    consumer.on_eof(clock.now_ns(), rec);
                    return;
                }
                Err(e) => {
                    rec.end_ns = Some(clock.now_ns());
                    let kind = if e.is_timeout() {
                        ErrorKind::Timeout
                    } else {
                        ErrorKind::StreamDisconnected
                    };
                    rec.fail(kind, error_chain(&e));
                    return;
                }
            }
        }
    }
}

/// Reads at most [`MAX_ERROR_BODY`] bytes of a body, lossily as text.
async fn read_bounded(resp: &mut reqwest::Response) -> String {
    let mut buf = Vec::new();
    while buf.len() < MAX_ERROR_BODY {
        match resp.chunk().await {
            Ok(Some(c)) => buf.extend_from_slice(&c[..c.len().min(MAX_ERROR_BODY - buf.len())]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

fn classify(e: &reqwest::Error) -> ErrorKind {
    if e.is_connect() {
        ErrorKind::Connect
    } else if e.is_timeout() {
        ErrorKind::Timeout
    } else {
        ErrorKind::Transport
    }
}

/// The error and its sources, `: `-separated (reqwest's Display shows only the top).
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}
