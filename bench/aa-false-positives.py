#!/usr/bin/env python3
"""A/A false-positive rate and detection rate of `servebench compare` on the simulator.

Not a CI test: its outcome is random by design (docs/statistics-method.md, "Testing the statistics").

    python3 bench/aa-false-positives.py [--runs 200] [--detect-runs 50] [--workdir DIR]
                                        [--bin PATH] [--trials 5] [--requests 12]
                                        [--sweep 1,8] [--metrics A,B] [--detect-metric M]

* A/A: a spec with two identical simulator variants (only their --label differs), 2 sweep
  points (c=1, c=8), 12 requests of 32 → 12 tokens, 5 trials, run --runs times. Run i uses
  workload.seed = i and gets a fresh run id (so fresh per-block jitter seeds). Each run is
  compared with `servebench compare --json`; a metric × point comparison is a false positive
  when its verdict is improved, regressed or significant-but-small. Reported beside α: the
  share of such comparisons (with a Wilson 95% interval), the share of runs with at least one,
  the share of raw p < α, the verdict mix, and how often each flag fires on an A/A run.
* Detection: the same spec whose candidate has a decode step 1.2× as fast (step costs divided
  by 1.2, i.e. about +20% decode throughput), run --detect-runs times with --trials trials;
  reported: the share of output_throughput comparisons that come out improved, per point and
  over all points, and the mean measured ratio.

--requests, --sweep (the max_concurrency levels), --metrics and --detect-metric (the metric whose
detection is counted: its verdict `improved`) change the spec, e.g. for a percentile:
`--requests 100 --sweep 4 --metrics ttft_p95,e2e_p95 --detect-metric e2e_p95`.

Runs go to --workdir (default /tmp/servebench-aa); a run whose result is already complete is
reused, so an interrupted benchmark continues where it stopped. Each run takes ~4 s on an idle
2-core machine. Unless --bin is given, the release binary is built and copied into the workdir,
so that rebuilding the tree meanwhile does not swap it mid-benchmark.
"""

import argparse
import json
import math
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

SPEC = """apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: {name}}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --jitter-cv, "0.03", --speed-cv, "0.01",
           --prefill-ms-per-token, "0.01"]
    readiness: {{http: {{path: /health}}, interval: 20ms, timeout: 20s}}
    verify:
      - log_contains: "label=${{variant.label}}"
    stop: {{signal: SIGTERM, grace: 5s}}
  target: {{api: openai-completions, model: sim-model, tokenizer: server}}
  variants:
    - name: a
      baseline: true
      server: {{args: [--label, a, --decode-base-ms, "1", --decode-per-seq-ms, "0.1"]}}
      vars: {{label: a}}
    - name: b
      server: {{args: [--label, b, --decode-base-ms, "{b_base}", --decode-per-seq-ms, "{b_seq}"]}}
      vars: {{label: b}}
  workload:
    dataset: {{kind: random, input_tokens: 32, output_tokens: 12}}
    ignore_eos: true
    seed: {seed}
    requests: {requests}
    warmup_requests: 2
    request_timeout: 20s
    trial_timeout: 20s
  sweep: {{max_concurrency: [{sweep}]}}
  trials: {{count: {trials}}}
  compare:
    metrics: [{metrics}]
    threshold: 0.02
    alpha: {alpha}
"""

POSITIVE = {"improved", "regressed", "significant-but-small"}


def wilson(k, n, z=1.96):
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def binary(args, work):
    if args.bin:
        return Path(args.bin).resolve()
    repo = Path(__file__).resolve().parent.parent
    subprocess.run(["cargo", "build", "--release", "-p", "servebench"], cwd=repo, check=True)
    dst = work / "servebench"
    shutil.copy2(repo / "target" / "release" / "servebench", dst)
    return dst


def complete_result(folder):
    for p in sorted(folder.glob("*/*.json")):
        try:
            if json.loads(p.read_text()).get("status") == "complete":
                return p
        except (OSError, ValueError):
            continue
    return None


def one_run(exe, work, kind, seed, args, b_base, b_seq):
    folder = work / kind / f"seed-{seed:04d}"
    found = complete_result(folder)
    if found:
        return found, 0.0
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    spec = folder / "spec.yaml"
    trials = args.trials
    spec.write_text(SPEC.format(name=f"bench-{kind}", seed=seed, trials=trials,
                                alpha=args.alpha, b_base=b_base, b_seq=b_seq,
                                requests=args.requests, sweep=args.sweep,
                                metrics=", ".join(args.metrics.split(","))))
    t0 = time.monotonic()
    r = subprocess.run([str(exe), "run", "--quiet", "--no-bars", "--results-dir",
                        str(folder), str(spec)], capture_output=True, text=True, timeout=300)
    took = time.monotonic() - t0
    found = complete_result(folder)
    if r.returncode != 0 or not found:
        print(f"  {kind} seed {seed}: run failed (exit {r.returncode}): "
              f"{r.stderr.strip()[-300:]}", file=sys.stderr)
        return None, took
    return found, took


