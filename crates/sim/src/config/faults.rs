//! The fault-injection parameters and the request ranges some of them (and `--step-scale`)
//! apply to.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::MAX_DELAY_MS;
use crate::SimError;

/// Request numbers `first..=last`, counted from 1; no `last`: to the end. Written (on the
/// command line, in the info endpoint and the start line) `A..B` or `A..`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestRange {
    /// First request selected, from 1.
    pub first: u64,
    /// Last request selected (inclusive); `None`: every request from `first` on.
    pub last: Option<u64>,
}

impl RequestRange {
    /// True when request number `n` (from 1) is in the range.
    pub fn contains(self, n: u64) -> bool {
        n >= self.first && self.last.is_none_or(|last| n <= last)
    }

    pub(super) fn check(self) -> Result<(), String> {
        if self.first == 0 {
            return Err(format!(
                "requests are numbered from 1 (the first request a server start receives is \
                 1), got {self}"
            ));
        }
        if self.last.is_some_and(|last| last < self.first) {
            return Err(format!("the range {self} is empty: write A..B with A <= B"));
        }
        Ok(())
    }
}

impl fmt::Display for RequestRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.last {
            Some(last) => write!(f, "{}..{last}", self.first),
            None => write!(f, "{}..", self.first),
        }
    }
}

impl FromStr for RequestRange {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let form = || {
            format!(
                "`{s}` is not a request range: write A..B (requests A to B, inclusive, \
                 counted from 1) or A.. (from A on), e.g. 29..56"
            )
        };
        let (a, b) = s.trim().split_once("..").ok_or_else(form)?;
        let first = a.trim().parse::<u64>().map_err(|_| form())?;
        let b = b.trim();
        let last = if b.is_empty() {
            None
        } else {
            Some(b.parse::<u64>().map_err(|_| form())?)
        };
        let r = RequestRange { first, last };
        r.check()?;
        Ok(r)
    }
}

impl Serialize for RequestRange {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Injected faults. Rates are per-request probabilities in [0, 1], drawn from the seed and
/// the request's number, so a run with the same seed and request order repeats its faults.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FaultParams {
    /// Time after start during which `/health`, `/v1/models` and generation answer 503.
    pub startup_delay_ms: u64,
    /// Share of generation requests answered with HTTP 500.
    pub error_rate_500: f64,
    /// Share of generation requests answered with HTTP 429.
    pub error_rate_429: f64,
    /// Share of generation requests whose connection is cut mid-response.
    pub disconnect_rate: f64,
    /// Share of generation requests that pause `stall_ms` mid-response.
    pub stall_rate: f64,
    /// Length of an injected stall.
    pub stall_ms: u64,
    /// Share of streaming requests that get one broken-JSON event mid-stream.
    pub malformed_rate: f64,
    /// Share of streaming requests whose generation fails mid-stream: the dialect ends the
    /// stream as its engine does (an error event then `[DONE]`, or the connection cut).
    pub stream_error_rate: f64,
    /// Stop the whole server right after this many generation requests have been answered.
    pub exit_after_requests: Option<u64>,
    /// Readiness flaps: after the start-up delay, every period of this many ms ends with
    /// `flap_down_ms` during which the server answers as if starting up (503); 0 = never.
    pub flap_period_ms: u64,
    /// The unready part of each flap period.
    pub flap_down_ms: u64,
}

impl Default for FaultParams {
    fn default() -> Self {
        FaultParams {
            startup_delay_ms: 0,
            error_rate_500: 0.0,
            error_rate_429: 0.0,
            disconnect_rate: 0.0,
            stall_rate: 0.0,
            stall_ms: 1000,
            malformed_rate: 0.0,
            stream_error_rate: 0.0,
            exit_after_requests: None,
            flap_period_ms: 0,
            flap_down_ms: 0,
        }
    }
}

impl FaultParams {
    /// Checks that every rate is a probability.
    pub fn validate(&self) -> Result<(), SimError> {
        let rates = [
            ("error_rate_500", self.error_rate_500),
            ("error_rate_429", self.error_rate_429),
            ("disconnect_rate", self.disconnect_rate),
            ("stall_rate", self.stall_rate),
            ("malformed_rate", self.malformed_rate),
            ("stream_error_rate", self.stream_error_rate),
        ];
        for (name, v) in rates {
            if !(0.0..=1.0).contains(&v) {
                return Err(SimError::InvalidConfig(format!(
                    "{name} must be in [0, 1], got {v}"
                )));
            }
        }
        if self.error_rate_500 + self.error_rate_429 > 1.0 {
            return Err(SimError::InvalidConfig(
                "error_rate_500 + error_rate_429 must not exceed 1".into(),
            ));
        }
        for (name, v) in [
            ("startup_delay_ms", self.startup_delay_ms),
            ("stall_ms", self.stall_ms),
        ] {
            if v > MAX_DELAY_MS {
                return Err(SimError::InvalidConfig(format!(
                    "{name} must be at most {MAX_DELAY_MS}, got {v}"
                )));
            }
        }
        if self.flap_period_ms > MAX_DELAY_MS
            || (self.flap_period_ms > 0
                && (self.flap_down_ms == 0 || self.flap_down_ms >= self.flap_period_ms))
        {
            return Err(SimError::InvalidConfig(format!(
                "flap_down_ms must be in (0, flap_period_ms) and flap_period_ms at most {MAX_DELAY_MS}, got {} and {}",
                self.flap_down_ms, self.flap_period_ms
            )));
        }
        if self.exit_after_requests == Some(0) {
            return Err(SimError::InvalidConfig(
                "exit_after_requests must be at least 1".into(),
            ));
        }
        Ok(())
    }
}
