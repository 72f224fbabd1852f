//! The hand-off of one sequence's tokens from the engine loop to its HTTP response.
//!
//! Tokens of a sequence are numbered 0, 1, 2, …, so the engine only has to publish how many
//! exist: one atomic counter per sequence, a waker, and the finish once known. This is much
//! cheaper per token than a channel, which matters in zero-delay mode where the engine's
//! overhead must stay small beside the HTTP work.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use futures_util::task::AtomicWaker;

use crate::engine::{Emission, Finish};

/// One token of a sequence, as its response reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Token {
    /// Position in the output, from 0.
    pub(crate) index: u32,
    /// Set on the last token.
    pub(crate) finish: Option<Finish>,
    /// The batch size of the step that made it, for the watched position only.
    pub(crate) batch: Option<u32>,
}

#[derive(Debug, Default)]
struct Shared {
    /// Tokens emitted so far.
    produced: AtomicU32,
    /// Set before the last token is published.
    finish: OnceLock<Finish>,
    /// The engine stopped before the sequence finished.
    aborted: AtomicBool,
    /// The response side went away.
    closed: AtomicBool,
    /// The position whose batch size the reader wants (`--batch-variance`).
    watch: Option<u32>,
    /// The batch size of the step that made token `watch`.
    batch: AtomicU32,
    waker: AtomicWaker,
}

/// The engine's end.
#[derive(Debug, Clone)]
pub(crate) struct FeedTx(Arc<Shared>);

/// The response's end: yields the tokens in order.
#[derive(Debug)]
pub(crate) struct Feed {
    shared: Arc<Shared>,
    next: u32,
}

/// A connected pair.
#[cfg(test)]
pub(crate) fn feed() -> (FeedTx, Feed) {
    watching(None)
}

/// A connected pair whose reader learns the batch size of the step that made token
/// `watch`.
pub(crate) fn watching(watch: Option<u32>) -> (FeedTx, Feed) {
    let shared = Arc::new(Shared {
        watch,
        ..Shared::default()
    });
    (FeedTx(Arc::clone(&shared)), Feed { shared, next: 0 })
}

impl FeedTx {
    /// Publishes token `e.index` (tokens come in order) and wakes the reader.
    pub(crate) fn publish(&self, e: &Emission) {
        if let Some(f) = e.finish {
            let _ = self.0.finish.set(f);
        }
        if self.0.watch == Some(e.index) {
            self.0.batch.store(e.batch, Ordering::Relaxed);
        }
        self.0.produced.store(e.index + 1, Ordering::Release);
        self.0.waker.wake();
    }

    /// True once the reader is gone.
    pub(crate) fn is_closed(&self) -> bool {
        self.0.closed.load(Ordering::Relaxed)
    }

    /// Tells the reader that no more tokens will come.
    pub(crate) fn abort(&self) {
        self.0.aborted.store(true, Ordering::Release);
        self.0.waker.wake();
    }
}

impl Feed {
    /// The next token; `None` when the engine stopped before the end.
    pub(crate) fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Token>> {
        let mut registered = false;
        loop {
            let produced = self.shared.produced.load(Ordering::Acquire);
            if self.next < produced {
                let index = self.next;
                self.next += 1;
                let finish = self
                    .shared
                    .finish
                    .get()
                    .filter(|f| f.timings.predicted_n == index + 1)
                    .copied();
                let batch = (self.shared.watch == Some(index))
                    .then(|| self.shared.batch.load(Ordering::Relaxed));
                return Poll::Ready(Some(Token {
                    index,
                    finish,
                    batch,
                }));
            }
            if self.shared.aborted.load(Ordering::Acquire) {
                return Poll::Ready(None);
            }
            if registered {
                return Poll::Pending;
            }
            // Register, then look again, so a token published in between is not missed.
            self.shared.waker.register(cx.waker());
            registered = true;
        }
    }

    /// The next token, awaited.
    pub(crate) async fn next(&mut self) -> Option<Token> {
        std::future::poll_fn(|cx| self.poll_next(cx)).await
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{FinishReason, Timings};

    fn emission(index: u32, last: bool) -> Emission {
        let timings = Timings {
            queue_ms: 0.0,
            prompt_n: 1,
            prompt_ms: 0.0,
            ttft_ms: 0.0,
            predicted_n: index + 1,
            predicted_ms: 0.0,
            predicted_per_token_ms: None,
            e2e_ms: 0.0,
            cached_n: None,
        };
        Emission {
            seq: 0,
            index,
            finish: last.then_some(Finish {
                reason: FinishReason::Length,
                timings,
            }),
            batch: 3,
        }
    }

    #[tokio::test]
    async fn tokens_arrive_in_order_with_the_finish_on_the_last() {
        let (tx, mut rx) = feed();
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(e) = rx.next().await {
                let last = e.finish.is_some();
                got.push((e.index, last));
                if last {
                    break;
                }
            }
            got
        });
        for i in 0..100 {
            tx.publish(&emission(i, i == 99));
            if i % 7 == 0 {
                tokio::task::yield_now().await;
            }
        }
        let got = reader.await.unwrap_or_default();
        assert_eq!(got.len(), 100);
        assert!(
            got.iter()
                .enumerate()
                .all(|(i, &(idx, last))| idx as usize == i && last == (i == 99))
        );
    }

    #[tokio::test]
    async fn abort_ends_the_feed_and_drop_closes_it() {
        let (tx, mut rx) = feed();
        tx.publish(&emission(0, false));
        tx.abort();
        assert_eq!(
            rx.next().await.map(|e| e.index),
            Some(0),
            "published tokens are still read"
        );
        assert!(rx.next().await.is_none());
        assert!(!tx.is_closed());
        drop(rx);
        assert!(tx.is_closed());
    }
}
