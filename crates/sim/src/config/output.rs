//! What the simulated model writes: reasoning before the answer, and how its greedy output
//! may change with numerics or batch size.

use serde::Serialize;

use crate::SimError;

/// The output text's settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OutputParams {
    /// Chat answers start with this many reasoning tokens (in the personality's reasoning
    /// field), then the answer; they count in `max_tokens` and `completion_tokens`, as a
    /// reasoning model's do.
    pub reasoning_tokens: u32,
    /// Share of prompts whose greedy (`temperature: 0`) output changes, from a position
    /// drawn per prompt, as a numerics change (a kernel, a precision) flips an argmax.
    /// Chosen by prompt hash: the same prompts at every server start.
    pub numerics_change: f64,
    /// Share of prompts whose greedy output, from a position drawn per prompt, depends on
    /// how many sequences ran in that step: no batch invariance.
    pub batch_variance: f64,
    /// `--answers`: reference answers the greedy output starts with, for a share of their
    /// prompts (chosen by prompt hash) whose output no numerics change touches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answers: Option<AnswerParams>,
}

/// `--answers FILE` and `--answer-accuracy F`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnswerParams {
    /// The answers, read once at start and kept for the process's life.
    #[serde(skip)]
    pub set: &'static super::Answers,
    /// Prompts with an answer.
    pub prompts: usize,
    /// Share of them answered right.
    pub accuracy: f64,
}

impl OutputParams {
    /// Checks ranges.
    pub fn validate(&self) -> Result<(), SimError> {
        for (name, v) in [
            ("numerics_change", self.numerics_change),
            ("batch_variance", self.batch_variance),
            (
                "answer_accuracy",
                self.answers.as_ref().map_or(0.0, |a| a.accuracy),
            ),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(SimError::InvalidConfig(format!(
                    "{name} is a share of prompts in [0, 1], got {v}"
                )));
            }
        }
        Ok(())
    }
}
