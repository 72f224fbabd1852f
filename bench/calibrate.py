#!/usr/bin/env python3
"""False-alarm and detection rates of `servebench compare` on the simulator.

Not a CI test: its outcomes are random by design (docs/statistics-method.md, "Testing the
statistics"). Each scenario runs the embedded simulator many times with its own seed and a
fresh run id, compares every run with `servebench compare --json`, and counts what the
verdicts and flags said. docs/statistics.md quotes its output.

    python3 bench/calibrate.py [--scenarios aa,effect,outlier,drift,cold,onewave,stale67,mainjob]
                               [--runs N] [--workdir DIR] [--bin PATH] [--measure-only]

Scenarios (runs per scenario: --runs, or the scenario's default):
* aa (200): two identical variants; false alarms: runs with any re-baseline flag, cells with a
  directional verdict (improved, regressed, likely improved, likely regressed).
* effect (100): the candidate's decode step 1.2× as fast; detection: output_throughput
  improved.
* outlier (100): one trial of the candidate (repetition 3, the c=1 point) 30% slower;
  detection: outlier-trial on that cell, among the runs where that trial changes the cell's
  output_throughput verdict (found by comparing the result with that trial taken out).
* drift (100): the candidate 2% slower per trial over the run; detection: drift. With 5 trials
  only a perfect order can show a trend (exact Spearman p = 2/120); drift8 (100) is the same
  with 8 trials.
* cold (100): the candidate's first server start 30% slower; detection: drift (first trial).
* onewave (100): the c=16 point measures one wave (16 requests at c=16); detection:
  load-not-sustained at c=16, and at no other point.
* twowave (20): the c=16 point measures two waves (32 requests at c=16); load-not-sustained
  at c=16 is expected as a look (the held share's interval holds one half), not re-baseline.
* stale67 (100): a baseline from one run, the candidate from another in which the c=8 point
  is 67% faster (step times × 0.6 for that point's requests): detection: sweep-inconsistent
  naming c=8 and no other level, besides stale-baseline.
The non-inferiority gate (`compare.gate.fail_on: [not-shown-non-inferior]`, one point c=1,
output_throughput, θ = 5%, trial CV 4% by --speed-cv; 19 trials per arm, the count at which
an A/A passes one cell with 95%):
* gate-aa4 (20) / gate-seq-aa4 (20): A/A, fixed 19 / sequential (first stage 5, budget 19):
  runs whose gate tripped (false failures).
* gate-loss5 (20) / gate-seq-loss5 (20): the candidate 5% slower: runs whose gate tripped
  (detection).
* mainjob (20): specs/sim-ab.yaml (the README's main job) with workload.seed = i; the crossover
  stated as a finding, and no re-baseline flag.
* big-verified (100): the candidate's decode step twice as fast, every start verified by its
  rule; false alarms: runs with `implausible` (no look is due: servebench checked it).
* big-unverified (100): the same without a verify rule; detection: runs with `implausible`.
* big-partial (100): the candidate's steps a third as long at repetitions 1, 3 and 5 only (a
  variant in effect at some starts), its label rule passing at every start; detection: runs
  with `implausible`.

Sequential trials (`trials.until_decided`, first stage 5, budget 30 per cell, θ = 5%,
output_throughput; trial CV set by the simulator's --speed-cv, one server start per trial):
* seq-aa8 (200): A/A at CV 8%: cells with a directional verdict when they stopped.
* seq-eff15 (100): the candidate 15% faster (decode step costs / 1.15) at CV 8%: cells decided
  improved within 30, and the mean trials used, beside the fixed count the power formula
  asks for.
* seq-aa4 (100): A/A at CV 4%: cells decided equivalent within 30.
* seq-eff8 (100): the candidate 8% faster at CV 4%: cells wrongly decided equivalent.

Runs are kept in --workdir (default /tmp/servebench-calibrate) and reused: a run whose result
is complete is not measured again, so the script continues after an interruption and a new
build of `compare` can re-analyse the same measurements (--bin). Unless --bin is given, the
release binary is built and copied into the workdir, so that rebuilding the tree meanwhile does
not swap it mid-benchmark.
"""

