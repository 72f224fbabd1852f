//! Per-request metrics, derived from one [`RequestRecord`]. The definitions (docs/metrics.md,
//! "Per request"):
//!
//! - queue time = `send − intended` (client-side: waiting for the concurrency gate or the
//!   dispatcher);
//! - TTFT = first token-bearing event − send (a role-only chunk carries no token);
//! - E2E = last token-bearing event − send (usage-only chunk and `[DONE]` excluded);
//! - TPOT = (E2E − TTFT) / (N_out − 1), only for N_out ≥ 2 (and not for a stream whose
//!   content was held back: `content_held_back`, every token in its final chunk);
//! - ITL = each gap between consecutive token-bearing events; ITL per token = the gap divided
//!   by the tokens of the later event.
//!
//! N_out is the server's `usage.completion_tokens`. When the server sent no usage, N_out is
//! the client's count of token events and the request is flagged `no_usage` (never the
//! requested length). Tokens per event are the server's usage deltas when it streams usage
//! with every chunk, else 1; if the final usage then disagrees with the event count (a server
//! that packs several tokens into one event), per-token ITL uses the mean tokens per event,
//! N_out / events, and the request is counted as reconciled.
//!
//! Only successful requests get latencies; failed ones count by error kind.

use crate::record::{ErrorKind, RequestFlag, RequestRecord};

/// Metrics of one request, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestMetrics {
    /// The fatal error, if the request failed.
    pub failure: Option<ErrorKind>,
    /// Non-fatal flags: `no_usage`, `short_output`, `long_output`, `input_length_mismatch`,
    /// `content_held_back`.
    pub flags: Vec<RequestFlag>,
    /// Client-side wait from the scheduled arrival to the send, in ms.
    pub queue_ms: Option<f64>,
    /// Time to first token, from the send, in ms.
    pub ttft_ms: Option<f64>,
    /// Send to the end of the stream, in ms.
    pub e2e_ms: Option<f64>,
    /// Time per output token after the first, in ms.
    pub tpot_ms: Option<f64>,
    /// Output tokens (usage, else the client count).
    pub n_out: Option<u64>,
    /// Input tokens from usage.
    pub n_in: Option<u64>,
    /// Per-event token counts disagreed with usage and were reconciled.
    pub reconciled: bool,
    /// The server's own TTFT (`timings.ttft_ms`, else `queue_ms + prompt_ms`), and the
    /// client's TTFT minus it: what the client and the network add.
    pub server_ttft_ms: Option<f64>,
    /// The client TTFT minus `server_ttft_ms`, in ms.
    pub ttft_overhead_ms: Option<f64>,
    /// Time to the first reasoning token, from the send, in ms; absent without reasoning
    /// (`metrics::reasoning`).
    pub ttfr_ms: Option<f64>,
    /// Time to the first answer token, from the send, in ms: TTFT without reasoning; absent
    /// when the request ended still reasoning.
    pub ttfa_ms: Option<f64>,
    /// Output tokens that were reasoning (the server's count where it sent one, else the
    /// stream's).
    pub reasoning_tokens: Option<u64>,
    /// Output tokens that were answer: N_out − reasoning tokens.
    pub answer_tokens: Option<u64>,
}

const NS_PER_MS: f64 = 1e6;

fn ms(a: u64, b: u64) -> f64 {
    (b as f64 - a as f64) / NS_PER_MS
}

/// The ITL samples of a request, `(gap, gap per token)` in ms (none for a failed one), from
/// its record and its [`derive()`]d metrics. Computed on demand rather than stored with the
/// metrics: a trial has as many ITL samples as tokens, and summaries stream them.
pub fn itl_gaps<'a>(
    r: &'a RequestRecord,
    m: &RequestMetrics,
) -> impl Iterator<Item = (f64, f64)> + 'a {
    // Tokens per event: as observed, or the mean when usage says otherwise.
    let mean_per_event = m
        .reconciled
        .then(|| m.n_out.unwrap_or(0) as f64 / r.events.len() as f64);
    let events = if m.failure.is_none() {
        &r.events[..]
    } else {
        &[]
    };
    events.windows(2).map(move |w| {
        let gap = ms(w[0].t_ns, w[1].t_ns);
        let tokens = mean_per_event.unwrap_or(f64::from(w[1].tokens.max(1)));
        (gap, gap / tokens)
    })
}

