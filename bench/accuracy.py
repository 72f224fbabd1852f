#!/usr/bin/env python3
"""False alarms and detection of the `accuracy-dropped` gate on the simulator.

Not a CI test: which prompts the simulator answers right, and which a numerics change
flips, are chosen by prompt hash, so over many arithmetic sets the detection is a rate
(docs/equivalence.md, "Task accuracy"; docs/statistics-measured.md).

    python3 bench/accuracy.py [--runs 30] [--scenarios aa,nc10,nc30] [--workdir DIR]
                              [--bin PATH]

Run i writes its own arithmetic set (scripts/make-arithmetic-answers.py --seed i, 40
questions), then runs `servebench run specs/sim-accuracy.yaml` (two variants, three
interleaved server starts each, the simulator at `--zero-delay` answering the set right for
a share 0.9 of its prompts) with the set as both the simulator's `--answers` and the
probe's `equivalence.reference`, then `servebench compare --json --fail-on
accuracy-dropped`, and counts the comparison's `equivalence.accuracy.verdict` and the
gate's exit code. Scenarios (the candidate's arguments):

* `aa`:   none beyond its label (an A/A: accuracy should be `unchanged`; a tripped gate is
          a false alarm, whose rate must be at most α/2 = 0.025, the two-sided test's
          lower half);
* `nc10`: `--numerics-change 0.1` (about 10% of prompts change path, and on the
          simulator their answers turn wrong);
* `nc30`: `--numerics-change 0.3` (about 30%, the committed spec's candidate).

Runs go to --workdir (default /tmp/servebench-accuracy); a run whose compare output is
already there is reused.
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
    answers = out / "answers.jsonl"
    subprocess.run([sys.executable, str(REPO / "scripts/make-arithmetic-answers.py"),
                    "--seed", str(seed), "--out", str(answers)], check=True)
    sets = [
        f'server.args=[--port, "${{port}}", --zero-delay, --answers, "{answers}", '
        '--answer-accuracy, "0.9"]',
        f"equivalence.reference={answers}",
        "workload.requests=4",
        f"variants.fast_kernel.server.args={CANDIDATE[scenario]}",
    ]
    cmd = [bin_, "run", "--quiet", "--no-bars", "--results-dir", str(out / "results"),
           str(REPO / "specs/sim-accuracy.yaml")]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    result = next(p for p in (out / "results/sim-accuracy").glob("*.json")
                  if not p.name.endswith(".requests.json"))
    c = subprocess.run([bin_, "compare", str(result), "--json", "--fail-on",
                        "accuracy-dropped"], capture_output=True, text=True)
    if c.returncode not in (0, 1):
        sys.exit(f"compare failed ({c.returncode}): {c.stderr}")
    v = json.loads(c.stdout)
    v["_exit"] = c.returncode
    done.write_text(json.dumps(v))
    return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--scenarios", default="aa,nc10,nc30")
    ap.add_argument("--workdir", default="/tmp/servebench-accuracy")
    ap.add_argument("--bin", default=str(REPO / "target/debug/servebench"))
    a = ap.parse_args()
    work = Path(a.workdir)
    started = time.time()
    for scenario in a.scenarios.split(","):
        verdicts = Counter()
        tripped = 0
        drops = []
        t0 = time.time()
        for seed in range(1, a.runs + 1):
            v = one(a.bin, work, scenario, seed)
            acc = (v["comparisons"][0].get("equivalence") or {}).get("accuracy") or {}
            verdicts[acc.get("verdict", "absent")] += 1
            tripped += int(v["_exit"] == 1)
            if acc:
                drops.append(acc["baseline"] - acc["candidate"])
        n = a.runs
        lo, hi = wilson(tripped, n)
        mean_drop = sum(drops) / len(drops) if drops else float("nan")
        print(f"{scenario}: {n} runs in {time.time() - t0:.0f} s; gate tripped {tripped}/{n} = "
              f"{tripped / n:.1%} (Wilson 95% {lo:.1%}-{hi:.1%}); verdicts {dict(verdicts)}; "
              f"mean accuracy drop {mean_drop:.3f}")
        sys.stdout.flush()
    print(f"total {time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
