#!/usr/bin/env python3
"""Coverage, width, trial counts and verdicts of the capacity search (`spec.search`) on the
simulator, against the closed-form answer (docs/search.md, "Known answer").

Not a CI test: its outcome is random by design.

    python3 bench/search.py [--seeds 100] [--jobs 4] [--workdir DIR] [--bin PATH]
                            [--analyse-only]

Two scenarios, each run once per seed (a fresh run id, so fresh per-start speed factors):

* `ab`: baseline `base` (decode_per_seq_ms 0.5) against `fast`, whose decode costs 15% less
  per sequence (0.425). Right verdict: improved.
* `aa`: `base` against an identical `twin`. Right verdict: not improved, not regressed.

The model (crates/sim, docs/simulator.md): with `c` requests in flight decoding in lockstep,
each token takes (decode_base_ms + c × decode_per_seq_ms) × f × time_scale, where f is the
server start's speed factor (lognormal, mean 1, coefficient of variation `SPEED_CV`). TPOT ≤ T
for the requests of the full waves iff c ≤ (T / (f × time_scale) − decode_base_ms) /
decode_per_seq_ms, so a start's capacity is c(f) = floor of that (attainment target 0.5: the
full waves hold over half the requests, a last partial wave never does), and a variant's
capacity — the mean over server starts — is E[c(f)] = Σ_k P(f ≤ T / (time_scale ×
(decode_base_ms + k × decode_per_seq_ms))), a sum of lognormal CDFs.

Reported: for each variant, the share of seeds whose capacity interval contains E[c(f)] (with
a Wilson 95% interval) and the mean interval width; trials per variant of the search against
a grid sweep of step = the precision over the same bounds at the rounds the search used;
the verdict mix of each scenario. Runs are kept in --workdir (default /tmp/servebench-search);
a complete run there is reused, so the script resumes and --analyse-only re-reads them.
"""

import argparse
import json
import math
import shutil
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

TIME_SCALE = 0.1
DECODE_BASE = 4.0
SPEED_CV = 0.03
TPOT_MS = 1.425
LOWER, UPPER, PRECISION = 4, 64, 1
PER_SEQ = {"base": 0.5, "fast": 0.425, "twin": 0.5}

SPEC = """apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: {name}}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --time-scale, "{ts}", --prefill-ms-per-token, "0",
           --jitter-cv, "0.02", --speed-cv, "{cv}", --decode-base-ms, "{base}"]
    readiness: {{http: {{path: /health}}, interval: 20ms, timeout: 20s}}
    verify:
      - log_contains: "label=${{variant.label}}"
    stop: {{signal: SIGTERM, grace: 5s}}
  target: {{api: openai-completions, model: sim-model, tokenizer: server}}
  variants:
    - name: base
      baseline: true
      server: {{args: [--label, base, --decode-per-seq-ms, "{base_seq}"]}}
      vars: {{label: base}}
    - name: {cand}
      server: {{args: [--label, {cand}, --decode-per-seq-ms, "{cand_seq}"]}}
      vars: {{label: {cand}}}
  workload:
    dataset: {{kind: random, input_tokens: 8, output_tokens: 32}}
    ignore_eos: true
    seed: {seed}
    requests: 60
    warmup_requests: 0
    request_timeout: 30s
  slo: {{tpot: {tpot}ms}}
  search:
    axis: max_concurrency
    lower: {lower}
    upper: {upper}
    precision: {{absolute: {precision}}}
    attainment: 0.5
    min_rounds: 3
    max_rounds: 8
"""


def lognormal_cdf(x, cv):
    """P(f ≤ x) for f lognormal with mean 1 and coefficient of variation cv."""
    if x <= 0:
        return 0.0
    v = math.log(1 + cv * cv)
    mu, sd = -v / 2, math.sqrt(v)
    return 0.5 * (1 + math.erf((math.log(x) - mu) / (sd * math.sqrt(2))))


def known_capacity(per_seq):
    """E[c(f)] clipped to the bounds (module docs)."""
    total = LOWER
    for k in range(LOWER + 1, UPPER + 1):
        total += lognormal_cdf(TPOT_MS / (TIME_SCALE * (DECODE_BASE + k * per_seq)), SPEED_CV)
    return total


def wilson(k, n, z=1.96):
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (c - h, c + h)


def run_one(binary, workdir, scenario, seed):
    cand = "fast" if scenario == "ab" else "twin"
    d = workdir / scenario / f"seed-{seed:03d}"
    d.mkdir(parents=True, exist_ok=True)
    spec = d / "spec.yaml"
    spec.write_text(
        SPEC.format(
            name=f"search-{scenario}",
            ts=TIME_SCALE,
            cv=SPEED_CV,
            base=DECODE_BASE,
            base_seq=PER_SEQ["base"],
            cand=cand,
            cand_seq=PER_SEQ[cand],
            seed=seed,
            tpot=TPOT_MS,
            lower=LOWER,
            upper=UPPER,
            precision=PRECISION,
        )
    )
    cmp_path = d / "compare.json"
    if cmp_path.exists():
        return json.loads(cmp_path.read_text())
    results = d / "results"
    if results.exists():
        shutil.rmtree(results)
    t0 = time.time()
    r = subprocess.run(
        [str(binary), "run", "--quiet", "--no-bars", "--results-dir", str(results), str(spec)],
        cwd=d,
        capture_output=True,
        text=True,
    )
    wall = time.time() - t0
    files = [p for p in results.rglob("*.json") if not p.name.startswith(".")]
    if r.returncode != 0 or not files:
        (d / "error.txt").write_text(r.stdout + r.stderr)
        return None
    c = subprocess.run(
        [str(binary), "compare", "--json", str(files[0])], capture_output=True, text=True
    )
    if c.returncode != 0:
        (d / "error.txt").write_text(c.stdout + c.stderr)
        return None
    out = json.loads(c.stdout)
    out["wall_s"] = wall
    cmp_path.write_text(json.dumps(out))
    return out


