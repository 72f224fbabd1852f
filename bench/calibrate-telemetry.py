#!/usr/bin/env python3
"""False-alarm and detection rates of the telemetry flags (server-queued, throttled,
gpu-busy-at-start, preempted, kv-full) on the simulator with a scripted GPU.

Not a CI test: its outcomes are random by design. Each run is a `servebench run` of a
simulator A/A with `telemetry` on, its GPU a scripted H200 (`SERVEBENCH_FAKE_GPU`) whose
samples carry seeded noise (SM clock ±15 MHz, power ±25 W, utilisation ±5 %, and a software
power cap on 5 % of the samples in both arms), its own `workload.seed` and
`SERVEBENCH_FAKE_GPU_SEED`, and a fresh run id (so fresh simulator jitter); then `servebench
compare --json`. docs/statistics-measured.md quotes its output.

    python3 bench/calibrate-telemetry.py [--scenarios aa,queued,throttled,capped,busy,kvfull]
                                         [--runs N] [--workdir DIR] [--bin PATH]

Scenarios (runs: --runs, or the default):
* aa (100): two identical arms, the engine's batch above every point's concurrency; a false
  alarm is a run with any telemetry flag.
* queued (20): the engine's --max-num-seqs 4 under points c=2 and c=16; detection:
  server-queued at c=16 and at no other point, no other telemetry flag.
* throttled (20): the candidate's GPU power-capped on 60 % of its samples, its SM clock at
  1700 MHz (of 1980); detection: throttled.
* capped (20): the candidate power-capped on 60 % of its samples at an unchanged SM clock, so
  only the share of throttled samples can tell; detection: throttled.
* busy (20): before each candidate start a leftover process holds 8148 MiB; detection:
  gpu-busy-at-start naming it.
* kvfull (20): a KV cache of 1024 tokens (18 requests of 32 + 24) at c=32; detection: kv-full.

The simulator never preempts (it reserves KV at admission), so `preempted` has no fault to
inject here: its rule is tested on evidence (crates/stats/src/flags/telemetry.rs), and its
false alarms are counted in every scenario above.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

TELEMETRY = ["server-queued", "throttled", "gpu-busy-at-start", "preempted", "kv-full"]

FAKE = {
    "devices": [{"index": 0, "name": "NVIDIA H200",
                 "uuid": "GPU-00000000-1111-2222-3333-444444444444",
                 "memory_total_mib": 143771, "max_sm_clock_mhz": 1980, "power_limit_w": 700}],
    "sample": {"sm_clock_mhz": 1965, "mem_clock_mhz": 3201, "power_w": 430, "temperature_c": 55,
               "util_gpu_pct": 90, "util_mem_pct": 60, "memory_used_mib": 60000, "throttle": 0},
    "noise": {"seed": 0, "sm_clock_mhz": 15, "power_w": 25, "util_gpu_pct": 5,
              "throttle_share": 0.05, "throttle_bits": 4},
}


def spec(server_args, points, requests):
    return f"""apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: tel-cal}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --jitter-cv, "0.03", --speed-cv, "0.01", --decode-base-ms, "2", --decode-per-seq-ms, "0.05"{server_args}]
    readiness: {{http: {{path: /health}}, interval: 50ms, timeout: 30s}}
  target: {{api: openai-completions, model: sim-model, tokenizer: server}}
  variants:
    - {{name: base, baseline: true, server: {{args: [--label, base]}}}}
    - {{name: cand, server: {{args: [--label, cand]}}}}
  workload:
    dataset: {{kind: random, input_tokens: 32, output_tokens: 24}}
    ignore_eos: true
    seed: 1
    requests: {requests}
    request_rate: inf
  sweep: {{max_concurrency: [{points}]}}
  trials: {{count: 3}}
  compare: {{metrics: [output_throughput, tpot_p50]}}
  telemetry: {{interval: 100ms}}
