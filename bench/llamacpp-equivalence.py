#!/usr/bin/env python3
"""llama.cpp output equivalence, measured (docs/equivalence.md, "llama.cpp").

Runs, on the cached llama-server (scripts/setup-llamacpp):

* `specs/llamacpp-equivalence.yaml` (fa-off baseline, fa-on, t2; two server starts each)
  `--runs` times, and prints per run each candidate's verdict, p-value, the interval's upper
  end, the share of prompts identical to every baseline output and the baseline's own;
* `specs/llamacpp-batch-invariance.yaml` (one configuration under two names, three starts
  each, probed at concurrency 1 and 4) `--batch-runs` times, and prints the share of prompts
  identical between every pair of starts at each concurrency, the share identical between
  concurrency 1 and 4 within each start, and compare's A/A verdicts.

    set -a; . ~/.cache/servebench/llamacpp/env; set +a
    python3 bench/llamacpp-equivalence.py --bin target/debug/servebench --runs 3 --batch-runs 1

Each run takes minutes on a 2-core machine; the script prints how long.
"""

import argparse
import itertools
import json
import pathlib
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent


def run_spec(sb, spec, out):
    t0 = time.time()
    subprocess.run(
        [sb, "run", "--quiet", "--no-bars", "--results-dir", str(out), str(spec)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    files = [
        p
        for p in out.rglob("*.json")
        if not p.name.endswith(".requests.json")
    ]
    assert len(files) == 1, files
    return files[0], time.time() - t0


def compare(sb, result):
    out = subprocess.run([sb, "compare", str(result), "--json"], capture_output=True)
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError:
        print(f"  compare gave no JSON: {out.stderr.decode(errors='replace').strip()}")
        return {"comparisons": []}


def key(o):
    if o.get("error"):
        return ("error", o["error"])
    if o.get("token_ids") is not None:
        return tuple(o["token_ids"])
    return o.get("text")


def outputs(probe):
    return {o["prompt"]: key(o) for o in probe["outputs"]}


def same(a, b):
    oa, ob = outputs(a), outputs(b)
    return sum(oa[i] == ob.get(i) for i in oa), len(oa)


def pairs_main(sb, runs, tmp):
    spec = REPO / "specs/llamacpp-equivalence.yaml"
    for r in range(runs):
        result, secs = run_spec(sb, spec, tmp / f"main{r}")
        v = compare(sb, result)
        print(f"run {r + 1} ({secs:.0f} s): {result}")
        for c in v["comparisons"]:
            e = c.get("equivalence") or {}
            t = e.get("test") or {}
            ci = (t.get("difference") or {}).get("ci") or {}
            print(
                f"  {c['candidate']['variant']:>6}: {e.get('verdict')}"
                f"  p={t.get('p')}  difference upper={ci.get('upper')}"
                f"  identical={e.get('identical')}"
                f"  baseline_identical={e.get('baseline_identical')}"
            )
        sys.stdout.flush()


def batch(sb, runs, tmp):
    spec = REPO / "specs/llamacpp-batch-invariance.yaml"
    for r in range(runs):
        result, secs = run_spec(sb, spec, tmp / f"batch{r}")
        res = json.loads(result.read_text())
        probes = res["equivalence"]
        print(f"batch run {r + 1} ({secs:.0f} s): {result}")
        concs = sorted({p["concurrency"] for p in probes})
        for c in concs:
            ps = [p for p in probes if p["concurrency"] == c]
            cells = [same(a, b) for a, b in itertools.combinations(ps, 2)]
            k = sum(x for x, _ in cells)
            n = sum(n for _, n in cells)
            print(
                f"  c={c}: {len(ps)} starts, identical between starts:"
                f" {k}/{n} prompt-pairs ({k / n:.3f}); per pair {[x for x, _ in cells]}"
            )
        if len(concs) == 2:
            first, second = concs
            by = {}
            for p in probes:
                by.setdefault((p["block"]), {})[p["concurrency"]] = p
            cells = [same(d[first], d[second]) for d in by.values() if len(d) == 2]
            k = sum(x for x, _ in cells)
            n = sum(n for _, n in cells)
            print(
                f"  c={first} vs c={second} within a start: {k}/{n} ({k / n:.3f});"
                f" per start {[x for x, _ in cells]}"
            )
        v = compare(sb, result)
        for c in v["comparisons"]:
            e = c.get("equivalence") or {}
            print(f"  A/A verdict: {json.dumps(e.get('verdict'))}; {json.dumps({k: e.get(k) for k in ('identical', 'baseline_identical', 'batch')})}")
        sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=str(REPO / "target/debug/servebench"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--batch-runs", type=int, default=1)
    a = ap.parse_args()
    t0 = time.time()
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        pairs_main(a.bin, a.runs, tmp)
        batch(a.bin, a.batch_runs, tmp)
    print(f"total {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
