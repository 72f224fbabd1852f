//! Step-time noise: per-step lognormal jitter, a per-process speed factor and slow drift.

use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};

use crate::config::EngineParams;
use crate::rng::{mix3, salt};

/// Longest step the engine will take.
const MAX_STEP: Duration = Duration::from_secs(3600);

/// Multiplies modelled step times by `jitter × speed × drift`.
#[derive(Debug, Clone)]
pub(crate) struct Noise {
    rng: ChaCha8Rng,
    jitter: Option<LogNormal<f64>>,
    speed: f64,
    drift_per_min: f64,
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
    pub(crate) fn new(params: &EngineParams, seed: u64) -> Self {
        let speed = match mean_one(params.speed_cv) {
            Some(d) => d.sample(&mut ChaCha8Rng::seed_from_u64(mix3(seed, 0, salt::SPEED))),
            None => 1.0,
        };
        Noise {
            rng: ChaCha8Rng::seed_from_u64(mix3(seed, 0, salt::JITTER)),
            jitter: mean_one(params.jitter_cv),
            speed,
            drift_per_min: params.drift_per_min,
        }
    }

    /// This process's speed factor (1.0 when `speed_cv` is 0).
    pub(crate) fn speed(&self) -> f64 {
        self.speed
    }

    /// The noisy duration of a step whose modelled cost is `ms`, starting at `now`.
    pub(crate) fn scale(&mut self, ms: f64, now: Duration) -> Duration {
        if ms <= 0.0 {
            return Duration::ZERO;
        }
        let jitter = match &self.jitter {
            Some(d) => d.sample(&mut self.rng),
            None => 1.0,
        };
        let drift = (1.0 + self.drift_per_min * now.as_secs_f64() / 60.0).max(0.05);
        // Capped at an hour: a runaway drift must not overflow the clock.
        Duration::try_from_secs_f64(ms * jitter * self.speed * drift / 1000.0)
            .unwrap_or(MAX_STEP)
            .min(MAX_STEP)
    }
}
