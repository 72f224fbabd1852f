//! `multi_turn` trials: conversations sent turn by turn (docs/workloads.md).
//!
//! A conversation's first turn is due at its arrival offset (the trial's schedule, one
//! arrival per conversation); each later turn is sent once the previous answer has fully
//! arrived and the think time has passed, with the whole history: every earlier user message
//! and the answer the server gave to it (collected from the stream), then the new message.
//! `max_concurrency` counts conversations: a conversation holds its permit from its first
//! send to its last answer, think times included, so at most that many conversations (and
//! so requests) are open at once. A turn that fails ends its conversation; the turns it never
//! sent are recorded as `not_sent`.
//!
//! Records are in (conversation, turn) order; `index` is that position, `prompt_index` the
//! conversation, and `turn` names both.

use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;
use tokio::sync::Semaphore;
use tokio::time::{Instant, sleep};

use super::{Limits, LoadError, TrialOutcome, execute_bounded, template};
use crate::dataset::{ChatMessage, Conversation, Conversations, Prompt, PromptBody};
use crate::loadgen::body::build_body;
use crate::loadgen::client::{Clock, Executor};
use crate::loadgen::config::{Arrival, LoadConfig, Target};
use crate::loadgen::schedule::arrival_offsets;
use servebench_result::metrics::{SummaryOptions, summarize};
use servebench_result::record::{ErrorKind, ReceiveStamps, RequestRecord, TurnRef};

/// Runs a trial's conversations: the warm-up ones (all due at once), then the measured ones
/// on the arrival schedule.
pub(super) async fn run_conversations<E: Executor>(
    exec: Arc<E>,
    target: &Target,
    cfg: &LoadConfig,
    convs: &Conversations,
) -> Result<TrialOutcome, LoadError> {
    let permits = cfg
        .max_concurrency
        .unwrap_or(Semaphore::MAX_PERMITS)
        .min(Semaphore::MAX_PERMITS);
    let gate = Arc::new(Semaphore::new(permits));
    let limits = Limits {
        timeout: cfg.request_timeout,
        trial_deadline: cfg.trial_deadline.map(|d| Instant::now() + d),
    };
    // Bodies are built as turns are reached; check the first turns up front.
    for (i, c) in convs.measured.iter().chain(&convs.warmup).enumerate() {
        if let Some(t) = c.turns.first() {
            build_body(target, cfg, &prompt(vec![user(&t.user)], t.max_tokens), i)?;
        }
    }
    let phase = ConvPhase {
        exec,
        target: target.clone(),
        cfg: cfg.clone(),
        gate,
        limits,
        think: convs.think_time,
    };
    let mut warmup_records = phase.run(&convs.warmup, &vec![0; convs.warmup.len()]).await;
    let offsets = arrival_offsets(&cfg.arrival, convs.measured.len(), cfg.seed)?;
    let stamps_before = phase.exec.receive_stamps();
    let started_at = OffsetDateTime::now_utc();
    let mut records = phase.run(&convs.measured, &offsets).await;
    let ended_at = OffsetDateTime::now_utc();
    crate::loadgen::reading::read_trial(cfg, target, &mut records, &mut warmup_records);
    let receive_stamps = phase.exec.receive_stamps().map(|after| {
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
            closed_loop: cfg.arrival == Arrival::Inf,
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

fn user(text: &str) -> ChatMessage {
    ChatMessage {
        role: "user".into(),
        content: text.to_owned(),
    }
}

fn prompt(history: Vec<ChatMessage>, max_tokens: u32) -> Prompt {
    Prompt {
        body: PromptBody::Messages(history),
        expected_input_tokens: None,
        input_tokens_exact: false,
        max_tokens,
        images: Vec::new(),
        parts: None,
    }
}

struct ConvPhase<E> {
    exec: Arc<E>,
    target: Target,
    cfg: LoadConfig,
    gate: Arc<Semaphore>,
    limits: Limits,
    think: Duration,
}

impl<E: Executor> ConvPhase<E> {
    /// Runs `convs`, conversation `c` due at `offsets[c]` (ns from the phase start).
    async fn run(&self, convs: &[Conversation], offsets: &[u64]) -> Vec<RequestRecord> {
        let clock = Clock::start();
        let mut tasks = tokio::task::JoinSet::new();
        for (c, (conv, &offset)) in convs.iter().zip(offsets).enumerate() {
            let exec = Arc::clone(&self.exec);
            let (target, cfg) = (self.target.clone(), self.cfg.clone());
            let gate = Arc::clone(&self.gate);
            let (limits, think, conv) = (self.limits, self.think, conv.clone());
            tasks.spawn(async move {
                let due = clock.origin() + Duration::from_nanos(offset);
                crate::loadgen::wait::until(due).await;
                let permit = gate.acquire_owned().await.ok();
                let recs =
                    conversation(&exec, &target, &cfg, &conv, c, offset, clock, limits, think)
                        .await;
                drop(permit);
                (c, recs)
            });
        }
        let mut by_conv: Vec<(usize, Vec<RequestRecord>)> = Vec::with_capacity(convs.len());
        while let Some(r) = tasks.join_next().await {
            if let Ok(r) = r {
                by_conv.push(r);
            }
        }
        by_conv.sort_by_key(|(c, _)| *c);
        let mut out: Vec<RequestRecord> = by_conv.into_iter().flat_map(|(_, r)| r).collect();
        for (i, r) in out.iter_mut().enumerate() {
            r.index = i as u32;
        }
        out
    }
}

/// One conversation, turn by turn; its records in turn order.
#[allow(clippy::too_many_arguments)]
async fn conversation<E: Executor>(
    exec: &Arc<E>,
    target: &Target,
    cfg: &LoadConfig,
    conv: &Conversation,
    c: usize,
    offset: u64,
    clock: Clock,
    limits: Limits,
    think: Duration,
) -> Vec<RequestRecord> {
    let mut history: Vec<ChatMessage> = Vec::new();
    let mut out = Vec::with_capacity(conv.turns.len());
    let mut ended: Option<String> = None;
    for (k, t) in conv.turns.iter().enumerate() {
        history.push(user(&t.user));
        let p = prompt(history.clone(), t.max_tokens);
        let mut rec = template(cfg, &p, c);
        rec.turn = Some(TurnRef {
            conversation: c as u32,
            turn: k as u32,
        });
        if let Some(why) = &ended {
            rec.intended_ns = clock.now_ns();
            rec.fail(ErrorKind::NotSent, why.clone());
            out.push(rec);
            continue;
        }
        if k > 0 && !think.is_zero() {
            sleep(think).await;
        }
        // Later turns are due when sent: only the first follows the arrival schedule.
        rec.intended_ns = if k == 0 { offset } else { clock.now_ns() };
        let body = match build_body(target, cfg, &p, c) {
            Ok(b) => b,
            Err(e) => {
                rec.fail(ErrorKind::Internal, e.to_string());
                ended = Some(format!("turn {k} could not be built"));
                out.push(rec);
                continue;
            }
        };
        rec.answer = Some(String::new());
        let mut rec = execute_bounded(exec, body, rec, clock, limits).await;
        let answer = rec.answer.take().unwrap_or_default();
        if rec.error.is_some() {
            ended = Some(format!("turn {k} of the conversation failed"));
        }
        history.push(ChatMessage {
            role: "assistant".into(),
            content: answer,
        });
        out.push(rec);
    }
    out
}
