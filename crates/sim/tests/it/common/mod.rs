//! Helpers shared by the integration tests: a plain reqwest client and an SSE reader.
#![allow(dead_code)]

pub(crate) mod engines;

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::Value;
use servebench_sim::{Preset, SimConfig, SimHandle};

pub(crate) fn client() -> reqwest::Client {
    // reqwest is built with `rustls-no-provider` (the runner hands it a ring configuration):
    // a plain builder needs a process-wide provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap_or_else(|e| panic!("client: {e}"))
}

pub(crate) async fn start(config: SimConfig) -> SimHandle {
    servebench_sim::spawn(config)
        .await
        .unwrap_or_else(|e| panic!("spawn: {e}"))
}

/// A fast engine (1 ms steps) with no jitter.
pub(crate) fn fast() -> SimConfig {
    let mut c = SimConfig::from_preset(Preset::Fast);
    c.label = "test".into();
    c
}

/// One SSE event as the client saw it.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    /// Since the request was sent.
    pub at: Duration,
    /// The text after `data: `.
    pub data: String,
}

impl Event {
    pub(crate) fn json(&self) -> Option<Value> {
        serde_json::from_str(&self.data).ok()
    }

    /// Text carried by a completion or chat chunk (empty for role-only and usage chunks).
    pub(crate) fn text(&self) -> String {
        let Some(v) = self.json() else {
            return String::new();
        };
        let c = &v["choices"][0];
        c["text"]
            .as_str()
            .or_else(|| c["delta"]["content"].as_str())
            .unwrap_or_default()
            .to_owned()
    }
}

/// The result of one streamed request.
#[derive(Debug)]
pub(crate) struct Streamed {
    pub status: u16,
    pub events: Vec<Event>,
    /// Set when the body broke off with an error.
    pub error: Option<String>,
    pub elapsed: Duration,
}

impl Streamed {
    /// Events that carry generated text.
    pub(crate) fn token_events(&self) -> Vec<&Event> {
        self.events
            .iter()
            .filter(|e| !e.text().is_empty())
            .collect()
    }

    pub(crate) fn ttft(&self) -> Option<Duration> {
        self.token_events().first().map(|e| e.at)
    }

    /// (last token − first token) / (tokens − 1).
    pub(crate) fn tpot(&self) -> Option<Duration> {
        let t = self.token_events();
        let n = u32::try_from(t.len()).ok()?;
        (n >= 2).then(|| (t[t.len() - 1].at - t[0].at) / (n - 1))
    }

    /// The last event that parses as JSON.
    pub(crate) fn last_json(&self) -> Option<Value> {
        self.events.iter().rev().find_map(Event::json)
    }

    pub(crate) fn done(&self) -> bool {
        self.events.last().is_some_and(|e| e.data == "[DONE]")
    }
}

/// POSTs `body` to `url` and reads the SSE stream to its end, timing every event.
pub(crate) async fn stream(client: &reqwest::Client, url: &str, body: &Value) -> Streamed {
    let t0 = Instant::now();
    let resp = client
        .post(url)
        .json(body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("send: {e}"));
    let status = resp.status().as_u16();
    let mut bytes = resp.bytes_stream();
    let mut buf: Vec<u8> = Vec::new();
    let mut events = Vec::new();
    let mut error = None;
    while let Some(chunk) = bytes.next().await {
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => {
                error = Some(format!("{e:?}"));
                break;
            }
        };
        let at = t0.elapsed();
        buf.extend_from_slice(&chunk);
        while let Some(pos) = buf.windows(2).position(|w| w == b"\n\n") {
            let raw: Vec<u8> = buf.drain(..pos + 2).collect();
            let text = String::from_utf8_lossy(&raw[..pos]).into_owned();
            let data = text.strip_prefix("data: ").unwrap_or(&text).to_owned();
            events.push(Event { at, data });
        }
    }
    Streamed {
        status,
        events,
        error,
        elapsed: t0.elapsed(),
    }
}

/// POSTs `body` and returns (status, parsed JSON body or Null).
pub(crate) async fn post_json(client: &reqwest::Client, url: &str, body: &Value) -> (u16, Value) {
    let resp = client
        .post(url)
        .json(body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("send: {e}"));
    let status = resp.status().as_u16();
    let v = resp.json::<Value>().await.unwrap_or(Value::Null);
    (status, v)
}

/// GETs `url` and returns (status, parsed JSON body or Null).
pub(crate) async fn get_json(client: &reqwest::Client, url: &str) -> (u16, Value) {
    let resp = client
        .get(url)
        .send()
        .await
        .unwrap_or_else(|e| panic!("get: {e}"));
    let status = resp.status().as_u16();
    let v = resp.json::<Value>().await.unwrap_or(Value::Null);
    (status, v)
}

/// A prompt of exactly `n` tokens.
pub(crate) fn prompt(n: usize) -> String {
    vec!["hello"; n].join(" ")
}

pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
