//! `spec.setup`: the files a named set-up script makes before a run (a tokenizer and probe
//! prompts written under /tmp on the GPU machine). `validate` on a machine that has not run
//! the script reports each of them as made by it — a warning — rather than as an error; a
//! missing file the spec does not declare this way stays an error.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A set-up script and the files it makes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Setup {
    /// The script that makes them, as it is run (e.g. `scripts/gpu/setup-moe`), relative
    /// to the repository or absolute.
    pub script: String,
    /// The files it makes, as the spec names them elsewhere (e.g.
    /// `/tmp/servebench-moe/tokenizer.json`).
    pub makes: Vec<String>,
}

impl Setup {
    /// Whether the spec declares `file` (as it names it) as made by the script.
    pub fn makes(&self, file: &str) -> bool {
        self.makes.iter().any(|m| m == file)
    }
}
