//! Runs the pure [`Engine`] in real time on tokio.
//!
//! The loop keeps a virtual timeline: a step planned at `now` with duration `d` ends at
//! exactly `now + d`, whatever the timer's lateness, so lateness does not accumulate and
//! mean per-token times match the model. Only when the loop falls far behind (a stalled
//! host) does it resynchronise with the wall clock. Arrivals that come during a step are
//! seen at its end, as in a real engine. In zero-delay mode steps take no time and the
//! loop yields to the runtime every few steps so the HTTP side can drain the tokens.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::config::EngineParams;
use crate::engine::{Arrival, Emission, Engine, Inputs, SeqId};
use crate::feed::{Feed, FeedTx, watching};

/// Lateness beyond which the virtual clock jumps to the wall clock.
const RESYNC_AFTER: Duration = Duration::from_millis(50);
/// Zero-delay steps run between two yields to the runtime.
const ZERO_DELAY_STEPS_PER_YIELD: u32 = 16;
/// In zero-delay mode, how often (in steps, a power of two) to look for streams whose
/// client left.
const ZERO_DELAY_SWEEP_EVERY: u64 = 64;

/// A generation request handed to the engine.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Job {
    pub prompt_tokens: u32,
    pub max_tokens: u32,
    pub min_tokens: u32,
    pub ignore_eos: bool,
    /// The request's number on this server, from 1, in arrival order.
    pub number: u64,
    /// Leading prompt tokens found in the prefix cache (`None`: no cache).
    pub cached_tokens: Option<u32>,
    /// The output position whose step's batch size the response wants.
    pub watch: Option<u32>,
    /// Its scheduling priority, where the server counts requests by priority (SGLang's
    /// `--enable-priority-scheduling`); it changes no scheduling.
    pub priority: Option<i64>,
}

#[derive(Debug)]
struct Submission {
    id: SeqId,
    at: Instant,
    job: Job,
    tx: FeedTx,
}

/// The engine's state after its last step, for the metrics endpoints.
#[derive(Debug, Default)]
pub(crate) struct EngineGauges {
    /// Sequences admitted and not finished.
    pub(crate) running: AtomicU64,
    /// Requests waiting for admission.
    pub(crate) waiting: AtomicU64,
    /// KV tokens reserved by running sequences.
    pub(crate) kv_reserved: AtomicU64,
    /// Sequences decoding in the last step.
    pub(crate) decoding: AtomicU64,
    /// Prompt tokens prefilled so far.
    pub(crate) prompt_tokens: AtomicU64,
    /// Tokens generated so far.
    pub(crate) tokens: AtomicU64,
    /// Steps planned so far.
    pub(crate) steps: AtomicU64,
    /// Running and waiting requests by priority, every priority seen so far (0 when none is
    /// left), where requests carry one.
    pub(crate) by_priority: std::sync::Mutex<BTreeMap<i64, (u64, u64)>>,
}

impl EngineGauges {
    fn publish(&self, e: &Engine) {
        let set = |a: &AtomicU64, v: u64| a.store(v, Ordering::Relaxed);
        set(&self.running, e.running() as u64);
        set(&self.waiting, e.waiting() as u64);
        set(&self.kv_reserved, e.kv_reserved());
        set(&self.decoding, e.decoding() as u64);
        set(&self.prompt_tokens, e.prompt_tokens_done());
        set(&self.tokens, e.tokens_done());
        set(&self.steps, e.steps());
    }

    /// Counts the running and waiting requests of each priority in `priorities`.
    fn publish_priorities(&self, e: &Engine, priorities: &HashMap<SeqId, i64>) {
        let Ok(mut by) = self.by_priority.lock() else {
            return;
        };
        for v in by.values_mut() {
            *v = (0, 0);
        }
        for id in e.running_ids() {
            if let Some(&p) = priorities.get(&id) {
                by.entry(p).or_default().0 += 1;
            }
        }
        for id in e.waiting_ids() {
            if let Some(&p) = priorities.get(&id) {
                by.entry(p).or_default().1 += 1;
            }
        }
    }

