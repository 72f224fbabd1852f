//! Summaries of hand-built records with known answers.

use super::*;
use crate::record::{ErrorKind, RequestFlag, RequestRecord, TokenEvent, Usage};

const MS: u64 = 1_000_000;

/// A successful request: sent at `send` ms, `n` tokens every `gap` ms after `ttft` ms.
fn req(index: u32, send: u64, ttft: u64, gap: u64, n: u32) -> RequestRecord {
    let events: Vec<TokenEvent> = (0..u64::from(n))
        .map(|k| TokenEvent {
            t_ns: (send + ttft + k * gap) * MS,
            tokens: 1,
        })
        .collect();
    let end = events.last().map_or(send * MS, |e| e.t_ns);
    RequestRecord {
        index,
        intended_ns: send * MS,
        send_ns: Some(send * MS),
        events,
        end_ns: Some(end),
        max_tokens: n,
        output_target: Some(n),
        usage: Some(Usage {
            prompt_tokens: 100,
            completion_tokens: n,
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn closed_loop_trial_with_known_answers() {
    // Limit 2; each request: TTFT 10 ms, 5 tokens 5 ms apart → E2E 30 ms, TPOT 5 ms.
    // Pairs: [0,30) [0,30) [30,60) [30,60) [60,90) [60,90).
    let recs: Vec<RequestRecord> = (0..6)
        .map(|i| req(i, 30 * u64::from(i / 2), 10, 5, 5))
        .collect();
    let s = summarize(
        &recs,
        &SummaryOptions {
            max_concurrency: Some(2),
            closed_loop: true,
            slo: None,
        },
    );
    let a = &s.all;
    assert_eq!((a.requests, a.completed, a.failed), (6, 6, 0));
    assert_eq!(a.duration_s, Some(0.09));
    assert_eq!(a.output_tokens, 30);
    assert_eq!(a.input_tokens, 600);
    assert!((s.metric("output_throughput").expect("set") - 30.0 / 0.09).abs() < 1e-9);
    assert!((s.metric("total_throughput").expect("set") - 630.0 / 0.09).abs() < 1e-9);
    assert!((s.metric("request_throughput").expect("set") - 6.0 / 0.09).abs() < 1e-9);
    assert_eq!(s.metric("ttft_p50"), Some(10.0));
    assert_eq!(s.metric("e2e_mean"), Some(30.0));
    assert_eq!(s.metric("tpot_p99"), Some(5.0));
    assert_eq!(s.metric("itl_max"), Some(5.0));
    assert_eq!(s.metric("itl_per_token_min"), Some(5.0));
    assert_eq!(s.metric("queue_time_max"), Some(0.0));
    assert_eq!(s.metric("peak_concurrency"), Some(2.0));
    assert!((s.metric("mean_concurrency").expect("set") - 2.0).abs() < 1e-12);
    assert_eq!(s.metric("error_rate"), Some(0.0));
    assert_eq!(s.metric("goodput"), None, "no SLO given");
    assert_eq!(s.metric("nonsense"), None);
    // Any other percentile is read from the stored histogram (3 significant figures); a
    // family without one has none.
    let p95 = s.metric("ttft_p95").expect("from the TTFT histogram");
    assert!(
        (p95 - s.metric("ttft_max").expect("max")).abs() < 0.02,
        "{p95}"
    );
    assert_eq!(s.metric("queue_time_p95"), None);
    assert!(!s.concurrency_limit_exceeded);
    // Three waves of two, the limit held until the last send at 60 of 90 ms.
    let held = s.limit_held_fraction.expect("closed loop with a limit");
    assert!((held - 60.0 / 90.0).abs() < 1e-12, "{held}");
    assert!(s.errors.is_empty() && s.flags.is_empty());
    assert_eq!(s.tokens.output_length_checked, 6);
    // Ramp: request 0; tail: requests 4 and 5 (end after the last send at 60 ms).
    assert_eq!(s.steady.requests, 3);
    assert_eq!(s.steady.window_ns, Some((0, 60 * MS)));
    let h = LatencyHistograms::decode(&s.histograms.itl).expect("decodes");
    assert_eq!(h.len(), 24);
    for name in metric_names() {
        // Every catalogue name resolves on a populated summary (goodput needs an SLO).
        // goodput needs an SLO, cache_hit_ratio a server that reports cached tokens, the
        // energy metrics a trial whose GPUs were sampled (telemetry), the reasoning
        // statistics a request that reasoned (`metrics::reasoning`'s tests).
        let reasoning = name.starts_with("ttfr_") || name.starts_with("reasoning_tokens_");
        let needs_more = [
            "goodput",
            "cache_hit_ratio",
            "output_tokens_per_joule",
            "joules_per_output_token",
        ];
        assert!(
            s.metric(&name).is_some() || needs_more.contains(&name.as_str()) || reasoning,
            "{name}"
        );
    }
}

#[test]
fn failures_flags_and_goodput() {
    let mut recs = vec![
        req(0, 0, 10, 5, 5),
        req(1, 0, 50, 5, 5),
        req(2, 0, 10, 5, 3),
    ];
    let mut failed = req(3, 0, 10, 5, 5);
    failed.error = Some(ErrorKind::Http { status: 503 });
    failed.events.clear();
    recs.push(failed);
    let unsent = RequestRecord {
        index: 4,
        error: Some(ErrorKind::NotSent),
        ..Default::default()
    };
    recs.push(unsent);
    recs[2].output_target = Some(5); // 3 of 5 requested: short
    recs[0].usage = None; // client count used, flagged
    let slo = Slo {
        ttft_ms: Some(20.0),
        tpot_ms: None,
        e2e_ms: None,
    };
    let s = summarize(
        &recs,
        &SummaryOptions {
            max_concurrency: None,
            closed_loop: false,
            slo: Some(slo),
        },
    );
    assert_eq!(s.errors.get(&ErrorKind::Http { status: 503 }), Some(&1));
    assert_eq!(s.errors.get(&ErrorKind::NotSent), Some(&1));
    assert_eq!(s.flags.get(&RequestFlag::ShortOutput), Some(&1));
    assert_eq!(s.flags.get(&RequestFlag::NoUsage), Some(&1));
    assert_eq!(s.all.error_rate, Some(2.0 / 5.0));
    assert_eq!(s.tokens.requests_without_usage, 1);
    assert_eq!(s.all.output_tokens, 13, "5 (client count) + 5 + 3");
    // Two of three completed requests meet TTFT ≤ 20 ms; duration = 0 → 70 ms.
    let d = s.all.duration_s.expect("duration");
    assert!((d - 0.07).abs() < 1e-12);
    assert!((s.metric("goodput").expect("slo given") - 2.0 / d).abs() < 1e-9);
    assert_eq!(s.all.ttft.expect("ttft").count, 3);
}

#[test]
fn empty_and_unsent_trials_do_not_produce_nan() {
    let r = RequestRecord {
        error: Some(ErrorKind::NotSent),
        ..Default::default()
    };
    let s = summarize(&[r], &SummaryOptions::default());
    assert_eq!(s.all.duration_s, None);
    assert_eq!(s.all.output_throughput, None);
    assert_eq!(s.all.error_rate, Some(1.0));
    let json = serde_json::to_string(&s).expect("serialises");
    assert!(!json.contains("NaN") && !json.contains("Infinity"));
    let s = summarize(&[], &SummaryOptions::default());
    assert_eq!(s.all.error_rate, None);
}

#[test]
fn summary_round_trips_through_json() {
    let recs: Vec<RequestRecord> = (0..4).map(|i| req(i, u64::from(i), 10, 5, 4)).collect();
    let s = summarize(
        &recs,
        &SummaryOptions {
            max_concurrency: Some(4),
            closed_loop: true,
            slo: None,
        },
    );
    let json = serde_json::to_string(&s).expect("serialises");
    let back: TrialSummary = serde_json::from_str(&json).expect("parses");
    assert_eq!(back, s);
}

#[test]
fn cache_hit_ratio_send_lateness_and_turns_with_known_answers() {
    use crate::record::{PromptTokensDetails, ServerTimings, TurnRef};
    // Open loop: due every 10 ms, sent 0, 1, 2 and 3 ms late.
    let mut recs: Vec<RequestRecord> = (0..4).map(|i| req(i, 10 * u64::from(i), 5, 2, 3)).collect();
    for (i, r) in recs.iter_mut().enumerate() {
        r.send_ns = Some(r.intended_ns + i as u64 * MS);
        r.turn = Some(TurnRef {
            conversation: 0,
            turn: i as u32 % 2,
        });
    }
    // Cached tokens: 60 of 100 in usage, 40 of 100 in usage, none reported, and llama.cpp's
    // timings (cache_n 30 + prompt_n 70 prefilled).
    recs[0].usage.as_mut().expect("usage").prompt_tokens_details = Some(PromptTokensDetails {
        cached_tokens: Some(60),
    });
    recs[1].usage.as_mut().expect("usage").prompt_tokens_details = Some(PromptTokensDetails {
        cached_tokens: Some(40),
    });
    recs[3].server_timings = Some(ServerTimings {
        prompt_n: Some(70),
        cache_n: Some(30),
        ..Default::default()
    });
    let s = summarize(
        &recs,
        &SummaryOptions {
            max_concurrency: None,
            closed_loop: false,
            slo: None,
        },
    );
    assert_eq!(s.tokens.cached_prompt_tokens, Some(130));
    assert_eq!(s.tokens.cache_reported_prompt_tokens, Some(300));
    let ratio = s.metric("cache_hit_ratio").expect("reported");
    assert!((ratio - 130.0 / 300.0).abs() < 1e-12, "{ratio}");
    let late = s.send_lateness.expect("open loop");
    assert!((late.mean - 1.5).abs() < 1e-9, "{late:?}");
    assert!((late.max - 3.0).abs() < 1e-9, "{late:?}");
    // Intended sends span 30 ms, actual ones 33 ms: 3 gaps.
    assert!((s.scheduled_rate.expect("rate") - 100.0).abs() < 1e-9);
    assert!((s.achieved_rate.expect("rate") - 3.0 / 0.033).abs() < 1e-6);
    assert_eq!(s.turns.len(), 2);
    assert_eq!((s.turns[0].turn, s.turns[0].requests), (0, 2));
    assert_eq!(s.turns[1].mean_prompt_tokens, Some(100.0));
    // Closed loop: no lateness, no rates; no cached tokens reported: no ratio.
    let recs: Vec<RequestRecord> = (0..2).map(|i| req(i, 0, 5, 2, 3)).collect();
    let closed = SummaryOptions {
        closed_loop: true,
        ..SummaryOptions::default()
    };
    let s = summarize(&recs, &closed);
    assert!(s.send_lateness.is_none() && s.scheduled_rate.is_none());
    assert_eq!(s.metric("cache_hit_ratio"), None);
    assert!(s.turns.is_empty());
}

#[test]
fn reasoning_statistics_are_absent_without_reasoning_and_honest_with_some() {
    // Six requests: TTFT 10 ms, 5 tokens 5 ms apart; none reasoned.
    let mut recs: Vec<RequestRecord> = (0..6).map(|i| req(i, 0, 10, 5, 5)).collect();
    let s = summarize(&recs, &SummaryOptions::default());
    assert_eq!(
        s.metric("ttfr_p50"),
        None,
        "no request reasoned: absent, not 0"
    );
    assert_eq!(s.metric("reasoning_tokens_mean"), None);
    assert_eq!(s.metric("ttfa_p50"), s.metric("ttft_p50"), "TTFA is TTFT");
    assert_eq!(s.metric("answer_tokens_mean"), Some(5.0));
    // Two of them reason for their first 3 tokens: the answer begins at the 4th event.
    for r in &mut recs[..2] {
        r.reasoning = Some(crate::record::ReasoningRecord {
            first_ns: r.events[0].t_ns,
            tokens: 3,
            answer_ns: Some(r.events[3].t_ns),
        });
    }
    let s = summarize(&recs, &SummaryOptions::default());
    let ttfr = s.all.ttfr.expect("two reasoned");
    assert_eq!((ttfr.count, ttfr.mean), (2, 10.0));
    let ttfa = s.all.ttfa.expect("every request");
    assert_eq!((ttfa.count, ttfa.max, ttfa.min), (6, 25.0, 10.0));
    let tok = s.all.reasoning_tokens.expect("some reasoned");
    assert_eq!((tok.count, tok.mean, tok.max), (6, 1.0, 3.0));
    assert_eq!(s.metric("answer_tokens_mean"), Some(4.0));
    // Older results have none of these: they read as absent.
    let json = serde_json::to_value(&s).expect("serialises");
    let mut old = json.clone();
    for k in ["ttfr", "ttfa", "reasoning_tokens", "answer_tokens"] {
        old["all"].as_object_mut().expect("object").remove(k);
        old["steady"].as_object_mut().expect("object").remove(k);
    }
    let back: TrialSummary = serde_json::from_value(old).expect("an older summary reads");
    assert_eq!(back.metric("ttfa_p50"), None);
}
