//! One trial: warm-up, then the measured requests on their arrival schedule, all under one
//! hard concurrency limit, each request bounded by its timeout and the trial's deadline.
//!
//! The limit is a semaphore. A request takes a permit *before* its send instant is recorded
//! and gives it back only after its response has been fully consumed or has failed (the
//! response is dropped first), so the number of requests in flight — on the client and on
//! the server — never exceeds `max_concurrency`, warm-up included.

mod conversation;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use time::OffsetDateTime;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, timeout_at};

use super::body::{BodyError, build_body, output_target};
use super::client::{ClientError, Clock, Executor, HttpClient};
use super::config::{ApiKind, Arrival, ConfigError, LoadConfig, Target, Transport};
use super::h1::LeanClient;
use super::schedule::arrival_offsets;
use crate::dataset::{Prompt, TrialPrompts};
use servebench_engines::TokenChunks;
use servebench_result::metrics::{SummaryOptions, TrialSummary, summarize};
use servebench_result::record::ReceiveStamps;
use servebench_result::record::{ErrorKind, RequestRecord};

/// What a trial produced: raw records (measured and warm-up) and the summary derived from
/// the measured ones.
#[derive(Debug, Clone)]
pub struct TrialOutcome {
    /// Measured requests, in send order (`index`), instants relative to the measured
    /// phase's start.
    pub records: Vec<RequestRecord>,
    /// Warm-up requests, instants relative to the warm-up's start; excluded from metrics.
    pub warmup_records: Vec<RequestRecord>,
    /// The trial's metrics, from `records`.
    pub summary: TrialSummary,
    /// Wall-clock start and end of the measured phase (UTC).
    pub started_at: OffsetDateTime,
    /// End of the measured phase (UTC).
    pub ended_at: OffsetDateTime,
    /// How the measured phase's reads were dated, where the executor says.
    pub receive_stamps: Option<ReceiveStamps>,
}

/// A trial that could not be run (request failures are not errors: they are data in the
/// records).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The load configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A prompt cannot be sent to this API.
    #[error(transparent)]
    Body(#[from] BodyError),
    /// The HTTP client could not be set up.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// Fewer prompts than measured requests.
    #[error("the trial needs {needed} prompts but was given {got}")]
    NotEnoughPrompts {
        /// Prompts the trial needs.
        needed: usize,
        /// Prompts given.
        got: usize,
    },
    /// Warm-up requests without warm-up prompts.
    #[error("{needed} warm-up requests were asked for but no warm-up prompt was given")]
    NoWarmupPrompts {
        /// Warm-up requests asked for.
        needed: usize,
    },
}

/// Runs one trial against `target` over HTTP (client per `cfg.transport`) and summarises it.
/// An `https://` target whose certificate does not verify is refused before the first
/// request ([`crate::tls::check`]).
pub async fn run_trial(
    target: &Target,
    cfg: &LoadConfig,
    prompts: &TrialPrompts,
) -> Result<TrialOutcome, LoadError> {
    crate::tls::check(&target.base_url, target.ca_file.as_deref())
        .await
        .map_err(ClientError::Tls)?;
    let chunks = cfg
        .engine
        .map_or(TokenChunks::OPENAI, |e| e.stream.token_chunks)
        .api(target.api == ApiKind::Chat);
    match cfg.transport {
        Transport::Lean => {
            let client = LeanClient::new(target).await?.with_token_chunks(chunks);
            let client = Arc::new(client.with_kernel_stamps(cfg.kernel_receive_stamps));
            run_trial_with(client, target, cfg, prompts).await
        }
        Transport::Reqwest => {
            let client = Arc::new(HttpClient::new(target)?.with_token_chunks(chunks));
            run_trial_with(client, target, cfg, prompts).await
        }
    }
}