    /// (priority, running, waiting) of every priority seen, in order.
    pub(crate) fn priorities(&self) -> Vec<(i64, u64, u64)> {
        self.by_priority
            .lock()
            .map(|by| by.iter().map(|(&p, &(r, w))| (p, r, w)).collect())
            .unwrap_or_default()
    }

    /// (running, waiting, KV tokens reserved) now.
    pub(crate) fn load(&self) -> (u64, u64, u64) {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        (
            get(&self.running),
            get(&self.waiting),
            get(&self.kv_reserved),
        )
    }
}

/// The request side of a running engine; cheap to share.
#[derive(Debug)]
pub(crate) struct EngineHandle {
    tx: UnboundedSender<Submission>,
    next_id: std::sync::atomic::AtomicU64,
    /// The engine's state after its last step.
    pub(crate) gauges: Arc<EngineGauges>,
}

impl EngineHandle {
    /// Queues a request; its tokens arrive on the returned feed, the last one carrying the
    /// finish. The feed ending without a finish means the engine stopped.
    pub(crate) fn submit(&self, job: Job) -> Feed {
        let (tx, rx) = watching(job.watch);
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let submission = Submission {
            id,
            at: Instant::now(),
            job,
            tx,
        };
        if let Err(mpsc::error::SendError(s)) = self.tx.send(submission) {
            s.tx.abort();
        }
        rx
    }
}

/// Starts the engine loop of a server start at repetition `repetition` (from 1). It stops
/// when `kill` is cancelled (dropping every stream) or when every [`EngineHandle`] is gone
/// and no sequence is left.
pub(crate) fn start(
    params: EngineParams,
    seed: u64,
    repetition: u32,
    kill: CancellationToken,
) -> (EngineHandle, f64, JoinHandle<()>) {
    let engine = Engine::at_repetition(params, seed, repetition);
    let speed = engine.speed_factor();
    let (tx, rx) = mpsc::unbounded_channel();
    let gauges = Arc::new(EngineGauges::default());
    let task = tokio::spawn(drive(engine, rx, kill, Arc::clone(&gauges)));
    (
        EngineHandle {
            tx,
            next_id: 0.into(),
            gauges,
        },
        speed,
        task,
    )
}

/// Identity hasher for the integer sequence ids.
#[derive(Debug, Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The live sequences' feeds. Whatever way the loop ends (return, or the task dropped), the
/// feeds left are aborted, so their responses end instead of waiting forever.
#[derive(Debug, Default)]
struct Senders(HashMap<SeqId, FeedTx, BuildHasherDefault<IdHasher>>);

impl Drop for Senders {
    fn drop(&mut self) {
        for tx in self.0.values() {
            tx.abort();
        }
    }
}

async fn drive(
    mut engine: Engine,
    mut rx: UnboundedReceiver<Submission>,
    kill: CancellationToken,
    gauges: Arc<EngineGauges>,
) {
    let epoch = Instant::now();
    let mut senders = Senders::default();
    let mut priorities: HashMap<SeqId, i64> = HashMap::new();
    let mut had_priorities = false;
    let mut inputs = Inputs::default();
    let mut out: Vec<Emission> = Vec::new();
    let mut now = Duration::ZERO;
    let mut step: Option<Duration> = None;
    let mut zero_steps = 0u32;
    let mut open = true;
    loop {
        match step {
            None => {
                if !open {
                    return;
                }
                tokio::select! {
                    biased;
                    () = kill.cancelled() => return,
                    s = rx.recv() => match s {
                        Some(s) => accept(s, epoch, &mut senders, &mut priorities, &mut inputs),
                        None => return,
                    },
                }
                now = epoch.elapsed();
            }
            Some(d) if d.is_zero() => {
                zero_steps += 1;
                if zero_steps >= ZERO_DELAY_STEPS_PER_YIELD {
                    zero_steps = 0;
                    tokio::task::yield_now().await;
                    if kill.is_cancelled() {
                        return;
                    }
                    now = epoch.elapsed();
                }
            }
            Some(d) => {
                let deadline = now + d;
                tokio::select! {
                    biased;
                    () = kill.cancelled() => return,
                    () = tokio::time::sleep_until(epoch + deadline) => {}
                }
                let actual = epoch.elapsed();
                now = if actual > deadline + RESYNC_AFTER {
                    actual
                } else {
                    deadline
                };
            }
        }
        while open {
            match rx.try_recv() {
                Ok(s) => accept(s, epoch, &mut senders, &mut priorities, &mut inputs),
                Err(mpsc::error::TryRecvError::Empty) => break,
                Err(mpsc::error::TryRecvError::Disconnected) => open = false,
            }
        }
        let zero = step.is_some_and(|d| d.is_zero());
        if !zero || engine.steps() & (ZERO_DELAY_SWEEP_EVERY - 1) == 0 {
            for (&id, tx) in &senders.0 {
                if tx.is_closed() {
                    inputs.cancellations.push(id);
                }
            }
            for id in &inputs.cancellations {
                senders.0.remove(id);
                priorities.remove(id);
            }
        }
        step = engine.advance(now, &mut inputs, &mut out);
        gauges.publish(&engine);
        for e in &out {
            let Some(tx) = senders.0.get(&e.seq) else {
                continue;
            };
            tx.publish(e);
            if e.finish.is_some() {
                senders.0.remove(&e.seq);
                priorities.remove(&e.seq);
            }
        }
        if !priorities.is_empty() || had_priorities {
            gauges.publish_priorities(&engine, &priorities);
            had_priorities = !priorities.is_empty();
        }
    }
}

