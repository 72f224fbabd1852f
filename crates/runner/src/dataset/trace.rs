//! Request traces replayed on their own clock (docs/workloads.md): a JSONL file of timed
//! requests, in the plain layout (`{"timestamp", "input_tokens", "output_tokens"}`) or
//! Mooncake's (`{"timestamp", "input_length", "output_length", "hash_ids"}`).
//!
//! The file is read and checked before the first server starts: a line that is not such an
//! object, a length of 0, a timestamp earlier than the line before, or Mooncake `hash_ids`
//! that do not cover `input_length` in blocks of `block_tokens` is refused with its line
//! number.
//!
//! Prompts are drawn per trial from its prompt seed `s`, so a trial never finds the previous
//! trial's prompts in a prefix cache. A plain line's prompt is random words fitted to its
//! exact length (words from `s`, stream `line index + 1`). A Mooncake prompt is its blocks in
//! order: block `h` is the words of `block_seed(s)`'s stream `h + 1` fitted to `block_tokens`
//! alone, the same text wherever `h` appears; the last block is cut (or fitted) so that the
//! whole prompt has exactly `input_length` tokens. Two lines with the same leading `hash_ids`
//! thus share exactly those leading blocks' text.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use servebench_spec::bounds::{
    MAX_PROMPT_TOKENS, MAX_TRACE_SPAN, MAX_TRIAL_PROMPT_TOKENS, grouped,
};

use super::DatasetError;
use super::lengths::LengthDist;
use super::prompt::{Prompt, PromptBody, TrialPrompts, prompt_seed, splitmix64, warmup_seed};
use super::random::{BuildStats, RandomDataset, RandomPromptBuilder};
use super::tokenize::TokenCounter;

/// Layout of the trace's lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceLayout {
    /// `{"timestamp", "input_tokens", "output_tokens"}`.
    Plain,
    /// `{"timestamp", "input_length", "output_length", "hash_ids"}` with blocks of this many
    /// tokens.
    Mooncake {
        /// Tokens per `hash_ids` block (Mooncake: 512).
        block_tokens: u32,
    },
}

/// One request of a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceEntry {
    /// Due time from the trace's start, in nanoseconds of trace time.
    pub at_ns: u64,
    /// Prompt length in tokens.
    pub input_tokens: u32,
    /// Output length (`max_tokens`).
    pub output_tokens: u32,
    /// Mooncake block ids (empty for a plain trace).
    pub hash_ids: Vec<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlainLine {
    timestamp: f64,
    input_tokens: u32,
    output_tokens: u32,
}

#[derive(Deserialize)]
struct MooncakeLine {
    timestamp: f64,
    input_length: u32,
    output_length: u32,
    hash_ids: Vec<u64>,
}

/// The largest timestamp, in milliseconds, that still keeps microseconds (2⁵³ µs): beyond
/// it two requests a microsecond apart would read as one instant.
const MAX_TIMESTAMP_MS: f64 = 9_007_199_254_740.992;

