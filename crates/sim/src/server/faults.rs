//! Per-request fault decisions, drawn from (seed, request number) so they repeat.

use std::time::Duration;

use axum::http::StatusCode;

use crate::config::FaultParams;
use crate::rng::{mix3, salt, unit};

/// What goes wrong with one generation request. Token positions count from 0; a fault at
/// position `k` happens before token `k` is sent, or before the last token when the response
/// ends sooner, so a drawn fault always happens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FaultPlan {
    /// Answer with this status instead of generating.
    pub(crate) http_error: Option<StatusCode>,
    /// Cut the connection before this token.
    pub(crate) disconnect_at: Option<u32>,
    /// Pause before this token.
    pub(crate) stall_at: Option<u32>,
    /// Send one broken event before this token.
    pub(crate) malformed_at: Option<u32>,
    /// Fail the generation before this token, as the dialect's engine fails a stream.
    pub(crate) error_at: Option<u32>,
    /// Length of the pause.
    pub(crate) stall: Duration,
}

impl FaultPlan {
    /// Draws the plan of request number `n` that asks for `max_tokens` tokens.
    pub(crate) fn draw(p: &FaultParams, seed: u64, n: u64, max_tokens: u32) -> Self {
        let u = |k: u64| unit(mix3(seed ^ salt::FAULT, n, k));
        // A position in [1, max_tokens) so at least one token gets through; 0 for 1 token.
        let pos = |k: u64| {
            (u(k) * f64::from(max_tokens.saturating_sub(1))) as u32 + u32::from(max_tokens > 1)
        };
        let e = u(0);
        let http_error = if e < p.error_rate_500 {
            Some(StatusCode::INTERNAL_SERVER_ERROR)
        } else if e < p.error_rate_500 + p.error_rate_429 {
            Some(StatusCode::TOO_MANY_REQUESTS)
        } else {
            None
        };
        FaultPlan {
            http_error,
            disconnect_at: (u(1) < p.disconnect_rate).then(|| pos(2)),
            stall_at: (u(3) < p.stall_rate).then(|| pos(4)),
            malformed_at: (u(5) < p.malformed_rate).then(|| pos(6)),
            error_at: (u(7) < p.stream_error_rate).then(|| pos(8)),
            stall: Duration::from_millis(p.stall_ms),
        }
    }
}

/// Whether a fault planned at `at` fires at token `index` (`last`: it is the final token).
pub(crate) fn fires(at: Option<u32>, index: u32, last: bool) -> bool {
    at.is_some_and(|k| index >= k || last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_honoured_and_positions_are_mid_stream() {
        let p = FaultParams {
            error_rate_500: 0.1,
            error_rate_429: 0.2,
            disconnect_rate: 0.3,
            stall_rate: 0.5,
            malformed_rate: 1.0,
            stream_error_rate: 0.4,
            ..FaultParams::default()
        };
        let plans: Vec<FaultPlan> = (0..10_000).map(|n| FaultPlan::draw(&p, 4, n, 10)).collect();
        let share =
            |f: &dyn Fn(&FaultPlan) -> bool| plans.iter().filter(|p| f(p)).count() as f64 / 1e4;
        assert!(
            (share(&|p| p.http_error == Some(StatusCode::INTERNAL_SERVER_ERROR)) - 0.1).abs()
                < 0.015
        );
        assert!(
            (share(&|p| p.http_error == Some(StatusCode::TOO_MANY_REQUESTS)) - 0.2).abs() < 0.015
        );
        assert!((share(&|p| p.disconnect_at.is_some()) - 0.3).abs() < 0.015);
        assert!((share(&|p| p.stall_at.is_some()) - 0.5).abs() < 0.015);
        assert_eq!(share(&|p| p.malformed_at.is_some()), 1.0);
        assert!((share(&|p| p.error_at.is_some()) - 0.4).abs() < 0.015);
        assert!(
            plans
                .iter()
                .filter_map(|p| p.malformed_at)
                .all(|k| (1..10).contains(&k))
        );
        assert_eq!(FaultPlan::draw(&p, 4, 17, 10), plans[17], "deterministic");
        assert_eq!(
            FaultPlan::draw(
                &FaultParams {
                    malformed_rate: 1.0,
                    ..FaultParams::default()
                },
                0,
                0,
                1
            )
            .malformed_at,
            Some(0)
        );
    }

    #[test]
    fn a_fault_past_the_end_fires_on_the_last_token() {
        assert!(!fires(Some(5), 3, false));
        assert!(fires(Some(5), 3, true));
        assert!(fires(Some(5), 5, false));
        assert!(!fires(None, 9, true));
    }
}
