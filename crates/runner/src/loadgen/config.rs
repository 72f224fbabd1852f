//! Inputs of one trial: where requests go ([`Target`]) and how load is driven
//! ([`LoadConfig`], [`Arrival`]). Every value is validated before anything is sent: a rate of
//! `-1`, `0` or `NaN` is a typed [`ConfigError`], never a crash half-way through a sweep.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use servebench_result::metrics::Slo;

/// Which OpenAI-compatible endpoint is driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApiKind {
    /// `POST /v1/completions` with a `prompt` string.
    Completions,
    /// `POST /v1/chat/completions` with `messages`.
    Chat,
}

impl ApiKind {
    /// The request path, relative to the target's base URL.
    pub fn path(self) -> &'static str {
        match self {
            ApiKind::Completions => "/v1/completions",
            ApiKind::Chat => "/v1/chat/completions",
        }
    }
}

/// The server under test. `Debug` never prints the API key.
#[derive(Clone)]
pub struct Target {
    /// `http://host:port` or `https://host:port`, optionally with a path prefix (no trailing
    /// `/v1`).
    pub base_url: String,
    /// Which endpoint and body shape.
    pub api: ApiKind,
    /// The `model` field sent with every request.
    pub model: String,
    /// Sent as `Authorization: Bearer …`; never logged, serialised or printed.
    pub api_key: Option<String>,
    /// Extra request headers (`target.headers`, resolved), sent with every request; their
    /// values are never logged, serialised or printed.
    pub headers: Vec<(String, String)>,
    /// PEM CA certificates trusted besides the system's roots for an `https://` target
    /// (`target.tls.ca_file`, resolved against the spec's directory).
    pub ca_file: Option<std::path::PathBuf>,
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Target")
            .field("base_url", &self.base_url)
            .field("api", &self.api)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(k, _)| (k.as_str(), "<redacted>"))
                    .collect::<Vec<_>>(),
            )
            .field("ca_file", &self.ca_file)
            .finish()
    }
}

/// When requests are meant to arrive. The whole schedule is drawn before the trial starts, as
/// absolute offsets from its start (see [`crate::loadgen::schedule`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Arrival {
    /// Every request is due at once; only the concurrency limit paces them.
    Inf,
    /// Evenly spaced, `rate` requests per second.
    Constant {
        /// Requests per second.
        rate: f64,
    },
    /// Exponential gaps with mean `1/rate` seconds.
    Poisson {
        /// Requests per second.
        rate: f64,
    },
    /// Gamma gaps: shape `burstiness`, scale `1/(rate·burstiness)`, so the mean gap is
    /// `1/rate` for every burstiness; `burstiness = 1` is Poisson, `< 1` burstier, `> 1`
    /// more regular.
    Gamma {
        /// Requests per second.
        rate: f64,
        /// Shape of the gaps.
        burstiness: f64,
    },
}

impl Arrival {
    /// Checks that rates and burstiness are finite and `> 0`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let positive = |name: &'static str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(ConfigError::NonPositive {
                    field: name,
                    value: v,
                })
            }
        };
        match *self {
            Arrival::Inf => Ok(()),
            Arrival::Constant { rate } | Arrival::Poisson { rate } => positive("rate", rate),
            Arrival::Gamma { rate, burstiness } => {
                positive("rate", rate)?;
                positive("burstiness", burstiness)
            }
        }
    }
}

/// Whether and how `min_tokens` (a vLLM/SGLang extension) is sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MinTokens {
    /// Not sent (servers that reject unknown fields keep working).
    #[default]
    Omit,
    /// `min_tokens = max_tokens` for every request: a fixed output length on servers that
    /// support it, in addition to `ignore_eos`.
    MatchMax,
    /// A fixed value.
    Value(u32),
}

/// Which HTTP client sends the requests. Both record the same instants the same way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// [`crate::loadgen::LeanClient`]: one task per request reading its own socket, no
    /// per-event allocation (the default: lowest client overhead).
    #[default]
    Lean,
    /// [`crate::loadgen::HttpClient`] on reqwest/hyper.
    Reqwest,
}

/// How one trial drives load. Construct with [`LoadConfig::new`] and adjust fields; call
/// [`LoadConfig::validate`] (done by `run_trial` too).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadConfig {
    /// Measured requests; `run_trial` needs at least this many prompts.
    pub requests: usize,
    /// Hard limit on requests in flight (warm-up included); `None` = unlimited.
    pub max_concurrency: Option<usize>,
    /// When requests are due.
    pub arrival: Arrival,
    /// Seed of the arrival schedule (prompts have their own, see
    /// [`crate::dataset::prompt_seed`]).
    pub seed: u64,
    /// Requests sent before the measured ones, under the same concurrency limit, excluded
    /// from every metric.
    pub warmup_requests: usize,
    /// Whole-request limit, from send to the end of the stream. A stalled stream is cut
    /// here and recorded as `timeout`.
    pub request_timeout: Duration,
    /// Limit on the whole trial (warm-up included); requests still running are cut and
    /// recorded as `trial_deadline`, requests not yet sent as `not_sent`.
    pub trial_deadline: Option<Duration>,
    /// Sent as `ignore_eos: true` when set (omitted otherwise). When set, each request's
    /// output length is checked against its `max_tokens` (90–110%).
    pub ignore_eos: bool,
    /// Sampling temperature sent with every request.
    pub temperature: f64,
    /// Whether and how `min_tokens` is sent.
    pub min_tokens: MinTokens,
    /// Sent as `stream_options: {include_usage: true}` when set (the default; the engine
    /// profile turns it off for an engine that refuses it).
    #[serde(default = "on")]
    pub stream_options: bool,
    /// Sent as transformers' `generation_config` (a JSON string) with `min_new_tokens` and
    /// `max_new_tokens` equal to each request's `max_tokens`: the output length fixed where
    /// `ignore_eos` cannot be sent (the engine profile decides; servebench_engines).
    #[serde(default)]
    pub generation_config: bool,
    /// Fields merged into every request body as a JSON merge patch (`null` removes a field):
    /// the spec's `request_body`, the workload's and the variant's
    /// (`SpecFile::request_body`).
    pub extra_body: serde_json::Map<String, serde_json::Value>,
    /// Service-level objectives for goodput; `None`: goodput is not reported.
    pub slo: Option<Slo>,
    /// Which HTTP client sends the requests.
    pub transport: Transport,
    /// With the lean transport, date each read by the kernel's receive stamp
    /// (`SO_TIMESTAMPNS`) rather than by when the client got to it, so a busy client does
    /// not add its own delay to TTFT and ITL (default on; where the kernel gives no stamp
    /// the clock is read instead). The reqwest transport always reads the clock.
    #[serde(default = "on")]
    pub kernel_receive_stamps: bool,
    /// The engine whose answers these are: its profile reads the finished records
    /// ([`crate::loadgen::reading`]); `None`: read as the OpenAI API's words.
    #[serde(skip)]
    pub engine: Option<&'static servebench_engines::Profile>,
}