/// Reads and checks a trace; `ms_per_unit` converts its timestamps to milliseconds (1 for
/// `ms`, 1000 for `s`). Every size is bounded before anything is built from it: a length above
/// [`MAX_PROMPT_TOKENS`], or a timestamp further than [`MAX_TRACE_SPAN`] from the first, is
/// refused with its line.
pub fn load_trace(
    path: &Path,
    layout: TraceLayout,
    ms_per_unit: f64,
) -> Result<Vec<TraceEntry>, DatasetError> {
    let mut out: Vec<TraceEntry> = Vec::new();
    let mut last: Option<(f64, usize)> = None;
    let mut first: Option<f64> = None;
    let (in_key, out_key) = match layout {
        TraceLayout::Plain => ("input_tokens", "output_tokens"),
        TraceLayout::Mooncake { .. } => ("input_length", "output_length"),
    };
    super::lines::for_each_line(path, |number, line| {
        let bad = |message: String| DatasetError::Parse {
            path: path.to_owned(),
            line: number,
            message,
        };
        let (ts, input, output, hash_ids) = match layout {
            TraceLayout::Plain => {
                let l: PlainLine = serde_json::from_str(line).map_err(|e| {
                    bad(format!(
                        "{e}; a plain trace line is {{\"timestamp\": 0, \"input_tokens\": 512, \
                         \"output_tokens\": 64}} (for Mooncake's layout set `trace.format: \
                         mooncake`)"
                    ))
                })?;
                (l.timestamp, l.input_tokens, l.output_tokens, Vec::new())
            }
            TraceLayout::Mooncake { block_tokens } => {
                let l: MooncakeLine = serde_json::from_str(line).map_err(|e| {
                    bad(format!(
                        "{e}; a Mooncake trace line is {{\"timestamp\": 0, \"input_length\": \
                         1024, \"output_length\": 64, \"hash_ids\": [0, 1]}}"
                    ))
                })?;
                let b = u64::from(block_tokens);
                let blocks = u64::from(l.input_length).div_ceil(b);
                if l.input_length > 0
                    && l.input_length <= MAX_PROMPT_TOKENS
                    && l.hash_ids.len() as u64 != blocks
                {
                    return Err(bad(format!(
                        "input_length {} in blocks of {block_tokens} tokens needs {blocks} \
                         hash_ids, the line has {} (set `trace.block_tokens` to the trace's \
                         block size)",
                        l.input_length,
                        l.hash_ids.len()
                    )));
                }
                (l.timestamp, l.input_length, l.output_length, l.hash_ids)
            }
        };
        let shown = show(ts);
        if !ts.is_finite() || ts < 0.0 {
            return Err(bad(format!(
                "timestamp {shown} is not a time: write a number ≥ 0"
            )));
        }
        let unit = if ms_per_unit == 1.0 { "ms" } else { "s" };
        if ts * ms_per_unit > MAX_TIMESTAMP_MS {
            return Err(bad(format!(
                "timestamp {shown} {unit} is too large to keep microseconds apart (at most \
                 {:.0} {unit}): write times from the trace's start, or check \
                 `trace.timestamp_unit` (`ms` or `s`)",
                MAX_TIMESTAMP_MS / ms_per_unit
            )));
        }
        if let Some((prev, prev_line)) = last
            && ts < prev
        {
            return Err(bad(format!(
                "timestamp {shown} is earlier than {} on line {prev_line}: a trace must be \
                 sorted by time",
                show(prev)
            )));
        }
        let t0 = *first.get_or_insert(ts);
        let offset_ms = (ts - t0) * ms_per_unit;
        let span_ms = MAX_TRACE_SPAN.as_secs_f64() * 1e3;
        if offset_ms > span_ms {
            return Err(bad(format!(
                "timestamp {shown} {unit} is {} after the trace's first request: above \
                 servebench's ceiling of {} days of trace time for one replay, so the replay \
                 would wait that long. Check `trace.timestamp_unit` (`ms` or `s`), or split the \
                 trace into files of at most that span",
                human_span(offset_ms / 1e3),
                MAX_TRACE_SPAN.as_secs() / 86_400
            )));
        }
        last = Some((ts, number));
        if input == 0 || output == 0 {
            return Err(bad(format!(
                "`{in_key}` and `{out_key}` must be at least 1"
            )));
        }
        for (key, n) in [(in_key, input), (out_key, output)] {
            if n > MAX_PROMPT_TOKENS {
                return Err(bad(format!(
                    "`{key}` {} is above servebench's ceiling of {} tokens in a prompt or an \
                     answer: write a length no server's context exceeds",
                    grouped(u64::from(n)),
                    grouped(u64::from(MAX_PROMPT_TOKENS))
                )));
            }
        }
        out.push(TraceEntry {
            at_ns: (offset_ms * 1e6).round() as u64,
            input_tokens: input,
            output_tokens: output,
            hash_ids,
        });
        Ok(())
    })?;
    if out.is_empty() {
        return Err(DatasetError::Empty);
    }
    Ok(out)
}

/// A timestamp as written, in scientific notation when it is huge (`1e300`).
fn show(ts: f64) -> String {
    if ts.abs() >= 1e15 {
        format!("{ts:e}")
    } else {
        format!("{ts}")
    }
}

