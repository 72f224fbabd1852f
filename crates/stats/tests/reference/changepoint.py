#!/usr/bin/env python3
"""Reference vectors for servebench-stats' change points (`changepoint.rs`, `student.rs`,
`interval::prediction_interval`), from an independent implementation: numpy / scipy for every
statistic, and the method of `changepoint.rs`'s module docs written again from its words.

    pip install numpy scipy
    python3 crates/stats/tests/reference/changepoint.py   # writes changepoint.json beside it

`tests/it/changepoint.rs` reads changepoint.json:
* `pooled` — scipy `ttest_ind(equal_var=True)` and its interval: to 1e-9 relative;
* `prediction` — Student's prediction interval from scipy's t quantile: to 1e-9;
* `max_t` — the split with the largest |t| over every split (scipy per split): the split
  exactly, t to 1e-9;
* `permutation` — the permutation p-value of that maximum with 20000 numpy shuffles: the
  Rust value (its own 999-shuffle ChaCha8 stream) must lie within 0.03 (Monte Carlo error);
* `detect` — whole series (steps, outlier runs, newest runs): outlier runs, change points,
  their status and rule exactly, shifts to 1e-9. Only series whose every permutation test is
  far from α (p < 0.02 or p > 0.10 here) are kept, so that the two shuffle streams cannot
  disagree on a decision.
"""

import json
import math
import platform
import sys
from pathlib import Path

import numpy as np
import scipy
from scipy import stats

rng = np.random.RandomState(20261130)
ALPHA, PERMS, MIN_SEG, WINDOW, OUT_LEVEL, NEW_LEVEL, LEVEL, NEWEST = (
    0.05, 20000, 3, 10, 0.99, 0.99, 0.95, 2)


def fl(xs):
    return [float(x) for x in xs]


def pooled(before, after, level=LEVEL):
    before, after = np.asarray(before), np.asarray(after)
    na, nb = len(before), len(after)
    df = na + nb - 2
    va = before.var(ddof=1) if na > 1 else 0.0
    vb = after.var(ddof=1) if nb > 1 else 0.0
    sp2 = ((na - 1) * va + (nb - 1) * vb) / df
    se = math.sqrt(sp2 * (1 / na + 1 / nb))
    d = after.mean() - before.mean()
    if na > 1 and nb > 1:
        t, p = stats.ttest_ind(after, before, equal_var=True)
    else:
        t = d / se
        p = 2 * stats.t.sf(abs(t), df)
    half = stats.t.ppf(1 - (1 - level) / 2, df) * se
    return {"diff": float(d), "std_err": float(se), "df": float(df), "t": float(t),
            "p": float(p), "lower": float(d - half), "upper": float(d + half)}


def prediction(values, level):
    v = np.asarray(values)
    m = len(v)
    half = stats.t.ppf(1 - (1 - level) / 2, m - 1) * v.std(ddof=1) * math.sqrt(1 + 1 / m)
    return (float(v.mean() - half), float(v.mean() + half))


def split_t(v, k):
    a, b = v[:k], v[k:]
    return float(stats.ttest_ind(b, a, equal_var=True).statistic)


def max_t(v, lo=MIN_SEG, hi=MIN_SEG):
    best = None
    for k in range(lo, len(v) - hi + 1):
        t = split_t(v, k)
        if best is None or abs(t) > abs(best[1]) * (1 + 1e-12):
            best = (k, t)
    return best


def max_abs_t_rows(m, lo=MIN_SEG, hi=MIN_SEG):
    """max |t| over the splits of every row of m (numpy, pooled-variance t by its formula)."""
    n = m.shape[1]
    ks = np.arange(lo, n - hi + 1)
    best = np.zeros(m.shape[0])
    for k in ks:
        a, b = m[:, :k], m[:, k:]
        ss = ((a - a.mean(1, keepdims=True)) ** 2).sum(1) + ((b - b.mean(1, keepdims=True)) ** 2).sum(1)
        se = np.sqrt(ss / (n - 2) * (1 / k + 1 / (n - k)))
        best = np.maximum(best, np.abs(b.mean(1) - a.mean(1)) / se)
    return best