fn accept(
    s: Submission,
    epoch: Instant,
    senders: &mut Senders,
    priorities: &mut HashMap<SeqId, i64>,
    inputs: &mut Inputs,
) {
    if let Some(p) = s.job.priority {
        priorities.insert(s.id, p);
    }
    inputs.arrivals.push(Arrival {
        id: s.id,
        at: s.at.saturating_duration_since(epoch),
        prompt_tokens: s.job.prompt_tokens,
        max_tokens: s.job.max_tokens,
        min_tokens: s.job.min_tokens,
        ignore_eos: s.job.ignore_eos,
        number: s.job.number,
        cached_tokens: s.job.cached_tokens,
    });
    senders.0.insert(s.id, s.tx);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Preset;

    #[tokio::test(start_paused = true)]
    async fn real_time_loop_follows_the_model_exactly_on_a_paused_clock() {
        let mut p = Preset::Tiny.engine();
        p.prefill_ms_per_token = 0.5;
        let kill = CancellationToken::new();
        let (h, speed, task) = start(p, 0, 1, kill.clone());
        assert_eq!(speed, 1.0);
        let t0 = tokio::time::Instant::now();
        let mut rx = h.submit(Job {
            prompt_tokens: 10,
            max_tokens: 4,
            min_tokens: 0,
            ignore_eos: true,
            number: 1,
            cached_tokens: None,
            watch: None,
            priority: None,
        });
        let mut times = Vec::new();
        while let Some(e) = rx.next().await {
            times.push(t0.elapsed());
            if let Some(f) = e.finish {
                assert_eq!(f.timings.predicted_n, 4);
                break;
            }
        }
        // Prefill: 5 + 10 × 0.5 = 10 ms; decodes: 5 + 1 = 6 ms.
        let ms: Vec<u128> = times.iter().map(|d| d.as_millis()).collect();
        assert_eq!(ms, vec![10, 16, 22, 28]);
        drop(h);
        task.await.unwrap_or_else(|e| panic!("{e}"));
    }

    #[tokio::test(start_paused = true)]
    async fn kill_drops_every_stream() {
        let kill = CancellationToken::new();
        let (h, _, task) = start(Preset::Tiny.engine(), 0, 1, kill.clone());
        let mut rx = h.submit(Job {
            prompt_tokens: 10,
            max_tokens: 1000,
            min_tokens: 0,
            ignore_eos: true,
            number: 1,
            cached_tokens: None,
            watch: None,
            priority: None,
        });
        assert!(rx.next().await.is_some());
        kill.cancel();
        let mut last = None;
        while let Some(e) = rx.next().await {
            last = Some(e);
        }
        assert!(
            last.is_none_or(|e| e.finish.is_none()),
            "closed without a finish"
        );
        task.await.unwrap_or_else(|e| panic!("{e}"));
    }
}
