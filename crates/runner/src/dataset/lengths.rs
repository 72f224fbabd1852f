//! Token-length distributions for inputs and outputs.

use rand::Rng;
use rand_distr::{Distribution, Normal};
use serde::{Deserialize, Serialize};

use super::DatasetError;

/// How long each prompt (or output) is, in tokens. Every draw is at least 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LengthDist {
    /// Every request the same length.
    Fixed {
        /// The length.
        tokens: u32,
    },
    /// Uniform over the integers `min..=max`.
    Uniform {
        /// Shortest length.
        min: u32,
        /// Longest length.
        max: u32,
    },
    /// Normal with `mean` and `std`, rounded to the nearest integer, then clipped to
    /// `min..=max` (clipping, not rejection: the mass beyond a bound lands on it).
    Normal {
        /// Mean of the normal.
        mean: f64,
        /// Standard deviation of the normal.
        std: f64,
        /// Shortest length after clipping.
        min: u32,
        /// Longest length after clipping.
        max: u32,
    },
}

impl LengthDist {
    /// Refuses a distribution that cannot be drawn from (zero lengths, `min > max`, a negative or non-finite spread).
    pub fn validate(&self) -> Result<(), DatasetError> {
        let bad = |why: &str| Err(DatasetError::InvalidLength(format!("{self:?}: {why}")));
        match *self {
            LengthDist::Fixed { tokens: 0 } => bad("length must be at least 1"),
            LengthDist::Fixed { .. } => Ok(()),
            LengthDist::Uniform { min, max } | LengthDist::Normal { min, max, .. }
                if min == 0 || min > max =>
            {
                bad("need 1 <= min <= max")
            }
            LengthDist::Normal { mean, std, .. }
                if !mean.is_finite() || !std.is_finite() || std < 0.0 =>
            {
                bad("mean and std must be finite, std >= 0")
            }
            _ => Ok(()),
        }
    }

    /// One draw. Call [`LengthDist::validate`] first; an invalid distribution draws its
    /// lower bound (at least 1).
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        match *self {
            LengthDist::Fixed { tokens } => tokens.max(1),
            LengthDist::Uniform { min, max } if min <= max => rng.random_range(min..=max).max(1),
            LengthDist::Normal {
                mean,
                std,
                min,
                max,
            } if min <= max => {
                let x = Normal::new(mean, std).map_or(mean, |d| d.sample(rng));
                let x = if x.is_finite() {
                    x.round()
                } else {
                    f64::from(min)
                };
                x.clamp(f64::from(min), f64::from(max)).max(1.0) as u32
            }
            LengthDist::Uniform { min, .. } | LengthDist::Normal { min, .. } => min.max(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn draws_stay_in_bounds() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let u = LengthDist::Uniform { min: 10, max: 20 };
        let n = LengthDist::Normal {
            mean: 100.0,
            std: 50.0,
            min: 64,
            max: 128,
        };
        let (mut lo, mut hi) = (false, false);
        for _ in 0..2000 {
            let x = u.sample(&mut rng);
            assert!((10..=20).contains(&x));
            lo |= x == 10;
            hi |= x == 20;
            let y = n.sample(&mut rng);
            assert!((64..=128).contains(&y));
        }
        assert!(lo && hi, "both ends of the inclusive range are drawn");
        assert_eq!(LengthDist::Fixed { tokens: 7 }.sample(&mut rng), 7);
    }

    #[test]
    fn invalid_distributions() {
        assert!(LengthDist::Fixed { tokens: 0 }.validate().is_err());
        assert!(LengthDist::Uniform { min: 5, max: 4 }.validate().is_err());
        assert!(
            LengthDist::Normal {
                mean: 1.0,
                std: -1.0,
                min: 1,
                max: 2
            }
            .validate()
            .is_err()
        );
        assert!(
            LengthDist::Normal {
                mean: 9.0,
                std: 1.0,
                min: 1,
                max: 20
            }
            .validate()
            .is_ok()
        );
    }
}
