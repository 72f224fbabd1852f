//! The engine model: a continuous-batching scheduler as a pure state machine on virtual time.
//!
//! [`Engine::advance`] is the whole model. Called at time `now` with what happened since the
//! last call, it (1) completes the step that was in flight, emitting one token to every
//! sequence in it whose prompt is done, (2) applies cancellations, (3) queues arrivals, and
//! (4) plans the next step, returning its duration (or `None` when there is nothing to do).
//! It reads no clock and spawns nothing, so tests drive it on virtual time; the tokio loop
//! in the crate's driver module calls it in real time.
//!
//! One step, as vLLM's V1 scheduler with chunked prefill:
//! * every running sequence whose prompt is done decodes one token (one unit of the
//!   `max_batched_tokens` budget each);
//! * the rest of the budget goes to prompt chunks of running sequences, in admission order;
//! * then waiting requests are admitted in FIFO order while a slot (`max_num_seqs`), KV room
//!   (a request reserves `prompt + max_tokens` tokens) and budget remain; a request that does
//!   not fit blocks those behind it;
//! * its duration is `(decode_base_ms + decode_per_seq_ms × decoding sequences +
//!   prefill_ms_per_token × prompt tokens in the step) × jitter × speed × drift ×
//!   repetition drift × step scale × time scale`, where the step scale applies when any
//!   sequence in the step (decoding or prefilling) is a request it selects;
//! * a sequence whose last prompt chunk is in a step gets its first token at the step's end.

mod noise;
mod types;

#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::time::Duration;

pub use types::{Arrival, Emission, Finish, FinishReason, Inputs, SeqId, Timings};

use crate::config::EngineParams;
use crate::rng::{mix3, salt, unit};
use noise::Noise;

#[derive(Debug, Clone)]
struct Seq {
    id: SeqId,
    arrived: Duration,
    admitted: Duration,
    first: Duration,
    prompt: u32,
    /// Prompt tokens taken from the prefix cache, never prefilled (`None`: no cache).
    cached: Option<u32>,
    prefilled: u32,
    generated: u32,
    stop_at: u32,
    max_tokens: u32,
    reserve: u64,
    /// Selected by `step_scale`: a step holding it is scaled.
    scaled: bool,
    done: bool,
}

impl Seq {
    fn finish(&self, now: Duration) -> Finish {
        // Milliseconds, rounded to the microsecond.
        let ms = |d: Duration| (d.as_secs_f64() * 1e6).round() / 1000.0;
        let predicted_ms = ms(now.saturating_sub(self.first));
        Finish {
            reason: if self.generated >= self.max_tokens {
                FinishReason::Length
            } else {
                FinishReason::Stop
            },
            timings: Timings {
                queue_ms: ms(self.admitted.saturating_sub(self.arrived)),
                prompt_n: self.prompt,
                prompt_ms: ms(self.first.saturating_sub(self.admitted)),
                ttft_ms: ms(self.first.saturating_sub(self.arrived)),
                predicted_n: self.generated,
                predicted_ms,
                predicted_per_token_ms: (self.generated >= 2).then(|| {
                    (predicted_ms / f64::from(self.generated - 1) * 1000.0).round() / 1000.0
                }),
                e2e_ms: ms(now.saturating_sub(self.arrived)),
                cached_n: self.cached,
            },
        }
    }
}

/// Work of one sequence in the step in flight.
#[derive(Debug, Clone, Copy)]
struct Work {
    /// Index into `running` (stable between planning and completion).
    idx: usize,
    /// Prompt tokens of this step; 0 for a decode.
    prefill: u32,
}

/// The engine state. See the module documentation for the model.
#[derive(Debug, Clone)]
pub struct Engine {
    params: EngineParams,
    seed: u64,
    repetition: u32,
    noise: Noise,
    waiting: VecDeque<Seq>,
    running: Vec<Seq>,
    kv_reserved: u64,
    batch: Vec<Work>,
    arrivals_seen: u64,
    steps: u64,
    prompt_tokens_done: u64,
    tokens_done: u64,
}