/// Seconds in words: `3 h 20 min`, `12 days`.
fn human_span(secs: f64) -> String {
    if secs >= 86_400.0 * 1e6 {
        format!("{secs:.3e} s")
    } else if secs >= 2.0 * 86_400.0 {
        format!("{:.0} days", secs / 86_400.0)
    } else if secs >= 3600.0 {
        format!(
            "{:.0} h {:.0} min",
            (secs / 3600.0).floor(),
            (secs % 3600.0) / 60.0
        )
    } else {
        format!("{secs:.0} s")
    }
}

/// Which part of a trace a trial replays, in trace time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TraceWindow {
    /// Skip the requests due before this.
    pub start: Duration,
    /// Replay only the requests due within this long after `start`.
    pub duration: Option<Duration>,
    /// Replay at most this many requests.
    pub requests: Option<usize>,
}

impl TraceWindow {
    /// The entries of `trace` inside the window.
    pub fn select<'t>(&self, trace: &'t [TraceEntry]) -> &'t [TraceEntry] {
        let ns = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let start = ns(self.start);
        let a = trace.partition_point(|e| e.at_ns < start);
        let mut b = match self.duration {
            Some(d) => trace.partition_point(|e| e.at_ns < start.saturating_add(ns(d))),
            None => trace.len(),
        };
        if let Some(n) = self.requests {
            b = b.min(a + n);
        }
        &trace[a..b.max(a)]
    }
}

/// Why `window` holds no request of `trace`, with where the trace's requests are due and
/// which key to change.
fn empty_window(trace: &[TraceEntry], window: &TraceWindow) -> String {
    let secs = |ns: u64| ns as f64 / 1e9;
    let (Some(first), Some(last)) = (trace.first(), trace.last()) else {
        return "the trace holds no request".to_owned();
    };
    let span = format!(
        "its {} requests are due from {} s to {} s",
        trace.len(),
        secs(first.at_ns),
        secs(last.at_ns)
    );
    if window.requests == Some(0) {
        return format!(
            "the trace window holds no request: `trace.requests` is 0 ({span}); give at least 1, \
             or leave it out to replay them all"
        );
    }
    let start = window.start.as_secs_f64();
    if start > secs(last.at_ns) {
        return format!(
            "the trace window holds no request: `trace.start` is {start} s, after the last \
             request ({span}); give a `trace.start` below {} s",
            secs(last.at_ns)
        );
    }
    format!(
        "the trace window holds no request: from `trace.start` {start} s for `trace.duration` \
         {} s no request is due ({span}); widen `trace.duration` or move `trace.start`",
        window.duration.map_or(0.0, |d| d.as_secs_f64())
    )
}

/// Builds the prompts and send times of trace trials.
#[derive(Debug)]
pub struct TraceBuilder<C> {
    entries: Vec<TraceEntry>,
    layout: TraceLayout,
    fitter: RandomPromptBuilder<C>,
}

impl<C: TokenCounter> TraceBuilder<C> {
    /// A builder replaying `window` of `trace`; refuses an empty window.
    pub fn new(
        trace: &[TraceEntry],
        window: TraceWindow,
        layout: TraceLayout,
        chat: bool,
        counter: C,
    ) -> Result<Self, DatasetError> {
        let entries = window.select(trace).to_vec();
        if entries.is_empty() {
            return Err(DatasetError::Unusable(empty_window(trace, &window)));
        }
        let total: u64 = entries.iter().map(|e| u64::from(e.input_tokens)).sum();
        if total > MAX_TRIAL_PROMPT_TOKENS {
            return Err(DatasetError::Unusable(format!(
                "the trace window's {} requests total {} prompt tokens: above servebench's \
                 ceiling of {} for one trial, whose prompts are all built before its first \
                 request; replay a shorter window (`trace.duration`, `trace.requests`)",
                entries.len(),
                grouped(total),
                grouped(MAX_TRIAL_PROMPT_TOKENS)
            )));
        }
        let fitter = RandomPromptBuilder::new(
            RandomDataset {
                input_tokens: LengthDist::Fixed { tokens: 1 },
                output_tokens: LengthDist::Fixed { tokens: 1 },
                chat,
            },
            counter,
        )?;
        Ok(TraceBuilder {
            entries,
            layout,
            fitter,
        })
    }

    /// Requests a trial replays.
    pub fn requests(&self) -> usize {
        self.entries.len()
    }

