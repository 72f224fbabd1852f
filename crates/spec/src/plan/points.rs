//! Sweep points: the resolved workload values of each point a plan measures — the sweep's
//! matrix (with `exclude`), its `include` entries, and a capacity search's loads.

use std::fmt;

use serde::Serialize;

use crate::rate::Rate;
use crate::types::{DatasetKind, SpecFile, SweepPointSpec, TokenCount};

/// One resolved sweep point: the workload values that vary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepPoint {
    /// Concurrency limit (`None`: unlimited).
    pub max_concurrency: Option<u32>,
    /// Request rate.
    pub request_rate: Rate,
    /// Input length (`None` for prompt files).
    pub input_tokens: Option<TokenCount>,
    /// Output length (`None`: from the prompt file).
    pub output_tokens: Option<TokenCount>,
    /// Measured requests per trial at this point (`None`: trials by `duration`, and
    /// `multi_turn` and `trace` trials, whose count comes from their conversations or file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<u32>,
    /// Replay speed of a `trace` dataset (`None`: not a trace).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_speed: Option<f64>,
    /// What the dataset makes of a request, for the label (not a sweep key).
    #[serde(skip)]
    pub shape: PointShape,
}

/// The kind of request a point sends, as its label says it: the lengths of a `random` or
/// file dataset, a shared prefix and a suffix, conversations, or a trace's own requests.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum PointShape {
    /// `in=… out=…` (`in=file` for a prompt file).
    #[default]
    Lengths,
    /// A shared prefix and each prompt's own suffix: `in=PREFIX+SUFFIX`.
    SharedPrefix {
        /// Tokens of each group's prefix.
        prefix: TokenCount,
        /// Tokens of each prompt's own part.
        suffix: TokenCount,
    },
    /// Conversations: `turns=… user=…`.
    MultiTurn {
        /// Turns per conversation.
        turns: TokenCount,
        /// Tokens of each new user message.
        user: TokenCount,
    },
    /// A replayed trace: its own clock and lengths (`rate=trace`).
    Trace,
}

/// The shape of the spec's requests.
pub fn shape_of(spec: &SpecFile) -> PointShape {
    let d = &spec.spec.workload.dataset;
    match d.kind {
        DatasetKind::SharedPrefix => {
            d.shared_prefix
                .as_ref()
                .map_or(PointShape::Lengths, |sp| PointShape::SharedPrefix {
                    prefix: sp.prefix_tokens,
                    suffix: sp.suffix_tokens,
                })
        }
        DatasetKind::MultiTurn => {
            d.multi_turn
                .as_ref()
                .map_or(PointShape::Lengths, |m| PointShape::MultiTurn {
                    turns: m.turns,
                    user: m.user_tokens,
                })
        }
        DatasetKind::Trace => PointShape::Trace,
        _ => PointShape::Lengths,
    }
}

impl SweepPoint {
    /// The same point of the sweep: the same keys (concurrency, rate, lengths), whatever
    /// the request count.
    pub fn same_point(&self, other: &SweepPoint) -> bool {
        self.max_concurrency == other.max_concurrency
            && self.request_rate == other.request_rate
            && self.input_tokens == other.input_tokens
            && self.output_tokens == other.output_tokens
            && self.trace_speed == other.trace_speed
    }

    /// Whether every key set in `p` has this point's value.
    pub fn matches(&self, p: &SweepPointSpec) -> bool {
        p.max_concurrency
            .is_none_or(|c| self.max_concurrency == Some(c))
            && p.request_rate.is_none_or(|r| r == self.request_rate)
            && p.input_tokens
                .is_none_or(|n| self.input_tokens == Some(TokenCount::Fixed(n)))
            && p.output_tokens
                .is_none_or(|n| self.output_tokens == Some(TokenCount::Fixed(n)))
            && p.trace_speed.is_none_or(|s| self.trace_speed == Some(s))
    }
}

impl fmt::Display for SweepPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.max_concurrency {
            Some(c) => write!(f, "c={c}")?,
            None => write!(f, "c=unlimited")?,
        }
        let tok = |t: Option<TokenCount>| match t {
            Some(t) => count(t),
            None => "file".into(),
        };
        match self.shape {
            PointShape::Lengths => write!(
                f,
                " rate={} in={} out={}",
                self.request_rate,
                tok(self.input_tokens),
                tok(self.output_tokens)
            )?,
            PointShape::SharedPrefix { prefix, suffix } => write!(
                f,
                " rate={} in={}+{} out={}",
                self.request_rate,
                count(prefix),
                count(suffix),
                tok(self.output_tokens)
            )?,
            PointShape::MultiTurn { turns, user } => write!(
                f,
                " rate={} turns={} user={} out={}",
                self.request_rate,
                count(turns),
                count(user),
                tok(self.output_tokens)
            )?,
            // A trace sends on its own clock with its own lengths (an output override shows).
            PointShape::Trace => {
                write!(f, " rate=trace")?;
                if let Some(o) = self.output_tokens {
                    write!(f, " out={}", count(o))?;
                }
            }
        }
        // Only trace points name their speed: the labels of other points are unchanged.
        match self.trace_speed {
            Some(s) => write!(f, " speed={s}x"),
            None => Ok(()),
        }
    }
}

fn count(t: TokenCount) -> String {
    match t {
        TokenCount::Fixed(n) => n.to_string(),
        TokenCount::Range(r) => format!("{}..{}", r.min, r.max),
    }
}

