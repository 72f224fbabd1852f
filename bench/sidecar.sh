#!/usr/bin/env bash
# The request sidecar's size on one simulator point: 7,500 requests × 128 output tokens
# (128-token prompts) at concurrency 256, measured through specs/endpoint.yaml against a
# simulator started here. Prints the compressed sidecar's size (what `run` writes), the same
# lines as plain JSON with version-1 events ([t_ns, tokens] pairs, what `run` wrote before),
# and the ratio. docs/performance.md, "The request sidecar".
#
#   bench/sidecar.sh                 # 7,500 requests
#   REQUESTS=1000 bench/sidecar.sh   # smaller
set -euo pipefail
cd "$(dirname "$0")/.."
SB=${SERVEBENCH:-target/release/servebench}
REQUESTS=${REQUESTS:-7500}
[ -x "$SB" ] || cargo build --release -p servebench
work=$(mktemp -d)
trap 'kill "$sim" 2>/dev/null || true; rm -rf "$work"' EXIT
"$SB" sim --port 0 --decode-base-ms 2 --decode-per-seq-ms 0.01 >"$work/sim.out" 2>&1 &
sim=$!
for _ in $(seq 50); do grep -q listening "$work/sim.out" && break; sleep 0.1; done
addr=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/sim.out" | head -1)
"$SB" run specs/endpoint.yaml -q --results-dir "$work/results" \
  --set target.base_url="$addr" --set target.model=sim-model \
  --requests "$REQUESTS" -c 256 --set workload.warmup_requests=0 >/dev/null
side=$(ls "$work"/results/endpoint/*.requests.jsonl.zst)
python3 - "$side" <<'PY'
import json, subprocess, sys
side = sys.argv[1]
plain = subprocess.run(["zstd", "-dc", side], check=True, capture_output=True).stdout
v1 = 0
lines = plain.splitlines()
for line in lines:
    d = json.loads(line)
    ev = d.get("events")
    if isinstance(ev, dict):
        us = (ev["t0_ns"] + 500) // 1000
        ts, tok = [ev["t0_ns"]], ev.get("tokens")
        for dt in ev["dt_us"]:
            us += dt
            ts.append(us * 1000)
        d["events"] = [[t, tok[i] if tok else 1] for i, t in enumerate(ts)]
    d.pop("record_version", None)
    d.pop("flags", None)
    v1 += len(json.dumps(d, separators=(",", ":"))) + 1
import os
z = os.path.getsize(side)
print(f"requests: {len(lines)}")
print(f"version-1 JSON lines (before): {v1} bytes, {v1 / len(lines):.0f} bytes a request")
print(f"version-2 JSON lines (uncompressed): {len(plain)} bytes")
print(f"sidecar as written (.jsonl.zst): {z} bytes, {z / len(lines):.0f} bytes a request")
print(f"smaller by: {v1 / z:.1f}x")
PY