import argparse
import json
import math
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# Two simulator variants on a ~1 ms decode step. {a_args}/{b_args} add each variant's knobs.
SPEC = """apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: {name}}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --jitter-cv, "{jitter}", --speed-cv, "{speed}",
           --prefill-ms-per-token, "0.01"]
    readiness: {{http: {{path: /health}}, interval: 20ms, timeout: 20s}}
{verify}
    stop: {{signal: SIGTERM, grace: 5s}}
  target: {{api: openai-completions, model: sim-model, tokenizer: server}}
  variants:
    - name: a
      baseline: true
      server: {{args: [--label, a, --decode-base-ms, "1", --decode-per-seq-ms, "0.1"{a_args}]}}
      vars: {{label: a}}
    - name: b
      server: {{args: [--label, b, --decode-base-ms, "{b_base}", --decode-per-seq-ms, "{b_seq}"{b_args}]}}
      vars: {{label: b}}
  workload:
    dataset: {{kind: random, input_tokens: 32, output_tokens: 12}}
    ignore_eos: true
    seed: {seed}
    requests: 12
    warmup_requests: {warmup}
    request_timeout: 20s
    trial_timeout: 30s
  sweep:
    include:
{points}
  trials: {{count: {trials}}}
  compare:
    metrics: [output_throughput, ttft_p50, tpot_p50, e2e_mean]
    threshold: {theta}
    alpha: 0.05
"""

# A sequential run: two points, one interleaved block per trial; the trial CV is the per-start
# speed factor's (--speed-cv; docs/simulator.md measures it).
SEQ_SPEC = """apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: {name}}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --jitter-cv, "0.02", --speed-cv, "{cv}", --prefill-ms-per-token, "0.01"]
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
    requests: 12
    warmup_requests: 2
    request_timeout: 20s
    trial_timeout: 30s
  sweep:
    include:
      - {{max_concurrency: 1, requests: 12}}
      - {{max_concurrency: 4, requests: 24}}
  trials:
    count: 5
    until_decided: {{max: 30, metrics: [output_throughput]}}
  compare:
    metrics: [output_throughput]
    threshold: 0.05
    alpha: 0.05
"""

# The non-inferiority gate (docs/compare.md, "Gates"): one point, output_throughput, θ = 5%,
# the trial CV set by --speed-cv; `{trials}` is the fixed count or the sequential first stage
# and budget.
GATE_SPEC = """apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: {name}}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --jitter-cv, "0.02", --speed-cv, "{cv}", --prefill-ms-per-token, "0.01"]
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
    requests: 12
    warmup_requests: 2
    request_timeout: 20s
    trial_timeout: 30s
  sweep: {{max_concurrency: [1]}}
  trials: {trials}
  compare:
    metrics: [output_throughput]
    threshold: 0.05
    alpha: 0.05
    gate: {{fail_on: [not-shown-non-inferior]}}
"""

# The gate's design count at CV 4%, θ = 5%, α = 0.05, one cell (gate::trials_to_pass; the
# `gate_oc` example prints it).
GATE_N = 19

DIRECTIONAL = {"improved", "regressed", "likely-improved", "likely-regressed"}

# Each variant's start proves its label (the simulator prints `label=…` at start).
VERIFY_LABEL = '    verify:\n      - log_contains: "label=${variant.label}"'


def wilson(k, n, z=1.96):
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (round(max(0.0, c - h), 4), round(min(1.0, c + h), 4))


def rate(k, n):
    return {"count": k, "of": n, "rate": round(k / n, 4) if n else None, "wilson95": wilson(k, n)}


def points_yaml(points):
    return "\n".join(f"      - {{max_concurrency: {c}, requests: {n}}}" for c, n in points)


def knobs(*args):
    return "".join(f', "{a}"' for a in args)


def request_range(points, warmup, index):
    """1-based request numbers (warm-up included) of sweep point `index` within a block."""
    start = 1 + sum(warmup + n for _, n in points[:index])
    return f"{start}..{start + warmup + points[index][1] - 1}"


