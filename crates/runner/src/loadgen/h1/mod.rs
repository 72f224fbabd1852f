//! A lean HTTP/1.1 streaming executor: one task per request reads its own socket, decodes
//! the chunked body in place and feeds the SSE parser, with keep-alive connections pooled.
//!
//! Why it exists beside [`super::HttpClient`] (reqwest): reqwest/hyper run each connection in
//! its own task and hand body chunks over a channel, so every token event costs two task
//! wake-ups and several small allocations. On one core at a few tens of thousands of events
//! per second that is what delays the events behind a burst; this executor does one read and
//! no allocation per event (see docs/performance.md for the measured difference). It speaks
//! only what benchmark targets need: HTTP/1.1 (over TLS for `https://`, through tokio-rustls)
//! to an IP address or a name resolved once (every address tried), responses framed by
//! chunked encoding, `Content-Length` or connection close.
//!
//! Over TLS a read is dated by a clock reading when its decrypted bytes are read: the kernel's
//! receive stamp is of the encrypted records, which rustls reads ahead of the data it hands
//! out, so it is not asked for.

pub mod codec;
mod exchange;
mod stamp;

use std::io;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

use bytes::Bytes;
use servebench_engines::TokenChunks;
use servebench_result::record::{ErrorKind, ReceiveStamps, RequestRecord};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use self::exchange::{Outcome, exchange};
use self::stamp::{Received, Socket};
use super::client::{ClientError, Clock, Executor};
use super::config::Target;

/// Read buffer per connection.
const READ_BUF: usize = 16 << 10;
/// Longest error body kept.
const MAX_ERROR_BODY: usize = 4096;

/// The lean executor. Create once per trial (or share across trials to reuse connections).
#[derive(Debug)]
pub struct LeanClient {
    /// Every address the host resolved to (`localhost` may give `::1` and `127.0.0.1`).
    addrs: Vec<SocketAddr>,
    /// The address that last accepted a connection, tried first.
    preferred: AtomicUsize,
    /// Everything of the request head up to the `content-length` value.
    head_prefix: Vec<u8>,
    pool: Mutex<Vec<Conn>>,
    /// Ask the kernel to stamp reads (see `stamp`).
    kernel_stamps: bool,
    /// For an `https://` target: the connector and the name the certificate must carry.
    tls: Option<(
        std::sync::Arc<rustls::ClientConfig>,
        rustls_pki_types::ServerName<'static>,
    )>,
    reads: ReadCounts,
    /// Which chunks are token events ([`crate::loadgen::stream::StreamConsumer::reading`]).
    chunks: TokenChunks,
}

/// Reads dated by the kernel's stamp, and by a clock reading.
#[derive(Debug, Default)]
struct ReadCounts {
    kernel: AtomicU64,
    clock: AtomicU64,
}

/// A connection's byte stream: a plain socket (reads stamped by the kernel where it can) or
/// TLS over TCP (reads dated when the decrypted bytes are read).
enum Stream {
    Plain(Socket),
    Tls(Box<TlsStream<TcpStream>>),
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stream::Plain(s) => s.fmt(f),
            Stream::Tls(_) => f.write_str("Tls"),
        }
    }
}

impl Stream {
    async fn read(&mut self, buf: &mut [u8]) -> io::Result<Received> {
        match self {
            Stream::Plain(s) => s.read(buf).await,
            Stream::Tls(s) => Ok(Received {
                n: s.read(buf).await?,
                age: None,
            }),
        }
    }

    async fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.write_all(data).await,
            Stream::Tls(s) => {
                s.write_all(data).await?;
                s.flush().await
            }
        }
    }
}

#[derive(Debug)]
struct Conn {
    sock: Stream,
    /// READ_BUF bytes, of which the last read filled `filled`.
    buf: Vec<u8>,
    filled: usize,
}

impl Conn {
    fn new(stream: TcpStream, kernel_stamps: bool) -> io::Result<Self> {
        Ok(Conn::with(Stream::Plain(Socket::new(
            stream,
            kernel_stamps,
        )?)))
    }

