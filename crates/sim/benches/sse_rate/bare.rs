//! The reference: a bare axum server that streams the same SSE token events as the
//! simulator (built by the same encoder), each flushed on its own as the simulator does,
//! with no engine, no channels and no scheduling.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::Router;
use axum::body::Body;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::serve::ListenerExt;
use bytes::Bytes;
use futures_util::Stream;
use futures_util::stream::{self, StreamExt};
use servebench_sim::CompletionChunkEncoder;

/// Yields the inner stream's items with a flush point (one `Pending`, self-woken) after
/// each, so hyper writes every event out before it asks for the next: the same rule as the
/// simulator's token stream.
struct FlushEach<S> {
    inner: S,
    flush: bool,
}

impl<S: Stream + Unpin> Stream for FlushEach<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        if self.flush {
            self.flush = false;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let item = Pin::new(&mut self.inner).poll_next(cx);
        if matches!(item, Poll::Ready(Some(_))) {
            self.flush = true;
        }
        item
    }
}

async fn completions(body: Bytes) -> Response {
    let req: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let n = req["max_tokens"]
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(16);
    let mut enc = CompletionChunkEncoder::new("cmpl-bare", "sim-model", 1);
    let events = stream::iter(0..n)
        .map(move |i| Ok::<_, Infallible>(enc.token_event(i)))
        .chain(stream::iter([Ok(CompletionChunkEncoder::done_event())]));
    let events = FlushEach {
        inner: events,
        flush: false,
    };
    (
        [(header::CONTENT_TYPE, "text/event-stream")],
        Body::from_stream(events),
    )
        .into_response()
}

/// Serves forever on 127.0.0.1:0, printing the bound address first.
pub(crate) async fn serve() -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("{}", listener.local_addr()?);
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(
        listener,
        Router::new().route("/v1/completions", post(completions)),
    )
    .await
}