# The A/A points: c=1 and c=8, each holding its limit for most of the trial (c=8: 4 waves).
AA_POINTS = [(1, 12), (8, 32)]
SWEEP4 = [(1, 12), (4, 24), (8, 32), (16, 64)]


def scenario_specs():
    """name → (default runs, function(seed) → list of (run label, spec text))."""
    base = dict(jitter="0.03", speed="0.01", warmup=2, trials=5, theta="0.02",
                a_args="", b_args="", b_base="1", b_seq="0.1", points=points_yaml(AA_POINTS),
                verify=VERIFY_LABEL)
    # Detection scenarios: quieter servers and θ = 5%, so that the clean comparison is
    # decided (equivalent) and the artefact is what moves the verdict.
    quiet = dict(base, speed="0.005", theta="0.05")

    def one(name, **kw):
        return lambda seed: [("run", SPEC.format(name=name, seed=seed, **kw))]

    def seq(name, cv, speedup):
        return lambda seed: [("run", SEQ_SPEC.format(
            name=name, seed=seed, cv=cv, b_base=f"{1 / speedup:.6f}",
            b_seq=f"{0.1 / speedup:.6f}"))]

    def gate(name, cv, factor, sequential):
        trials = (f"{{count: 5, until_decided: {{max: {GATE_N}}}}}" if sequential
                  else f"{{count: {GATE_N}}}")
        return lambda seed: [("run", GATE_SPEC.format(
            name=name, seed=seed, cv=cv, trials=trials, b_base=f"{factor:.6f}",
            b_seq=f"{0.1 * factor:.6f}"))]

    outlier_range = request_range(AA_POINTS, 2, 0)
    four = points_yaml(SWEEP4)
    c8 = request_range(SWEEP4, 2, 2)
    return {
        "aa": (200, one("cal-aa", **base)),
        "effect": (100, one("cal-effect", **dict(base, b_base=f"{1 / 1.2:.6f}",
                                                  b_seq=f"{0.1 / 1.2:.6f}"))),
        "outlier": (100, one("cal-outlier", **dict(quiet, b_args=knobs(
            "--step-scale", "1.3", "--step-scale-repetitions", "3",
            "--step-scale-requests", outlier_range)))),
        "drift": (100, one("cal-drift", **dict(quiet, b_args=knobs(
            "--drift-per-repetition", "0.02")))),
        "drift8": (100, one("cal-drift8", **dict(quiet, trials=8, b_args=knobs(
            "--drift-per-repetition", "0.02")))),
        "cold": (100, one("cal-cold", **dict(quiet, b_args=knobs(
            "--step-scale", "1.3", "--step-scale-repetitions", "1")))),
        "onewave": (100, one("cal-onewave", **dict(base, points=points_yaml(
            [(1, 12), (16, 16)])))),
        # Two waves at c=16 (32 requests): the held share sits at one half, the edge of
        # load-not-sustained; the grey zone makes it a look, not a coin toss.
        "twowave": (20, one("cal-twowave", **dict(base, points=points_yaml(
            [(1, 12), (16, 32)])))),
        "stale67": (100, lambda seed: [
            ("baseline", SPEC.format(name="cal-stale67", seed=seed, **dict(quiet, points=four))),
            ("artefact", SPEC.format(name="cal-stale67", seed=seed, **dict(
                quiet, points=four, a_args=knobs(
                    "--step-scale", "0.6", "--step-scale-requests", c8)))),
        ]),
        # `implausible`: a change far beyond ±50% (the candidate's decode step twice as fast),
        # every start verified by its rule and the trials agreeing: no look flag is due.
        "big-verified": (100, one("cal-big-verified", **dict(base, b_base="0.5", b_seq="0.05"))),
        # The same change with no verify rule: nothing showed each start running its variant,
        # so the flag's question is open (detection).
        "big-unverified": (100, one("cal-big-unverified", **dict(
            base, b_base="0.5", b_seq="0.05", verify="    verify: []"))),
        # A variant in effect at only some starts: the candidate is the baseline's server
        # except at repetitions 1, 3 and 5, where its steps take a third of the time; its
        # rule (the label) passes at every start, as a rule that proves the wrong thing
        # would (detection).
        "big-partial": (100, one("cal-big-partial", **dict(base, b_args=knobs(
            "--step-scale", "0.3333", "--step-scale-repetitions", "1,3,5")))),
        "seq-aa8": (200, seq("cal-seq-aa8", "0.08", 1.0)),
        "seq-eff15": (100, seq("cal-seq-eff15", "0.08", 1.15)),
        "seq-aa4": (100, seq("cal-seq-aa4", "0.04", 1.0)),
        "seq-eff8": (100, seq("cal-seq-eff8", "0.04", 1.08)),
        # The non-inferiority gate at CV 4% (θ = 5%): an A/A, and a candidate 5% slower
        # (decode step costs × 1/0.95), fixed at the design count and sequential with it as
        # the budget.
        "gate-aa4": (20, gate("cal-gate-aa4", "0.04", 1.0, False)),
        "gate-loss5": (20, gate("cal-gate-loss5", "0.04", 1 / 0.95, False)),
        "gate-seq-aa4": (20, gate("cal-gate-seq-aa4", "0.04", 1.0, True)),
        "gate-seq-loss5": (20, gate("cal-gate-seq-loss5", "0.04", 1 / 0.95, True)),
        "mainjob": (20, lambda seed: [("run", re.sub(
            r"(?m)^    seed: 1$", f"    seed: {seed}",
            (REPO / "specs" / "sim-ab.yaml").read_text()))]),
    }


