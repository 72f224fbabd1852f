//! `POST /v1/completions` and `POST /v1/chat/completions`.

use std::io;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Extension;
use axum::body::Body;
use axum::extract::rejection::BytesRejection;
use axum::extract::{ConnectInfo, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

use super::AppState;
use super::api_error::ApiError;
use super::arrival::Arrival;
use super::dialect::{self, Answer, Ctx, Owned};
use super::encode::Encoder;
use super::faults::FaultPlan;
use super::stats::bump;
use super::stream::{StreamOpts, TokenStream, Wire};
use super::text::{self, Greedy, TokenText};
use super::wire::{Api, GenRequest};
use crate::driver::Job;
use crate::rng::{mix3, salt, unit};

/// The connection's arrival record; absent when the router is served without it (tests).
type Conn = Option<Extension<ConnectInfo<Arrival>>>;

pub(crate) async fn completions(
    State(st): State<Arc<AppState>>,
    conn: Conn,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    generate(st, Api::Completions, arrived(conn), body).await
}

pub(crate) async fn chat_completions(
    State(st): State<Arc<AppState>>,
    conn: Conn,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    generate(st, Api::Chat, arrived(conn), body).await
}

/// When the request arrived: the kernel's stamp of the read that completed it, or now.
fn arrived(conn: Conn) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    conn.and_then(|Extension(ConnectInfo(a))| a.latest())
        .filter(|at| *at <= now)
        .unwrap_or(now)
}

/// A response whose body fails at once: the client sees the connection cut.
pub(crate) fn aborted(why: &'static str) -> Response {
    let body =
        futures_util::stream::once(async move { Err::<Bytes, io::Error>(io::Error::other(why)) });
    Response::new(Body::from_stream(body))
}

fn failure(st: &AppState, e: ApiError) -> Response {
    bump(&st.stats.failed);
    st.answered();
    e.into_response()
}

/// A refused request: the error response, or the personality's answer to a streamed
/// request it refuses (TGI: HTTP 200, an error event, `[DONE]`).
fn refused(st: &AppState, body: &[u8], e: ApiError) -> Response {
    match dialect::stream_refusal(st.dialect(), body, e) {
        Ok(resp) => {
            bump(&st.stats.failed);
            st.answered();
            resp
        }
        Err(e) => failure(st, e),
    }
}

