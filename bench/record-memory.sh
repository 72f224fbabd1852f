#!/usr/bin/env bash
# Peak memory of the per-request path (records → summary → sidecar) for 10k, 100k and 1M
# requests in one trial, and for 1M requests as 100 trials of 10k (a long run). Each case
# runs in its own process (peak RSS is per process). TOKENS (default 128) sets the output
# tokens per request. The 1M single-trial case needs about 5 GB of memory and writes a
# 2.5 GB sidecar to the temporary folder (removed at the end).
#
#   bench/record-memory.sh            # see docs/reliability.md for the figures measured
set -euo pipefail
cd "$(dirname "$0")/.."
tokens="${TOKENS:-128}"
cargo build --release -q -p servebench-result --example record_memory
bin=target/release/examples/record_memory
nice -n 19 "$bin" 10000 1 "$tokens"
nice -n 19 "$bin" 100000 1 "$tokens"
nice -n 19 "$bin" 1000000 1 "$tokens"
nice -n 19 "$bin" 10000 100 "$tokens"