    fn with(sock: Stream) -> Self {
        Conn {
            sock,
            buf: vec![0; READ_BUF],
            filled: 0,
        }
    }

    /// What the last read returned.
    fn data(&self) -> &[u8] {
        &self.buf[..self.filled]
    }

    /// One read, counted in `tally` by how it was dated.
    async fn read(&mut self, tally: &mut Tally<'_>) -> io::Result<Received> {
        let got = self.sock.read(&mut self.buf).await?;
        self.filled = got.n;
        tally.count(got);
        Ok(got)
    }
}

/// One exchange's reads by how they were dated, added to the client's counts once, when the
/// exchange ends (not one shared atomic add per read).
struct Tally<'a> {
    into: &'a ReadCounts,
    kernel: u64,
    clock: u64,
}

impl<'a> Tally<'a> {
    fn new(into: &'a ReadCounts) -> Self {
        Tally {
            into,
            kernel: 0,
            clock: 0,
        }
    }

    fn count(&mut self, got: Received) {
        if got.age.is_some() {
            self.kernel += 1;
        } else {
            self.clock += 1;
        }
    }
}

impl Drop for Tally<'_> {
    fn drop(&mut self) {
        self.into.kernel.fetch_add(self.kernel, Relaxed);
        self.into.clock.fetch_add(self.clock, Relaxed);
    }
}

impl LeanClient {
    /// Resolves the target's host once (names through the system resolver); for an
    /// `https://` target, loads the trusted roots (the system's and `target.ca_file`).
    pub async fn new(target: &Target) -> Result<Self, ClientError> {
        let bad = |message: String| ClientError::InvalidUrl {
            url: target.base_url.clone(),
            message,
        };
        let (rest, secure) = if let Some(r) = target.base_url.strip_prefix("http://") {
            (r, false)
        } else if let Some(r) = target.base_url.strip_prefix("https://") {
            (r, true)
        } else {
            return Err(bad("the URL must start with http:// or https://".into()));
        };
        let (authority, prefix) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
            None => (rest, ""),
        };
        let with_port = if authority
            .rsplit_once(':')
            .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
        {
            authority.to_owned()
        } else {
            format!("{authority}:{}", if secure { 443 } else { 80 })
        };
        let tls = if secure {
            let host = with_port.rsplit_once(':').map_or("", |(h, _)| h);
            let config = crate::tls::client_config(target.ca_file.as_deref())?;
            Some((config, crate::tls::server_name(host)?))
        } else {
            None
        };
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host(with_port.as_str())
            .await
            .map_err(|e| bad(e.to_string()))?
            .collect();
        if addrs.is_empty() {
            return Err(bad("the host name resolves to no address".into()));
        }
        let mut head = format!(
            "POST {prefix}{} HTTP/1.1\r\nhost: {authority}\r\ncontent-type: application/json\r\n\
             accept: text/event-stream\r\n",
            target.api.path()
        );
        if let Some(k) = &target.api_key {
            if k.bytes().any(|b| b == b'\r' || b == b'\n') {
                return Err(ClientError::InvalidApiKey);
            }
            head.push_str("authorization: Bearer ");
            head.push_str(k);
            head.push_str("\r\n");
        }
        for (k, v) in &target.headers {
            if !valid_header(k, v) {
                return Err(ClientError::InvalidHeader(k.clone()));
            }
            head.push_str(k);
            head.push_str(": ");
            head.push_str(v);
            head.push_str("\r\n");
        }
        head.push_str("content-length: ");
        Ok(LeanClient {
            addrs,
            preferred: AtomicUsize::new(0),
            head_prefix: head.into_bytes(),
            pool: Mutex::new(Vec::new()),
            kernel_stamps: true,
            tls,
            reads: ReadCounts::default(),
            chunks: TokenChunks::OPENAI.api(target.api == crate::loadgen::config::ApiKind::Chat),
        })
    }

    /// Reads token events as `chunks` says (the engine's facts for the API driven).
    pub fn with_token_chunks(mut self, chunks: TokenChunks) -> Self {
        self.chunks = chunks;
        self
    }

    /// Whether reads are dated by the kernel's receive stamp (on by default).
    pub fn with_kernel_stamps(mut self, on: bool) -> Self {
        self.kernel_stamps = on;
        self
    }

    /// How the reads so far were dated.
    pub fn receive_stamps(&self) -> ReceiveStamps {
        ReceiveStamps {
            kernel: self.reads.kernel.load(Relaxed),
            clock: self.reads.clock.load(Relaxed),
        }
    }

    /// Connects to the preferred address, then to the others in order.
    async fn connect(&self) -> Result<Conn, String> {
        let first = self.preferred.load(Relaxed);
        let mut errors = Vec::new();
        for k in 0..self.addrs.len() {
            let i = (first + k) % self.addrs.len();
            match TcpStream::connect(self.addrs[i]).await {
                Ok(stream) => {
                    self.preferred.store(i, Relaxed);
                    let Some((config, name)) = &self.tls else {
                        return Conn::new(stream, self.kernel_stamps)
                            .map_err(|e| format!("setting up {}: {e}", self.addrs[i]));
                    };
                    stream
                        .set_nodelay(true)
                        .map_err(|e| format!("setting up {}: {e}", self.addrs[i]))?;
                    let connector = TlsConnector::from(config.clone());
                    return match connector.connect(name.clone(), stream).await {
                        Ok(tls) => Ok(Conn::with(Stream::Tls(Box::new(tls)))),
                        Err(e) => {
                            let host = name.to_str();
                            Err(crate::tls::handshake_error(&host, &e).to_string())
                        }
                    };
                }
                Err(e) => errors.push(format!("connect {}: {e}", self.addrs[i])),
            }
        }
        Err(errors.join("; "))
    }

    fn pooled(&self) -> Option<Conn> {
        self.pool.lock().ok().and_then(|mut p| p.pop())
    }

    fn give_back(&self, conn: Conn) {
        if let Ok(mut p) = self.pool.lock() {
            p.push(conn);
        }
    }

    fn request_bytes(&self, body: &[u8]) -> Vec<u8> {
        let mut req = Vec::with_capacity(self.head_prefix.len() + 24 + body.len());
        req.extend_from_slice(&self.head_prefix);
        req.extend_from_slice(body.len().to_string().as_bytes());
        req.extend_from_slice(b"\r\n\r\n");
        req.extend_from_slice(body);
        req
    }
}