/// The full matrix of sweep points, before `exclude` and `include`. Keys vary with
/// `max_concurrency` outermost, then `request_rate`, `input_tokens`, `output_tokens`.
/// With no matrix key but some `include` entries the matrix is empty: the sweep is the
/// included points alone.
pub fn matrix_points(spec: &SpecFile) -> Vec<SweepPoint> {
    let w = &spec.spec.workload;
    let sw = &spec.spec.sweep;
    let conc: Vec<Option<u32>> = match &sw.max_concurrency {
        Some(v) => v.iter().map(|c| Some(*c)).collect(),
        None => vec![w.max_concurrency],
    };
    let rates: Vec<Rate> = sw
        .request_rate
        .clone()
        .unwrap_or_else(|| vec![w.request_rate]);
    let ins: Vec<Option<TokenCount>> = match &sw.input_tokens {
        Some(v) => v.iter().map(|n| Some(TokenCount::Fixed(*n))).collect(),
        None => vec![w.dataset.input_tokens],
    };
    let outs: Vec<Option<TokenCount>> = match &sw.output_tokens {
        Some(v) => v.iter().map(|n| Some(TokenCount::Fixed(*n))).collect(),
        None => vec![w.dataset.output_tokens],
    };
    let speeds: Vec<Option<f64>> = match &sw.trace_speed {
        Some(v) => v.iter().map(|s| Some(*s)).collect(),
        None => vec![w.dataset.trace.as_ref().map(|t| t.speed)],
    };
    let requests = trial_requests(spec);
    let mut points = Vec::new();
    let no_matrix_key = sw.max_concurrency.is_none()
        && sw.request_rate.is_none()
        && sw.input_tokens.is_none()
        && sw.output_tokens.is_none()
        && sw.trace_speed.is_none();
    if no_matrix_key && !sw.include.is_empty() {
        // a sweep of `include` entries alone is exactly those points
        return points;
    }
    for c in &conc {
        for r in &rates {
            for i in &ins {
                for o in &outs {
                    for s in &speeds {
                        points.push(SweepPoint {
                            max_concurrency: *c,
                            request_rate: *r,
                            input_tokens: *i,
                            output_tokens: *o,
                            requests,
                            trace_speed: *s,
                            shape: shape_of(spec),
                        });
                    }
                }
            }
        }
    }
    points
}

/// The matrix points that `exclude` leaves.
pub fn kept_matrix_points(spec: &SpecFile) -> Vec<SweepPoint> {
    let exclude = &spec.spec.sweep.exclude;
    matrix_points(spec)
        .into_iter()
        .filter(|p| !exclude.iter().any(|e| p.matches(e)))
        .collect()
}

/// The sweep points that run, in order: the matrix less `exclude`, then `include`.
pub fn sweep_points(spec: &SpecFile) -> Vec<SweepPoint> {
    let sw = &spec.spec.sweep;
    let mut points = kept_matrix_points(spec);
    for inc in &sw.include {
        let p = include_point(spec, inc);
        // A point already in the sweep runs once (validation refuses one listed again with
        // a different request count).
        if !points.iter().any(|q| q.same_point(&p)) {
            points.push(p);
        }
    }
    points
}

/// The sweep point an `include` entry adds: keys not given take the workload's value.
pub fn include_point(spec: &SpecFile, inc: &SweepPointSpec) -> SweepPoint {
    let w = &spec.spec.workload;
    SweepPoint {
        max_concurrency: inc.max_concurrency.or(w.max_concurrency),
        request_rate: inc.request_rate.unwrap_or(w.request_rate),
        input_tokens: inc
            .input_tokens
            .map(TokenCount::Fixed)
            .or(w.dataset.input_tokens),
        output_tokens: inc
            .output_tokens
            .map(TokenCount::Fixed)
            .or(w.dataset.output_tokens),
        requests: inc.requests.or(trial_requests(spec)),
        trace_speed: inc
            .trace_speed
            .or(w.dataset.trace.as_ref().map(|t| t.speed)),
        shape: shape_of(spec),
    }
}

/// Measured requests per trial from the workload: `workload.requests`, or for a
/// `shared_prefix` dataset `groups × prompts_per_group`; `None` for trials by `duration`,
/// `multi_turn` (the conversations' turns) and `trace` (the trace's window).
pub fn trial_requests(spec: &SpecFile) -> Option<u32> {
    let w = &spec.spec.workload;
    match (&w.dataset.kind, &w.dataset.shared_prefix) {
        (DatasetKind::SharedPrefix, Some(sp)) if w.requests.is_none() => {
            Some(sp.groups.saturating_mul(sp.prompts_per_group))
        }
        _ => w.requests,
    }
}

/// The sweep point of one search trial at `load`: the workload with the axis set to it.
pub fn search_point(spec: &SpecFile, search: &crate::types::Search, load: f64) -> SweepPoint {
    // The workload's own point (what an empty `include` entry gives), with the axis set.
    let mut p = include_point(spec, &Default::default());
    match search.axis {
        crate::types::SearchAxis::RequestRate => p.request_rate = Rate::PerSecond(load),
        crate::types::SearchAxis::MaxConcurrency => {
            p.max_concurrency = Some(load.round().max(1.0) as u32)
        }
    }
    p
}
