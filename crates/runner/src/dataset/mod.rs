//! Prompts for trials: random prompts fitted to an exact input length, JSONL and ShareGPT
//! files, and the seeds that make them paired across variants and distinct across trials.
//!
//! Builders: [`RandomPromptBuilder`] (random, with a [`TokenCounter`]: the server's
//! `/tokenize`, or approximate word counts) and [`FileDataset`] (entries from
//! [`load_jsonl`] or [`load_sharegpt`]). Both give a [`TrialPrompts`] per
//! `(workload seed, trial, sweep point)`, ready for `loadgen::run_trial`.

pub mod conversation;
pub mod file_images;
pub mod files;
pub mod image;
pub mod lengths;
mod lines;
pub mod prompt;
pub mod random;
pub mod shared;
pub mod sharegpt;
pub mod tokenize;
pub mod trace;
pub mod vocab;

use std::path::{Path, PathBuf};

pub use conversation::{MultiTurnBuilder, MultiTurnDataset};
pub use files::{FileDataset, FileEntry, encode_images, load_jsonl};
pub use lengths::LengthDist;
pub use prompt::{
    ChatMessage, ContentPart, Conversation, Conversations, Prompt, PromptBody, TrialPrompts,
    UserTurn, prompt_seed, warmup_seed,
};
pub use random::{BuildStats, RandomDataset, RandomPromptBuilder};
pub use shared::{SharedPrefixBuilder, SharedPrefixDataset};
pub use sharegpt::load_sharegpt;
pub use tokenize::{
    AnyCounter, LocalTokenizer, ServerTokenizer, TokenCounter, TokenizeStyle, TokenizerSpec,
    WordCount,
};
pub use trace::{TraceBuilder, TraceEntry, TraceLayout, TraceWindow, load_trace};

/// A dataset that cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// A length distribution or fixed length that cannot be used.
    #[error("invalid length distribution {0}")]
    InvalidLength(String),
    /// A dataset that cannot be built for another reason than its lengths (a trace window
    /// that holds no request, a trial too large to build), said whole with what to do.
    #[error("{0}")]
    Unusable(String),
    /// The tokenizer failed or could not be loaded.
    #[error("tokenizer: {0}")]
    Tokenize(String),
    /// A dataset file could not be read.
    #[error("reading {path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        error: std::io::Error,
    },
    /// A line of a dataset file is not what its format expects.
    #[error("{path}:{line}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line, 1-based.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// The file has no usable entry.
    #[error("the file has no usable entry")]
    Empty,
    #[error(
        "a trial needs {needed} prompts but the file has {available}: add prompts, or lower \
         `workload.requests`"
    )]
    /// A trial needs more prompts than the file holds.
    NotEnoughEntries {
        /// Prompts a trial needs.
        needed: usize,
        /// Entries the file has.
        available: usize,
    },
    #[error(
        "line {line} of the prompt file gives no output length: add `\"max_tokens\": 128` to \
         it, or set `workload.dataset.output_tokens`"
    )]
    /// An entry gives no output length and none is fixed.
    MissingOutputLength {
        /// The file's line where the entry starts, 1-based.
        line: usize,
    },
}

impl DatasetError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        DatasetError::Io {
            path: path.to_owned(),
            error: source,
        }
    }
}
