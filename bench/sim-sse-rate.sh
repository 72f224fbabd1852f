#!/usr/bin/env bash
# SSE event rate of `servebench sim --zero-delay` against a bare axum server streaming the
# same events, each server on one core (current-thread runtime pinned with taskset to cpu
# SERVER_CPU), counted by a raw-socket client process pinned to CLIENT_CPU.
#
#   bench/sim-sse-rate.sh [--secs S] [--rounds R] [--conns C] [--tokens N]
#
# NICE=-10 bench/sim-sse-rate.sh runs it at a higher priority (root only), so that other
# work on a shared machine disturbs the measurement less. Exits 1 below a 0.90 ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench -p servebench-sim --bench sse_rate --no-run >&2
exe=$(cargo bench -p servebench-sim --bench sse_rate --no-run --message-format=json 2>/dev/null |
  sed -n 's/.*"executable":"\([^"]*sse_rate[^"]*\)".*/\1/p' | tail -1)
args=(--server-cpu "${SERVER_CPU:-0}" --client-cpu "${CLIENT_CPU:-1}" "$@")
if [[ -n "${NICE:-}" ]]; then
  exec nice -n "$NICE" "$exe" "${args[@]}"
fi
exec "$exe" "${args[@]}"