impl Engine {
    /// A new, idle engine of a server start at repetition 1. `seed` drives jitter, the speed
    /// factor and EOS positions.
    pub fn new(params: EngineParams, seed: u64) -> Self {
        Engine::at_repetition(params, seed, 1)
    }

    /// A new, idle engine of a server start at repetition `t` (from 1), which sets the
    /// `drift_per_repetition` factor and whether `step_scale` applies.
    pub fn at_repetition(params: EngineParams, seed: u64, t: u32) -> Self {
        Engine {
            noise: Noise::new(&params, seed, t),
            params,
            seed,
            repetition: t,
            waiting: VecDeque::new(),
            running: Vec::new(),
            kv_reserved: 0,
            batch: Vec::new(),
            arrivals_seen: 0,
            steps: 0,
            prompt_tokens_done: 0,
            tokens_done: 0,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &EngineParams {
        &self.params
    }

    /// This instance's speed factor, drawn from the seed (1.0 when `speed_cv` is 0).
    pub fn speed_factor(&self) -> f64 {
        self.noise.speed()
    }

    /// The repetition index t of this server start, from 1.
    pub fn repetition(&self) -> u32 {
        self.repetition
    }

    /// This server start's factor from `drift_per_repetition`: `1 + drift × (t − 1)`.
    pub fn repetition_factor(&self) -> f64 {
        self.noise.repetition()
    }

    /// Requests waiting for admission.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// Sequences admitted and not finished.
    pub fn running(&self) -> usize {
        self.running.len()
    }

    /// The ids of the sequences admitted and not finished.
    pub fn running_ids(&self) -> impl Iterator<Item = SeqId> + '_ {
        self.running.iter().map(|s| s.id)
    }

    /// The ids of the requests waiting for admission.
    pub fn waiting_ids(&self) -> impl Iterator<Item = SeqId> + '_ {
        self.waiting.iter().map(|s| s.id)
    }

    /// Sequences decoding in the step in flight (their prompt done).
    pub fn decoding(&self) -> usize {
        self.batch.iter().filter(|w| w.prefill == 0).count()
    }

    /// KV tokens reserved by running sequences.
    pub fn kv_reserved(&self) -> u64 {
        self.kv_reserved
    }

    /// Steps planned so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Prompt tokens prefilled in completed steps (prefix-cache hits excluded).
    pub fn prompt_tokens_done(&self) -> u64 {
        self.prompt_tokens_done
    }

    /// Tokens emitted so far.
    pub fn tokens_done(&self) -> u64 {
        self.tokens_done
    }

    /// True when a step is in flight (`advance` returned a duration and was not called since).
    pub fn busy(&self) -> bool {
        !self.batch.is_empty()
    }

    /// The step function; see the module documentation. `out` is cleared, then receives
    /// the tokens of the step that ends at `now`. `inputs` is drained. Returns the duration
    /// of the next step, or `None` when the engine is idle until the next arrival.
    pub fn advance(
        &mut self,
        now: Duration,
        inputs: &mut Inputs,
        out: &mut Vec<Emission>,
    ) -> Option<Duration> {
        out.clear();
        self.complete_step(now, out);
        if !inputs.cancellations.is_empty() {
            self.cancel(&inputs.cancellations);
            inputs.cancellations.clear();
        }
        for a in inputs.arrivals.drain(..) {
            let seq = self.new_seq(a);
            self.waiting.push_back(seq);
        }
        self.plan_step(now)
    }

