#!/usr/bin/env bash
# Load-generator benchmark (docs/performance.md): client and simulator in separate
# processes, each pinned to its own core with taskset.
#
#   bench/loadgen.sh [zero|paced|c10k|scale|all]     (default: all; scale is not in all)
#
# Env: CLIENT_CPU (default 0), SIM_CPU (default 1), BIN, and per-scenario sizes below.
# Loopback only; every run is bounded by the client's trial deadline.
set -euo pipefail
cd "$(dirname "$0")/.."

CLIENT_CPU=${CLIENT_CPU:-0}
SIM_CPU=${SIM_CPU:-1}
which=${1:-all}

# BIN=path/to/loadgen_bench skips the build (e.g. a copied binary on another host).
if [[ -z "${BIN:-}" ]]; then
    cargo build --release -p servebench-runner --example loadgen_bench >&2
    BIN=target/release/examples/loadgen_bench
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

# Starts the simulator in mode $1 on $SIM_CPU (further arguments go to it); sets URL.
start_sim() {
    : >"$WORK/sim.out"
    taskset -c "$SIM_CPU" "$BIN" sim --mode "$@" >"$WORK/sim.out" 2>"$WORK/sim.err" &
    SIM_PID=$!
    for _ in $(seq 100); do
        URL=$(sed -n 's/^servebench sim listening on //p' "$WORK/sim.out")
        [[ -n "$URL" ]] && return 0
        sleep 0.1
    done
    echo "simulator did not start:" >&2
    cat "$WORK/sim.err" >&2
    exit 1
}

scenario() {
    local name=$1 mode=$2
    shift 2
    echo "== $name (sim --mode $mode, client: $*)"
    start_sim $mode
    taskset -c "$CLIENT_CPU" "$BIN" client --url "$URL" "$@"
    stop_sim
    echo
}

if [[ $which == zero || $which == all ]]; then
    # Client CPU per token event: the simulator streams as fast as it can. With reads dated
    # by the kernel's stamp (the default) and by the clock (--user-clock), alternating.
    for rep in $(seq "${ZERO_REPS:-2}"); do
        for client in "" --user-clock; do
            scenario "zero-delay #$rep ${client:-load generator}" zero --requests "${ZERO_REQUESTS:-2000}" \
                --concurrency "${ZERO_CONC:-64}" --input-tokens 32 --output-tokens 256 $client
        done
    done
fi
if [[ $which == c10k || $which == all ]]; then
    # 10,000 streams open at once (one token per 250 ms, 40 tokens: ~10 s each).
    scenario c10k c10k --requests 10000 --concurrency 10000 --warmup 0 \
        --input-tokens 16 --output-tokens 40
fi
if [[ $which == paced || $which == all ]]; then
    # What the client adds to TTFT at concurrency 256 with 10 ms decode steps: the load
    # generator (reads dated by the kernel's receive stamp, the default), the same with reads
    # dated by the clock (--user-clock), then the same requests through the do-nothing
    # reference client (--raw), alternating.
    for rep in $(seq "${PACED_REPS:-3}"); do
        for client in "" --user-clock --raw; do
            scenario "paced #$rep ${client:-load generator}" paced --requests "${PACED_REQUESTS:-2048}" \
                --concurrency 256 --warmup 256 --input-tokens 64 --output-tokens 32 $client
        done
    done
    # The same at concurrency 1 (short outputs to keep it brief): no burst to fall behind.
    for client in "" --user-clock --raw; do
        scenario "paced c=1 ${client:-load generator}" paced --requests 200 --concurrency 1 \
            --warmup 8 --input-tokens 64 --output-tokens 4 $client
    done
fi
if [[ $which == scale ]]; then
    # Client CPU per token event and per read at concurrency 64 against 1024, every stream
    # admitted at once (sim --mode wide), 64 output tokens: at the same decode step (10 ms,
    # a GPU-like pace: 6,400 against 102,400 events/s) and at the same total event rate
    # (c=1024 at 160 ms steps; c=64 at 0.625 ms steps). Alternating, SCALE_REPS times.
    # The do-nothing reference client (--raw) runs the same requests: what does not scale in
    # the reference either is the kernel's and the loopback's, not the load generator's.
    for rep in $(seq "${SCALE_REPS:-2}"); do
        for run in "64 2048 10" "1024 8192 10" "1024 3072 160" "64 8192 0.625"; do
            set -- $run
            for client in "" --raw; do
                scenario "scale #$rep c=$1 step=${3}ms ${client:-load generator}" "wide --step-ms $3" \
                    --requests "$2" --concurrency "$1" --warmup "$1" --input-tokens 32 \
                    --output-tokens 64 $client
            done
        done
    done
fi
