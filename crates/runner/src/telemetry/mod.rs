//! Telemetry during every trial (`spec.telemetry`, docs/gpu.md): the server's GPUs sampled
//! each interval ([`sampler`], from a [`gpu::GpuSource`]), the engine's Prometheus metrics
//! scraped at the path and names of its engine profile ([`scrape`], [`prom`]), the GPUs'
//! memory and processes just before each server start, and the decode ceiling of each trial
//! (`spec.model_facts`). What a trial captured goes to the telemetry sidecar and its
//! summary into the trial's summary (`servebench_result::telemetry`).
//!
//! Nothing here fails a run: a machine without a GPU, a server without metrics, a scrape
//! that times out are recorded as such in each trial.

pub mod gpu;
pub mod prom;
mod sampler;
mod scrape;

use std::collections::BTreeMap;
use std::time::Duration;

use servebench_engines::{MetricKind, MetricsFacts};
use servebench_result::metrics::TrialSummary;
use servebench_result::record::RequestRecord;
use servebench_result::telemetry::{
    CeilingInput, GpuCheck, GpuDevice, GpuSeries, TelemetryWindow, TrialTelemetry, decode_ceiling,
    gpus_bandwidth, summarize_telemetry,
};
use servebench_spec::model_facts::ResolvedModelFacts;
use servebench_spec::{ServerMetrics, SpecFile, TelemetrySettings};

use prom::MetricNames;
use sampler::GpuSampler;
use scrape::{ScrapeAuth, Scraper};

/// A run's telemetry: the settings, the GPU sampler (or why there is none), the model's
/// figures for the decode ceiling.
#[derive(Debug)]
pub(crate) struct RunTelemetry {
    settings: Option<TelemetrySettings>,
    gpu: Result<GpuSampler, String>,
    facts: Option<ResolvedModelFacts>,
    /// GPU names of this host when nothing samples them (`nvidia-smi` at the run's start),
    /// for the ceiling.
    host_gpus: Vec<String>,
    client: Option<reqwest::Client>,
    /// `CUDA_VISIBLE_DEVICES` of the open block's server (`None`: unset, every GPU).
    visible: std::sync::Mutex<Option<String>>,
    /// The spec does not mention telemetry: only the default scrape runs (no GPU check
    /// before a start, nothing recorded for an engine without a metrics endpoint).
    unasked: bool,
}

/// One trial's capture in progress.
#[derive(Debug)]
pub(crate) struct Capture {
    scraper: Option<Scraper>,
    server_note: Option<String>,
    gpu: bool,
}

impl RunTelemetry {
    /// The telemetry `spec` asks for; `facts` from `spec.model_facts`, `accelerators` the
    /// GPU names recorded for the host.
    pub(crate) fn new(
        spec: &SpecFile,
        facts: Option<ResolvedModelFacts>,
        accelerators: Vec<String>,
        ca_file: Option<&std::path::Path>,
    ) -> Self {
        // Not asked for: the engine's metrics are scraped where its profile names an
        // endpoint, GPUs are not sampled; `telemetry: off`: nothing.
        let unasked = spec.spec.telemetry.is_none();
        let settings = match spec.spec.telemetry.clone() {
            None => Some(TelemetrySettings::unasked()),
            Some(s) if s.is_off() => None,
            Some(s) => Some(s),
        };
        let nodes = spec
            .spec
            .server
            .as_ref()
            .and_then(|s| s.launcher.as_ref())
            .map_or(1, servebench_spec::types::Launcher::nodes);
        let gpu = match &settings {
            // A server across Slurm nodes: this host sees the head's GPUs only, and a part
            // of the server's GPUs would give a wrong energy and ceiling; none is better.
            Some(_) if nodes > 1 => Err(format!(
                "the server spans {nodes} Slurm nodes (`server.launcher.slurm.nodes`) and \
                 servebench samples the GPUs of its own node only: none sampled (docs/gpu.md)"
            )),
            Some(_) if unasked => {
                Err("GPU sampling is off unless asked for (`telemetry: on`)".to_owned())
            }
            Some(s) => GpuSampler::start(s.gpu, s.interval.get()),
            None => Err("telemetry is off (`telemetry: on` turns it on)".to_owned()),
        };
        let client = settings.as_ref().and_then(|_| {
            crate::tls::reqwest_builder(ca_file)
                .ok()?
                .no_proxy()
                .connect_timeout(Duration::from_secs(2))
                .build()
                .ok()
        });
        RunTelemetry {
            settings,
            gpu,
            facts,
            host_gpus: accelerators,
            client,
            visible: std::sync::Mutex::new(std::env::var("CUDA_VISIBLE_DEVICES").ok()),
            unasked,
        }
    }