"""


SCENARIOS = {
    # name: (server args, points, requests, variant script, runs)
    "aa": ("", "2, 16", 48, {}, 100),
    "queued": (', --max-num-seqs, "4"', "2, 16", 64, {}, 20),
    "throttled": ("", "2, 16", 64,
                  {"cand": {"sample": {"sm_clock_mhz": 1700}, "throttle_share": 0.6}}, 20),
    "capped": ("", "2, 16", 64, {"cand": {"throttle_share": 0.6}}, 20),
    "busy": ("", "2, 16", 64,
             {"cand": {"busy_at_start": [{"pid": 429, "name": "python3", "used_mib": 8148,
                                          "gpu": 0}]}}, 20),
    "kvfull": (', --kv-capacity-tokens, "1024", --max-model-len, "512"', "2, 32", 64, {}, 20),
}


def run_one(binary, work, name, i, scenario):
    server_args, points, requests, variants, _ = scenario
    d = os.path.join(work, f"{name}-{i:03d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "spec.yaml"), "w") as f:
        f.write(spec(server_args, points, requests))
    fake = dict(FAKE, variants=variants)
    with open(os.path.join(d, "gpu.json"), "w") as f:
        json.dump(fake, f)
    env = dict(os.environ, SERVEBENCH_FAKE_GPU=os.path.join(d, "gpu.json"),
               SERVEBENCH_FAKE_GPU_SEED=str(1000 + i))
    r = subprocess.run([binary, "run", "-q", "spec.yaml", "--set", f"workload.seed={i + 1}"],
                       cwd=d, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"  {name} {i}: run failed: {r.stderr.strip()[-300:]}", file=sys.stderr)
        return None
    results = os.path.join(d, "results", "tel-cal")
    files = [f for f in os.listdir(results) if f.endswith(".json")]
    c = subprocess.run([binary, "compare", "--json", os.path.join(results, files[0])],
                       cwd=d, capture_output=True, text=True)
    report = json.loads(c.stdout)
    flags = []
    for f in report["comparisons"][0]["flags"]:
        if f["id"] in TELEMETRY:
            pts = sorted({c["point"] for c in f.get("threatens", {}).get("cells", [])})
            flags.append((f["id"], pts, f["evidence"]))
    return flags


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--runs", type=int)
    ap.add_argument("--workdir")
    ap.add_argument("--bin", default="target/debug/servebench")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    work = a.workdir or tempfile.mkdtemp(prefix="sb-telcal-")
    for name in a.scenarios.split(","):
        sc = SCENARIOS[name]
        runs = a.runs or sc[4]
        outcomes = [run_one(binary, work, name, i, sc) for i in range(runs)]
        ok = [o for o in outcomes if o is not None]
        any_flag = sum(1 for o in ok if o)
        by_id = {t: sum(1 for o in ok if any(f[0] == t for f in o)) for t in TELEMETRY}
        print(f"{name}: {len(ok)} runs ({runs - len(ok)} failed to run)")
        print(f"  runs with any telemetry flag: {any_flag} ({100.0 * any_flag / max(len(ok), 1):.1f}%)")
        for t, n in by_id.items():
            if n:
                print(f"  {t}: {n} runs")
        if name == "queued":
            exact = sum(1 for o in ok if [(f[0], f[1]) for f in o] == [("server-queued", ["c=16"])])
            print(f"  server-queued at c=16 and nothing else: {exact} of {len(ok)}")
        if name == "busy":
            named = sum(1 for o in ok if any(f[0] == "gpu-busy-at-start" and "python3 (pid 429" in f[2] for f in o))
            print(f"  gpu-busy-at-start naming python3 (pid 429): {named} of {len(ok)}")
        if name == "kvfull":
            at = sum(1 for o in ok if any(f[0] == "kv-full" and f[1] == ["c=32"] for f in o))
            print(f"  kv-full at c=32 only: {at} of {len(ok)}")
        sys.stdout.flush()
    print(f"work dir: {work}")


if __name__ == "__main__":
    main()
