//! Flags of the output text.

use crate::SimError;
use crate::config::{AnswerParams, Answers, OutputParams};

/// What the simulated model writes.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Output text")]
pub struct OutputArgs {
    /// Chat answers start with N reasoning tokens, streamed in the engine's reasoning field
    /// (`reasoning_content`, vLLM `reasoning`) before the answer's `content`.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub reasoning_tokens: u32,
    /// Share of prompts whose greedy (temperature 0) output changes from a position drawn
    /// per prompt (chosen by prompt hash), as a numerics change flips an argmax.
    #[arg(long, value_name = "F", default_value_t = 0.0)]
    pub numerics_change: f64,
    /// Share of prompts whose greedy output, from a position drawn per prompt, depends on
    /// the number of sequences in that step (no batch invariance).
    #[arg(long, value_name = "F", default_value_t = 0.0)]
    pub batch_variance: f64,
    /// A JSONL file of `{"prompt": …, "answer": …}` lines: a greedy completion of one of its
    /// prompts starts with the answer and a newline, for a share `--answer-accuracy` of them
    /// (chosen by prompt hash) and none that `--numerics-change` picked; the others answer
    /// with words as usual (wrong).
    #[arg(long, value_name = "FILE")]
    pub answers: Option<std::path::PathBuf>,
    /// Share of the `--answers` prompts answered right (default 1).
    #[arg(long, value_name = "F", requires = "answers")]
    pub answer_accuracy: Option<f64>,
}

impl OutputArgs {
    pub(crate) fn to_params(&self) -> Result<OutputParams, SimError> {
        let answers = match &self.answers {
            // Read once per process and kept: every greedy response may look one up.
            Some(path) => {
                let set: &'static Answers = Box::leak(Box::new(Answers::load(path)?));
                Some(AnswerParams {
                    set,
                    prompts: set.lines(),
                    accuracy: self.answer_accuracy.unwrap_or(1.0),
                })
            }
            None => None,
        };
        Ok(OutputParams {
            reasoning_tokens: self.reasoning_tokens,
            numerics_change: self.numerics_change,
            batch_variance: self.batch_variance,
            answers,
        })
    }
}