    /// The open block's server environment: its `CUDA_VISIBLE_DEVICES` (else the runner's)
    /// says which GPUs are the server's.
    pub(crate) fn set_server_env(&self, env: &BTreeMap<String, String>) {
        let v = env
            .get("CUDA_VISIBLE_DEVICES")
            .cloned()
            .or_else(|| std::env::var("CUDA_VISIBLE_DEVICES").ok());
        if let Ok(mut g) = self.visible.lock() {
            *g = v;
        }
    }

    /// The server's GPUs, as positions in the sampler's devices.
    fn server_gpus(&self, devices: &[GpuDevice]) -> Vec<usize> {
        let v = self.visible.lock().ok().and_then(|g| g.clone());
        gpu::visible(devices, v.as_deref())
    }

    /// Memory in use and the processes on the server's GPUs, just before `variant`'s server
    /// starts with `env`; `None` when telemetry is off.
    pub(crate) async fn before_start(
        &self,
        variant: &str,
        env: &BTreeMap<String, String>,
    ) -> Option<GpuCheck> {
        self.settings.as_ref()?;
        if self.unasked {
            return None;
        }
        self.set_server_env(env);
        let sampler = match &self.gpu {
            Ok(s) => s,
            Err(note) => {
                return Some(GpuCheck {
                    source: "none".into(),
                    note: Some(note.clone()),
                    ..GpuCheck::default()
                });
            }
        };
        let mine: Vec<u32> = self
            .server_gpus(&sampler.devices)
            .into_iter()
            .map(|i| sampler.devices[i].index)
            .collect();
        Some(match sampler.occupancy(variant).await {
            Ok((memory, processes)) => GpuCheck {
                source: sampler.source.to_owned(),
                note: None,
                memory_used_mib: memory
                    .into_iter()
                    .filter(|(i, _)| mine.contains(i))
                    .collect(),
                processes: processes
                    .into_iter()
                    .filter(|p| mine.contains(&p.gpu))
                    .collect(),
            },
            Err(e) => GpuCheck {
                source: sampler.source.to_owned(),
                note: Some(e),
                ..GpuCheck::default()
            },
        })
    }

    /// Starts capturing a trial of `variant` against `base_url` (its engine's `metrics`, and
    /// the path to scrape); `None` when telemetry is off.
    pub(crate) fn begin(
        &self,
        variant: &str,
        base_url: &str,
        metrics: Option<(MetricsFacts, String)>,
        auth: (Option<String>, Vec<(String, String)>),
    ) -> Option<Capture> {
        let s = self.settings.as_ref()?;
        if self.unasked && metrics.is_none() {
            return None;
        }
        let gpu = match &self.gpu {
            Ok(sampler) => {
                sampler.begin(variant);
                true
            }
            Err(_) => false,
        };
        let (scraper, server_note) = match (s.server_metrics, metrics, &self.client) {
            (ServerMetrics::Off, _, _) => (None, Some("telemetry.server_metrics: off".into())),
            (_, None, _) if s.metrics_path.is_none() => (
                None,
                Some("the engine's profile names no Prometheus endpoint".into()),
            ),
            (_, _, None) => (None, Some("no HTTP client for the scrape".into())),
            (_, m, Some(client)) => {
                let path = s
                    .metrics_path
                    .clone()
                    .or_else(|| m.as_ref().map(|(_, p)| p.clone()))
                    .unwrap_or_else(|| "/metrics".into());
                let names = match &m {
                    Some((facts, _)) => MetricNames::of(facts, path),
                    None => MetricNames {
                        path,
                        running: String::new(),
                        waiting: String::new(),
                        kv_usage: None,
                        preemptions: None,
                        preemptions_kind: MetricKind::Counter,
                        labels: Vec::new(),
                    },
                };
                let url = format!("{}{}", base_url.trim_end_matches('/'), names.path);
                let auth = ScrapeAuth {
                    api_key: auth.0,
                    headers: auth.1,
                };
                let note = m.and_then(|(f, _)| {
                    let mut parts = Vec::new();
                    if let Some(e) = f.enable {
                        parts.push(format!(
                            "the engine serves metrics only when started with {e}"
                        ));
                    }
                    if let Some(n) = f.series_need {
                        parts.push(format!("its running and waiting series need {n}"));
                    }
                    if let Some(u) = f.updated {
                        parts.push(format!("they are updated {u}"));
                    }
                    (!parts.is_empty()).then(|| parts.join("; "))
                });
                (
                    Some(Scraper::start(
                        client.clone(),
                        url,
                        names,
                        auth,
                        s.interval.get(),
                    )),
                    note,
                )
            }
        };
        Some(Capture {
            scraper,
            server_note,
            gpu,
        })
    }

