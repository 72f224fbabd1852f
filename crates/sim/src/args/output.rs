//! Flags of the output text.

use crate::config::OutputParams;

/// What the simulated model writes.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Output text")]
pub struct OutputArgs {
    /// Chat answers start with N reasoning tokens, streamed in the engine's reasoning field
    /// (`reasoning_content`, vLLM `reasoning`) before the answer's `content`.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub reasoning_tokens: u32,
}

impl OutputArgs {
    pub(crate) fn to_params(&self) -> OutputParams {
        OutputParams {
            reasoning_tokens: self.reasoning_tokens,
        }
    }
}
