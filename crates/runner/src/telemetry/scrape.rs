//! The server's metrics during a trial: a task that scrapes the engine's Prometheus endpoint
//! each interval (one scrape at a time, each bounded by [`SCRAPE_TIMEOUT`]) until the trial
//! ends, keeping what each scrape mapped to and its raw samples.

use std::collections::BTreeMap;
use std::time::Duration;

use servebench_result::telemetry::{MAX_RAW_SERIES, ServerSeries};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::gpu::unix_ms;
use super::prom::{MetricNames, read_scrape};

/// How long one scrape may take.
pub(crate) const SCRAPE_TIMEOUT: Duration = Duration::from_secs(2);
/// Scrape failures kept in words per trial.
const KEPT_ERRORS: usize = 5;

/// A running scrape loop.
#[derive(Debug)]
pub(crate) struct Scraper {
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<(ServerSeries, Vec<i64>)>,
}

/// What one request needs besides the URL.
#[derive(Debug, Clone)]
pub(crate) struct ScrapeAuth {
    /// `Authorization: Bearer …`.
    pub(crate) api_key: Option<String>,
    /// Extra headers (`target.headers`).
    pub(crate) headers: Vec<(String, String)>,
}

/// One scrape: the text, or why there is none.
async fn scrape_once(
    client: &reqwest::Client,
    url: &str,
    auth: &ScrapeAuth,
) -> Result<String, String> {
    let mut req = client.get(url).timeout(SCRAPE_TIMEOUT);
    if let Some(k) = &auth.api_key {
        req = req.bearer_auth(k);
    }
    for (k, v) in &auth.headers {
        req = req.header(k, v);
    }
    let resp = req.send().await.map_err(|e| {
        if e.is_timeout() {
            format!("GET {url}: no answer within {} s", SCRAPE_TIMEOUT.as_secs())
        } else {
            format!("GET {url}: {e}")
        }
    })?;
    let status = resp.status();
    let body = resp.text().await.map_err(|e| format!("GET {url}: {e}"))?;
    if !status.is_success() {
        let start: String = body.chars().take(160).collect();
        return Err(format!(
            "GET {url} answered HTTP {}: {}",
            status.as_u16(),
            start.trim()
        ));
    }
    Ok(body)
}

impl Scraper {
    /// Starts scraping `url` every `interval`.
    pub(crate) fn start(
        client: reqwest::Client,
        url: String,
        names: MetricNames,
        auth: ScrapeAuth,
        interval: Duration,
    ) -> Self {
        let (stop_tx, mut stop_rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let mut series = ServerSeries {
                path: names.path.clone(),
                names: [
                    ("running", Some(names.running.clone())),
                    ("waiting", Some(names.waiting.clone())),
                    ("kv_usage", names.kv_usage.clone()),
                    ("preemptions", names.preemptions.clone()),
                ]
                .into_iter()
                .filter_map(|(k, v)| Some((k.to_owned(), v?)))
                .collect(),
                kinds: names
                    .preemptions
                    .as_ref()
                    .map(|_| {
                        let kind = match names.preemptions_kind {
                            servebench_engines::MetricKind::Counter => "counter",
                            servebench_engines::MetricKind::Gauge => "gauge",
                        };
                        [("preemptions".to_owned(), kind.to_owned())].into()
                    })
                    .unwrap_or_default(),
                ..ServerSeries::default()
            };
            let mut stamps: Vec<i64> = Vec::new();
            let mut raw: BTreeMap<String, Vec<Option<f64>>> = BTreeMap::new();
            let mut ticker = tokio::time::interval(interval);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = &mut stop_rx => break,
                    _ = ticker.tick() => {}
                }
                let got = tokio::select! {
                    r = scrape_once(&client, &url, &auth) => r,
                    _ = &mut stop_rx => break,
                };
                let mapped = got.and_then(|text| read_scrape(&text, &names));
                match mapped {
                    Err(e) => {
                        series.failed += 1;
                        if series.errors.len() < KEPT_ERRORS {
                            series.errors.push(e);
                        }
                    }
                    Ok(m) => {
                        let n = stamps.len();
                        stamps.push(unix_ms());
                        series.running.push(m.running);
                        series.waiting.push(m.waiting);
                        series.kv_usage.push(m.kv_usage);
                        series.preemptions.push(m.preemptions);
                        for (key, v) in m.raw {
                            if !raw.contains_key(&key) && raw.len() >= MAX_RAW_SERIES {
                                series.raw_dropped += 1;
                                continue;
                            }
                            let col = raw.entry(key).or_default();
                            col.resize(n, None);
                            col.push(Some(v));
                        }
                    }
                }
            }
            let n = stamps.len();
            for col in raw.values_mut() {
                col.resize(n, None);
            }
            series.raw = raw;
            (series, stamps)
        });
        Scraper {
            stop: Some(stop_tx),
            task,
        }
    }

    /// Stops the loop; the series and each scrape's wall-clock instant (ms since the epoch).
    pub(crate) async fn finish(mut self) -> (ServerSeries, Vec<i64>) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        self.task.await.unwrap_or_default()
    }
}