    /// The (prompt, output) lengths of a trial's requests, the window's then `warmup`
    /// warm-ups (the window's first requests again), checked against the server's limit
    /// before any prompt is built.
    pub fn planned_lengths(&self, warmup: usize) -> Vec<(u32, u32)> {
        let of = |e: &TraceEntry| (e.input_tokens, e.output_tokens);
        let warm = self.entries.iter().cycle().take(warmup).map(of);
        self.entries.iter().map(of).chain(warm).collect()
    }

    /// How fitting went.
    pub fn stats(&self) -> BuildStats {
        self.fitter.stats()
    }

    /// The send offsets of a replay at `speed` (2 = twice as fast), from the window's first
    /// request.
    pub fn offsets_ns(&self, speed: f64) -> Vec<u64> {
        let t0 = self.entries.first().map_or(0, |e| e.at_ns);
        self.entries
            .iter()
            .map(|e| ((e.at_ns - t0) as f64 / speed).round() as u64)
            .collect()
    }

    /// Trial `trial` at `point`: every request of the window with its send time at `speed`,
    /// and `warmup` warm-up prompts (the window's first requests, from the warm-up seed: they
    /// share no block with the measured prompts).
    pub async fn trial_prompts(
        &mut self,
        warmup: usize,
        speed: f64,
        workload_seed: u64,
        trial: u32,
        point: u32,
    ) -> Result<TrialPrompts, DatasetError> {
        let seed = prompt_seed(workload_seed, trial, point);
        let entries = self.entries.clone();
        let measured = self.prompts(seed, &entries).await?;
        let warm: Vec<TraceEntry> = entries.iter().cycle().take(warmup).cloned().collect();
        let warmup = self.prompts(warmup_seed(seed), &warm).await?;
        Ok(TrialPrompts {
            measured,
            warmup,
            send_offsets_ns: Some(self.offsets_ns(speed)),
            conversations: None,
        })
    }

    async fn prompts(
        &mut self,
        seed: u64,
        entries: &[TraceEntry],
    ) -> Result<Vec<Prompt>, DatasetError> {
        let mut blocks: HashMap<u64, (String, u32)> = HashMap::new();
        let mut out = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            let (text, count, exact) = match self.layout {
                TraceLayout::Plain => {
                    self.fitter
                        .fit_text(None, 0, (seed, i as u64 + 1), e.input_tokens)
                        .await?
                }
                TraceLayout::Mooncake { block_tokens } => {
                    self.mooncake(seed, e, block_tokens, &mut blocks).await?
                }
            };
            out.push(Prompt {
                body: PromptBody::Text(text),
                expected_input_tokens: Some(count),
                input_tokens_exact: exact,
                max_tokens: e.output_tokens,
                images: Vec::new(),
                parts: None,
            });
        }
        Ok(out)
    }

    /// The blocks of `e` but its last, verbatim, then the last block's words fitted so that
    /// the prompt has exactly `input_tokens`.
    async fn mooncake(
        &mut self,
        seed: u64,
        e: &TraceEntry,
        block_tokens: u32,
        blocks: &mut HashMap<u64, (String, u32)>,
    ) -> Result<(String, u32, bool), DatasetError> {
        let bseed = block_seed(seed);
        let mut lead = String::new();
        let mut lead_tokens = 0;
        let (last, full) = e.hash_ids.split_last().expect("checked at load");
        for h in full {
            if !blocks.contains_key(h) {
                let (t, c, _) = self
                    .fitter
                    .fit_text(None, 0, (bseed, h.wrapping_add(1)), block_tokens)
                    .await?;
                blocks.insert(*h, (t, c));
            }
            let (t, c) = &blocks[h];
            if !lead.is_empty() {
                lead.push(' ');
            }
            lead.push_str(t);
            lead_tokens += c;
        }
        let lead = (!lead.is_empty()).then_some(lead.as_str());
        self.fitter
            .fit_text(
                lead,
                lead_tokens,
                (bseed, last.wrapping_add(1)),
                e.input_tokens,
            )
            .await
    }
}

/// The seed of a trial's Mooncake block words.
fn block_seed(seed: u64) -> u64 {
    splitmix64(seed ^ 0x626c_6f63_6b00_0000) // "block"
}

#[cfg(test)]
mod tests;