def binary(args, work):
    if args.bin:
        return Path(args.bin).resolve()
    subprocess.run(["cargo", "build", "--release", "-p", "servebench"], cwd=REPO, check=True)
    dst = work / "servebench"
    shutil.copy2(REPO / "target" / "release" / "servebench", dst)
    return dst


def complete_result(folder):
    for p in sorted(folder.glob("*/*.json")):
        if p.name.endswith(".compare.json"):
            continue
        try:
            if json.loads(p.read_text()).get("status") == "complete":
                return p
        except (OSError, ValueError):
            continue
    return None


def measure(exe, folder, spec_text):
    found = complete_result(folder)
    if found:
        return found, 0.0
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    spec = folder / "spec.yaml"
    spec.write_text(spec_text)
    t0 = time.monotonic()
    # `--fail-on none`: a spec's gate is judged by `compare` below, not by the run's exit code.
    r = subprocess.run([str(exe), "run", "--quiet", "--no-bars", "--fail-on", "none",
                        "--results-dir", str(folder), str(spec)],
                       capture_output=True, text=True, timeout=900)
    took = time.monotonic() - t0
    found = complete_result(folder)
    if r.returncode != 0 or not found:
        print(f"  {folder}: run failed (exit {r.returncode}): {r.stderr.strip()[-400:]}",
              file=sys.stderr)
        return None, took
    return found, took


def compare(exe, *results):
    r = subprocess.run([str(exe), "compare", "--json", *map(str, results)],
                       capture_output=True, text=True, timeout=120)
    doc = json.loads(r.stdout) if r.stdout.strip() else None
    tripped = doc is not None and (doc.get("gate") or {}).get("tripped")
    if r.returncode != 0 and not (r.returncode == 1 and tripped):
        raise RuntimeError(f"compare {results} exited {r.returncode}: {r.stderr}")
    c = doc["comparisons"][0]
    c["_gate"] = doc.get("gate")
    return c


def without_trial(exe, result, variant, repetition, point):
    """The output_throughput verdict at `point` of a copy of `result` without one trial."""
    doc = json.loads(Path(result).read_text())
    doc["trials"] = [t for t in doc["trials"] if not (
        t["variant"] == variant and t["trial"] == repetition and t["point"] == point)]
    copy = Path(result).with_name("without-trial.json.tmp")
    copy.write_text(json.dumps(doc))
    try:
        c = compare(exe, copy)
    finally:
        copy.unlink()
    m = next(m for m in c["metrics"] if m["metric"] == "output_throughput")
    return m["points"][point]["verdict"]


