//! A process-wide count of output tokens received, for live progress displays (the run's
//! trial bar shows tokens per second from it). It counts only while a display asks for it
//! ([`Counting`]), once per network read rather than per event, and the measurement never
//! reads it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

static TOKENS_RECEIVED: AtomicU64 = AtomicU64::new(0);
static COUNTING: AtomicBool = AtomicBool::new(false);

/// Output tokens received by this process while counting was on.
pub fn tokens_received() -> u64 {
    TOKENS_RECEIVED.load(Ordering::Relaxed)
}

/// Counting is on while this lives.
#[derive(Debug)]
pub struct Counting(());

impl Counting {
    /// Turns counting on until the value is dropped.
    pub fn start() -> Self {
        COUNTING.store(true, Ordering::Relaxed);
        Counting(())
    }
}

impl Drop for Counting {
    fn drop(&mut self) {
        COUNTING.store(false, Ordering::Relaxed);
    }
}

/// Adds the tokens of `events` (those one read produced) when a display is counting.
pub(crate) fn add_tokens(events: &[super::TokenEvent]) {
    if COUNTING.load(Ordering::Relaxed) && !events.is_empty() {
        let n: u64 = events.iter().map(|e| u64::from(e.tokens)).sum();
        TOKENS_RECEIVED.fetch_add(n, Ordering::Relaxed);
    }
}
