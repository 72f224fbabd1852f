//! A request's token events on disk: the pairs of record version 1, or the compact form of
//! version 2 ([`EventTimes`]), read in either form.

use serde::{Deserialize, Serialize};

use super::TokenEvent;

/// The events of a request as written since record version 2: the first event's instant
/// in ns, each later one as the gap in µs from the one before (instants rounded to the µs,
/// so equal instants — events of one read — stay equal), and the tokens per event only when
/// some event carried other than 1. About 4× smaller than `[t_ns, tokens]` pairs before
/// compression and far more compressible (docs/performance.md).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EventTimes {
    /// Instant of the first event, in ns from the trial start.
    pub t0_ns: u64,
    /// For each later event, its instant minus the previous one's, both rounded to the µs.
    pub dt_us: Vec<u64>,
    /// Tokens per event, when not all 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Vec<u32>>,
}

impl EventTimes {
    /// The compact form of `events`.
    pub fn encode(events: &[TokenEvent]) -> Self {
        let Some(first) = events.first() else {
            return Self::default();
        };
        let us = |t: u64| (t + 500) / 1000;
        let mut prev = us(first.t_ns);
        let dt_us = events[1..]
            .iter()
            .map(|e| {
                let t = us(e.t_ns).max(prev);
                let d = t - prev;
                prev = t;
                d
            })
            .collect();
        let tokens = events
            .iter()
            .any(|e| e.tokens != 1)
            .then(|| events.iter().map(|e| e.tokens).collect());
        Self {
            t0_ns: first.t_ns,
            dt_us,
            tokens,
        }
    }

    /// The events again (later instants at µs resolution).
    pub fn decode(&self, empty: bool) -> Vec<TokenEvent> {
        if empty {
            return Vec::new();
        }
        let tokens = |i: usize| {
            self.tokens
                .as_ref()
                .and_then(|t| t.get(i).copied())
                .unwrap_or(1)
        };
        let mut out = Vec::with_capacity(self.dt_us.len() + 1);
        out.push(TokenEvent {
            t_ns: self.t0_ns,
            tokens: tokens(0),
        });
        let mut us = (self.t0_ns + 500) / 1000;
        for (i, d) in self.dt_us.iter().enumerate() {
            us += d;
            out.push(TokenEvent {
                t_ns: us * 1000,
                tokens: tokens(i + 1),
            });
        }
        out
    }
}

/// `events` on the wire: the pairs of record version 1, or [`EventTimes`] (an empty list
/// stays `[]`).
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub(super) enum EventsWire {
    /// Version 1: `[t_ns, tokens]` pairs.
    Pairs(Vec<TokenEvent>),
    /// Version 2: first instant and µs gaps.
    Compact(EventTimes),
}

pub(super) mod event_wire {
    use super::{EventTimes, EventsWire, TokenEvent};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(in crate::record) fn serialize<S: Serializer>(
        events: &[TokenEvent],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        if events.is_empty() {
            return s.collect_seq(events);
        }
        EventTimes::encode(events).serialize(s)
    }

    pub(in crate::record) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<TokenEvent>, D::Error> {
        Ok(match EventsWire::deserialize(d)? {
            EventsWire::Pairs(p) => p,
            EventsWire::Compact(c) => c.decode(false),
        })
    }
}