def collect(exe, work, name, runs, make, measure_only):
    comps, total = [], 0.0
    for seed in range(1, runs + 1):
        files = []
        for label, text in make(seed):
            res, took = measure(exe, work / name / f"seed-{seed:04d}" / label, text)
            total += took
            files.append(res)
        if all(files) and not measure_only:
            c = compare(exe, *files)
            if name == "outlier":
                c["_verdict_without_slow_trial"] = without_trial(exe, files[0], "b", 3, 0)
            comps.append(c)
        if seed % 20 == 0 or seed == runs:
            print(f"  {name}: {seed}/{runs} ({total:.0f} s measuring)", file=sys.stderr)
    return comps


def all_flags(c):
    return [f for m in c["metrics"] for f in m["flags"]] + c["flags"]


def rebaseline(c):
    return sorted({f["id"] for f in all_flags(c) if f["level"] == "re-baseline"})


def cells(flag):
    t = flag.get("threatens", {})
    return [(x["metric"], x["point"]) for x in t.get("cells", [])] if t.get("scope") == "cells" \
        else []


def summary_aa(comps):
    n_cells = directional = 0
    verdicts, flag_runs = Counter(), Counter()
    any_rebaseline = 0
    for c in comps:
        ids = rebaseline(c)
        any_rebaseline += bool(ids)
        for i in {f["id"] + "/" + f["level"] for f in all_flags(c)}:
            flag_runs[i] += 1
        for m in c["metrics"]:
            for p in m["points"]:
                n_cells += 1
                verdicts[p["verdict"]] += 1
                directional += p["verdict"] in DIRECTIONAL
    return {
        "runs_with_any_rebaseline_flag": rate(any_rebaseline, len(comps)),
        "cells_with_directional_verdict": rate(directional, n_cells),
        "cells_improved_or_regressed": rate(verdicts["improved"] + verdicts["regressed"],
                                            n_cells),
        "verdicts": dict(sorted(verdicts.items())),
        "runs_with_flag": {k: rate(v, len(comps)) for k, v in sorted(flag_runs.items())},
    }


def summary_effect(comps):
    k = n = 0
    for c in comps:
        m = next(m for m in c["metrics"] if m["metric"] == "output_throughput")
        for p in m["points"]:
            n += 1
            k += p["verdict"] == "improved"
    return {"output_throughput_improved": rate(k, n),
            "runs_with_any_rebaseline_flag": rate(sum(bool(rebaseline(c)) for c in comps),
                                                  len(comps))}


def summary_flag(comps, flag_id, where=None, only=None):
    """Runs where `flag_id` fires, at any level and at re-baseline (on a threatened cell
    matching `where(metric, point)`), and runs where it fires only there (`only`)."""
    hit = hit_rb = clean = 0
    other = Counter()
    for c in comps:
        flags = [f for f in all_flags(c) if f["id"] == flag_id]
        threatened = {cell for f in flags for cell in cells(f)}
        fired = bool(flags) if where is None else any(where(*cell) for cell in threatened)
        rb = [f for f in flags if f["level"] == "re-baseline"]
        fired_rb = bool(rb) if where is None else any(
            where(*cell) for f in rb for cell in cells(f))
        hit += fired
        hit_rb += fired_rb
        if only is not None and fired and all(only(*cell) for cell in threatened):
            clean += 1
        for i in rebaseline(c):
            other[i] += 1
    out = {f"{flag_id}_fired": rate(hit, len(comps)),
           f"{flag_id}_fired_as_rebaseline": rate(hit_rb, len(comps)),
           "runs_with_rebaseline_flag": {k: rate(v, len(comps)) for k, v in sorted(other.items())}}
    if only is not None:
        out[f"{flag_id}_fired_only_there"] = rate(clean, len(comps))
    return out


