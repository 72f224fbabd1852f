//! The engine on virtual time: exact checks of the model's arithmetic.

use std::collections::BTreeMap;
use std::time::Duration;

use super::*;
use crate::config::{Preset, RequestRange};

fn ms(x: f64) -> Duration {
    Duration::from_secs_f64(x / 1000.0)
}

fn params() -> EngineParams {
    EngineParams {
        max_num_seqs: 8,
        kv_capacity_tokens: 100_000,
        max_batched_tokens: 256,
        max_model_len: 4096,
        prefill_ms_per_token: 0.1,
        decode_base_ms: 10.0,
        decode_per_seq_ms: 1.0,
        jitter_cv: 0.0,
        speed_cv: 0.0,
        trial_cv: 0.0,
        trial_requests: 0,
        drift_per_min: 0.0,
        drift_per_repetition: 0.0,
        step_scale: 1.0,
        step_scale_repetitions: None,
        step_scale_requests: None,
        time_scale: 1.0,
        host_speed: 1.0,
        eos_mean_tokens: 0.0,
        default_max_tokens: 16,
    }
}

fn arrival(id: SeqId, at_ms: f64, prompt: u32, max: u32) -> Arrival {
    Arrival {
        id,
        at: ms(at_ms),
        prompt_tokens: prompt,
        max_tokens: max,
        min_tokens: 0,
        ignore_eos: true,
        number: id + 1,
        cached_tokens: None,
    }
}

type Trace = BTreeMap<SeqId, Vec<(Duration, Emission)>>;

/// Drives the engine the way the real-time driver does: arrivals are seen at the next step
/// boundary, or immediately when the engine is idle.
fn run(engine: &mut Engine, mut pending: Vec<Arrival>) -> Trace {
    pending.sort_by_key(|a| a.at);
    let mut pending: std::collections::VecDeque<_> = pending.into();
    let mut trace = Trace::new();
    let mut inputs = Inputs::default();
    let mut out = Vec::new();
    let mut step: Option<Duration> = None;
    let mut t = Duration::ZERO;
    for _ in 0..1_000_000 {
        let now = match (step, pending.front()) {
            (Some(d), _) => t + d,
            (None, Some(a)) => a.at.max(t),
            (None, None) => return trace,
        };
        while pending.front().is_some_and(|a| a.at <= now) {
            inputs.arrivals.extend(pending.pop_front());
        }
        step = engine.advance(now, &mut inputs, &mut out);
        for e in &out {
            trace.entry(e.seq).or_default().push((now, *e));
        }
        t = now;
    }
    panic!("engine did not go idle");
}