def permutation_p(v, observed, perms=PERMS, seed=1):
    r = np.random.RandomState(seed)
    v = np.array(v)
    m = np.array([r.permutation(v) for _ in range(perms)])
    at_least = int((max_abs_t_rows(m) >= abs(observed) * (1 - 1e-12)).sum())
    return (1 + at_least) / (1 + perms)


def outside(x, ci):
    lo, hi = ci
    centre, half = (lo + hi) / 2, (hi - lo) / 2
    score = abs(x - centre) / half
    return (x > centre, score) if score > 1 else None


def inside(x, ci):
    return ci[0] <= x <= ci[1]


def outliers(y):
    n = len(y)
    out = [False] * n
    found = []
    while True:
        best = None
        for i in range(n):
            if out[i]:
                continue
            before = [y[j] for j in range(i - 1, -1, -1) if not out[j]][:WINDOW]
            after = [y[j] for j in range(i + 1, n) if not out[j]][:WINDOW]
            pb = prediction(before, OUT_LEVEL) if len(before) >= 3 else None
            pa = prediction(after, OUT_LEVEL) if len(after) >= 3 else None
            judged = None
            if pb and pa:
                ob, oa = outside(y[i], pb), outside(y[i], pa)
                if ob and oa and ob[0] == oa[0]:
                    judged = (min(ob[1], oa[1]), before, pb)
            elif pb and after and all(inside(x, pb) for x in after):
                ob = outside(y[i], pb)
                judged = ob and (ob[1], before, pb)
            elif pa and all(inside(x, pa) for x in before):
                oa = outside(y[i], pa)
                judged = oa and (oa[1], after, pa)
            if judged and (best is None or judged[0] > best[0]):
                best = (judged[0], i, y[i] - np.mean(judged[1]), judged[2])
        if best is None:
            break
        out[best[1]] = True
        found.append({"index": best[1], "shift": float(best[2]),
                      "lower": best[3][0], "upper": best[3][1]})
    return sorted(found, key=lambda o: o["index"])


class Margin(Exception):
    pass


def segment(z, lo, hi, out, decisions):
    part = z[lo:hi]
    if len(part) < 2 * MIN_SEG:
        return
    k, t = max_t(part)
    p = permutation_p(part, t, seed=lo * 1000 + hi)
    decisions.append(p)
    if 0.02 <= p <= 0.10:
        raise Margin(p)
    if p > ALPHA:
        return
    out.append(lo + k)
    segment(z, lo, lo + k, out, decisions)
    segment(z, lo + k, hi, out, decisions)


def confirm(z, cps):
    cps = sorted(cps)
    while True:
        ps = []
        for j, c in enumerate(cps):
            lo = cps[j - 1] if j else 0
            hi = cps[j + 1] if j + 1 < len(cps) else len(z)
            ps.append(pooled(z[lo:c], z[c:hi])["p"])
        if ps and max(ps) > ALPHA:
            del cps[int(np.argmax(ps))]
        else:
            return cps


def newest_off(z, start):
    m, off = len(z), 0
    for r in range(1, m):
        ref = z[start:m - r]
        if len(ref) < MIN_SEG:
            break
        ci = prediction(ref, NEW_LEVEL)
        sides = [outside(x, ci) for x in z[m - r:]]
        if sides[0] and all(s and s[0] == sides[0][0] for s in sides):
            off = r
    return off


def detect(y):
    outs = outliers(y)
    kept = [i for i in range(len(y)) if all(o["index"] != i for o in outs)]
    z = [y[i] for i in kept]
    body = z[:max(0, len(z) - NEWEST)]
    found, decisions = [], []
    segment(body, 0, len(body), found, decisions)
    bounds = [(c, "segmentation", "confirmed") for c in confirm(body, found)]
    start = bounds[-1][0] if bounds else 0
    off = newest_off(z, start)
    if off:
        bounds.append((len(z) - off, "persistence" if off >= 2 else "newest",
                       "confirmed" if off >= 2 else "unconfirmed"))
    cps = []
    for j, (c, rule, status) in enumerate(bounds):
        lo = bounds[j - 1][0] if j else 0
        hi = bounds[j + 1][0] if j + 1 < len(bounds) else len(z)
        cps.append({"index": kept[c], "status": status, "rule": rule,
                    "before": kept[lo:c], "after": kept[c:hi], "shift": pooled(z[lo:c], z[c:hi])})
    return {"outliers": outs, "change_points": cps, "permutation_ps": decisions}


