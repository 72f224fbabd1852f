//! In-flight requests over time, from the `[send, end)` interval of every sent request:
//! peak concurrency (sweep line), time-averaged concurrency, and the steady-state window.
//!
//! Steady state. The ramp ends at the first of: the send that brings the in-flight count
//! to the concurrency limit, or the first completion (with no limit, or a limit the load
//! never reaches, in-flight stops only rising when the first request ends). Requests sent
//! before that point are *ramp* requests; requests that end after the last send are *tail*
//! requests (the load was draining around them). Every other sent request is *steady*. The
//! steady window is `[ramp end, last send]`.
//!
//! Load held. For a closed-loop point, [`limit_held_fraction`] is the share of the trial
//! (first send to last end) during which the in-flight count stood at ≥ 90% of the limit
//! *while requests were still waiting to be sent* (before the last send). After the last
//! send the count can only fall, so a trial that is one wave — 256 requests at c=256, all
//! sent at once — holds the limit for none of its time, although all 256 are in flight for
//! most of it: it measures ramp-up and drain, not the load the point names. A trial of k
//! equal waves holds it for about (k − 1)/k.

use crate::record::RequestRecord;

/// Where each request sits relative to the steady window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Never sent (the trial deadline came first).
    NotSent,
    /// Sent before the in-flight count first reached the steady level.
    Ramp,
    /// Sent and finished while the load was steady.
    Steady,
    /// Still running while the load drained at the end of the trial.
    Tail,
}

/// The result of one sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    /// Largest number of requests in flight at once.
    pub peak: usize,
    /// One entry per record, in the records' order.
    pub phases: Vec<Phase>,
    /// `[ramp end, last send]` in ns, when non-empty.
    pub steady_window: Option<(u64, u64)>,
}

/// The `[send, end)` interval of a sent request (`end` defaults to `send` if missing).
pub fn interval(r: &RequestRecord) -> Option<(u64, u64)> {
    let s = r.send_ns?;
    Some((s, r.end_ns.unwrap_or(s).max(s)))
}

/// Sweeps the records' intervals. At equal instants ends are processed before starts
/// (intervals are half-open), and starts in record order.
pub fn sweep(records: &[RequestRecord], limit: Option<usize>) -> Sweep {
    // (t, kind: 0 = end, 1 = start, record position)
    let mut events: Vec<(u64, u8, usize)> = Vec::with_capacity(records.len() * 2);
    // Zero-length intervals (a request that failed within the same nanosecond) are never in
    // flight; they only get a phase.
    let mut instant = Vec::new();
    for (i, r) in records.iter().enumerate() {
        match interval(r) {
            Some((s, e)) if s < e => {
                events.push((s, 1, i));
                events.push((e, 0, i));
            }
            Some((s, _)) => instant.push((s, i)),
            None => {}
        }
    }
    events.sort_unstable();
    let mut phases = vec![Phase::NotSent; records.len()];
    let (mut count, mut peak) = (0usize, 0usize);
    let mut ramp_end: Option<u64> = None;
    for &(t, kind, i) in &events {
        if kind == 1 {
            count += 1;
            peak = peak.max(count);
            if ramp_end.is_none() && limit.is_some_and(|l| count >= l) {
                ramp_end = Some(t);
            }
            phases[i] = if ramp_end.is_some() {
                Phase::Steady
            } else {
                Phase::Ramp
            };
        } else {
            count -= 1;
            if ramp_end.is_none() {
                ramp_end = Some(t);
            }
        }
    }
    for (s, i) in instant {
        phases[i] = match ramp_end {
            Some(r) if s >= r => Phase::Steady,
            _ => Phase::Ramp,
        };
    }
    let last_send = records.iter().filter_map(|r| r.send_ns).max();
    if let Some(ls) = last_send {
        for (p, r) in phases.iter_mut().zip(records) {
            if *p == Phase::Steady && r.end_ns.is_some_and(|e| e > ls) {
                *p = Phase::Tail;
            }
        }
    }
    let steady_window = match (ramp_end, last_send) {
        (Some(a), Some(b)) if b > a => Some((a, b)),
        _ => None,
    };
    Sweep {
        peak,
        phases,
        steady_window,
    }
}

/// Time-averaged number of requests in flight over `[a, b)`: the total overlap of the
/// intervals with the window divided by its length (over the whole trial this is
/// ΣE2E/duration, with E2E measured send → end).
pub fn mean_in_flight(records: &[RequestRecord], (a, b): (u64, u64)) -> Option<f64> {
    if b <= a {
        return None;
    }
    let busy: u128 = records
        .iter()
        .filter_map(interval)
        .map(|(s, e)| u128::from(e.min(b).saturating_sub(s.max(a))))
        .sum();
    Some(busy as f64 / (b - a) as f64)
}

/// The share of the trial during which the limit was held (module docs): time with at
/// least ⌈0.9·limit⌉ requests in flight before the last send, over first send → last end.
/// `None` without a limit or without a trial span.
pub fn limit_held_fraction(records: &[RequestRecord], limit: Option<usize>) -> Option<f64> {
    let limit = limit.filter(|l| *l > 0)?;
    let need = (limit * 9).div_ceil(10);
    let mut events: Vec<(u64, i64)> = Vec::with_capacity(records.len() * 2);
    let (mut first, mut last_send, mut last_end) = (u64::MAX, 0u64, 0u64);
    for (s, e) in records.iter().filter_map(interval) {
        first = first.min(s);
        last_send = last_send.max(s);
        last_end = last_end.max(e);
        if s < e {
            events.push((s, 1));
            events.push((e, -1));
        }
    }
    if last_end <= first {
        return None;
    }
    // Ends before starts at equal instants (half-open intervals).
    events.sort_unstable_by_key(|&(t, d)| (t, d));
    let (mut count, mut held, mut since) = (0i64, 0u64, None::<u64>);
    for (t, d) in events {
        let t_cut = t.min(last_send);
        if let Some(s0) = since.take() {
            held += t_cut.saturating_sub(s0);
        }
        count += d;
        if count >= need as i64 && t < last_send {
            since = Some(t);
        }
    }
    Some(held as f64 / (last_end - first) as f64)
}