fn finish(trace: &Trace, id: SeqId) -> Finish {
    trace[&id]
        .last()
        .and_then(|(_, e)| e.finish)
        .unwrap_or_else(|| panic!("seq {id} unfinished"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

#[test]
fn single_request_matches_the_formula() {
    let mut e = Engine::new(params(), 0);
    let trace = run(&mut e, vec![arrival(1, 5.0, 100, 20)]);
    let events = &trace[&1];
    assert_eq!(events.len(), 20);
    // Prefill step: base + 100 × 0.1 = 20 ms; decode steps: base + 1 × per_seq = 11 ms.
    assert_eq!(events[0].0, ms(25.0));
    for w in events.windows(2) {
        assert_eq!(w[1].0 - w[0].0, ms(11.0));
    }
    let f = finish(&trace, 1);
    assert_eq!(f.reason, FinishReason::Length);
    let t = f.timings;
    assert!(close(t.queue_ms, 0.0) && close(t.ttft_ms, 20.0) && close(t.prompt_ms, 20.0));
    assert_eq!((t.prompt_n, t.predicted_n), (100, 20));
    assert!(close(t.predicted_ms, 19.0 * 11.0));
    assert!(close(t.predicted_per_token_ms.unwrap_or(f64::NAN), 11.0));
    assert!(close(t.e2e_ms, 20.0 + 19.0 * 11.0));
    assert_eq!(e.running() + e.waiting(), 0);
    assert_eq!(e.kv_reserved(), 0);
}

#[test]
fn long_prompts_are_prefilled_in_chunks_of_the_budget() {
    let mut e = Engine::new(params(), 0);
    let trace = run(&mut e, vec![arrival(1, 0.0, 600, 2)]);
    // 256 + 256 + 88 tokens: three steps of base + chunk × 0.1.
    let ttft = 3.0 * 10.0 + 600.0 * 0.1;
    assert_eq!(trace[&1][0].0, ms(ttft));
    assert!(close(finish(&trace, 1).timings.ttft_ms, ttft));
    assert_eq!(e.steps(), 4);
}

#[test]
fn a_batch_decodes_in_lockstep_with_a_longer_step() {
    let mut e = Engine::new(params(), 0);
    let arrivals = (0..4).map(|i| arrival(i, 0.0, 10, 5)).collect();
    let trace = run(&mut e, arrivals);
    for i in 0..4 {
        let ev = &trace[&i];
        // One prefill step of 40 prompt tokens, then steps of base + 4 × per_seq.
        assert_eq!(ev[0].0, ms(10.0 + 4.0));
        assert_eq!(ev[1].0 - ev[0].0, ms(14.0));
        assert!(close(
            finish(&trace, i)
                .timings
                .predicted_per_token_ms
                .unwrap_or(0.0),
            14.0
        ));
    }
}

#[test]
fn max_num_seqs_makes_later_requests_queue() {
    let mut p = params();
    p.max_num_seqs = 2;
    p.max_batched_tokens = 256;
    let mut e = Engine::new(p, 0);
    let trace = run(&mut e, (0..3).map(|i| arrival(i, 0.0, 10, 3)).collect());
    // Seqs 0 and 1: prefill (10 + 20 × 0.1 = 12 ms), two decodes of 12 ms: done at 36 ms.
    assert_eq!(trace[&0].last().map(|x| x.0), Some(ms(36.0)));
    let f2 = finish(&trace, 2);
    assert!(
        close(f2.timings.queue_ms, 36.0),
        "queue {}",
        f2.timings.queue_ms
    );
    // Alone afterwards: prefill 11 ms, decodes 11 ms.
    assert!(close(f2.timings.ttft_ms, 36.0 + 11.0));
}

#[test]
fn admission_waits_for_kv_room_in_fifo_order() {
    let mut p = params();
    p.kv_capacity_tokens = 100;
    let mut e = Engine::new(p, 0);
    // Each reserves 40 + 10 = 50 tokens: two fit, the third waits for one to finish.
    let trace = run(&mut e, (0..3).map(|i| arrival(i, 0.0, 40, 10)).collect());
    let done0 = trace[&0].last().map(|x| x.0).unwrap_or_default();
    let f2 = finish(&trace, 2);
    assert!(close(f2.timings.queue_ms, done0.as_secs_f64() * 1000.0));
    assert!(f2.timings.queue_ms > 0.0);
}

#[test]
fn a_late_arrival_is_prefilled_alongside_running_decodes() {
    let mut e = Engine::new(params(), 0);
    let trace = run(
        &mut e,
        vec![arrival(0, 0.0, 10, 10), arrival(1, 15.0, 50, 2)],
    );
    // Seq 0: first token at 11 ms; step 11..22 ms is a decode (1 seq): 11 ms.
    // Seq 1 arrives at 15, joins the step starting at 22: base + 1 decode + 50 × 0.1 = 16 ms.
    assert_eq!(trace[&1][0].0, ms(38.0));
    let f1 = finish(&trace, 1);
    assert!(close(f1.timings.queue_ms, 7.0));
    assert_eq!(trace[&0][2].0 - trace[&0][1].0, ms(16.0));
}

#[test]
fn eos_is_seeded_and_respects_min_tokens_and_ignore_eos() {
    let mut p = params();
    p.eos_mean_tokens = 20.0;
    let lens = |seed: u64, min: u32, ignore: bool| -> Vec<u32> {
        let mut e = Engine::new(p.clone(), seed);
        let arrivals = (0..200)
            .map(|i| Arrival {
                min_tokens: min,
                ignore_eos: ignore,
                ..arrival(i, i as f64, 4, 100)
            })
            .collect();
        let trace = run(&mut e, arrivals);
        (0..200)
            .map(|i| finish(&trace, i).timings.predicted_n)
            .collect()
    };
    let a = lens(1, 0, false);
    assert_eq!(a, lens(1, 0, false), "same seed, same lengths");
    assert_ne!(a, lens(2, 0, false), "another seed, other lengths");
    let mean = a.iter().map(|&x| f64::from(x)).sum::<f64>() / 200.0;
    assert!((14.0..26.0).contains(&mean), "mean output {mean}");
    assert!(lens(1, 30, false).iter().all(|&n| n >= 30));
    assert!(lens(1, 0, true).iter().all(|&n| n == 100));
}

#[test]
fn cancellation_frees_the_slot() {
    let mut p = params();
    p.max_num_seqs = 1;
    let mut e = Engine::new(p, 0);
    let mut inputs = Inputs {
        arrivals: vec![arrival(0, 0.0, 10, 100), arrival(1, 0.0, 10, 3)],
        ..Default::default()
    };
    let mut out = Vec::new();
    let d = e.advance(Duration::ZERO, &mut inputs, &mut out);
    assert_eq!((e.running(), e.waiting()), (1, 1));
    let d = d.unwrap_or_default();
    inputs.cancellations.push(0);
    e.advance(d, &mut inputs, &mut out);
    assert_eq!(out.len(), 1, "the step in flight still completes");
    assert_eq!(
        (e.running(), e.waiting()),
        (1, 0),
        "seq 1 admitted in seq 0's place"
    );
}

#[test]
fn jitter_has_the_configured_spread_and_the_speed_factor_follows_the_seed() {
    let mut p = params();
    p.jitter_cv = 0.1;
    let mut e = Engine::new(p.clone(), 3);
    let mut steps = Vec::new();
    let mut inputs = Inputs {
        arrivals: vec![arrival(0, 0.0, 1, 5000)],
        ..Default::default()
    };
    let mut out = Vec::new();
    let mut t = Duration::ZERO;
    while let Some(d) = e.advance(t, &mut inputs, &mut out) {
        steps.push(d.as_secs_f64() * 1000.0);
        t += d;
    }
    let decode = &steps[1..];
    let mean = decode.iter().sum::<f64>() / decode.len() as f64;
    let sd = (decode.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / decode.len() as f64).sqrt();
    assert!((mean - 11.0).abs() < 0.1, "mean {mean}");
    assert!((sd / mean - 0.1).abs() < 0.01, "cv {}", sd / mean);

    p.speed_cv = 0.05;
    let s1 = Engine::new(p.clone(), 1).speed_factor();
    assert_eq!(s1, Engine::new(p.clone(), 1).speed_factor());
    assert_ne!(s1, Engine::new(p.clone(), 2).speed_factor());
    let speeds: Vec<f64> = (0..400)
        .map(|s| Engine::new(p.clone(), s).speed_factor())
        .collect();
    let m = speeds.iter().sum::<f64>() / 400.0;
    assert!((m - 1.0).abs() < 0.01, "mean speed {m}");
}

#[test]
fn drift_slows_steps_linearly_with_elapsed_time() {
    let mut p = params();
    p.drift_per_min = 0.5;
    let mut e = Engine::new(p, 0);
    let mut out = Vec::new();
    let mut at = |t_min: f64, id: SeqId| {
        let t = Duration::from_secs_f64(t_min * 60.0);
        let mut inputs = Inputs {
            arrivals: vec![arrival(id, 0.0, 10, 1)],
            ..Default::default()
        };
        let d = e.advance(t, &mut inputs, &mut out).unwrap_or_default();
        let end = t + d;
        e.advance(end, &mut Inputs::default(), &mut out);
        d.as_secs_f64() * 1000.0
    };
    assert!(close(at(0.0, 0), 11.0));
    assert!(close(at(2.0, 1), 22.0));
}

#[test]
fn zero_delay_steps_take_no_time_and_still_respect_limits() {
    let mut p = Preset::ZeroDelay.engine();
    p.max_num_seqs = 2;
    p.max_batched_tokens = 2;
    let mut e = Engine::new(p, 0);
    let trace = run(&mut e, (0..3).map(|i| arrival(i, 0.0, 1, 50)).collect());
    assert!(trace.values().flatten().all(|(t, _)| t.is_zero()));
    assert_eq!(trace[&2].len(), 50);
    let f2 = finish(&trace, 2);
    assert_eq!(f2.timings.predicted_n, 50);
}

/// Durations (ms) of every step of one request of `prompt` tokens and `max` outputs, alone.
fn steps_of(e: &mut Engine, id: SeqId, prompt: u32, max: u32) -> Vec<f64> {
    let mut inputs = Inputs {
        arrivals: vec![arrival(id, 0.0, prompt, max)],
        ..Default::default()
    };
    let mut out = Vec::new();
    let mut t = Duration::ZERO;
    let mut steps = Vec::new();
    while let Some(d) = e.advance(t, &mut inputs, &mut out) {
        steps.push(d.as_secs_f64() * 1000.0);
        t += d;
    }
    steps
}

#[test]
fn drift_per_repetition_slows_every_step_of_later_repetitions() {
    let mut p = params();
    p.drift_per_repetition = 0.02;
    for (t, factor) in [(1, 1.0), (2, 1.02), (5, 1.08)] {
        let mut e = Engine::at_repetition(p.clone(), 0, t);
        assert!(close(e.repetition_factor(), factor), "t={t}");
        let steps = steps_of(&mut e, 0, 100, 3);
        // Prefill 10 + 100 × 0.1 = 20 ms, decodes 11 ms, all × (1 + 0.02 (t − 1)).
        let want = [20.0 * factor, 11.0 * factor, 11.0 * factor];
        assert!(
            steps.iter().zip(want).all(|(a, b)| close(*a, b)),
            "t={t}: {steps:?} vs {want:?}"
        );
    }
    p.drift_per_repetition = -0.5;
    assert!(close(
        Engine::at_repetition(p, 0, 5).repetition_factor(),
        0.05
    ));
}

#[test]
fn step_scale_applies_to_selected_repetitions_and_requests_only() {
    let mut p = params();
    p.step_scale = 1.3;
    p.step_scale_repetitions = Some(vec![2, 3]);
    p.step_scale_requests = Some(RequestRange {
        first: 2,
        last: Some(3),
    });
    // Requests (ids 0..4 are numbers 1..5) one after another, at repetition 3 and 1.
    let per_request = |t: u32| -> Vec<f64> {
        let mut e = Engine::at_repetition(p.clone(), 0, t);
        (0..5)
            .map(|id| steps_of(&mut e, id, 10, 2).iter().sum::<f64>())
            .collect()
    };
    // Alone: prefill 10 + 1 = 11 ms and one decode of 11 ms.
    let at3 = per_request(3);
    let want3 = [22.0, 22.0 * 1.3, 22.0 * 1.3, 22.0, 22.0];
    assert!(
        at3.iter().zip(want3).all(|(a, b)| close(*a, b)),
        "{at3:?} vs {want3:?}"
    );
    let at1 = per_request(1);
    assert!(at1.iter().all(|a| close(*a, 22.0)), "{at1:?}");
}

#[test]
fn a_step_is_scaled_when_any_request_in_it_is_selected() {
    let mut p = params();
    p.step_scale = 0.5;
    p.step_scale_requests = Some(RequestRange {
        first: 2,
        last: None,
    });
    let mut e = Engine::new(p, 0);
    // Number 1 runs alone for 2 steps; number 2 joins at 15 ms and is selected.
    let trace = run(
        &mut e,
        vec![arrival(0, 0.0, 10, 6), arrival(1, 15.0, 10, 2)],
    );
    let t0: Vec<Duration> = trace[&0].iter().map(|x| x.0).collect();
    // Unscaled: prefill 11 ms, decode 11 ms (ends 22). Then number 2's prefill joins:
    // (10 + 1 + 10 × 0.1) × 0.5 = 6 ms; one shared decode (10 + 2) × 0.5 = 6 ms; then
    // number 1 alone again, unscaled: 11 ms.
    assert_eq!(t0[0], ms(11.0));
    assert_eq!(t0[1], ms(22.0));
    assert_eq!(t0[2], ms(28.0));
    assert_eq!(t0[3], ms(34.0));
    assert_eq!(t0[4], ms(45.0));
    assert_eq!(trace[&1].last().map(|x| x.0), Some(ms(34.0)));
}

#[test]
fn host_speed_divides_every_step() {
    let mut p = params();
    p.host_speed = 0.8;
    let steps = steps_of(&mut Engine::new(p.clone(), 0), 0, 100, 3);
    assert!(
        steps
            .iter()
            .zip([25.0, 13.75, 13.75])
            .all(|(a, b)| close(*a, b)),
        "{steps:?}"
    );
    let mut q = params();
    q.host_speed = 0.0;
    assert!(q.validate().is_err());
}

#[test]
fn time_scale_multiplies_every_step_and_drift_counts_modelled_minutes() {
    let mut p = params();
    p.time_scale = 0.1;
    let steps = steps_of(&mut Engine::new(p.clone(), 0), 0, 100, 3);
    assert!(
        steps.iter().zip([2.0, 1.1, 1.1]).all(|(a, b)| close(*a, b)),
        "{steps:?}"
    );
    // 0.5 per modelled minute: at 12 wall seconds, 2 modelled minutes have passed (× 2).
    p.drift_per_min = 0.5;
    let mut e = Engine::new(p, 0);
    let mut inputs = Inputs {
        arrivals: vec![arrival(0, 0.0, 10, 1)],
        ..Default::default()
    };
    let d = e
        .advance(Duration::from_secs(12), &mut inputs, &mut Vec::new())
        .unwrap_or_default();
    assert!(close(d.as_secs_f64() * 1000.0, 11.0 * 0.1 * 2.0), "{d:?}");
}

#[test]
fn speed_factors_over_seeds_have_the_configured_cv() {
    let mut p = params();
    p.speed_cv = 0.08;
    let s: Vec<f64> = (0..4000)
        .map(|seed| Engine::new(p.clone(), seed).speed_factor())
        .collect();
    let mean = s.iter().sum::<f64>() / s.len() as f64;
    let sd = (s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (s.len() - 1) as f64).sqrt();
    assert!((mean - 1.0).abs() < 0.005, "mean {mean}");
    assert!((sd / mean - 0.08).abs() < 0.005, "cv {}", sd / mean);
    // Throughput goes as 1 / speed, whose CV (a lognormal's) is the same.
    let inv: Vec<f64> = s.iter().map(|x| 1.0 / x).collect();
    let m = inv.iter().sum::<f64>() / inv.len() as f64;
    let sd = (inv.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (inv.len() - 1) as f64).sqrt();
    assert!((sd / m - 0.08).abs() < 0.005, "cv of 1/speed {}", sd / m);
}

/// The mean decode step of one request alone on an engine, after `before` earlier requests.
fn mean_step_of_request(e: &mut Engine, at: Duration) -> (f64, Duration) {
    let mut inputs = Inputs {
        arrivals: vec![arrival(0, 0.0, 1, 200)],
        ..Default::default()
    };
    let (mut out, mut steps, mut t) = (Vec::new(), Vec::new(), at);
    while let Some(d) = e.advance(t, &mut inputs, &mut out) {
        steps.push(d.as_secs_f64() * 1000.0);
        t += d;
    }
    let decode = &steps[1..];
    (decode.iter().sum::<f64>() / decode.len() as f64, t)
}

#[test]
fn trial_cv_draws_one_factor_per_trial_of_requests() {
    // Fails before --trial-cv: every request of a start then ran at the same speed.
    let mut p = params();
    p.trial_cv = 0.2;
    p.trial_requests = 2;
    let mut e = Engine::new(p.clone(), 5);
    let mut t = Duration::ZERO;
    let mut means = Vec::new();
    for _ in 0..6 {
        let (m, end) = mean_step_of_request(&mut e, t);
        means.push(m);
        t = end;
    }
    // Requests 1–2 are trial 1, 3–4 trial 2, 5–6 trial 3: equal within, different across.
    for pair in means.chunks(2) {
        assert!((pair[0] - pair[1]).abs() < 1e-9, "{means:?}");
    }
    assert!((means[0] - means[2]).abs() > 1e-6, "{means:?}");
    assert!((means[2] - means[4]).abs() > 1e-6, "{means:?}");
    // Seeded: the same start draws the same factors.
    let mut again = Engine::new(p, 5);
    assert_eq!(mean_step_of_request(&mut again, Duration::ZERO).0, means[0]);
}
