#!/usr/bin/env bash
# TTFT over HTTPS vs plain HTTP (docs/performance.md, "HTTPS"): the paced simulator behind a
# proxy in its own process (`loadgen_bench sim --front tcp|tls`), so both schemes pay the same
# extra hop and differ only by TLS; client and simulator pinned to one core each.
#
#   bench/https.sh            (REPS pairs, default 3; CONC default 64; REQUESTS default 2048)
#
# Env: CLIENT_CPU (default 0), SIM_CPU (default 1), BIN (skips the build), CLIENT_ARGS (extra
# client flags, e.g. --reqwest). Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."

CLIENT_CPU=${CLIENT_CPU:-0}
SIM_CPU=${SIM_CPU:-1}
if [[ -z "${BIN:-}" ]]; then
    cargo build --release -p servebench-runner --example loadgen_bench >&2
    BIN=${CARGO_TARGET_DIR:-target}/release/examples/loadgen_bench
fi
WORK=$(mktemp -d)
SIM_PID=

stop_sim() {
    if [[ -n "$SIM_PID" ]]; then
        kill -TERM "$SIM_PID" 2>/dev/null || true
        wait "$SIM_PID" 2>/dev/null || true
        SIM_PID=
    fi
}
trap 'stop_sim; rm -rf "$WORK"' EXIT

for rep in $(seq "${REPS:-3}"); do
    for front in tcp tls; do
        : >"$WORK/sim.out"
        taskset -c "$SIM_CPU" "$BIN" sim --mode paced --front "$front" --ca-out "$WORK/ca.pem" \
            >"$WORK/sim.out" 2>"$WORK/sim.err" &
        SIM_PID=$!
        URL=
        for _ in $(seq 100); do
            URL=$(sed -n 's/^servebench sim listening on //p' "$WORK/sim.out")
            [[ -n "$URL" ]] && break
            sleep 0.1
        done
        [[ -n "$URL" ]] || { cat "$WORK/sim.err" >&2; exit 1; }
        ca=()
        [[ $front == tls ]] && ca=(--ca-file "$WORK/ca.pem")
        echo "== #$rep $front ($URL)"
        # shellcheck disable=SC2086
        taskset -c "$CLIENT_CPU" "$BIN" client --url "$URL" "${ca[@]}" \
            --requests "${REQUESTS:-2048}" --concurrency "${CONC:-64}" --warmup "${CONC:-64}" \
            --input-tokens 64 --output-tokens 32 ${CLIENT_ARGS:-}
        stop_sim
        echo
    done
done