def compare(exe, result):
    r = subprocess.run([str(exe), "compare", "--json", str(result)], capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"compare {result} exited {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)["comparisons"][0]


def runs(exe, work, kind, n, args, b_base, b_seq):
    out, total = [], 0.0
    for i in range(1, n + 1):
        res, took = one_run(exe, work, kind, i, args, b_base, b_seq)
        total += took
        if res and not args.measure_only:
            out.append(compare(exe, res))
        if i % 20 == 0 or i == n:
            print(f"  {kind}: {i}/{n} runs ({total:.0f} s measuring so far)", file=sys.stderr)
    return out


def aa_summary(comps, alpha):
    verdicts, per_metric, per_metric_n = Counter(), Counter(), Counter()
    raw_p = n_cmp = runs_any = 0
    flag_runs = Counter()
    for c in comps:
        any_pos = False
        ids = set()
        for m in c["metrics"]:
            ids.update(f["id"] for f in m["flags"])
            for p in m["points"]:
                n_cmp += 1
                verdicts[p["verdict"]] += 1
                per_metric_n[m["metric"]] += 1
                if p["verdict"] in POSITIVE:
                    any_pos = True
                    per_metric[m["metric"]] += 1
                if p["p"] is not None and p["p"] < alpha:
                    raw_p += 1
        ids.update(f["id"] for f in c["flags"])
        for i in ids:
            flag_runs[i] += 1
        runs_any += any_pos
    pos = sum(verdicts[v] for v in POSITIVE)
    return {
        "runs": len(comps),
        "comparisons": n_cmp,
        "alpha": alpha,
        "false_positives": pos,
        "false_positive_rate": pos / n_cmp if n_cmp else None,
        "false_positive_rate_ci95": wilson(pos, n_cmp),
        "improved_or_regressed": verdicts["improved"] + verdicts["regressed"],
        "raw_p_below_alpha_rate": raw_p / n_cmp if n_cmp else None,
        "runs_with_any_false_positive": runs_any,
        "runs_with_any_false_positive_rate": runs_any / len(comps) if comps else None,
        "verdicts": dict(verdicts),
        "false_positive_rate_by_metric": {
            m: per_metric[m] / per_metric_n[m] for m in sorted(per_metric_n)},
        "runs_with_flag_rate": {i: flag_runs[i] / len(comps) for i in sorted(flag_runs)},
    }


def detect_summary(comps, metric="output_throughput"):
    by_point, hits, n, ratios = Counter(), Counter(), 0, []
    runs_all = 0
    for c in comps:
        m = next(m for m in c["metrics"] if m["metric"] == metric)
        all_improved = True
        for p in m["points"]:
            n += 1
            by_point[p["label"]] += 1
            if p["verdict"] == "improved":
                hits[p["label"]] += 1
            else:
                all_improved = False
            if p["effect"]:
                ratios.append(p["effect"]["point"])
        runs_all += all_improved
    k = sum(hits.values())
    return {
        "runs": len(comps),
        "comparisons": n,
        "improved": k,
        "detection_rate": k / n if n else None,
        "detection_rate_ci95": wilson(k, n),
        "detection_rate_by_point": {pt: hits[pt] / by_point[pt] for pt in sorted(by_point)},
        "runs_improved_at_every_point_rate": runs_all / len(comps) if comps else None,
        "mean_ratio": sum(ratios) / len(ratios) if ratios else None,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--detect-runs", type=int, default=50)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--requests", type=int, default=12)
    ap.add_argument("--sweep", default="1, 8", help="max_concurrency levels, comma-separated")
    ap.add_argument("--metrics", default="output_throughput,ttft_p50,tpot_p50,e2e_mean")
    ap.add_argument("--detect-metric", default="output_throughput")
    ap.add_argument("--workdir", default="/tmp/servebench-aa")
    ap.add_argument("--bin", help="servebench binary (default: build the release one)")
    ap.add_argument("--measure-only", action="store_true",
                    help="only run the specs (a later call without it reuses the results)")
    args = ap.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    exe = binary(args, work)
    t0 = time.monotonic()
    aa = runs(exe, work, "aa", args.runs, args, "1", "0.1")
    det = runs(exe, work, "detect", args.detect_runs, args, f"{1 / 1.2:.6f}",
               f"{0.1 / 1.2:.6f}")
    if args.measure_only:
        return
    summary = {
        "command": " ".join(sys.argv),
        "binary": str(exe),
        "wall_s": round(time.monotonic() - t0, 1),
        "aa": aa_summary(aa, args.alpha),
        "detect_20pct": detect_summary(det, args.detect_metric),
    }
    (work / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
