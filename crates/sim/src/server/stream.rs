//! The body of a streamed generation response: engine tokens in, SSE events out, with the
//! request's faults applied on the way.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use futures_util::Stream;
use tokio::time::{Instant, Sleep};

use super::AppState;
use super::dialect::{ChunkShape, Tok};
use super::encode::{DONE_EVENT, Encoder};
use super::faults::{FaultPlan, fires};
use super::stats::{InFlight, bump};
use super::text::TokenText;
use super::wire::Api;
use crate::engine::{Finish, Timings};
use crate::feed::{Feed, Token};

/// An SSE comment that keeps a silent stream alive.
const PING: &[u8] = b":\n\n";

/// How the events of a response are written.
#[derive(Debug)]
pub(crate) enum Wire {
    /// The simulator's own dialect (its fast encoder).
    Generic(Encoder),
    /// An engine personality's chunks.
    Dialect {
        shape: Box<dyn ChunkShape>,
        text: TokenText,
        scratch: String,
    },
}

impl Wire {
    pub(crate) fn dialect(shape: Box<dyn ChunkShape>, text: TokenText) -> Self {
        Wire::Dialect {
            shape,
            text,
            scratch: String::with_capacity(16),
        }
    }

    /// The response's token text.
    pub(crate) fn text(&self) -> &TokenText {
        match self {
            Wire::Generic(enc) => enc.text(),
            Wire::Dialect { text, .. } => text,
        }
    }

    /// Records the batch size of the step that made the watched token (`--batch-variance`).
    pub(crate) fn set_batch(&mut self, batch: u32) {
        match self {
            Wire::Generic(enc) => enc.set_batch(batch),
            Wire::Dialect { text, .. } => text.set_batch(batch),
        }
    }
}

/// How one stream behaves besides its tokens.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct StreamOpts {
    pub(crate) include_usage: bool,
    /// No token text at all until the end: only the finish (and usage) go out.
    pub(crate) held_back: bool,
    /// Send an SSE comment after this long without an event.
    pub(crate) ping: Option<Duration>,
    /// Log-probabilities asked for, with this many most likely tokens each.
    pub(crate) logprobs: Option<u32>,
}

/// One streamed response. Every token is its own SSE event, and every event is flushed on
/// its own: after yielding an event the stream answers `Pending` once (waking itself), which
/// makes hyper write out what it holds before asking for the next event. Without that, hyper
/// gathers up to 16 ready frames into one write, and a client would see tokens that the
/// engine produced in separate steps arrive in one read.
#[derive(Debug)]
pub(crate) struct TokenStream {
    rx: Feed,
    wire: Wire,
    plan: FaultPlan,
    chat: bool,
    opts: StreamOpts,
    opened: bool,
    role_sent: bool,
    /// Events to send, each marked when it carries the first token.
    pending: VecDeque<(Bytes, bool)>,
    /// When the handler had the whole request.
    received: Instant,
    /// When the first token's event was handed to the connection.
    first_sent: Option<Instant>,
    held: Option<Token>,
    stall: Option<Pin<Box<Sleep>>>,
    ping: Option<Pin<Box<Sleep>>>,
    finished: bool,
    counted: bool,
    flush: bool,
    state: Arc<AppState>,
    _in_flight: InFlight,
}