def analyse(workdir, seeds):
    print(f"known answers (E[c(f)], closed form): base {known_capacity(0.5):.3f}, "
          f"fast {known_capacity(0.425):.3f} in flight; ratio "
          f"{known_capacity(0.425) / known_capacity(0.5):.4f}")
    grid_points = (UPPER - LOWER) // PRECISION + 1
    for scenario in ["ab", "aa"]:
        rows = []
        for seed in range(seeds):
            p = workdir / scenario / f"seed-{seed:03d}" / "compare.json"
            if p.exists():
                rows.append(json.loads(p.read_text()))
        if not rows:
            continue
        print(f"\n== {scenario}: {len(rows)} seeds")
        walls = [r.get("wall_s", 0) for r in rows]
        print(f"wall per search: mean {sum(walls) / len(walls):.1f} s, total {sum(walls) / 60:.1f} min")
        for name in ["base", "fast" if scenario == "ab" else "twin"]:
            truth = known_capacity(PER_SEQ[name])
            cov = n = 0
            widths, trials, rounds, ests = [], [], [], []
            outcomes = Counter()
            for r in rows:
                v = next(x for x in r["variants"] if x["variant"] == name)
                outcomes[v["outcome"]["kind"]] += 1
                trials.append(v["trials"])
                rounds.append(len(v["start_estimates"]) + v["below_lower"] + v["above_upper"] + v["invalid"])
                if v.get("lower") is None:
                    continue
                n += 1
                ests.append(v["estimate"])
                widths.append(v["upper"] - v["lower"])
                cov += v["lower"] <= truth <= v["upper"]
            lo, hi = wilson(cov, n)
            print(f"  {name}: known {truth:.3f}; interval contains it in {cov}/{n} = "
                  f"{cov / max(n, 1):.1%} [{lo:.1%}, {hi:.1%}]; mean width {sum(widths) / max(len(widths), 1):.3f}; "
                  f"mean estimate {sum(ests) / max(len(ests), 1):.3f}; outcomes {dict(outcomes)}")
            mean_trials = sum(trials) / len(trials)
            mean_rounds = sum(rounds) / len(rounds)
            print(f"    trials per variant: search {mean_trials:.1f} (max {max(trials)}); grid sweep "
                  f"{grid_points} loads × {mean_rounds:.2f} trials per load (the rounds used) = "
                  f"{grid_points * mean_rounds:.0f}")
        verdicts = Counter(r["comparisons"][0]["verdict"] for r in rows)
        k = sum(verdicts[v] for v in (["improved"] if scenario == "ab" else ["improved", "regressed"]))
        lo, hi = wilson(k, len(rows))
        what = "improved (right)" if scenario == "ab" else "improved or regressed (false positive)"
        print(f"  verdicts {dict(verdicts)}; {what}: {k}/{len(rows)} = {k / len(rows):.1%} [{lo:.1%}, {hi:.1%}]")
        ratios = [r["comparisons"][0]["ratio"] for r in rows if r["comparisons"][0].get("ratio")]
        if ratios:
            print(f"  mean ratio {sum(ratios) / len(ratios):.4f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/servebench-search"))
    ap.add_argument("--bin", type=Path, default=None)
    ap.add_argument("--scenarios", default="ab,aa")
    ap.add_argument("--analyse-only", action="store_true")
    a = ap.parse_args()
    a.workdir.mkdir(parents=True, exist_ok=True)
    if not a.analyse_only:
        binary = a.bin
        if binary is None:
            root = Path(__file__).resolve().parent.parent
            subprocess.run(["cargo", "build", "--release", "-p", "servebench"], cwd=root, check=True)
            binary = a.workdir / "servebench"
            shutil.copy2(root / "target/release/servebench", binary)
        binary = binary.resolve()
        t0 = time.time()
        jobs = [(s, seed) for seed in range(a.seeds) for s in a.scenarios.split(",")]
        with ThreadPoolExecutor(max_workers=a.jobs) as ex:
            failed = sum(r is None for r in ex.map(lambda j: run_one(binary, a.workdir, *j), jobs))
        print(f"{len(jobs)} searches ({failed} failed) in {(time.time() - t0) / 60:.1f} min "
              f"with {a.jobs} at a time", file=sys.stderr)
    analyse(a.workdir, a.seeds)


if __name__ == "__main__":
    main()