def summary_stale67(comps):
    hit = 0
    extra = Counter()
    for c in comps:
        ids = rebaseline(c)
        sweep = [f for f in c["metrics"][0]["flags"] if f["id"] == "sweep-inconsistent"]
        points = {p for f in sweep for (_, p) in cells(f)}
        ok = "stale-baseline" in ids and points == {"c=8"}
        hit += ok
        for i in ids:
            extra[i] += 1
    return {"output_throughput_sweep_inconsistent_at_c8_only": rate(hit, len(comps)),
            "runs_with_rebaseline_flag": {k: rate(v, len(comps)) for k, v in sorted(extra.items())}}


def summary_mainjob(comps):
    finding = clean = 0
    for c in comps:
        finding += any("output_throughput" in f for f in c.get("findings", []))
        clean += not rebaseline(c)
    return {"crossover_a_finding": rate(finding, len(comps)),
            "no_rebaseline_flag": rate(clean, len(comps))}


def seq_cells(comps):
    """(verdict, trials used, stop reason) of every cell of output_throughput."""
    out = []
    for c in comps:
        m = next(m for m in c["metrics"] if m["metric"] == "output_throughput")
        for p in m["points"]:
            s = p.get("sequential") or {}
            out.append((p["verdict"], s.get("after_trial"), s.get("stopped")))
    return out


def fixed_trials(effect, cv, theta=0.05, alpha=0.05, power=0.8):
    """The fixed count of the power formula (docs/statistics-method.md, "How many trials")
    to put the interval of a true `effect` beyond ±θ: δ = ln(1 + effect) − ln(1 + θ)."""
    from scipy import stats
    delta = math.log1p(effect) - math.log1p(theta)
    sd = math.sqrt(math.log1p(cv * cv))
    n = 2
    while n < 2 * (stats.t.ppf(1 - alpha / 2, 2 * n - 2) + stats.t.ppf(power, 2 * n - 2)) ** 2 \
            * sd * sd / (delta * delta):
        n += 1
    return n


def summary_seq(verdict_counted, effect=None, cv=None):
    def f(comps):
        cells = seq_cells(comps)
        used = [t for _, t, _ in cells if t is not None]
        out = {
            "cells": len(cells),
            "verdicts": dict(Counter(v for v, _, _ in cells)),
            "stopped": dict(Counter(str(s) for _, _, s in cells)),
            "mean_trials_per_arm": round(sum(used) / len(used), 2) if used else None,
            "counted": rate(sum(verdict_counted(v, t) for v, t, _ in cells), len(cells)),
        }
        if effect is not None:
            try:
                out["fixed_count_of_the_power_formula"] = fixed_trials(effect, cv)
            except ImportError:
                out["fixed_count_of_the_power_formula"] = "needs scipy"
        return out
    return f


