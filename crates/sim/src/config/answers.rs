//! `--answers FILE`: reference answers the simulated model gives right for a share of their
//! prompts, so that a task-accuracy probe (servebench's `equivalence.reference`) measures
//! something on the simulator.

use std::collections::HashMap;
use std::path::Path;

use crate::SimError;
use crate::tokenizer;

/// Answers by prompt: a hash of the prompt's token ids, on the completions API (the prompt
/// alone) and on the chat API (the prompt as the one user message), to the answer.
#[derive(Debug, Default, PartialEq)]
pub struct Answers {
    by_prompt: HashMap<u64, String>,
    lines: usize,
}

impl Answers {
    /// Reads a JSONL file of `{"prompt": "…", "answer": "…"}` lines (other fields, other
    /// lines without both, are ignored: a reference line with only a `regex` has no answer
    /// to give).
    pub fn load(path: &Path) -> Result<Self, SimError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| SimError::InvalidConfig(format!("--answers {}: {e}", path.display())))?;
        let mut by_prompt = HashMap::new();
        let mut lines = 0;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let v: serde_json::Value = serde_json::from_str(line).map_err(|e| {
                SimError::InvalidConfig(format!("--answers {}:{}: {e}", path.display(), i + 1))
            })?;
            let answer = match v.get("answer") {
                Some(serde_json::Value::String(s)) => Some(s.clone()),
                Some(serde_json::Value::Number(n)) => Some(n.to_string()),
                _ => None,
            };
            let (Some(p), Some(a)) = (v.get("prompt").and_then(serde_json::Value::as_str), answer)
            else {
                continue;
            };
            lines += 1;
            for ids in [
                tokenizer::encode(p),
                tokenizer::encode(&tokenizer::render_chat([("user", p)])),
            ] {
                by_prompt.insert(tokenizer::prompt_hash(&ids), a.trim().to_owned());
            }
        }
        if by_prompt.is_empty() {
            return Err(SimError::InvalidConfig(format!(
                "--answers {}: no line has both `prompt` and `answer`",
                path.display()
            )));
        }
        Ok(Answers { by_prompt, lines })
    }

    /// The answer to the prompt whose token ids hash to `prompt`.
    pub fn get(&self, prompt: u64) -> Option<&str> {
        self.by_prompt.get(&prompt).map(String::as_str)
    }

    /// Lines read with a prompt and an answer.
    pub fn lines(&self) -> usize {
        self.lines
    }
}