/// Derives the metrics of one record (its ITL samples: [`itl_gaps`]).
pub fn derive(r: &RequestRecord) -> RequestMetrics {
    let mut m = RequestMetrics {
        queue_ms: r.send_ns.map(|s| ms(r.intended_ns, s.max(r.intended_ns))),
        ..Default::default()
    };
    if let Some(e) = r.error {
        m.failure = Some(e);
        return m;
    }
    let (Some(send), Some(first), Some(last)) = (r.send_ns, r.events.first(), r.events.last())
    else {
        // A record without error always has a send and an event (the client enforces it);
        // anything else is reported, not guessed.
        m.failure = Some(ErrorKind::Internal);
        return m;
    };
    let ttft = ms(send, first.t_ns);
    let e2e = ms(send, last.t_ns);
    m.ttft_ms = Some(ttft);
    m.e2e_ms = Some(e2e);

    let client_out = r.client_output_tokens();
    let n_out = match r.usage {
        Some(u) => u64::from(u.completion_tokens),
        None => {
            m.flags.push(RequestFlag::NoUsage);
            client_out
        }
    };
    m.n_out = Some(n_out);
    m.n_in = r.usage.map(|u| u64::from(u.prompt_tokens));
    if r.content_held_back {
        // Every token arrived in the final chunk: no gap between tokens was seen, so TPOT is
        // not defined (0 would be a made-up figure); TTFT is when the client first had any.
        m.flags.push(RequestFlag::ContentHeldBack);
    } else if n_out >= 2 {
        m.tpot_ms = Some((e2e - ttft) / (n_out - 1) as f64);
    }

    // Per-event token counts disagree with usage: ITL per token uses the mean (itl_gaps).
    m.reconciled = r.usage.is_some() && n_out != client_out && n_out > 0;

    if let Some(target) = r.output_target {
        let t = f64::from(target);
        let n = n_out as f64;
        if n < 0.9 * t {
            m.flags.push(RequestFlag::ShortOutput);
        } else if n > 1.1 * t {
            m.flags.push(RequestFlag::LongOutput);
        }
    }
    // Ended for its length with fewer tokens than its max_tokens: the server cut it short.
    if r.usage.is_some()
        && r.finish_reason.as_deref() == Some("length")
        && n_out < u64::from(r.max_tokens)
    {
        m.flags.push(RequestFlag::LengthCut);
    }
    let input_differs = r
        .expected_input_tokens
        .zip(r.usage)
        .is_some_and(|(exp, u)| exp != u.prompt_tokens);
    if r.input_tokens_exact && input_differs {
        m.flags.push(RequestFlag::InputLengthMismatch);
    }
    let rm = super::reasoning::derive_reasoning(r, send, ttft, n_out, m.reconciled);
    if rm.mismatch {
        m.flags.push(RequestFlag::ReasoningCountMismatch);
    }
    m.ttfr_ms = rm.ttfr_ms;
    m.ttfa_ms = rm.ttfa_ms;
    m.reasoning_tokens = Some(rm.reasoning_tokens);
    m.answer_tokens = Some(rm.answer_tokens);
    if let Some(t) = &r.server_timings {
        let server = t.ttft_ms.or(match (t.prompt_ms, t.queue_ms) {
            (Some(p), q) => Some(p + q.unwrap_or(0.0)),
            _ => None,
        });
        m.server_ttft_ms = server;
        m.ttft_overhead_ms = server.map(|s| ttft - s);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{ServerTimings, TokenEvent, Usage};

    fn ok_record(times_ms: &[u64], usage: Option<(u32, u32)>) -> RequestRecord {
        RequestRecord {
            intended_ns: 0,
            send_ns: Some(2_000_000),
            events: times_ms
                .iter()
                .map(|&t| TokenEvent {
                    t_ns: t * 1_000_000,
                    tokens: 1,
                })
                .collect(),
            end_ns: Some(times_ms.last().copied().unwrap_or(0) * 1_000_000 + 1),
            usage: usage.map(|(i, o)| Usage {
                prompt_tokens: i,
                completion_tokens: o,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn reference_values() {
        // send at 2 ms; tokens at 12, 14, 17, 22 ms; usage says 4 tokens.
        let m = derive(&ok_record(&[12, 14, 17, 22], Some((10, 4))));
        assert_eq!(m.queue_ms, Some(2.0));
        assert_eq!(m.ttft_ms, Some(10.0));
        assert_eq!(m.e2e_ms, Some(20.0));
        assert_eq!(m.tpot_ms, Some(10.0 / 3.0));
        let r = ok_record(&[12, 14, 17, 22], Some((10, 4)));
        let itl: Vec<_> = itl_gaps(&r, &m).collect();
        assert_eq!(itl, [(2.0, 2.0), (3.0, 3.0), (5.0, 5.0)]);
        assert!(m.flags.is_empty() && !m.reconciled);
        assert_eq!((m.n_in, m.n_out), (Some(10), Some(4)));
    }

    #[test]
    fn a_held_back_stream_counts_its_tokens_with_no_tpot() {
        // One event, the final chunk at 30 ms, carrying the 64 tokens usage counted.
        let mut r = ok_record(&[30], Some((10, 64)));
        r.events[0].tokens = 64;
        r.content_held_back = true;
        let m = derive(&r);
        assert_eq!(m.failure, None);
        assert_eq!(m.ttft_ms, Some(28.0));
        assert_eq!(m.n_out, Some(64));
        assert_eq!(m.tpot_ms, None, "no gap between tokens was seen");
        assert_eq!(m.flags, [RequestFlag::ContentHeldBack]);
        assert!(!m.reconciled);
        assert_eq!(itl_gaps(&r, &m).count(), 0);
    }

    #[test]
    fn a_length_finish_short_of_max_tokens_is_flagged_length_cut() {
        // vLLM 0.33.0 lowers max_tokens to what the context leaves (serve/utils/
        // api_utils.py:233-264): 4 tokens of 16 asked, finish_reason `length`, no error.
        let mut r = ok_record(&[12, 14, 17, 22], Some((10, 4)));
        r.max_tokens = 16;
        r.finish_reason = Some("length".into());
        assert_eq!(derive(&r).flags, [RequestFlag::LengthCut]);
        // All it asked for, or a stop before it: no cut.
        r.max_tokens = 4;
        assert!(derive(&r).flags.is_empty());
        r.max_tokens = 16;
        r.finish_reason = Some("stop".into());
        assert!(derive(&r).flags.is_empty());
    }

    #[test]
    fn one_token_has_no_tpot_and_no_usage_is_flagged() {
        let m = derive(&ok_record(&[12], None));
        assert_eq!(m.tpot_ms, None);
        assert_eq!(m.flags, [RequestFlag::NoUsage]);
        assert_eq!(m.n_out, Some(1), "client count, not the requested length");
        assert_eq!(m.n_in, None);
    }

    #[test]
    fn packed_events_are_reconciled_with_usage() {
        // 3 events, usage says 6 tokens: 2 tokens per event on average.
        let r = ok_record(&[10, 14, 18], Some((1, 6)));
        let m = derive(&r);
        assert!(m.reconciled);
        let per_token: Vec<_> = itl_gaps(&r, &m).map(|(_, t)| t).collect();
        assert_eq!(per_token, [2.0, 2.0]);
        assert_eq!(m.tpot_ms, Some(8.0 / 5.0));
    }

    #[test]
    fn output_and_input_length_checks() {
        let mut r = ok_record(&[10, 11], Some((5, 8)));
        r.output_target = Some(10);
        r.expected_input_tokens = Some(4);
        r.input_tokens_exact = true;
        let m = derive(&r);
        assert_eq!(
            m.flags,
            [RequestFlag::ShortOutput, RequestFlag::InputLengthMismatch]
        );
        r.usage = Some(Usage {
            prompt_tokens: 4,
            completion_tokens: 9,
            ..Default::default()
        });
        assert!(derive(&r).flags.is_empty(), "9 of 10 is inside 90–110%");
        r.usage = Some(Usage {
            prompt_tokens: 4,
            completion_tokens: 12,
            ..Default::default()
        });
        assert_eq!(derive(&r).flags, [RequestFlag::LongOutput]);
    }

    #[test]
    fn failures_have_no_latency_and_server_overhead_is_derived() {
        let mut r = ok_record(&[12], Some((1, 1)));
        r.server_timings = Some(ServerTimings {
            ttft_ms: Some(9.5),
            ..Default::default()
        });
        let m = derive(&r);
        assert_eq!(m.ttft_overhead_ms, Some(0.5));
        r.error = Some(ErrorKind::Timeout);
        let m = derive(&r);
        assert_eq!(m.failure, Some(ErrorKind::Timeout));
        assert_eq!(m.ttft_ms, None);
        r.events.push(TokenEvent {
            t_ns: 20_000_000,
            tokens: 1,
        });
        assert_eq!(itl_gaps(&r, &m).count(), 0, "a failed request has no ITL");
        assert_eq!(m.queue_ms, Some(2.0));
    }
}
