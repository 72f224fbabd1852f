#!/usr/bin/env python3
"""False alarms and detection of the output-equivalence verdict on the simulator.

Not a CI test: which prompts a numerics change hits varies with the prompts drawn, so the
detection rate is a rate (docs/equivalence.md, "Measured").

    python3 bench/equivalence.py [--runs 100] [--scenarios aa,nc10,nc30] [--workdir DIR]
                                 [--bin PATH]

Each run is `servebench run specs/sim-equivalence.yaml` (two variants, three interleaved
server starts each, the probe's 24 prompts × 64 tokens at concurrency 1) with
`workload.seed = i` — other probe prompts each run, so other prompts are hit by the
simulator's per-prompt-hash choice — and the simulator at `--zero-delay` (timing plays no
part in the verdict), then `servebench compare --json`; the `equivalence.verdict` of the
comparison is counted. Scenarios (the candidate's arguments):

* `aa`:   none beyond its label (an A/A: the verdict should be `unchanged`; `changed` is a
          false alarm, whose rate must be at most α = 0.05);
* `nc10`: `--numerics-change 0.1` (about 10% of prompts change);
* `nc30`: `--numerics-change 0.3` (about 30%, the committed spec's candidate).

Runs go to --workdir (default /tmp/servebench-equivalence); a scenario's run whose compare
output is already there is reused, so an interrupted benchmark continues where it stopped.
"""

import argparse
import json
import math
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CANDIDATE = {
    "aa": "[--label, fast_kernel]",
    "nc10": '[--label, fast_kernel, --numerics-change, "0.1"]',
    "nc30": '[--label, fast_kernel, --numerics-change, "0.3"]',
}


def wilson(k, n, z=1.959964):
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def one(bin_, work, scenario, seed):
    out = work / scenario / f"{seed}"
    done = out / "compare.json"
    if done.exists():
        return json.loads(done.read_text())
    out.mkdir(parents=True, exist_ok=True)
    sets = [
        f"workload.seed={seed}",
        'server.args=[--port, "${port}", --zero-delay]',
        "workload.requests=4",
        f"variants.fast_kernel.server.args={CANDIDATE[scenario]}",
    ]
    cmd = [bin_, "run", "--quiet", "--no-bars", "--results-dir", str(out / "results"),
           str(REPO / "specs/sim-equivalence.yaml")]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    result = next((out / "results/sim-equivalence").glob("*.json"))
    c = subprocess.run([bin_, "compare", str(result), "--json"], check=True,
                       capture_output=True, text=True)
    v = json.loads(c.stdout)
    done.write_text(json.dumps(v))
    return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--scenarios", default="aa,nc10,nc30")
    ap.add_argument("--workdir", default="/tmp/servebench-equivalence")
    ap.add_argument("--bin", default=str(REPO / "target/debug/servebench"))
    a = ap.parse_args()
    work = Path(a.workdir)
    started = time.time()
    for scenario in a.scenarios.split(","):
        verdicts = Counter()
        identical = []
        t0 = time.time()
        for seed in range(1, a.runs + 1):
            v = one(a.bin, work, scenario, seed)
            e = v["comparisons"][0].get("equivalence") or {}
            verdicts[e.get("verdict", "absent")] += 1
            identical.append(e.get("identical", float("nan")))
        n = sum(verdicts.values())
        k = verdicts["changed"]
        lo, hi = wilson(k, n)
        mean_id = sum(identical) / len(identical)
        print(f"{scenario}: {n} runs in {time.time() - t0:.0f} s; changed {k}/{n} = "
              f"{k / n:.1%} (Wilson 95% {lo:.1%}–{hi:.1%}); verdicts {dict(verdicts)}; "
              f"mean share of identical prompts {mean_id:.3f}")
        sys.stdout.flush()
    print(f"total {time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
