//! The body of a streamed generation response: engine tokens in, SSE events out, with the
//! request's faults applied on the way.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use futures_util::Stream;
use tokio::time::{Instant, Sleep};

use super::AppState;
use super::encode::{DONE_EVENT, Encoder};
use super::faults::{FaultPlan, fires};
use super::stats::{InFlight, bump};
use super::wire::Api;
use crate::engine::Timings;
use crate::feed::{Feed, Token};

/// One streamed response. Every token is its own SSE event, and every event is flushed on
/// its own: after yielding an event the stream answers `Pending` once (waking itself), which
/// makes hyper write out what it holds before asking for the next event. Without that, hyper
/// gathers up to 16 ready frames into one write, and a client would see tokens that the
/// engine produced in separate steps arrive in one read.
#[derive(Debug)]
pub(crate) struct TokenStream {
    rx: Feed,
    enc: Encoder,
    plan: FaultPlan,
    chat: bool,
    include_usage: bool,
    role_sent: bool,
    /// Events to send, each marked when it carries the first token.
    pending: VecDeque<(Bytes, bool)>,
    /// When the handler had the whole request.
    received: Instant,
    /// When the first token's event was handed to the connection.
    first_sent: Option<Instant>,
    held: Option<Token>,
    stall: Option<Pin<Box<Sleep>>>,
    finished: bool,
    counted: bool,
    flush: bool,
    state: Arc<AppState>,
    _in_flight: InFlight,
}

impl TokenStream {
    pub(crate) fn new(
        rx: Feed,
        enc: Encoder,
        api: Api,
        plan: FaultPlan,
        include_usage: bool,
        state: Arc<AppState>,
        in_flight: InFlight,
    ) -> Self {
        TokenStream {
            rx,
            enc,
            plan,
            chat: api == Api::Chat,
            include_usage,
            role_sent: false,
            pending: VecDeque::new(),
            received: Instant::now(),
            first_sent: None,
            held: None,
            stall: None,
            finished: false,
            counted: false,
            flush: false,
            state,
            _in_flight: in_flight,
        }
    }

    /// Sets the instant the request was received (default: when the stream was made).
    pub(crate) fn received_at(mut self, at: Instant) -> Self {
        self.received = at;
        self
    }

    /// The engine's timings with `ttft_ms` measured on the wall clock: receipt of the request
    /// → first token event handed to the connection. So it includes the simulator's own
    /// HTTP handling and timer lateness, and a client's TTFT minus it is what the client and
    /// the loopback add. `queue_ms + prompt_ms` stays the engine's modelled TTFT.
    fn wire_timings(&self, mut t: Timings) -> Timings {
        if let Some(at) = self.first_sent {
            let d = at.saturating_duration_since(self.received);
            t.ttft_ms = (d.as_secs_f64() * 1e6).round() / 1000.0;
        }
        t
    }

    fn fail(&mut self, why: &'static str) -> Poll<Option<io::Result<Bytes>>> {
        self.finished = true;
        self.counted = true;
        bump(&self.state.stats.failed);
        Poll::Ready(Some(Err(io::Error::other(why))))
    }
}

impl Stream for TokenStream {
    type Item = io::Result<Bytes>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.flush {
            // A flush point between two events (see the type's documentation).
            this.flush = false;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        loop {
            if let Some((b, first)) = this.pending.pop_front() {
                if first {
                    this.first_sent = Some(Instant::now());
                }
                this.flush = true;
                return Poll::Ready(Some(Ok(b)));
            }
            if this.finished {
                return Poll::Ready(None);
            }
            if let Some(sleep) = this.stall.as_mut() {
                ready!(sleep.as_mut().poll(cx));
                this.stall = None;
            }
            let e = match this.held.take() {
                Some(e) => e,
                None => match ready!(this.rx.poll_next(cx)) {
                    Some(e) => e,
                    None => return this.fail("the engine stopped"),
                },
            };
            let last = e.finish.is_some();
            if fires(this.plan.disconnect_at, e.index, last) {
                bump(&this.state.stats.injected_disconnects);
                return this.fail("injected disconnect");
            }
            if fires(this.plan.stall_at, e.index, last) {
                this.plan.stall_at = None;
                bump(&this.state.stats.injected_stalls);
                this.stall = Some(Box::pin(tokio::time::sleep(this.plan.stall)));
                this.held = Some(e);
                continue;
            }
            if fires(this.plan.malformed_at, e.index, last) {
                this.plan.malformed_at = None;
                bump(&this.state.stats.injected_malformed);
                this.pending.push_back((this.enc.malformed_event(), false));
            }
            if this.chat && !this.role_sent {
                this.role_sent = true;
                this.pending.push_back((this.enc.role_event(), false));
            }
            let first = this.first_sent.is_none() && e.index == 0;
            match e.finish {
                None => {
                    let b = this.enc.token_event(e.index);
                    if this.pending.is_empty() {
                        if first {
                            this.first_sent = Some(Instant::now());
                        }
                        this.flush = true;
                        return Poll::Ready(Some(Ok(b)));
                    }
                    this.pending.push_back((b, first));
                }
                Some(mut f) => {
                    if first {
                        // a one-token answer: its only event is about to go out
                        this.first_sent = Some(Instant::now());
                    }
                    f.timings = this.wire_timings(f.timings);
                    this.pending
                        .push_back((this.enc.final_token_event(e.index, &f), false));
                    if this.include_usage {
                        this.pending
                            .push_back((this.enc.usage_event(&f.timings), false));
                    }
                    this.pending
                        .push_back((Bytes::from_static(DONE_EVENT), false));
                    this.finished = true;
                    this.counted = true;
                    this.state.served(f.timings.predicted_n);
                }
            }
        }
    }
}

impl Drop for TokenStream {
    fn drop(&mut self) {
        if !self.counted {
            // The client went away before the end.
            bump(&self.state.stats.failed);
        }
    }
}
