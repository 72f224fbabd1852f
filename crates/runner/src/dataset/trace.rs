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
use std::io::BufRead;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

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

/// Reads and checks a trace; `ms_per_unit` converts its timestamps to milliseconds (1 for
/// `ms`, 1000 for `s`).
pub fn load_trace(
    path: &Path,
    layout: TraceLayout,
    ms_per_unit: f64,
) -> Result<Vec<TraceEntry>, DatasetError> {
    let file = std::fs::File::open(path).map_err(|e| DatasetError::io(path, e))?;
    let mut out: Vec<TraceEntry> = Vec::new();
    let mut last: Option<(f64, usize)> = None;
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| DatasetError::io(path, e))?;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |message: String| DatasetError::Parse {
            path: path.to_owned(),
            line: i + 1,
            message,
        };
        let (ts, input, output, hash_ids) = match layout {
            TraceLayout::Plain => {
                let l: PlainLine = serde_json::from_str(&line).map_err(|e| {
                    bad(format!(
                        "{e}; a plain trace line is {{\"timestamp\": 0, \"input_tokens\": 512, \
                         \"output_tokens\": 64}} (for Mooncake's layout set `trace.format: \
                         mooncake`)"
                    ))
                })?;
                (l.timestamp, l.input_tokens, l.output_tokens, Vec::new())
            }
            TraceLayout::Mooncake { block_tokens } => {
                let l: MooncakeLine = serde_json::from_str(&line).map_err(|e| {
                    bad(format!(
                        "{e}; a Mooncake trace line is {{\"timestamp\": 0, \"input_length\": \
                         1024, \"output_length\": 64, \"hash_ids\": [0, 1]}}"
                    ))
                })?;
                let b = u64::from(block_tokens);
                let blocks = u64::from(l.input_length).div_ceil(b);
                if l.input_length > 0 && l.hash_ids.len() as u64 != blocks {
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
        if !ts.is_finite() || ts < 0.0 {
            return Err(bad(format!(
                "timestamp {ts} is not a time: write a number ≥ 0"
            )));
        }
        if let Some((prev, prev_line)) = last
            && ts < prev
        {
            return Err(bad(format!(
                "timestamp {ts} is earlier than {prev} on line {prev_line}: a trace must be \
                 sorted by time"
            )));
        }
        last = Some((ts, i + 1));
        if input == 0 || output == 0 {
            return Err(bad("input and output lengths must be at least 1".into()));
        }
        out.push(TraceEntry {
            at_ns: (ts * ms_per_unit * 1e6).round() as u64,
            input_tokens: input,
            output_tokens: output,
            hash_ids,
        });
    }
    if out.is_empty() {
        return Err(DatasetError::Empty);
    }
    let t0 = out[0].at_ns;
    for e in &mut out {
        e.at_ns -= t0;
    }
    Ok(out)
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
            return Err(DatasetError::InvalidLength(format!(
                "the trace window (start {:?}, duration {:?}, requests {:?}) holds no request \
                 of the trace's {}",
                window.start,
                window.duration,
                window.requests,
                trace.len()
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

    /// The longest prompt of the window, in tokens (checked against the server's limit).
    pub fn longest_input(&self) -> u32 {
        self.entries
            .iter()
            .map(|e| e.input_tokens + e.output_tokens)
            .max()
            .unwrap_or(0)
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
mod tests {
    use super::*;
    use crate::dataset::tokenize::WordCount;

    fn write(lines: &str) -> tempfile::NamedTempFile {
        use std::io::Write;
        let mut f = tempfile::NamedTempFile::new().expect("tmp");
        f.write_all(lines.as_bytes()).expect("write");
        f
    }

    #[test]
    fn bad_lines_are_refused_with_their_line_number() {
        let f = write(
            "{\"timestamp\": 0, \"input_tokens\": 8, \"output_tokens\": 2}\n\n{\"timestamp\": 5, \"input_tokens\": 8}\n",
        );
        let e = load_trace(f.path(), TraceLayout::Plain, 1.0).expect_err("missing field");
        assert!(
            e.to_string().contains(":3: missing field `output_tokens`"),
            "{e}"
        );
        let f = write(
            "{\"timestamp\": 10, \"input_tokens\": 8, \"output_tokens\": 2}\n{\"timestamp\": 5, \"input_tokens\": 8, \"output_tokens\": 2}\n",
        );
        let e = load_trace(f.path(), TraceLayout::Plain, 1.0).expect_err("backwards");
        assert!(
            e.to_string()
                .contains(":2: timestamp 5 is earlier than 10 on line 1"),
            "{e}"
        );
        let f = write(
            "{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 2, \"hash_ids\": [1]}\n",
        );
        let e = load_trace(f.path(), TraceLayout::Mooncake { block_tokens: 512 }, 1.0)
            .expect_err("blocks");
        assert!(
            e.to_string().contains("needs 2 hash_ids, the line has 1"),
            "{e}"
        );
    }

    #[test]
    fn timestamps_in_seconds_and_windows() {
        let f = write(
            "{\"timestamp\": 1.5, \"input_tokens\": 8, \"output_tokens\": 2}\n{\"timestamp\": 2, \"input_tokens\": 8, \"output_tokens\": 2}\n{\"timestamp\": 4, \"input_tokens\": 8, \"output_tokens\": 2}\n",
        );
        let t = load_trace(f.path(), TraceLayout::Plain, 1000.0).expect("loads");
        let at: Vec<u64> = t.iter().map(|e| e.at_ns).collect();
        assert_eq!(at, [0, 500_000_000, 2_500_000_000]);
        let w = TraceWindow {
            start: Duration::from_millis(400),
            duration: Some(Duration::from_secs(3)),
            requests: None,
        };
        assert_eq!(w.select(&t).len(), 2);
        let w = TraceWindow {
            requests: Some(1),
            ..w
        };
        assert_eq!(w.select(&t)[0].at_ns, 500_000_000);
    }

    #[tokio::test]
    async fn mooncake_blocks_are_shared_and_lengths_exact() {
        let f = write(concat!(
            "{\"timestamp\": 0, \"input_length\": 20, \"output_length\": 2, \"hash_ids\": [7, 8, 9]}\n",
            "{\"timestamp\": 10, \"input_length\": 18, \"output_length\": 3, \"hash_ids\": [7, 8, 4]}\n",
            "{\"timestamp\": 30, \"input_length\": 5, \"output_length\": 3, \"hash_ids\": [8]}\n",
        ));
        let layout = TraceLayout::Mooncake { block_tokens: 8 };
        let t = load_trace(f.path(), layout, 1.0).expect("loads");
        let mut b =
            TraceBuilder::new(&t, TraceWindow::default(), layout, false, WordCount).expect("ok");
        let p = b.trial_prompts(1, 2.0, 1, 1, 0).await.expect("builds");
        assert_eq!(p.send_offsets_ns, Some(vec![0, 5_000_000, 15_000_000]));
        let words: Vec<Vec<&str>> = p
            .measured
            .iter()
            .map(|pr| match &pr.body {
                PromptBody::Text(t) => t.split(' ').collect(),
                PromptBody::Messages(_) => panic!("text"),
            })
            .collect();
        assert_eq!(words[0].len(), 20);
        assert_eq!(words[1].len(), 18);
        assert_eq!(words[0][..16], words[1][..16], "blocks 7 and 8 shared");
        assert_ne!(words[0][16..18], words[1][16..18], "block 9 is not block 4");
        assert_eq!(
            words[2][..5],
            words[0][8..13],
            "block 8 is the same text alone"
        );
        assert_eq!(p.measured[1].max_tokens, 3);
        let other = b.trial_prompts(0, 1.0, 1, 2, 0).await.expect("builds");
        assert_ne!(
            other.measured[0], p.measured[0],
            "trials draw their own blocks"
        );
    }
}