impl TokenStream {
    pub(crate) fn new(
        rx: Feed,
        wire: Wire,
        api: Api,
        plan: FaultPlan,
        opts: StreamOpts,
        state: Arc<AppState>,
        in_flight: InFlight,
    ) -> Self {
        TokenStream {
            rx,
            wire,
            plan,
            chat: api == Api::Chat,
            opts,
            opened: false,
            role_sent: false,
            pending: VecDeque::new(),
            received: Instant::now(),
            first_sent: None,
            held: None,
            stall: None,
            ping: opts.ping.map(|d| Box::pin(tokio::time::sleep(d))),
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

    /// Restarts the keep-alive timer: an event just went out.
    fn sent(&mut self) {
        if let (Some(ping), Some(d)) = (self.ping.as_mut(), self.opts.ping) {
            ping.as_mut().reset(Instant::now() + d);
        }
    }

    /// A broken event before token `index`.
    fn malformed(&mut self, index: u32) -> Bytes {
        match &mut self.wire {
            Wire::Generic(enc) => enc.malformed_event(),
            Wire::Dialect {
                shape,
                text,
                scratch,
            } => {
                scratch.clear();
                text.push(index, scratch);
                shape.malformed(&Tok {
                    index,
                    id: text.id(index),
                    text: scratch,
                    lp: None,
                })
            }
        }
    }

    /// Fails the generation as the engine does: its error events, the stream then ending,
    /// or (`None` from the dialect: TensorRT-LLM's chat) the connection cut.
    fn generation_error(&mut self) -> Option<Poll<Option<io::Result<Bytes>>>> {
        const WHY: &str = "injected fault: generation failed";
        let events = match &mut self.wire {
            Wire::Generic(_) => Some(super::dialect::chunk::error_events(WHY)),
            Wire::Dialect { shape, .. } => shape.failure(WHY),
        };
        let Some(events) = events else {
            return Some(self.fail("injected generation error, the connection cut"));
        };
        self.queue(events, false);
        self.finished = true;
        self.counted = true;
        bump(&self.state.stats.failed);
        None
    }

    /// The events of a token that is not the last.
    fn token_events(&mut self, index: u32, out: &mut Vec<Bytes>) {
        if self.opts.held_back {
            return;
        }
        match &mut self.wire {
            Wire::Generic(enc) => {
                if self.chat && !self.role_sent {
                    self.role_sent = true;
                    out.push(enc.role_event());
                }
                out.push(enc.token_event(index));
            }
            Wire::Dialect {
                shape,
                text,
                scratch,
            } => {
                scratch.clear();
                text.push(index, scratch);
                let lp = self.opts.logprobs.map(|k| text.logprobs(index, k));
                shape.token(
                    &Tok {
                        index,
                        id: text.id(index),
                        text: scratch,
                        lp: lp.as_ref(),
                    },
                    out,
                );
            }
        }
    }

    /// The events of the last token and of the end of the stream.
    fn last_events(&mut self, index: u32, f: &Finish, out: &mut Vec<Bytes>) {
        let held = self.opts.held_back;
        match &mut self.wire {
            Wire::Generic(enc) => {
                if self.chat && !self.role_sent {
                    self.role_sent = true;
                    out.push(enc.role_event());
                }
                out.push(if held {
                    enc.final_event("", false, f)
                } else {
                    enc.final_token_event(index, f)
                });
                if self.opts.include_usage {
                    out.push(enc.usage_event(&f.timings));
                }
                out.push(Bytes::from_static(DONE_EVENT));
            }
            Wire::Dialect {
                shape,
                text,
                scratch,
            } => {
                scratch.clear();
                text.push(index, scratch);
                let lp = self.opts.logprobs.map(|k| text.logprobs(index, k));
                let tok = Tok {
                    index,
                    id: text.id(index),
                    text: scratch,
                    lp: lp.as_ref(),
                };
                shape.last((!held).then_some(&tok), f, out);
            }
        }
    }

    fn queue(&mut self, events: Vec<Bytes>, first: bool) {
        let n = events.len();
        for (i, b) in events.into_iter().enumerate() {
            // The first token's event is the last one its token produced.
            self.pending.push_back((b, first && i + 1 == n));
        }
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
        if !this.opened {
            this.opened = true;
            if let Wire::Dialect { shape, .. } = &mut this.wire {
                let mut out = Vec::new();
                shape.opening(&mut out);
                this.queue(out, false);
            }
        }
        loop {
            if let Some((b, first)) = this.pending.pop_front() {
                if first {
                    this.first_sent = Some(Instant::now());
                }
                this.flush = true;
                this.sent();
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
                None => match this.rx.poll_next(cx) {
                    Poll::Ready(Some(e)) => e,
                    Poll::Ready(None) => return this.fail("the engine stopped"),
                    Poll::Pending => {
                        if let Some(ping) = this.ping.as_mut()
                            && ping.as_mut().poll(cx).is_ready()
                        {
                            this.pending.push_back((Bytes::from_static(PING), false));
                            continue;
                        }
                        return Poll::Pending;
                    }
                },
            };
            if let Some(batch) = e.batch {
                this.wire.set_batch(batch);
            }
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
            if fires(this.plan.error_at, e.index, last) {
                match this.generation_error() {
                    Some(cut) => return cut,
                    None => continue,
                }
            }
            if fires(this.plan.malformed_at, e.index, last) {
                this.plan.malformed_at = None;
                bump(&this.state.stats.injected_malformed);
                let b = this.malformed(e.index);
                this.pending.push_back((b, false));
            }
            let first = this.first_sent.is_none() && e.index == 0;
            let mut out = Vec::new();
            match e.finish {
                None => {
                    if let Wire::Generic(enc) = &mut this.wire
                        && this.pending.is_empty()
                        && !this.opts.held_back
                        && (this.role_sent || !this.chat)
                    {
                        // The hot path: one event, straight out.
                        let b = enc.token_event(e.index);
                        if first {
                            this.first_sent = Some(Instant::now());
                        }
                        this.flush = true;
                        this.sent();
                        return Poll::Ready(Some(Ok(b)));
                    }
                    this.token_events(e.index, &mut out);
                    this.queue(out, first);
                }
                Some(mut f) => {
                    if first {
                        // a one-token answer: its only events are about to go out
                        this.first_sent = Some(Instant::now());
                    }
                    f.timings = this.wire_timings(f.timings);
                    this.last_events(e.index, &f, &mut out);
                    this.queue(out, false);
                    this.finished = true;
                    this.counted = true;
                    this.state.served(&f);
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
