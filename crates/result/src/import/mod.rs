//! `servebench import sglang|vllm FILE`: another tool's result file as a servebench result
//! (`origin: imported`), one single-trial result per run the file holds, so `compare` and
//! `report` read it and flag it honestly (single trial, stale baseline, not comparable).
//!
//! * [`lenient`] reads Python's `Infinity` / `NaN` tokens without failing.
//! * [`sglang`] and [`vllm`] map each tool's fields (docs/import.md lists them with the
//!   versions read) into an [`Imported`] run: workload, summary metrics by catalogue name,
//!   per-request arrays when the file has them, and notes where a definition differs.
//! * [`build`] turns an [`Imported`] run into a [`RunResult`]: a spec that says what the
//!   tool ran, one sweep point, one trial.

pub mod build;
pub mod detect;
mod fields;
pub mod lenient;
pub mod sglang;
pub mod trials;
pub mod vllm;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use servebench_spec::{ApiKind, DatasetKind, Rate, TokenCount};

use crate::RunResult;

pub use build::build_result;
pub use trials::pool_as_trials;

/// The tools whose files are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportTool {
    /// SGLang's `python -m sglang.bench_serving --output-file FILE` (JSON lines).
    Sglang,
    /// vLLM's `vllm bench serve --save-result` / `benchmarks/benchmark_serving.py` (one JSON
    /// object; `--append-result` writes one per line).
    Vllm,
}

impl ImportTool {
    /// `sglang` or `vllm`.
    pub fn as_str(self) -> &'static str {
        match self {
            ImportTool::Sglang => "sglang",
            ImportTool::Vllm => "vllm",
        }
    }
}

/// What the caller knows that the file does not say.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImportOptions {
    /// `metadata.name` of the result (default: `<tool>-<model>`).
    pub name: Option<String>,
    /// Variant name (default: the tool's `backend`).
    pub variant: Option<String>,
    /// Model name when the file does not record it (SGLang does not).
    pub model: Option<String>,
    /// Input length of the workload, when the file does not record it (vLLM does not).
    pub input_tokens: Option<TokenCount>,
    /// Output length of the workload, when the file does not record it.
    pub output_tokens: Option<TokenCount>,
    /// Only this line of a JSON-lines file (from 1).
    pub line: Option<usize>,
}

/// Why a file could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file could not be read.
    #[error("cannot read {path}: {error}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// A line or document is not JSON even when read leniently.
    #[error("{path}:{line}: not JSON ({message}); a {tool} result is {shape}")]
    NotJson {
        /// The file.
        path: PathBuf,
        /// Line (1 for a whole-file document).
        line: usize,
        /// The parser's message.
        message: String,
        /// The tool.
        tool: &'static str,
        /// What the file should look like.
        shape: &'static str,
    },
    /// The JSON is not the tool's result: a field it always writes is missing or mistyped.
    #[error("{path}:{line}: {message}")]
    Field {
        /// The file.
        path: PathBuf,
        /// Line.
        line: usize,
        /// What is wrong and what to do.
        message: String,
    },
    /// The file is the other tool's result.
    #[error(
        "{path}:{line}: this is {found} (it has {evidence}), not {asked}: import it with \
         `servebench import {command} {path}`"
    )]
    OtherTool {
        /// The file.
        path: PathBuf,
        /// Line of the document.
        line: usize,
        /// The tool asked for, in words.
        asked: &'static str,
        /// The tool whose file it is, in words.
        found: &'static str,
        /// The fields that say so.
        evidence: String,
        /// The subcommand's tool name.
        command: &'static str,
    },
    /// A name given on the command line does not fit the spec's pattern.
    #[error("{what} `{value}` does not fit the spec's pattern {pattern}: {hint}")]
    BadName {
        /// `--name` or `--variant`.
        what: &'static str,
        /// The name given.
        value: String,
        /// The pattern.
        pattern: &'static str,
        /// What to write instead.
        hint: String,
    },
    /// Nothing to import.
    #[error("{path}: {message}")]
    Empty {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// Per-request arrays, when the tool saved them (`--output-details` / `--save-detailed`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PerRequest {
    /// Prompt length of each request.
    pub input_lens: Vec<u64>,
    /// Output tokens of each request (0 for a failed one).
    pub output_lens: Vec<u64>,
    /// TTFT of each request in seconds (0 for a failed one).
    pub ttfts: Vec<f64>,
    /// Gaps between token-bearing chunks of each request, in seconds.
    pub itls: Vec<Vec<f64>>,
    /// Error text of each request (empty on success).
    pub errors: Vec<String>,
}

impl PerRequest {
    /// Whether request `i` succeeded: no error text and a first token (the tools write a
    /// TTFT of 0 for a request that failed without saying why).
    pub fn ok(&self, i: usize) -> bool {
        let t = self.ttfts[i];
        self.errors[i].is_empty() && t.is_finite() && t > 0.0
    }

    /// Requests that did not succeed, by [`Self::ok`].
    pub fn failures(&self) -> usize {
        (0..self.ttfts.len()).filter(|&i| !self.ok(i)).count()
    }
}