fn on() -> bool {
    true
}

impl LoadConfig {
    /// `requests` requests, no pacing, no concurrency limit, no warm-up, 10-minute request
    /// timeout, `temperature` 0, `ignore_eos` on: change what you need.
    pub fn new(requests: usize) -> Self {
        LoadConfig {
            requests,
            max_concurrency: None,
            arrival: Arrival::Inf,
            seed: 0,
            warmup_requests: 0,
            request_timeout: Duration::from_secs(600),
            trial_deadline: None,
            ignore_eos: true,
            temperature: 0.0,
            min_tokens: MinTokens::Omit,
            stream_options: true,
            generation_config: false,
            extra_body: serde_json::Map::new(),
            slo: None,
            transport: Transport::Lean,
            kernel_receive_stamps: true,
            engine: None,
        }
    }

    /// Every check that does not need the prompts.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.requests == 0 {
            return Err(ConfigError::NoRequests);
        }
        if self.max_concurrency == Some(0) {
            return Err(ConfigError::ZeroConcurrency);
        }
        self.arrival.validate()?;
        if self.request_timeout.is_zero() {
            return Err(ConfigError::ZeroDuration {
                field: "request_timeout",
            });
        }
        if self.trial_deadline.is_some_and(|d| d.is_zero()) {
            return Err(ConfigError::ZeroDuration {
                field: "trial_deadline",
            });
        }
        if !(self.temperature.is_finite() && self.temperature >= 0.0) {
            return Err(ConfigError::Temperature(self.temperature));
        }
        Ok(())
    }
}

/// A load configuration that cannot be run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "{field} must be a finite number > 0, got {value}; for no pacing use arrival `inf` \
         (not -1 or 0)"
    )]
    /// A rate or time that must be positive is not.
    NonPositive {
        /// The field.
        field: &'static str,
        /// Its value.
        value: f64,
    },
    /// No measured request.
    #[error("requests must be at least 1")]
    NoRequests,
    /// A concurrency limit of zero.
    #[error("max_concurrency must be at least 1 (leave it unset for no limit)")]
    ZeroConcurrency,
    #[error("{field} must be longer than zero")]
    /// A duration of zero.
    ZeroDuration {
        /// The field.
        field: &'static str,
    },
    /// A temperature that is negative or not finite.
    #[error("temperature must be finite and >= 0, got {0}")]
    Temperature(f64),
    /// A trial by time without a request rate.
    #[error("a trial by time needs a request rate: at arrival `inf` every request is due at once")]
    WindowAtInf,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_must_be_positive_and_finite() {
        for bad in [-1.0, 0.0, f64::NAN, f64::INFINITY] {
            let err = Arrival::Poisson { rate: bad }.validate().unwrap_err();
            assert!(err.to_string().contains("inf"), "{err}");
        }
        assert!(
            Arrival::Gamma {
                rate: 1.0,
                burstiness: 0.0
            }
            .validate()
            .is_err()
        );
        assert!(
            Arrival::Gamma {
                rate: 2.0,
                burstiness: 0.5
            }
            .validate()
            .is_ok()
        );
        assert!(Arrival::Inf.validate().is_ok());
    }

    #[test]
    fn config_checks() {
        let mut c = LoadConfig::new(10);
        assert!(c.validate().is_ok());
        c.max_concurrency = Some(0);
        assert_eq!(c.validate(), Err(ConfigError::ZeroConcurrency));
        c.max_concurrency = Some(1);
        c.arrival = Arrival::Constant { rate: -1.0 };
        assert!(matches!(c.validate(), Err(ConfigError::NonPositive { .. })));
        assert_eq!(LoadConfig::new(0).validate(), Err(ConfigError::NoRequests));
    }

    #[test]
    fn debug_redacts_the_key() {
        let t = Target {
            base_url: "http://127.0.0.1:1".into(),
            api: ApiKind::Chat,
            model: "m".into(),
            api_key: Some("sk-secret".into()),
            headers: vec![("X-Token".into(), "hdr-secret".into())],
            ca_file: None,
        };
        let s = format!("{t:?}");
        assert!(!s.contains("sk-secret") && s.contains("redacted"), "{s}");
    }
}