async fn generate(
    st: Arc<AppState>,
    api: Api,
    received: tokio::time::Instant,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let n = st.next_request();
    bump(&st.stats.received);
    if st.exiting() {
        bump(&st.stats.failed);
        return aborted("the server is exiting");
    }
    let in_flight = st.stats.enter();
    if !st.serving() {
        return failure(&st, ApiError::not_ready());
    }
    let body = match body {
        Ok(b) => b,
        Err(e) => return failure(&st, ApiError::new(e.status(), e.body_text())),
    };
    st.record(&body);
    let req = match st.dialect().admit(api, &body, &st.served) {
        Ok(r) => r,
        Err(e) => return refused(&st, &body, e),
    };
    if let Some(e) = st.dialect().over_limit(st.stats.in_flight_now()) {
        return refused(&st, &body, e);
    }
    let plan = FaultPlan::draw(&st.config.faults, st.config.seed, n, req.max_tokens);
    if let Some(resp) = injected_error(&st, &plan) {
        return resp;
    }
    // Prompt ids are read once, for the prefix cache and a greedy text alike.
    let ids = if st.prefix_cache.is_some() || req.greedy {
        super::wire::prompt_ids(api, &body)
    } else {
        Vec::new()
    };
    let text = token_text(&st, &req, &ids, n);
    let reasoning = match api {
        Api::Chat => st.config.output.reasoning_tokens,
        Api::Completions => 0,
    };
    let wire = wire(&st, api, &req, n, text, reasoning);
    let cached_tokens = count_prompt(&st, &req, &ids, n);
    let rx = st
        .engine
        .submit(job(&req, n + 1, cached_tokens, text.variance_at()));
    if req.stream {
        let opts = stream_opts(&st, &req, n);
        let stream = TokenStream::new(rx, wire, api, plan, opts, Arc::clone(&st), in_flight)
            .received_at(received);
        return (
            [
                (header::CONTENT_TYPE, "text/event-stream"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            Body::from_stream(stream),
        )
            .into_response();
    }
    whole(st, wire, rx, plan, reasoning, req.logprobs).await
}

/// The injected HTTP error `plan` draws for the request, counted, if any.
fn injected_error(st: &AppState, plan: &FaultPlan) -> Option<Response> {
    match plan.http_error? {
        StatusCode::TOO_MANY_REQUESTS => {
            bump(&st.stats.injected_429);
            Some(failure(
                st,
                ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "injected fault: too many requests",
                ),
            ))
        }
        status => {
            bump(&st.stats.injected_500);
            Some(failure(
                st,
                ApiError::new(status, "injected fault: internal server error"),
            ))
        }
    }
}

/// The answer's tokens: greedy text from the model's identity and the prompt's `ids`
/// (`temperature: 0`), else sampled from the seed and the request number `n`.
fn token_text(st: &AppState, req: &GenRequest, ids: &[u32], n: u64) -> TokenText {
    if !req.greedy {
        return TokenText::sampled(mix3(st.config.seed, n, salt::TEXT));
    }
    let c = &st.config;
    let model = c.wire.model_path.as_deref().unwrap_or(&c.model);
    let answers = c.output.answers.as_ref();
    TokenText::greedy(&Greedy {
        identity: text::identity(model),
        prompt: text::prompt_hash(ids),
        max_tokens: req.max_tokens,
        numerics_change: c.output.numerics_change,
        batch_variance: c.output.batch_variance,
        answer: answers.and_then(|a| a.set.get(text::prompt_hash(ids))),
        answer_accuracy: answers.map_or(0.0, |a| a.accuracy),
    })
}

/// How the answer goes on the wire: the dialect's chunks, or the simulator's own encoder.
fn wire(
    st: &AppState,
    api: Api,
    req: &GenRequest,
    n: u64,
    text: TokenText,
    reasoning: u32,
) -> Wire {
    let d = st.dialect();
    let id = d.response_id(api, mix3(st.config.seed, n, salt::ID));
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let ctx = Ctx {
        api,
        id: id.clone(),
        created,
        model: d.chunk_model(req.model.as_deref(), &st.config.model),
        include_usage: req.include_usage,
        reasoning_tokens: reasoning,
        logprobs: req.logprobs.is_some(),
        tokens_as_ids: req.tokens_as_ids,
        token_ids: req.token_ids,
    };
    match d.shape(ctx, &st.served) {
        Some(shape) => Wire::dialect(shape, text),
        None => Wire::Generic(
            Encoder::new(api, id, created, &st.config.model, text)
                .with_reasoning(reasoning)
                .with_logprobs(req.logprobs),
        ),
    }
}

/// Counts the request's prompt (and its step scaling) in the stats, and looks its `ids` up
/// in the prefix cache: the tokens found there (`None`: no cache).
fn count_prompt(st: &AppState, req: &GenRequest, ids: &[u32], n: u64) -> Option<u32> {
    use std::sync::atomic::Ordering::Relaxed;
    if st
        .config
        .engine
        .step_scale_selects(st.config.repetition, n + 1)
    {
        bump(&st.stats.step_scaled);
    }
    let cached_tokens = st.prefix_cache.as_ref().map(|c| {
        let hit = c.lock().map_or(0, |mut c| c.lookup_insert(ids));
        st.stats.cached_tokens.fetch_add(u64::from(hit), Relaxed);
        hit
    });
    let prompt = u64::from(req.prompt_tokens);
    st.stats.prompt_tokens.fetch_add(prompt, Relaxed);
    st.stats.max_prompt_tokens.fetch_max(prompt, Relaxed);
    cached_tokens
}

/// A stream's options; whether its text is held back is drawn here (and counted).
fn stream_opts(st: &AppState, req: &GenRequest, n: u64) -> StreamOpts {
    let rate = st.config.wire.held_back_rate;
    let held_back = rate > 0.0 && unit(mix3(st.config.seed, n, salt::HELD_BACK)) < rate;
    if held_back {
        bump(&st.stats.held_back);
    }
    StreamOpts {
        include_usage: req.include_usage,
        held_back,
        ping: st.dialect().ping_interval(&st.served),
        logprobs: req.logprobs,
    }
}

/// The engine's job for request `number` (from 1).
fn job(r: &GenRequest, number: u64, cached_tokens: Option<u32>, watch: Option<u32>) -> Job {
    Job {
        prompt_tokens: r.prompt_tokens,
        max_tokens: r.max_tokens,
        min_tokens: r.min_tokens,
        ignore_eos: r.ignore_eos,
        number,
        cached_tokens,
        watch,
        priority: r.priority,
    }
}

/// A non-streamed response: wait for every token, then answer with one JSON body.
async fn whole(
    st: Arc<AppState>,
    wire: Wire,
    mut rx: crate::feed::Feed,
    plan: FaultPlan,
    reasoning_tokens: u32,
    logprobs: Option<u32>,
) -> Response {
    let mut wire = wire;
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut scored = Vec::new();
    let finish = loop {
        match rx.next().await {
            Some(e) => {
                if let Some(batch) = e.batch {
                    wire.set_batch(batch);
                }
                let out = if e.index < reasoning_tokens {
                    &mut reasoning
                } else {
                    &mut text
                };
                let t = wire.text();
                let from = out.len();
                t.push(e.index, out);
                if let Some(top) = logprobs {
                    scored.push(Owned {
                        id: t.id(e.index),
                        text: out[from..].to_owned(),
                        lp: t.logprobs(e.index, top),
                    });
                }
                if let Some(f) = e.finish {
                    break f;
                }
            }
            None => {
                bump(&st.stats.failed);
                return aborted("the engine stopped");
            }
        }
    };
    if plan.stall_at.is_some() {
        bump(&st.stats.injected_stalls);
        tokio::time::sleep(plan.stall).await;
    }
    if plan.disconnect_at.is_some() {
        bump(&st.stats.injected_disconnects);
        bump(&st.stats.failed);
        return aborted("injected disconnect");
    }
    let mut body = match &wire {
        Wire::Generic(enc) => enc.full_response(&reasoning, &text, &scored, &finish),
        Wire::Dialect { shape, .. } => shape.whole(
            &Answer {
                reasoning: &reasoning,
                content: &text,
                scored: &scored,
            },
            &finish,
        ),
    };
    if plan.malformed_at.is_some() {
        bump(&st.stats.injected_malformed);
        body.truncate(body.len() / 2);
    }
    st.served(&finish);
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}