/// [`run_trial`] through any [`Executor`] (tests use scripted ones).
pub async fn run_trial_with<E: Executor>(
    exec: Arc<E>,
    target: &Target,
    cfg: &LoadConfig,
    prompts: &TrialPrompts,
) -> Result<TrialOutcome, LoadError> {
    cfg.validate()?;
    if let Some(convs) = &prompts.conversations {
        return conversation::run_conversations(exec, target, cfg, convs).await;
    }
    // A replayed trace brings its own send times: one request per time.
    let (requests, offsets) = match &prompts.send_offsets_ns {
        Some(o) => (o.len(), o.clone()),
        None => (
            cfg.requests,
            arrival_offsets(&cfg.arrival, cfg.requests, cfg.seed)?,
        ),
    };
    if prompts.measured.len() < requests {
        return Err(LoadError::NotEnoughPrompts {
            needed: requests,
            got: prompts.measured.len(),
        });
    }
    if cfg.warmup_requests > 0 && prompts.warmup.is_empty() {
        return Err(LoadError::NoWarmupPrompts {
            needed: cfg.warmup_requests,
        });
    }
    let measured = prepare(target, cfg, prompts.measured.iter().take(requests))?;
    let warmup = prepare(
        target,
        cfg,
        prompts.warmup.iter().cycle().take(cfg.warmup_requests),
    )?;

    let permits = cfg
        .max_concurrency
        .unwrap_or(Semaphore::MAX_PERMITS)
        .min(Semaphore::MAX_PERMITS);
    let gate = Arc::new(Semaphore::new(permits));
    let deadline = cfg.trial_deadline.map(|d| Instant::now() + d);
    let phase = Phase {
        gate,
        deadline,
        request_timeout: cfg.request_timeout,
    };

    let mut warmup_records = phase
        .run(&exec, warmup, &vec![0; cfg.warmup_requests])
        .await;
    let stamps_before = exec.receive_stamps();
    let started_at = OffsetDateTime::now_utc();
    let mut records = phase.run(&exec, measured, &offsets).await;
    let ended_at = OffsetDateTime::now_utc();
    super::reading::read_trial(cfg, target, &mut records, &mut warmup_records);
    let receive_stamps = exec.receive_stamps().map(|after| {
        let before = stamps_before.unwrap_or_default();
        ReceiveStamps {
            kernel: after.kernel.saturating_sub(before.kernel),
            clock: after.clock.saturating_sub(before.clock),
        }
    });
    let summary = summarize(
        &records,
        &SummaryOptions {
            max_concurrency: cfg.max_concurrency,
            closed_loop: cfg.arrival == Arrival::Inf && prompts.send_offsets_ns.is_none(),
            slo: cfg.slo,
        },
    );
    Ok(TrialOutcome {
        records,
        warmup_records,
        summary,
        started_at,
        ended_at,
        receive_stamps,
    })
}

/// The record fields of `p` known before it is sent (`index` and `prompt_index` = `i`).
pub(super) fn template(cfg: &LoadConfig, p: &Prompt, i: usize) -> RequestRecord {
    RequestRecord {
        index: i as u32,
        prompt_index: i as u32,
        max_tokens: p.max_tokens,
        output_target: output_target(cfg, p),
        expected_input_tokens: p.expected_input_tokens,
        input_tokens_exact: p.input_tokens_exact,
        images: p.images.len() as u32,
        ..RequestRecord::default()
    }
}

/// A request ready to send: its body and the record fields known in advance.
struct Prepared {
    body: Bytes,
    template: RequestRecord,
}

fn prepare<'a>(
    target: &Target,
    cfg: &LoadConfig,
    prompts: impl Iterator<Item = &'a Prompt>,
) -> Result<Vec<Prepared>, BodyError> {
    prompts
        .enumerate()
        .map(|(i, p)| {
            let body = build_body(target, cfg, p, i)?;
            let template = template(cfg, p, i);
            Ok(Prepared { body, template })
        })
        .collect()
}

struct Phase {
    gate: Arc<Semaphore>,
    deadline: Option<Instant>,
    request_timeout: Duration,
}

