//! The two tables' columns: each column is one line here, its name, its type and how its
//! value is read from a trial or a request, so a new column is one line (and a row in
//! docs/export.md, which a CLI test checks) and reaches CSV and Parquet alike.

use super::{Column, Table, Values};
use crate::metrics::{RequestMetrics, TrialSummary, derive, itl_gaps};
use crate::{PointInfo, RequestLine, RunResult, TrialResult, TrialStatus};

type Get<'a, C, T> = Box<dyn Fn(&C) -> Option<T> + 'a>;

enum Getter<'a, C> {
    Int(Get<'a, C, i64>),
    Float(Get<'a, C, f64>),
    Str(Get<'a, C, String>),
    Bool(Get<'a, C, bool>),
}

/// Columns over rows of context `C`, typed by their constructor.
struct Columns<'a, C> {
    cols: Vec<(String, bool, Getter<'a, C>)>,
}

/// A count or index as the tables' integer (saturating: no count reaches `i64::MAX`).
fn int(v: impl TryInto<i64>) -> i64 {
    v.try_into().unwrap_or(i64::MAX)
}

impl<'a, C> Columns<'a, C> {
    fn new() -> Self {
        Self { cols: Vec::new() }
    }

    fn push(mut self, name: &str, nullable: bool, get: Getter<'a, C>) -> Self {
        self.cols.push((name.to_owned(), nullable, get));
        self
    }

    /// An integer in every row.
    fn int<T: TryInto<i64>>(self, name: &str, f: impl Fn(&C) -> T + 'a) -> Self {
        self.push(name, false, Getter::Int(Box::new(move |c| Some(int(f(c))))))
    }

    /// An integer where the row has one.
    fn opt_int<T: TryInto<i64>>(self, name: &str, f: impl Fn(&C) -> Option<T> + 'a) -> Self {
        self.push(name, true, Getter::Int(Box::new(move |c| f(c).map(int))))
    }

    /// A float in every row.
    fn float(self, name: &str, f: impl Fn(&C) -> f64 + 'a) -> Self {
        self.push(name, false, Getter::Float(Box::new(move |c| Some(f(c)))))
    }

    /// A float where the row has one.
    fn opt_float(self, name: &str, f: impl Fn(&C) -> Option<f64> + 'a) -> Self {
        self.push(name, true, Getter::Float(Box::new(f)))
    }

    /// A string in every row.
    fn str(self, name: &str, f: impl Fn(&C) -> String + 'a) -> Self {
        self.push(name, false, Getter::Str(Box::new(move |c| Some(f(c)))))
    }

    /// A string where the row has one (an empty string is no value).
    fn opt_str(self, name: &str, f: impl Fn(&C) -> Option<String> + 'a) -> Self {
        let get = move |c: &C| f(c).filter(|s| !s.is_empty());
        self.push(name, true, Getter::Str(Box::new(get)))
    }

    /// A boolean in every row.
    fn bool(self, name: &str, f: impl Fn(&C) -> bool + 'a) -> Self {
        self.push(name, false, Getter::Bool(Box::new(move |c| Some(f(c)))))
    }

    fn table(self, rows: &[C]) -> Table {
        let columns = self
            .cols
            .into_iter()
            .map(|(name, nullable, get)| {
                let values = match get {
                    Getter::Int(f) => Values::Int(rows.iter().map(f).collect()),
                    Getter::Float(f) => Values::Float(rows.iter().map(f).collect()),
                    Getter::Str(f) => Values::Str(rows.iter().map(f).collect()),
                    Getter::Bool(f) => Values::Bool(rows.iter().map(f).collect()),
                };
                Column {
                    name,
                    nullable,
                    values,
                }
            })
            .collect();
        Table { columns }
    }
}

/// What a trial row is read from.
struct TrialRow<'r> {
    t: &'r TrialResult,
    p: Option<&'r PointInfo>,
    s: Option<&'r TrialSummary>,
}

/// One row per trial of `result`: every variant, sweep point and repetition, failed trials
/// included (their metrics absent), then every catalogue metric under its name.
pub fn trials(result: &RunResult) -> Table {
    let rows: Vec<TrialRow<'_>> = result
        .trials
        .iter()
        .map(|t| TrialRow {
            t,
            p: result.points.get(t.point),
            s: t.summary.as_ref(),
        })
        .collect();
    let mut cols = Columns::<TrialRow<'_>>::new()
        .str("run_id", |_| result.run_id.clone())
        .str("spec_name", |_| result.spec_name.clone())
        .str("variant", |r| r.t.variant.clone())
        .int("trial", |r| r.t.trial)
        .int("seq", |r| r.t.seq)
        .int("block", |r| r.t.block)
        .int("point", |r| r.t.point)
        .opt_str("point_label", |r| r.p.map(|p| p.label.clone()))
        .opt_int("max_concurrency", |r| r.p.and_then(|p| p.max_concurrency))
        .opt_float("request_rate", |r| r.p.and_then(|p| p.request_rate))
        .opt_int("input_tokens", |r| r.p.and_then(|p| p.input_tokens))
        .opt_int("output_tokens", |r| r.p.and_then(|p| p.output_tokens))
        .str("status", |r| match r.t.status {
            TrialStatus::Ok => "ok".into(),
            TrialStatus::Failed => "failed".into(),
        })
        .opt_str("failure", |r| r.t.failure.clone())
        .str("started_at", |r| r.t.started_at.clone())
        .str("ended_at", |r| r.t.ended_at.clone())
        .opt_int("requests", |r| r.s.map(|s| s.all.requests))
        .opt_int("completed", |r| r.s.map(|s| s.all.completed))
        .opt_int("failed_requests", |r| r.s.map(|s| s.all.failed))
        .opt_float("duration_s", |r| r.s.and_then(|s| s.all.duration_s));
    for m in servebench_spec::metrics::catalogue() {
        let name = m.name;
        let key = name.clone();
        cols = cols.opt_float(&name, move |r| r.s.and_then(|s| s.metric(&key)));
    }
    cols.table(&rows)
}

/// What a request row is read from: its sidecar line and the metrics derived from it.
struct RequestRow<'r> {
    l: &'r RequestLine,
    m: RequestMetrics,
    itl_mean: Option<f64>,
}

/// One row per request line of `result`'s sidecar (`lines`, as [`crate::read_requests`]
/// reads them; warm-up requests included, marked by `warmup`).
pub fn requests(result: &RunResult, lines: &[RequestLine]) -> Table {
    let rows: Vec<RequestRow<'_>> = lines
        .iter()
        .map(|l| {
            let m = derive(&l.record);
            let (mut sum, mut n) = (0.0, 0usize);
            for (gap, _) in itl_gaps(&l.record, &m) {
                sum += gap;
                n += 1;
            }
            RequestRow {
                l,
                m,
                itl_mean: (n > 0).then(|| sum / n as f64),
            }
        })
        .collect();
    Columns::<RequestRow<'_>>::new()
        .str("run_id", |_| result.run_id.clone())
        .str("variant", |r| r.l.variant.clone())
        .int("trial", |r| r.l.trial)
        .int("seq", |r| r.l.seq)
        .int("point", |r| r.l.point)
        .opt_str("point_label", |r| {
            result.points.get(r.l.point).map(|p| p.label.clone())
        })
        .bool("warmup", |r| r.l.warmup)
        .int("index", |r| r.l.record.index)
        .int("prompt_index", |r| r.l.record.prompt_index)
        .opt_int("conversation", |r| r.l.record.turn.map(|t| t.conversation))
        .opt_int("turn", |r| r.l.record.turn.map(|t| t.turn))
        .opt_str("error", |r| r.m.failure.map(|e| e.to_string()))
        .opt_str("flags", |r| {
            let flags: Vec<String> = r.l.flags.iter().map(ToString::to_string).collect();
            Some(flags.join(";"))
        })
        .float("intended_ms", |r| r.l.record.intended_ns as f64 / 1e6)
        .opt_float("queue_ms", |r| r.m.queue_ms)
        .opt_float("ttft_ms", |r| r.m.ttft_ms)
        .opt_float("tpot_ms", |r| r.m.tpot_ms)
        .opt_float("itl_mean_ms", |r| r.itl_mean)
        .opt_float("e2e_ms", |r| r.m.e2e_ms)
        .opt_int("input_tokens", |r| r.m.n_in)
        .opt_int("cached_tokens", |r| {
            r.l.record
                .usage
                .and_then(|u| u.prompt_tokens_details)
                .and_then(|d| d.cached_tokens)
        })
        .opt_int("output_tokens", |r| r.m.n_out)
        .int("token_events", |r| r.l.record.events.len())
        .int("max_tokens", |r| r.l.record.max_tokens)
        .opt_int("output_target", |r| r.l.record.output_target)
        .opt_str("finish_reason", |r| r.l.record.finish_reason.clone())
        // The engine's own word, beside the one vocabulary (the same where they agree).
        .opt_str("finish_reason_sent", |r| {
            let rec = &r.l.record;
            rec.finish_reason_sent
                .clone()
                .or_else(|| rec.finish_reason.clone())
        })
        .opt_float("server_ttft_ms", |r| r.m.server_ttft_ms)
        .opt_float("ttfr_ms", |r| r.m.ttfr_ms)
        .opt_float("ttfa_ms", |r| r.m.ttfa_ms)
        .opt_int("reasoning_tokens", |r| r.m.reasoning_tokens)
        .opt_int("answer_tokens", |r| r.m.answer_tokens)
        .table(&rows)
}
