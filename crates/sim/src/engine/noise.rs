//! Step-time factors: per-step lognormal jitter, a per-process speed factor, slow drift
//! within a server's lifetime and across the run's repetitions, the selective step scale and
//! the time scale.

use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};

use crate::config::EngineParams;
use crate::rng::{mix3, salt};

/// Longest step the engine will take.
const MAX_STEP: Duration = Duration::from_secs(3600);

/// Multiplies modelled step times by `jitter × speed × drift × repetition drift × step
/// scale (selected steps) × time scale ÷ host speed`.
#[derive(Debug, Clone)]
pub(crate) struct Noise {
    rng: ChaCha8Rng,
    jitter: Option<LogNormal<f64>>,
    speed: f64,
    drift_per_min: f64,
    /// `1 + drift_per_repetition × (t − 1)` of this server start.
    repetition: f64,
    /// The step scale of this server start (1.0 when its repetition is not selected).
    step_scale: f64,
    time_scale: f64,
    host_speed: f64,
    /// `trial_cv`'s distribution, the seed, the requests per trial, and the factor of the
    /// trial of the latest arrival.
    trial: Option<(LogNormal<f64>, u64, u64)>,
    trial_factor: f64,
}

/// A lognormal with mean 1 and the given coefficient of variation, or `None` for cv 0.
fn mean_one(cv: f64) -> Option<LogNormal<f64>> {
    if cv > 0.0 {
        LogNormal::from_mean_cv(1.0, cv).ok()
    } else {
        None
    }
}

impl Noise {
    /// The factors of a server start at repetition `t` (from 1).
    pub(crate) fn new(params: &EngineParams, seed: u64, t: u32) -> Self {
        let speed = match mean_one(params.speed_cv) {
            Some(d) => d.sample(&mut ChaCha8Rng::seed_from_u64(mix3(seed, 0, salt::SPEED))),
            None => 1.0,
        };
        Noise {
            rng: ChaCha8Rng::seed_from_u64(mix3(seed, 0, salt::JITTER)),
            jitter: mean_one(params.jitter_cv),
            speed,
            drift_per_min: params.drift_per_min,
            repetition: params.repetition_factor(t),
            step_scale: if params.step_scale_at(t) {
                params.step_scale
            } else {
                1.0
            },
            time_scale: params.time_scale,
            host_speed: params.host_speed,
            trial: mean_one(params.trial_cv)
                .filter(|_| params.trial_requests > 0)
                .map(|d| (d, seed, params.trial_requests)),
            trial_factor: 1.0,
        }
    }

    /// The generation request numbered `n` (from 0, arrival order) arrived: steps from now
    /// on take its trial's factor, drawn from the seed and the trial's number
    /// `n / trial_requests`.
    pub(crate) fn arrival(&mut self, n: u64) {
        if let Some((d, seed, per)) = &self.trial {
            let mut rng = ChaCha8Rng::seed_from_u64(mix3(*seed, n / per, salt::TRIAL));
            self.trial_factor = d.sample(&mut rng);
        }
    }

    /// This process's speed factor (1.0 when `speed_cv` is 0).
    pub(crate) fn speed(&self) -> f64 {
        self.speed
    }

    /// This server start's factor from `drift_per_repetition`.
    pub(crate) fn repetition(&self) -> f64 {
        self.repetition
    }

    /// The duration of a step whose modelled cost is `ms`, starting at `now`; `selected`
    /// when the step holds a request that `step_scale` selects.
    pub(crate) fn scale(&mut self, ms: f64, now: Duration, selected: bool) -> Duration {
        if ms <= 0.0 {
            return Duration::ZERO;
        }
        let jitter = match &self.jitter {
            Some(d) => d.sample(&mut self.rng),
            None => 1.0,
        };
        // Minutes of modelled time: the engine's clock runs `time_scale` times as fast.
        let minutes = now.as_secs_f64() / 60.0 / self.time_scale;
        let drift = (1.0 + self.drift_per_min * minutes).max(0.05);
        let step = if selected { self.step_scale } else { 1.0 };
        let factor = jitter
            * self.trial_factor
            * self.speed
            * drift
            * self.repetition
            * step
            * self.time_scale
            / self.host_speed;
        // Capped at an hour: a runaway drift must not overflow the clock.
        Duration::try_from_secs_f64(ms * factor / 1000.0)
            .unwrap_or(MAX_STEP)
            .min(MAX_STEP)
    }
}