impl Phase {
    /// Sends `reqs` at `offsets` (ns from the phase start) and waits for all of them.
    async fn run<E: Executor>(
        &self,
        exec: &Arc<E>,
        reqs: Vec<Prepared>,
        offsets: &[u64],
    ) -> Vec<RequestRecord> {
        let clock = Clock::start();
        let mut handles = Vec::with_capacity(reqs.len());
        // If the trial itself is dropped (the runner was interrupted), its requests stop too.
        let mut abort = AbortOnDrop(Vec::with_capacity(reqs.len()));
        let mut unsent = Vec::new();
        let mut reqs = reqs.into_iter().zip(offsets);
        for (req, &offset) in reqs.by_ref() {
            let mut rec = req.template;
            rec.intended_ns = offset;
            let due = clock.origin() + Duration::from_nanos(offset);
            let Some(permit) = self.admit(due).await else {
                rec.fail(
                    ErrorKind::NotSent,
                    "trial deadline passed before the request's turn",
                );
                unsent.push(rec);
                break;
            };
            let task = request_task(exec.clone(), req.body, rec, clock, self.limits(), permit);
            let handle = tokio::spawn(task);
            abort.0.push(handle.abort_handle());
            handles.push((offset, handle));
        }
        for (req, &offset) in reqs {
            let mut rec = req.template;
            rec.intended_ns = offset;
            rec.fail(
                ErrorKind::NotSent,
                "trial deadline passed before the request's turn",
            );
            unsent.push(rec);
        }
        let mut out = Vec::with_capacity(handles.len() + unsent.len());
        for (i, (offset, h)) in handles.into_iter().enumerate() {
            out.push(h.await.unwrap_or_else(|e| {
                let mut rec = RequestRecord {
                    index: i as u32,
                    prompt_index: i as u32,
                    ..Default::default()
                };
                rec.intended_ns = offset;
                rec.fail(ErrorKind::Internal, format!("request task failed: {e}"));
                rec
            }));
        }
        out.extend(unsent);
        out
    }

    /// Waits for the request's due instant, then for a permit; `None` if the trial deadline
    /// passes first.
    async fn admit(&self, due: Instant) -> Option<OwnedSemaphorePermit> {
        let gate = async {
            super::wait::until(due).await;
            self.gate.clone().acquire_owned().await.ok()
        };
        match self.deadline {
            Some(d) => timeout_at(d, gate).await.ok().flatten(),
            None => gate.await,
        }
    }

    fn limits(&self) -> Limits {
        Limits {
            timeout: self.request_timeout,
            trial_deadline: self.deadline,
        }
    }
}

/// Aborts the request tasks still running when dropped.
struct AbortOnDrop(Vec<tokio::task::AbortHandle>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        for h in &self.0 {
            h.abort();
        }
    }
}

/// The bounds of one request: its own timeout and the trial's deadline.
#[derive(Clone, Copy)]
pub(super) struct Limits {
    pub(super) timeout: Duration,
    pub(super) trial_deadline: Option<Instant>,
}

async fn request_task<E: Executor>(
    exec: Arc<E>,
    body: Bytes,
    rec: RequestRecord,
    clock: Clock,
    limits: Limits,
    permit: OwnedSemaphorePermit,
) -> RequestRecord {
    let rec = execute_bounded(&exec, body, rec, clock, limits).await;
    drop(permit);
    rec
}

/// Sends one request and reads its response, cut at its timeout or the trial's deadline
/// (the request future, with its response and connection, is dropped before returning).
pub(super) async fn execute_bounded<E: Executor>(
    exec: &Arc<E>,
    body: Bytes,
    mut rec: RequestRecord,
    clock: Clock,
    limits: Limits,
) -> RequestRecord {
    // Room for every token event, reserved before the send so the token path never grows
    // the vector (capped: a huge max_tokens must not reserve memory for all requests).
    // Reserved before the timeout's clock starts, so that clock starts as near the send as
    // the executor allows.
    rec.events
        .reserve(rec.max_tokens.min(MAX_EVENT_RESERVE) as usize + 1);
    let own = Instant::now() + limits.timeout;
    let (deadline, kind) = match limits.trial_deadline {
        Some(d) if d < own => (d, ErrorKind::TrialDeadline),
        _ => (own, ErrorKind::Timeout),
    };
    let finished = timeout_at(deadline, exec.execute(body, &mut rec, clock))
        .await
        .is_ok();
    // The request future (and with it the response and its connection) is dropped here,
    // before the permit.
    if !finished {
        rec.end_ns = Some(clock.now_ns());
        let msg = match kind {
            ErrorKind::TrialDeadline => "cut by the trial deadline".to_owned(),
            _ => format!("no complete response within {:?}", limits.timeout),
        };
        rec.fail(kind, msg);
    }
    rec.events.shrink_to_fit();
    rec
}

/// Largest per-request reservation of token events.
const MAX_EVENT_RESERVE: u32 = 8192;
