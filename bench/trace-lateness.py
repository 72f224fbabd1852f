#!/usr/bin/env python3
"""How late servebench's trace replay sends each request against its timestamp.

Not a CI test (its figures depend on the machine); the CI test
(crates/cli/tests/it/workloads_e2e.rs) only checks a loose bound.

    python3 bench/trace-lateness.py [--rate 200] [--requests 2000] [--trials 3]
                                    [--workdir DIR] [--bin PATH]

Writes a plain trace of --requests requests at a constant --rate (requests/s; 24-token
prompts, 4 output tokens), replays it --trials times on the simulator (--preset fast, on the
same host) and prints, with the load average, over every measured request, the mean, p50, p99 and max of the
lateness `send_ns − intended_ns` in ms, from the result's request records. Unless --bin is
given, the release binary is built and copied into the workdir first.
"""

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

SPEC = """apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: trace-lateness}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --preset, fast, --seed, "7"]
    readiness: {{http: {{path: /health}}, interval: 20ms, timeout: 20s}}
    stop: {{signal: SIGTERM, grace: 5s}}
  target: {{api: openai-completions, model: sim-model, tokenizer: server}}
  variants:
    - {{name: base, baseline: true}}
  workload:
    dataset:
      kind: trace
      path: trace.jsonl
      trace: {{format: plain, timestamp_unit: ms}}
    seed: 1
    warmup_requests: 8
    request_timeout: 30s
  trials: {{count: {trials}}}
  compare:
    metrics: [ttft_p50]
"""


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=float, default=200.0)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--workdir", default="/tmp/servebench-trace-lateness")
    ap.add_argument("--bin")
    a = ap.parse_args()
    work = Path(a.workdir)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    repo = Path(__file__).resolve().parent.parent
    if a.bin:
        binary = Path(a.bin)
    else:
        subprocess.run(["cargo", "build", "--release", "-p", "servebench"], cwd=repo, check=True)
        binary = work / "servebench"
        shutil.copy(repo / "target/release/servebench", binary)
    gap_ms = 1000.0 / a.rate
    with open(work / "trace.jsonl", "w") as f:
        for i in range(a.requests):
            f.write(json.dumps({"timestamp": round(i * gap_ms, 6), "input_tokens": 24,
                                "output_tokens": 4}) + "\n")
    (work / "spec.yaml").write_text(SPEC.format(trials=a.trials))
    subprocess.run([str(binary), "run", "--quiet", "--no-bars", "--results-dir",
                    str(work / "results"), str(work / "spec.yaml")], cwd=work, check=True)
    results = list((work / "results" / "trace-lateness").glob("*.json"))
    assert len(results) == 1, results
    r = json.loads(results[0].read_text())
    sidecar = results[0].with_name(r["requests_file"])
    late = []
    errors = 0
    # The sidecar is zstd-compressed (`.zst`) by current versions, plain JSONL by older ones.
    if sidecar.suffix == ".zst":
        text = subprocess.run(["zstd", "-dc", str(sidecar)], check=True,
                              capture_output=True).stdout.decode()
    else:
        text = sidecar.read_text()
    for line in text.splitlines():
        rec = json.loads(line)
        if rec.get("warmup"):
            continue
        if rec.get("error"):
            errors += 1
        if rec.get("send_ns") is not None:
            late.append((rec["send_ns"] - rec["intended_ns"]) / 1e6)
    mean = sum(late) / len(late)
    print(f"trace replay at {a.rate:g} req/s, {a.requests} requests × {a.trials} trials "
          f"({len(late)} sent, {errors} failed)")
    print(f"lateness ms: mean {mean:.3f}  p50 {pct(late, 0.5):.3f}  p99 {pct(late, 0.99):.3f}  "
          f"max {max(late):.3f}")
    print("load average (1, 5, 15 min):", " ".join(f"{x:.2f}" for x in __import__("os").getloadavg()))
    ok = mean <= 1.0 and pct(late, 0.99) <= 5.0
    print("target (mean ≤ 1 ms, p99 ≤ 5 ms):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
