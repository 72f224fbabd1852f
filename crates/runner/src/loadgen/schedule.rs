//! Arrival schedules, drawn in full before a trial starts.
//!
//! A schedule is a list of absolute offsets (nanoseconds from the trial start), one per
//! request, non-decreasing, the first at 0. The dispatcher sleeps until each absolute
//! instant, so gaps do not drift the way chained relative sleeps do. Draws use ChaCha8
//! seeded with the configuration's seed: the same seed gives the same schedule on every
//! platform.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp, Gamma};

use super::config::{Arrival, ConfigError};

/// Offsets, in nanoseconds from the trial start, at which each of `n` requests is due.
pub fn arrival_offsets(arrival: &Arrival, n: usize, seed: u64) -> Result<Vec<u64>, ConfigError> {
    Ok(arrivals(arrival, seed)?.take(n).collect())
}

/// The offsets due before `window` has passed: exactly the arrivals a trial by time sends,
/// the same first ones as [`arrival_offsets`] with that seed (at least one: the first is
/// due at 0). At `Arrival::Inf` every request is due at once, so there is no such count.
pub fn offsets_within(
    arrival: &Arrival,
    window: std::time::Duration,
    seed: u64,
) -> Result<Vec<u64>, ConfigError> {
    if *arrival == Arrival::Inf {
        return Err(ConfigError::WindowAtInf);
    }
    let end = u64::try_from(window.as_nanos()).unwrap_or(u64::MAX);
    let mut due: Vec<u64> = arrivals(arrival, seed)?.take_while(|&o| o < end).collect();
    if due.is_empty() {
        due.push(0);
    }
    Ok(due)
}

/// The endless schedule: offsets in nanoseconds, the first at 0.
fn arrivals(arrival: &Arrival, seed: u64) -> Result<impl Iterator<Item = u64>, ConfigError> {
    arrival.validate()?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let gaps: Box<dyn FnMut(&mut ChaCha8Rng) -> f64> = match *arrival {
        Arrival::Inf => Box::new(|_| 0.0),
        Arrival::Constant { rate } => Box::new(move |_| 1.0 / rate),
        Arrival::Poisson { rate } => {
            let d = Exp::new(rate).map_err(|_| ConfigError::NonPositive {
                field: "rate",
                value: rate,
            })?;
            Box::new(move |r| d.sample(r))
        }
        Arrival::Gamma { rate, burstiness } => {
            let d = Gamma::new(burstiness, 1.0 / (rate * burstiness)).map_err(|_| {
                ConfigError::NonPositive {
                    field: "burstiness",
                    value: burstiness,
                }
            })?;
            Box::new(move |r| d.sample(r))
        }
    };
    let mut gaps = gaps;
    let mut t = 0.0_f64; // seconds
    let mut first = true;
    Ok(std::iter::from_fn(move || {
        if !std::mem::take(&mut first) {
            t += gaps(&mut rng);
        }
        Some(secs_to_ns(t))
    }))
}

fn secs_to_ns(s: f64) -> u64 {
    // Saturates for absurd schedules instead of wrapping.
    let ns = (s * 1e9).round();
    if ns >= u64::MAX as f64 {
        u64::MAX
    } else {
        ns.max(0.0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean_gap_s(v: &[u64]) -> f64 {
        (v[v.len() - 1] - v[0]) as f64 / 1e9 / (v.len() - 1) as f64
    }

    #[test]
    fn a_window_holds_exactly_the_arrivals_due_in_it() {
        use std::time::Duration;
        let c = Arrival::Constant { rate: 40.0 };
        let due = offsets_within(&c, Duration::from_millis(500), 3).expect("ok");
        assert_eq!(due.len(), 20, "0, 25, …, 475 ms");
        assert_eq!(due.last(), Some(&475_000_000));
        for a in [
            Arrival::Poisson { rate: 50.0 },
            Arrival::Gamma {
                rate: 50.0,
                burstiness: 0.25,
            },
        ] {
            let due = offsets_within(&a, Duration::from_secs(2), 9).expect("ok");
            let longer = arrival_offsets(&a, due.len() + 1, 9).expect("ok");
            assert_eq!(
                due[..],
                longer[..due.len()],
                "a prefix of the same schedule"
            );
            assert!(*due.last().unwrap() < 2_000_000_000 && longer[due.len()] >= 2_000_000_000);
        }
        assert_eq!(
            offsets_within(&c, Duration::from_nanos(1), 3).expect("ok"),
            [0],
            "the first request is always due"
        );
        assert!(matches!(
            offsets_within(&Arrival::Inf, Duration::from_secs(1), 3),
            Err(ConfigError::WindowAtInf)
        ));
    }

    #[test]
    fn inf_and_constant() {
        assert_eq!(arrival_offsets(&Arrival::Inf, 3, 1).expect("ok"), [0, 0, 0]);
        let c = arrival_offsets(&Arrival::Constant { rate: 4.0 }, 4, 1).expect("ok");
        assert_eq!(c, [0, 250_000_000, 500_000_000, 750_000_000]);
    }

    #[test]
    fn poisson_and_gamma_have_the_requested_mean_rate_and_are_seeded() {
        let n = 20_000;
        for a in [
            Arrival::Poisson { rate: 50.0 },
            Arrival::Gamma {
                rate: 50.0,
                burstiness: 0.5,
            },
            Arrival::Gamma {
                rate: 50.0,
                burstiness: 4.0,
            },
        ] {
            let v = arrival_offsets(&a, n, 42).expect("ok");
            assert!(v.windows(2).all(|w| w[0] <= w[1]));
            let m = mean_gap_s(&v);
            assert!((m - 0.02).abs() < 0.02 * 0.05, "{a:?}: mean gap {m}");
            assert_eq!(
                v,
                arrival_offsets(&a, n, 42).expect("ok"),
                "same seed, same schedule"
            );
            assert_ne!(v, arrival_offsets(&a, n, 43).expect("ok"));
        }
    }

    #[test]
    fn burstiness_changes_dispersion() {
        let cv = |b: f64| {
            let v = arrival_offsets(
                &Arrival::Gamma {
                    rate: 10.0,
                    burstiness: b,
                },
                20_000,
                7,
            )
            .expect("ok");
            let gaps: Vec<f64> = v.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
            let m = gaps.iter().sum::<f64>() / gaps.len() as f64;
            let var = gaps.iter().map(|g| (g - m).powi(2)).sum::<f64>() / gaps.len() as f64;
            var.sqrt() / m
        };
        // CV of a gamma gap is 1/sqrt(shape).
        assert!((cv(1.0) - 1.0).abs() < 0.05);
        assert!((cv(0.25) - 2.0).abs() < 0.15);
        assert!((cv(4.0) - 0.5).abs() < 0.03);
    }

    #[test]
    fn invalid_rates_are_errors() {
        assert!(arrival_offsets(&Arrival::Poisson { rate: -1.0 }, 3, 0).is_err());
        assert!(arrival_offsets(&Arrival::Constant { rate: f64::NAN }, 3, 0).is_err());
    }
}