/// One run read from another tool's file, in servebench's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The tool.
    pub tool: ImportTool,
    /// The source file.
    pub source: PathBuf,
    /// sha256 of the source file.
    pub source_sha256: String,
    /// Line of a JSON-lines file.
    pub line: Option<usize>,
    /// The tool's date field, as written.
    pub measured_at: Option<String>,
    /// The tool's backend (`sglang`, `vllm`, `openai-chat`…).
    pub backend: String,
    /// The model, when known.
    pub model: Option<String>,
    /// The tokenizer the tool counted lengths with, when known.
    pub tokenizer: Option<String>,
    /// Completions or chat.
    pub api: ApiKind,
    /// Dataset kind.
    pub dataset: DatasetKind,
    /// Input length.
    pub input_tokens: Option<TokenCount>,
    /// Output length.
    pub output_tokens: Option<TokenCount>,
    /// Whether the requests asked to ignore EOS (as far as known).
    pub ignore_eos: bool,
    /// Requests measured (completed + failed).
    pub requests: u32,
    /// Target rate.
    pub request_rate: Rate,
    /// Gamma shape of arrivals (vLLM), when not 1.
    pub burstiness: Option<f64>,
    /// Concurrency limit.
    pub max_concurrency: Option<u32>,
    /// Trial duration in seconds.
    pub duration_s: Option<f64>,
    /// Successful requests.
    pub completed: u64,
    /// Failed requests.
    pub failed: u64,
    /// Σ input tokens of successful requests.
    pub input_tokens_total: Option<u64>,
    /// Σ output tokens of successful requests.
    pub output_tokens_total: Option<u64>,
    /// Metrics the tool reported, by servebench catalogue name.
    pub reported: BTreeMap<String, f64>,
    /// Per-request arrays, when present.
    pub per_request: Option<PerRequest>,
    /// Source field → catalogue metric or spec field it became.
    pub mapped: BTreeMap<String, String>,
    /// Source fields not read.
    pub ignored: Vec<String>,
    /// Differences of definition and unknowns, in sentences.
    pub notes: Vec<String>,
    /// Extra labels for `metadata.labels` (e.g. vLLM `--metadata` pairs).
    pub labels: BTreeMap<String, String>,
}

/// sha256 of bytes as `sha256:<hex>`.
fn sha256(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// The JSON documents of a file: one per non-empty line, or the whole file when it is one
/// (pretty-printed) document. Each with its line number.
fn documents(
    path: &Path,
    text: &str,
    tool: ImportTool,
) -> Result<Vec<(usize, serde_json::Value)>, ImportError> {
    let shape = match tool {
        ImportTool::Sglang => "one JSON object per line (bench_serving --output-file)",
        ImportTool::Vllm => "one JSON object (vllm bench serve --save-result), or one per line",
    };
    if let Ok(v) = lenient::parse(text) {
        return Ok(vec![(1, v)]);
    }
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v = lenient::parse(line).map_err(|e| ImportError::NotJson {
            path: path.to_owned(),
            line: i + 1,
            message: e.to_string(),
            tool: tool.as_str(),
            shape,
        })?;
        out.push((i + 1, v));
    }
    Ok(out)
}

/// Read `path` as `tool`'s result file: one [`RunResult`] per run in it (or the one at
/// `opts.line`).
pub fn import_file(
    tool: ImportTool,
    path: &Path,
    opts: &ImportOptions,
) -> Result<Vec<RunResult>, ImportError> {
    build::check_names(opts)?;
    let bytes = std::fs::read(path).map_err(|source| ImportError::Read {
        path: path.to_owned(),
        error: source,
    })?;
    if servebench_spec::text::starts_with_bom(&bytes) {
        return Err(ImportError::Field {
            path: path.to_owned(),
            line: 1,
            message: servebench_spec::text::BOM_WORDS.to_owned(),
        });
    }
    let text = String::from_utf8_lossy(&bytes);
    let digest = sha256(&bytes);
    let docs = documents(path, &text, tool)?;
    if docs.is_empty() {
        return Err(ImportError::Empty {
            path: path.to_owned(),
            message: "the file holds no result (it is empty)".into(),
        });
    }
    let many = docs.len() > 1;
    let mut out = Vec::new();
    for (line, doc) in docs {
        if opts.line.is_some_and(|l| l != line) {
            continue;
        }
        if let Some((found, evidence)) = detect::written_by(&doc)
            && found != tool
        {
            return Err(ImportError::OtherTool {
                path: path.to_owned(),
                line,
                asked: detect::describe(tool),
                found: detect::describe(found),
                evidence,
                command: found.as_str(),
            });
        }
        let ctx = Source {
            path,
            line,
            many,
            sha256: &digest,
        };
        let imported = match tool {
            ImportTool::Sglang => sglang::read(&doc, &ctx, opts)?,
            ImportTool::Vllm => vllm::read(&doc, &ctx, opts)?,
        };
        out.push(build_result(&imported, opts));
    }
    if out.is_empty() {
        return Err(ImportError::Empty {
            path: path.to_owned(),
            message: format!(
                "no result on line {}: give a line that holds one (--line N, from 1)",
                opts.line.unwrap_or(0)
            ),
        });
    }
    Ok(out)
}

/// Where a document came from (for messages and the result's `import` record).
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// The file.
    pub path: &'a Path,
    /// Line of the document.
    pub line: usize,
    /// Whether the file holds more than one document.
    pub many: bool,
    /// sha256 of the file.
    pub sha256: &'a str,
}

impl Source<'_> {
    /// A field error at this document.
    pub fn field_error(&self, message: impl Into<String>) -> ImportError {
        ImportError::Field {
            path: self.path.to_owned(),
            line: self.line,
            message: message.into(),
        }
    }
}