    fn new_seq(&mut self, a: Arrival) -> Seq {
        let n = self.arrivals_seen;
        self.arrivals_seen += 1;
        self.noise.arrival(n);
        let prompt = a.prompt_tokens.max(1);
        let max_tokens = a.max_tokens.max(1);
        let m = self.params.eos_mean_tokens;
        let stop_at = if a.ignore_eos || m <= 0.0 {
            max_tokens
        } else {
            // Geometric on {1, 2, ...} with mean m (inverse transform).
            let u = unit(mix3(self.seed, n, salt::EOS));
            let eos = if m <= 1.0 {
                1.0
            } else {
                ((1.0 - u).ln() / (1.0 - 1.0 / m).ln()).ceil().max(1.0)
            };
            let eos = if eos >= f64::from(u32::MAX) {
                u32::MAX
            } else {
                eos as u32
            };
            eos.max(a.min_tokens).clamp(1, max_tokens)
        };
        let reserve =
            (u64::from(prompt) + u64::from(max_tokens)).min(self.params.kv_capacity_tokens);
        // Cached tokens skip prefill; the last prompt token is always computed (its logits
        // give the first output token), as in vLLM.
        let cached = a.cached_tokens.map(|c| c.min(prompt - 1));
        Seq {
            id: a.id,
            arrived: a.at,
            admitted: a.at,
            first: a.at,
            prompt,
            cached,
            prefilled: cached.unwrap_or(0),
            generated: 0,
            stop_at,
            max_tokens,
            reserve,
            scaled: self.params.step_scale_selects(self.repetition, a.number),
            done: false,
        }
    }

    fn complete_step(&mut self, now: Duration, out: &mut Vec<Emission>) {
        if self.batch.is_empty() {
            return;
        }
        let mut any_done = false;
        let batch = u32::try_from(self.batch.len()).unwrap_or(u32::MAX);
        for w in self.batch.drain(..) {
            let s = &mut self.running[w.idx];
            if w.prefill > 0 {
                self.prompt_tokens_done += u64::from(w.prefill);
                s.prefilled += w.prefill;
                if s.prefilled < s.prompt {
                    continue;
                }
                s.first = now;
            }
            let index = s.generated;
            s.generated += 1;
            self.tokens_done += 1;
            let finish = if s.generated >= s.stop_at {
                s.done = true;
                any_done = true;
                Some(s.finish(now))
            } else {
                None
            };
            out.push(Emission {
                seq: s.id,
                index,
                finish,
                batch,
            });
        }
        if any_done {
            let mut freed = 0;
            self.running.retain(|s| {
                if s.done {
                    freed += s.reserve;
                }
                !s.done
            });
            self.kv_reserved -= freed;
        }
    }

    fn cancel(&mut self, ids: &[SeqId]) {
        let mut freed = 0;
        self.running.retain(|s| {
            let gone = ids.contains(&s.id);
            if gone {
                freed += s.reserve;
            }
            !gone
        });
        self.kv_reserved -= freed;
        self.waiting.retain(|s| !ids.contains(&s.id));
    }

    fn plan_step(&mut self, now: Duration) -> Option<Duration> {
        let p = &self.params;
        let mut budget = p.max_batched_tokens;
        let mut decoding: u32 = 0;
        let mut prefill: u32 = 0;
        let mut scaled = false;
        for (idx, s) in self.running.iter().enumerate() {
            if s.prefilled >= s.prompt && budget > 0 {
                self.batch.push(Work { idx, prefill: 0 });
                decoding += 1;
                budget -= 1;
                scaled |= s.scaled;
            }
        }
        for (idx, s) in self.running.iter().enumerate() {
            if budget == 0 {
                break;
            }
            if s.prefilled < s.prompt {
                let chunk = (s.prompt - s.prefilled).min(budget);
                self.batch.push(Work {
                    idx,
                    prefill: chunk,
                });
                budget -= chunk;
                prefill += chunk;
                scaled |= s.scaled;
            }
        }
        while budget > 0 && self.running.len() < p.max_num_seqs as usize {
            let Some(head) = self.waiting.front() else {
                break;
            };
            if self.kv_reserved + head.reserve > p.kv_capacity_tokens {
                break;
            }
            let Some(mut s) = self.waiting.pop_front() else {
                break;
            };
            s.admitted = now;
            self.kv_reserved += s.reserve;
            let chunk = (s.prompt - s.prefilled).min(budget);
            self.batch.push(Work {
                idx: self.running.len(),
                prefill: chunk,
            });
            budget -= chunk;
            prefill += chunk;
            scaled |= s.scaled;
            self.running.push(s);
        }
        if self.batch.is_empty() {
            return None;
        }
        self.steps += 1;
        let ms = p.decode_base_ms
            + p.decode_per_seq_ms * f64::from(decoding)
            + p.prefill_ms_per_token * f64::from(prefill);
        Some(self.noise.scale(ms, now, scaled))
    }
}
