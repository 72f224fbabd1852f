//! Progress people expect on long work: bars on a terminal, plain lines otherwise, or
//! nothing with `--quiet`.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use servebench_spec::plan::{Plan, PlannedTrial};

use servebench_result::{RunResult, TrialResult, TrialStatus};

use super::recorder::Reporter;

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// Bars when stderr is a terminal, lines otherwise.
    Auto,
    /// Plain log lines on stderr.
    Lines,
    /// Nothing but errors.
    Quiet,
}

/// The progress display of one run.
#[derive(Debug)]
pub(super) struct Progress {
    mode: ProgressMode,
    bars: Option<(MultiProgress, ProgressBar, ProgressBar)>,
    total: usize,
}

impl Progress {
    /// Bars or lines for `plan`; trials already in `result` count as done.
    pub(super) fn new(mode: ProgressMode, plan: &Plan, result: &RunResult) -> Self {
        let done = result.trials.len() as u64;
        let bars = (mode == ProgressMode::Auto && std::io::stderr().is_terminal()).then(|| {
            let mp = MultiProgress::new();
            let run = mp.add(ProgressBar::new(plan.trial_count as u64));
            run.set_style(
                ProgressStyle::with_template(
                    "{prefix:>6} [{bar:40}] {pos}/{len} trials  {elapsed_precise} (eta {eta})",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            run.set_prefix("run");
            run.set_position(done);
            let trial = mp.add(ProgressBar::new_spinner());
            trial.set_style(
                ProgressStyle::with_template("{prefix:>6} {spinner} {msg} {elapsed}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            trial.set_prefix("trial");
            trial.enable_steady_tick(Duration::from_millis(120));
            (mp, run, trial)
        });
        let mode = if mode == ProgressMode::Auto && bars.is_none() {
            ProgressMode::Lines
        } else {
            mode
        };
        Self {
            mode,
            bars,
            total: plan.trial_count,
        }
    }

    /// Update `bar` every half second with the live output-token rate until dropped.
    pub(super) async fn live_throughput(bar: Option<ProgressBar>) {
        let Some(bar) = bar else {
            return std::future::pending().await;
        };
        let _counting = crate::loadgen::progress::Counting::start();
        let base = bar.message();
        let mut last = (
            std::time::Instant::now(),
            crate::loadgen::progress::tokens_received(),
        );
        loop {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let now = (
                std::time::Instant::now(),
                crate::loadgen::progress::tokens_received(),
            );
            let dt = now.0.duration_since(last.0).as_secs_f64();
            if dt > 0.0 {
                let rate = (now.1 - last.1) as f64 / dt;
                bar.set_message(format!("{base} — {rate:.0} tok/s live"));
            }
            last = now;
        }
    }
}

impl Reporter for Progress {
    /// Trials added to the run after it started (a round of a sequential run).
    fn add_planned(&mut self, trials: usize) {
        self.total += trials;
        if let Some((_, run, _)) = &self.bars {
            run.set_length(self.total as u64);
        }
    }

    /// A status line.
    fn line(&self, msg: &str) {
        // Status lines carry what servers said (a failure's detail, a log's tail).
        let msg = &*servebench_spec::text::printable(msg);
        match (&self.bars, self.mode) {
            (Some((mp, ..)), _) => {
                let _ = mp.println(msg);
            }
            (None, ProgressMode::Quiet) => {}
            (None, _) => eprintln!("servebench: {msg}"),
        }
    }

    /// A line said even with `-q`: something the result will lack (a probe not sent).
    fn warn(&self, msg: &str) {
        let msg = format!("warning: {}", servebench_spec::text::printable(msg));
        match &self.bars {
            Some((mp, ..)) => {
                let _ = mp.println(&msg);
            }
            None => eprintln!("servebench: {msg}"),
        }
    }

    /// A trial begins.
    fn trial_start(&self, t: &PlannedTrial, point: &str) {
        let msg = format!(
            "#{}/{} {} t={} {}",
            t.seq + 1,
            self.total,
            t.variant,
            t.trial,
            point
        );
        match &self.bars {
            Some((_, _, bar)) => {
                bar.reset_elapsed();
                bar.set_message(msg);
            }
            None if self.mode == ProgressMode::Lines => eprintln!("servebench: trial {msg} …"),
            None => {}
        }
    }

    /// The trial bar, when bars are shown (for live updates while a trial runs).
    fn trial_bar(&self) -> Option<ProgressBar> {
        self.bars.as_ref().map(|(_, _, bar)| bar.clone())
    }

    /// A trial ended (recorded).
    fn trial_end(&self, t: &TrialResult) {
        let what = match (&t.status, &t.summary) {
            (TrialStatus::Ok, Some(s)) => {
                // A trial whose requests all failed has no latency: "—", not "NaN".
                let shown =
                    |v: Option<f64>| v.map_or_else(|| "—".to_owned(), |v| format!("{v:.1}"));
                let mut line = format!(
                    "{} tok/s out, ttft p50 {} ms, {} ok / {} failed",
                    shown(s.metric("output_throughput")),
                    shown(s.metric("ttft_p50")),
                    s.all.completed,
                    s.all.failed
                );
                // Flags are not failures, but a number may not mean what it seems: say so.
                let flagged: Vec<String> = s
                    .flags
                    .iter()
                    .map(|(f, n)| match (f, s.input_mismatch) {
                        (servebench_result::record::RequestFlag::InputLengthMismatch, Some(m)) => {
                            format!(
                                "{n} {f} (server counted {} prompt tokens for {} sent)",
                                m.counted_tokens, m.sent_tokens
                            )
                        }
                        (servebench_result::record::RequestFlag::ContentHeldBack, _) => {
                            format!(
                                "{n} {f} ({:.1}% of completed)",
                                100.0 * *n as f64 / s.all.completed.max(1) as f64
                            )
                        }
                        _ => format!("{n} {f}"),
                    })
                    .collect();
                if !flagged.is_empty() {
                    line.push_str(&format!(" — flagged: {}", flagged.join(", ")));
                }
                line
            }
            _ => format!(
                "FAILED: {}",
                servebench_spec::text::printable(t.failure.as_deref().unwrap_or("?"))
            ),
        };
        let msg = format!(
            "#{} {} t={} point [{}]: {what}",
            t.seq + 1,
            t.variant,
            t.trial,
            t.point
        );
        match &self.bars {
            Some((mp, run, _)) => {
                run.inc(1);
                let _ = mp.println(msg);
            }
            None if self.mode == ProgressMode::Lines => eprintln!("servebench: {msg}"),
            None => {}
        }
    }

    /// Clear the bars.
    fn finish(&self) {
        if let Some((_, run, trial)) = &self.bars {
            trial.finish_and_clear();
            run.finish();
        }
    }
}
