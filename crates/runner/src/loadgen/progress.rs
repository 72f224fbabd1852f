//! A process-wide count of token-bearing events received, for live progress displays (the
//! run's trial bar shows tokens per second from it). One relaxed atomic add per event; it is
//! never read by the measurement itself.

use std::sync::atomic::{AtomicU64, Ordering};

static TOKENS_RECEIVED: AtomicU64 = AtomicU64::new(0);

/// Output tokens received by this process so far (all trials, warm-up included).
pub fn tokens_received() -> u64 {
    TOKENS_RECEIVED.load(Ordering::Relaxed)
}

pub(crate) fn add_tokens(n: u32) {
    TOKENS_RECEIVED.fetch_add(u64::from(n), Ordering::Relaxed);
}