def series(n, sd, steps=(), outlier_runs=()):
    y = rng.normal(0.0, sd, n)
    for at, size in steps:
        y[at:] += size
    for at, size in outlier_runs:
        y[at] += size
    return fl(y)


out = {"generator": {"python": sys.version.split()[0], "numpy": np.__version__,
                     "scipy": scipy.__version__, "platform": platform.platform()},
       "tolerance": {"relative": 1e-9, "absolute": 1e-12, "permutation_p": 0.03},
       "settings": {"alpha": ALPHA, "min_segment": MIN_SEG, "window": WINDOW,
                    "outlier_level": OUT_LEVEL, "newest_level": NEW_LEVEL, "level": LEVEL}}

out["pooled"] = []
for na, nb, shift in [(5, 5, 0.0), (10, 3, 0.05), (3, 7, -0.1), (12, 2, 0.2), (8, 1, 0.3),
                      (20, 20, 0.01)]:
    a, b = fl(rng.normal(0, 0.03, na)), fl(rng.normal(shift, 0.03, nb))
    out["pooled"].append({"before": a, "after": b, "level": LEVEL, **pooled(a, b)})

out["prediction"] = []
for m, level in [(3, 0.95), (5, 0.99), (10, 0.99), (25, 0.9)]:
    v = fl(rng.normal(7.0, 0.05, m))
    lo, hi = prediction(v, level)
    out["prediction"].append({"values": v, "level": level, "lower": lo, "upper": hi})

out["max_t"], out["permutation"] = [], []
for n, steps in [(12, [(6, 0.05)]), (20, [(13, -0.04)]), (30, []), (16, [(3, 0.1)]),
                 (25, [(10, 0.03), (18, 0.06)])]:
    v = series(n, 0.02, steps)
    k, t = max_t(np.array(v))
    out["max_t"].append({"values": v, "min": MIN_SEG, "split": k, "t": t})
    out["permutation"].append({"values": v, "min": MIN_SEG, "observed": t,
                               "p": permutation_p(v, t, seed=n)})

cases = [
    ("flat", dict(n=24, sd=0.03)),
    ("step", dict(n=30, sd=0.03, steps=[(15, 0.08)])),
    ("step and outlier", dict(n=30, sd=0.03, steps=[(15, -0.08)], outlier_runs=[(7, -0.3)])),
    ("two steps", dict(n=36, sd=0.02, steps=[(12, 0.06), (24, -0.08)])),
    ("outlier at the start", dict(n=20, sd=0.02, outlier_runs=[(0, 0.25)])),
    ("newest off", dict(n=15, sd=0.02, outlier_runs=[(14, 0.2)])),
    ("two newest off", dict(n=16, sd=0.02, steps=[(14, 0.2)])),
    ("second newest off, back", dict(n=16, sd=0.02, outlier_runs=[(14, 0.2)])),
    ("outlier among steps", dict(n=40, sd=0.025, steps=[(20, 0.1)], outlier_runs=[(30, 0.4)])),
    ("short", dict(n=5, sd=0.02)),
]
out["detect"] = []
for name, kw in cases:
    for attempt in range(50):
        y = series(**kw)
        try:
            found = detect(y)
        except Margin:
            continue
        out["detect"].append({"name": name, "values": y, **found})
        break
    else:
        raise SystemExit(f"no draw of {name} kept every permutation p away from alpha")

path = Path(__file__).with_name("changepoint.json")
path.write_text(json.dumps(out, indent=1) + "\n")
print(f"wrote {path}: " + ", ".join(f"{k} {len(v)}" for k, v in out.items()
                                     if isinstance(v, list)))
for c in out["detect"]:
    print(f"  {c['name']:26} outliers {[o['index'] for o in c['outliers']]} change points "
          f"{[(cp['index'], cp['status'], cp['rule']) for cp in c['change_points']]}")