impl Executor for LeanClient {
    fn receive_stamps(&self) -> Option<ReceiveStamps> {
        Some(LeanClient::receive_stamps(self))
    }

    async fn execute(&self, body: Bytes, rec: &mut RequestRecord, clock: Clock) {
        let req = self.request_bytes(&body);
        // A pooled connection the server has closed fails on the first read: retry once on a
        // fresh one, which is safe because nothing of the response was seen.
        if let Some(conn) = self.pooled() {
            match exchange(conn, &req, rec, clock, &self.reads, self.chunks).await {
                Outcome::Done(Some(conn)) => return self.give_back(conn),
                Outcome::Done(None) => return,
                Outcome::StaleConnection => {}
            }
        }
        let attempt = clock.now_ns();
        let conn = match self.connect().await {
            Ok(conn) => conn,
            Err(e) => {
                // Never written: t_send is when the connection was attempted.
                rec.send_ns = Some(attempt);
                rec.end_ns = Some(clock.now_ns());
                rec.fail(ErrorKind::Connect, e);
                return;
            }
        };
        match exchange(conn, &req, rec, clock, &self.reads, self.chunks).await {
            Outcome::Done(Some(conn)) => self.give_back(conn),
            Outcome::Done(None) => {}
            Outcome::StaleConnection => {
                rec.end_ns = Some(clock.now_ns());
                rec.fail(
                    ErrorKind::Transport,
                    "connection closed before the response",
                );
            }
        }
    }
}

/// A header line we can write: an RFC 9110 token name and a value without control characters.
fn valid_header(name: &str, value: &str) -> bool {
    let tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    !name.is_empty()
        && name.bytes().all(tchar)
        && value
            .bytes()
            .all(|b| b == b'\t' || (b >= 0x20 && b != 0x7f))
}