def realised_cv(comps):
    """Median trial CV of output_throughput over the runs' arms (what the runs really had)."""
    cvs = sorted(v for c in comps for m in c["metrics"] if m["metric"] == "output_throughput"
                 for p in m["points"] for v in (p.get("cv_baseline"), p.get("cv_candidate"))
                 if v is not None)
    return round(cvs[len(cvs) // 2], 4) if cvs else None


def summary_gate(comps):
    """Runs whose gate tripped, the answers of the gated cell, and the trials it used."""
    tripped = sum(bool((c.get("_gate") or {}).get("tripped")) for c in comps)
    answers = Counter(cell.get("non_inferior") for c in comps
                      for cell in (c.get("_gate") or {}).get("cells", []))
    cells = seq_cells(comps)
    used = [t for _, t, _ in cells if t is not None]
    return {
        "gate_tripped": rate(tripped, len(comps)),
        "non_inferior_answers": dict(answers),
        "mean_trials_per_arm": round(sum(used) / len(used), 2) if used else GATE_N,
        "realised_trial_cv_median": realised_cv(comps),
    }


def summary_outlier(comps):
    """outlier-trial on the slowed cell, over the runs where the slow trial changes its
    output_throughput verdict (and over all runs)."""
    flips = hit = hit_all = 0
    for c in comps:
        m = next(m for m in c["metrics"] if m["metric"] == "output_throughput")
        verdict = m["points"][0]["verdict"]
        fired = any(f["id"] == "outlier-trial" and ("output_throughput", "c=1") in cells(f)
                    for f in m["flags"])
        hit_all += fired
        if verdict != c["_verdict_without_slow_trial"]:
            flips += 1
            hit += fired
    return {"output_throughput_c1_flagged_where_the_trial_flips_the_verdict": rate(hit, flips),
            "output_throughput_c1_flagged_in_all_runs": rate(hit_all, len(comps)),
            "runs_where_the_trial_flips_the_verdict": rate(flips, len(comps))}


def summary_implausible(comps):
    """Runs with an `implausible` flag on output_throughput, and on any metric."""
    tp = any_metric = 0
    for c in comps:
        for m in c["metrics"]:
            fired = any(f["id"] == "implausible" for f in m["flags"])
            any_metric += fired and m["metric"] != "output_throughput"
            tp += fired and m["metric"] == "output_throughput"
    flagged = sum(any(f["id"] == "implausible" for m in c["metrics"] for f in m["flags"])
                  for c in comps)
    return {"runs_with_implausible": rate(flagged, len(comps)),
            "runs_with_implausible_on_output_throughput": rate(tp, len(comps))}


SUMMARIES = {
    "aa": summary_aa,
    "big-verified": summary_implausible,
    "big-unverified": summary_implausible,
    "big-partial": summary_implausible,
    "effect": summary_effect,
    "outlier": summary_outlier,
    "drift": lambda cs: summary_flag(cs, "drift"),
    "drift8": lambda cs: summary_flag(cs, "drift"),
    "cold": lambda cs: summary_flag(cs, "drift"),
    "onewave": lambda cs: summary_flag(cs, "load-not-sustained",
                                       where=lambda m, p: p == "c=16",
                                       only=lambda m, p: p == "c=16"),
    "twowave": lambda cs: summary_flag(cs, "load-not-sustained",
                                       where=lambda m, p: p == "c=16",
                                       only=lambda m, p: p == "c=16"),
    "stale67": summary_stale67,
    "mainjob": summary_mainjob,
    # A/A: a directional verdict at stopping is a false alarm.
    "seq-aa8": summary_seq(lambda v, t: v in DIRECTIONAL),
    # A true +15%: decided improved within the budget of 30.
    "seq-eff15": summary_seq(lambda v, t: v == "improved" and t is not None and t <= 30,
                             effect=0.15, cv=0.08),
    # A/A at CV 4%: decided equivalent within 30.
    "seq-aa4": summary_seq(lambda v, t: v == "equivalent" and t is not None and t <= 30),
    # A true +8% against θ = 5%: "equivalent" is wrong.
    "seq-eff8": summary_seq(lambda v, t: v == "equivalent"),
    "gate-aa4": summary_gate,
    "gate-loss5": summary_gate,
    "gate-seq-aa4": summary_gate,
    "gate-seq-loss5": summary_gate,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenarios", default="aa,effect,outlier,drift,cold,onewave,stale67,mainjob")
    ap.add_argument("--runs", type=int, help="runs per scenario (default: the scenario's)")
    ap.add_argument("--workdir", default="/tmp/servebench-calibrate")
    ap.add_argument("--bin", help="servebench binary (default: build the release one)")
    ap.add_argument("--measure-only", action="store_true",
                    help="only run the specs (a later call without it reuses the results)")
    args = ap.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    exe = binary(args, work)
    specs = scenario_specs()
    out = {"command": " ".join(sys.argv), "binary": str(exe)}
    for name in args.scenarios.split(","):
        runs, make = specs[name]
        runs = args.runs or runs
        t0 = time.monotonic()
        comps = collect(exe, work, name, runs, make, args.measure_only)
        if args.measure_only:
            continue
        out[name] = dict(SUMMARIES[name](comps), runs=len(comps),
                         wall_s=round(time.monotonic() - t0, 1))
        print(json.dumps({name: out[name]}, indent=2), flush=True)
    if not args.measure_only:
        (work / "summary.json").write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
