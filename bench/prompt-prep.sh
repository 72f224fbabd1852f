#!/usr/bin/env bash
# CPU cost of preparing random prompts with a local tokenizer.json: 7,500 prompts of 128
# tokens, exact in tokens, one builder (as one sweep point of a run). Prints CPU µs a prompt
# and tokenizer calls a prompt. docs/performance.md, "Preparing prompts".
#
#   bench/prompt-prep.sh [TOKENIZER_JSON] [N] [TOKENS]
#   (default: the repository's test tokenizer, crates/runner/tests/fixtures/tokenizer/)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p servebench-runner --example prompt_prep
target/release/examples/prompt_prep "$@"