/// Largest in-flight count inside `[a, b)`.
pub(crate) fn peak_within(records: &[RequestRecord], (a, b): (u64, u64)) -> usize {
    let mut ev: Vec<(u64, i8)> = Vec::new();
    for (s, e) in records.iter().filter_map(interval) {
        let (s, e) = (s.max(a), e.min(b));
        if s < e {
            ev.push((s, 1));
            ev.push((e, -1));
        }
    }
    ev.sort_unstable();
    let (mut c, mut peak) = (0i64, 0i64);
    for (_, d) in ev {
        c += i64::from(d);
        peak = peak.max(c);
    }
    peak as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_wave_holds_nothing_and_waves_hold_most() {
        // One wave: four sent at 0 with limit 4, all end at 100.
        let wave: Vec<RequestRecord> = (0..4).map(|_| rec(0, 100)).collect();
        assert_eq!(limit_held_fraction(&wave, Some(4)), Some(0.0));
        // Four waves of 4 at limit 4, each 100 long: held while sends remain (0..300).
        let waves: Vec<RequestRecord> = (0..16)
            .map(|i| rec(i / 4 * 100, i / 4 * 100 + 100))
            .collect();
        let f = limit_held_fraction(&waves, Some(4)).expect("a span");
        assert!((f - 0.75).abs() < 1e-12, "{f}");
        // Limit 1, back to back: held until the last send.
        let serial: Vec<RequestRecord> = (0..10).map(|i| rec(i * 10, i * 10 + 10)).collect();
        let f = limit_held_fraction(&serial, Some(1)).expect("a span");
        assert!((f - 0.9).abs() < 1e-12, "{f}");
        // 90% of the limit counts: 9 of 10 in flight.
        let nine: Vec<RequestRecord> = (0..18).map(|i| rec(i / 9 * 50, i / 9 * 50 + 50)).collect();
        let f = limit_held_fraction(&nine, Some(10)).expect("a span");
        assert!((f - 0.5).abs() < 1e-12, "{f}");
        assert_eq!(limit_held_fraction(&serial, None), None);
        assert_eq!(limit_held_fraction(&[], Some(4)), None);
    }

    fn rec(send: u64, end: u64) -> RequestRecord {
        RequestRecord {
            send_ns: Some(send),
            end_ns: Some(end),
            ..Default::default()
        }
    }

    #[test]
    fn half_open_intervals_do_not_overlap_at_the_boundary() {
        let r = [rec(0, 10), rec(10, 20), rec(20, 30)];
        assert_eq!(sweep(&r, Some(1)).peak, 1);
        let r = [rec(0, 10), rec(5, 20), rec(6, 7)];
        assert_eq!(sweep(&r, None).peak, 3);
    }

    #[test]
    fn closed_loop_ramp_steady_tail() {
        // Limit 2: two at once, each replaced when it ends.
        let r = [
            rec(0, 10),
            rec(1, 12),
            rec(10, 20),
            rec(12, 22),
            rec(20, 30),
            rec(22, 32),
        ];
        let s = sweep(&r, Some(2));
        use Phase::*;
        assert_eq!(s.phases, [Ramp, Steady, Steady, Steady, Tail, Tail]);
        assert_eq!(s.steady_window, Some((1, 22)));
        assert_eq!(s.peak, 2);
    }

    #[test]
    fn open_loop_ramp_ends_at_first_completion() {
        let r = [
            rec(0, 50),
            rec(10, 60),
            rec(20, 70),
            rec(55, 80),
            rec(90, 95),
        ];
        let s = sweep(&r, None);
        use Phase::*;
        assert_eq!(s.phases, [Ramp, Ramp, Ramp, Steady, Tail]);
        assert_eq!(s.steady_window, Some((50, 90)));
    }

    proptest::proptest! {
        /// The sweep's peak equals the brute-force count at every start instant, and never
        /// exceeds the limit when the intervals respect it.
        #[test]
        fn peak_matches_brute_force(
            spans in proptest::collection::vec((0u64..1000, 0u64..200), 0..40),
        ) {
            let recs: Vec<RequestRecord> = spans.iter().map(|&(s, d)| rec(s, s + d)).collect();
            let brute = spans
                .iter()
                .map(|&(t, _)| spans.iter().filter(|&&(s, d)| s <= t && t < s + d).count())
                .max()
                .unwrap_or(0);
            // A zero-length interval is never in flight.
            proptest::prop_assert_eq!(sweep(&recs, None).peak, brute);
        }
    }

    #[test]
    fn unsent_and_mean() {
        let mut r = vec![rec(0, 10), rec(0, 10)];
        r.push(RequestRecord::default());
        let s = sweep(&r, Some(2));
        assert_eq!(s.phases[2], Phase::NotSent);
        assert_eq!(mean_in_flight(&r, (0, 10)), Some(2.0));
        assert_eq!(mean_in_flight(&r, (5, 20)), Some(10.0 / 15.0));
        assert_eq!(mean_in_flight(&r, (5, 5)), None);
    }
}