    /// Ends `capture` and builds the trial's telemetry line, times made relative to
    /// `start_unix_ms` (the measured phase's start).
    pub(crate) async fn finish(&self, capture: Capture, start_unix_ms: i64) -> TrialTelemetry {
        let mut line = TrialTelemetry {
            decimated: 1,
            ..TrialTelemetry::default()
        };
        match (&self.gpu, capture.gpu) {
            (Ok(sampler), true) => {
                let samples = sampler.end().await;
                let mine = self.server_gpus(&sampler.devices);
                line.gpu_source = sampler.source.to_owned();
                line.devices = mine.iter().map(|&i| sampler.devices[i].clone()).collect();
                line.gpus = (0..line.devices.len()).map(GpuSeries::new).collect();
                for s in samples {
                    if let Some(pos) = line.devices.iter().position(|d| d.index == s.index) {
                        line.gpus[pos].push(s.unix_ms - start_unix_ms, &s.sample);
                    }
                }
                if line.devices.is_empty() {
                    line.gpu_note = Some(
                        "CUDA_VISIBLE_DEVICES hides every GPU from the server: none sampled".into(),
                    );
                }
            }
            (Ok(_), false) | (Err(_), _) => {
                line.gpu_source = "none".into();
                // Not asked for, GPUs are not sampled: nothing to say in every table.
                line.gpu_note = self.gpu.as_ref().err().cloned().filter(|_| !self.unasked);
            }
        }
        match capture.scraper {
            Some(s) => {
                let (mut series, stamps) = s.finish().await;
                series.t_ms = stamps.into_iter().map(|t| t - start_unix_ms).collect();
                if series.t_ms.is_empty() && series.failed > 0 {
                    line.server_note = Some(format!(
                        "no scrape succeeded: {}",
                        series.errors.first().cloned().unwrap_or_default()
                    ));
                } else if !series.t_ms.is_empty() && series.running.iter().all(Option::is_none) {
                    // The endpoint answered without the series the profile names.
                    let running = series.names.get("running").cloned().unwrap_or_default();
                    line.server_note = Some(match capture.server_note {
                        Some(n) => format!("every scrape lacked `{running}` ({n})"),
                        None => format!("every scrape lacked `{running}`"),
                    });
                } else {
                    line.server_note = None;
                }
                line.server = Some(series);
            }
            None => line.server_note = capture.server_note,
        }
        line.bound();
        line
    }

    /// Completes the trial's summary: its telemetry summary from `line` (when captured) and
    /// its decode ceiling (with `spec.model_facts`).
    pub(crate) fn summarise(
        &self,
        line: Option<&TrialTelemetry>,
        records: &[RequestRecord],
        summary: &mut TrialSummary,
        closed_loop_limit: Option<usize>,
    ) {
        if let Some(line) = line {
            summary.telemetry = Some(summarize_telemetry(
                line,
                &TelemetryWindow {
                    records,
                    window_ns: summary.all.window_ns,
                    output_tokens: summary.all.output_tokens,
                    closed_loop_limit,
                },
            ));
        }
        let Some(facts) = &self.facts else { return };
        let names: Vec<String> = match line {
            Some(l) if !l.devices.is_empty() => l.devices.iter().map(|d| d.name.clone()).collect(),
            _ => match &self.gpu {
                Ok(s) => self
                    .server_gpus(&s.devices)
                    .into_iter()
                    .map(|i| s.devices[i].name.clone())
                    .collect(),
                Err(_) => self.host_gpus.clone(),
            },
        };
        let override_bw = self.settings.as_ref().and_then(|s| s.hbm_gb_per_s);
        let Ok(bandwidth) = gpus_bandwidth(&names, override_bw) else {
            return;
        };
        let all = &summary.all;
        let done = all.completed.max(1) as f64;
        let input = CeilingInput {
            batch: summary
                .steady
                .mean_concurrency
                .or(all.mean_concurrency)
                .unwrap_or(1.0),
            prompt_tokens: all.input_tokens as f64 / done,
            output_tokens: all.output_tokens as f64 / done,
            output_throughput: all.output_throughput.unwrap_or(0.0),
        };
        summary.decode_ceiling = decode_ceiling(facts, bandwidth, names.len(), &input);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_across_slurm_nodes_samples_no_gpu_and_says_why() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../specs/sim-ab-2node.yaml");
        let text = std::fs::read_to_string(path).expect("spec");
        let text = text.replacen("  server:\n", "  telemetry: on\n  server:\n", 1);
        let spec = servebench_spec::parse_str(&text, "sim-ab-2node.yaml").expect("valid");
        let t = RunTelemetry::new(&spec.file, None, vec![], None);
        let why = t.gpu.expect_err("none sampled");
        assert!(why.contains("spans 2 Slurm nodes"), "{why}");
    }
}
