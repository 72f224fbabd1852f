#!/usr/bin/env python3
"""Reference vectors for servebench-stats' output-equivalence statistics (src/outputs/),
computed independently with numpy and scipy:

    python3 crates/stats/tests/reference/outputs.py   # writes outputs.json beside it

* Wilson intervals: scipy.stats.binomtest(k, n).proportion_ci(level, method="wilson");
* Newcombe's paired interval (method 10): transcribed from Newcombe (1998) with scipy's
  normal quantile, for 0/1 series and for per-prompt shares;
* McNemar's exact p: scipy.stats.binomtest(min(b, c), b + c, 0.5).pvalue;
* the permutation test: brute force over every joint labelling of small designs.

`tests/it/reference_outputs.rs` reads outputs.json.
"""

import itertools
import json
import math
from pathlib import Path

import numpy as np
import scipy
from scipy import stats

rng = np.random.RandomState(20261202)


def wilson_frac(p, n, level):
    z = stats.norm.ppf(1 - (1 - level) / 2)
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe(first, second, level):
    first, second = np.asarray(first, float), np.asarray(second, float)
    n = len(first)
    p1, p2 = first.mean(), second.mean()
    l1, u1 = wilson_frac(p1, n, level)
    l2, u2 = wilson_frac(p2, n, level)
    if n < 2 or first.std() == 0 or second.std() == 0:
        phi = 0.0
    else:
        phi = float(np.corrcoef(first, second)[0, 1])
    d = p1 - p2
    lo = d - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    hi = d + math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return max(-1.0, lo), min(1.0, hi)


wilson = []
for k, n, level in [(0, 16, 0.95), (1, 16, 0.95), (5, 16, 0.95), (16, 16, 0.95), (3, 7, 0.9),
                    (50, 200, 0.99), (0, 1, 0.95), (12, 40, 0.8)]:
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    wilson.append({"k": k, "n": n, "level": level, "lower": float(ci.low), "upper": float(ci.high)})

paired = []
for n, kind in [(16, "binary"), (30, "binary"), (16, "shares"), (50, "shares"), (8, "binary")]:
    if kind == "binary":
        first = (rng.rand(n) < 0.35).astype(float)
        second = np.where(rng.rand(n) < 0.6, first, (rng.rand(n) < 0.2).astype(float))
    else:
        first = rng.choice([0.0, 0.25, 0.5, 1.0], size=n, p=[0.6, 0.15, 0.1, 0.15])
        second = rng.choice([0.0, 1.0 / 3, 1.0], size=n, p=[0.8, 0.1, 0.1])
    for level in [0.95, 0.9]:
        lo, hi = newcombe(first, second, level)
        paired.append({"first": [float(x) for x in first], "second": [float(x) for x in second],
                       "level": level, "point": float(first.mean() - second.mean()),
                       "lower": lo, "upper": hi})

mcnemar = []
for b, c in [(0, 6), (1, 9), (4, 5), (10, 2), (0, 1), (7, 7), (30, 12)]:
    mcnemar.append({"b": b, "c": c, "p": float(stats.binomtest(min(b, c), b + c, 0.5).pvalue)})


def shares(base, cand):
    b = len(base)
    own = sum(base[i] != base[j] for i in range(b) for j in range(i + 1, b))
    x = own / (b * (b - 1) / 2)
    y = sum(u != v for u in base for v in cand) / (b * len(cand))
    return x, y


def brute_p(prompts):
    observed = sum(y - x for x, y in (shares(b, c) for b, c in prompts))
    per_prompt = []
    for b, c in prompts:
        allv = list(b) + list(c)
        vals = []
        for cand_idx in itertools.combinations(range(len(allv)), len(c)):
            cand = [allv[i] for i in cand_idx]
            base = [allv[i] for i in range(len(allv)) if i not in cand_idx]
            x, y = shares(base, cand)
            vals.append(y - x)
        per_prompt.append(vals)
    total = 0
    hits = 0
    for combo in itertools.product(*per_prompt):
        total += 1
        if sum(combo) >= observed - 1e-9:
            hits += 1
    return hits / total


permutation = []
designs = [
    [([1, 1], [2, 2])] * 3 + [([1, 1], [1, 1])] * 5,
    [([1, 1, 1], [2, 2, 2])] * 2 + [([1, 2, 1], [1, 1, 1])],
    [([1, 2], [1, 2]), ([1, 1], [2]), ([1, 2, 2], [2, 3]), ([4, 4], [4, 5])],
    [([1, 2, 1], [2, 1])] * 4,
    [([1, 1, 2], [3, 3]), ([1, 1], [1, 2]), ([5, 5, 5], [5, 6]), ([1, 2], [3, 4])],
]
for d in designs:
    permutation.append({"prompts": [{"baseline": b, "candidate": c} for b, c in d], "p": brute_p(d)})

out = {
    "generated_by": "crates/stats/tests/reference/outputs.py",
    "versions": {"numpy": np.__version__, "scipy": scipy.__version__},
    "tolerance": {"relative": 1e-9, "absolute": 1e-12},
    "wilson": wilson,
    "paired_difference": paired,
    "mcnemar": mcnemar,
    "permutation": permutation,
}
Path(__file__).with_name("outputs.json").write_text(json.dumps(out, indent=1) + "\n")
print("wrote", Path(__file__).with_name("outputs.json"))
