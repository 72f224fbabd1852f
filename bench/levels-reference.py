#!/usr/bin/env python3
"""Reference values for servebench_stats::levels (crates/stats/src/levels/tests.rs).

Computed independently of the Rust code: the contrasts of a design where every start measures
all of its arm's points are read off the starts' weighted sums (the sample variance of the sums
per group of starts, numpy ddof=1), and the unbalanced case through the explicit weight vector
and cluster sandwich; Student t and Holm from scipy.

    python3 -m venv /tmp/v && /tmp/v/bin/pip install numpy scipy
    /tmp/v/bin/python bench/levels-reference.py
"""
import numpy as np
from scipy import stats

ARMS, POINTS = 2, 3
CELLS = [(a, p) for a in range(ARMS) for p in range(POINTS)]


def value(r, a, k, p, shift):
    base = 100.0 * (1 + a) * (1 + p)
    start = np.exp(0.05 * np.sin(1.3 * k + 0.7 * a + 2.1 * r))
    noise = np.exp(0.02 * np.cos(2.9 * k + 1.7 * p + 0.3 * a + r))
    return base * shift(a, p) ** r * start * noise


def data(shift, starts=(4, 5), drop=None):
    """rows: (run, start id, cell, value); start ids a*100+k."""
    rows = []
    for r in (0, 1):
        for a in range(ARMS):
            for k in range(starts[r]):
                for p in range(POINTS):
                    if drop == (r, a, k, p):
                        continue
                    rows.append((r, a * 100 + k, CELLS.index((a, p)), value(r, a, k, p, shift)))
    return rows


def contrast(rows, lam, level=0.95):
    """The sandwich over starts, written out from the weight vector."""
    y = np.array([np.log(v) for (_, _, _, v) in rows])
    n = {}
    mean = {}
    for r in (0, 1):
        for c in range(len(CELLS)):
            idx = [i for i, (rr, _, cc, _) in enumerate(rows) if rr == r and cc == c]
            n[r, c] = len(idx)
            mean[r, c] = y[idx].mean()
    est = sum(lam[c] * (mean[1, c] - mean[0, c]) for c in range(len(CELLS)))
    z = {}
    for i, (r, s, c, _) in enumerate(rows):
        w = (1 if r else -1) * lam[c] / n[r, c]
        z[r, s] = z.get((r, s), 0.0) + w * (y[i] - mean[r, c])
    groups = {}
    for (r, s), zz in z.items():
        groups.setdefault((r, s // 100), []).append(zz)
    V, den = 0.0, 0.0
    for g, zs in groups.items():
        k = len(zs)
        vg = k / (k - 1) * sum(x * x for x in zs)
        V += vg
        den += vg * vg / (k - 1)
    se = np.sqrt(V)
    df = V * V / den
    q = stats.t.ppf(1 - (1 - level) / 2, df)
    p = 2 * stats.t.sf(abs(est / se), df)
    return est, se, df, p, q * se


def contrast_by_sums(rows, lam, level=0.95):
    """The same contrast for a design where every start measures all its arm's points: per
    group the starts' sums z_k = sum_p lam_c * ln y_kp, their mean and sample variance."""
    est, V, den = 0.0, 0.0, 0.0
    for r in (0, 1):
        for a in range(ARMS):
            ks = sorted({s for (rr, s, _, _) in rows if rr == r and s // 100 == a})
            zs = []
            for s in ks:
                zs.append(sum(lam[c] * np.log(v) for (rr, ss, c, v) in rows if rr == r and ss == s))
            zs = np.array(zs)
            est += (1 if r else -1) * zs.mean()
            vg = zs.var(ddof=1) / len(zs)
            V += vg
            if vg > 0:
                den += vg * vg / (len(zs) - 1)
    se = np.sqrt(V)
    df = V * V / den
    q = stats.t.ppf(1 - (1 - level) / 2, df)
    return est, se, df, 2 * stats.t.sf(abs(est / se), df), q * se


def weights(member):
    k = sum(1 for c in range(len(CELLS)) if member(c))
    return [(1.0 / k if member(c) else 0.0) - 1.0 / len(CELLS) for c in range(len(CELLS))]


def report(name, rows, check_sums):
    common = [1.0 / len(CELLS)] * len(CELLS)
    scopes = [("arm", a, weights(lambda c, a=a: CELLS[c][0] == a)) for a in range(ARMS)]
    scopes += [("point", p, weights(lambda c, p=p: CELLS[c][1] == p)) for p in range(POINTS)]
    scopes += [("cell", c, weights(lambda i, c=c: i == c)) for c in range(len(CELLS))]
    res = [contrast(rows, w) for (_, _, w) in scopes]
    # Holm within each family (arms, points, cells), Bonferroni over the 3 families.
    holm = np.empty(len(res))
    for kind in ("arm", "point", "cell"):
        idx = [i for i, (k, _, _) in enumerate(scopes) if k == kind]
        holm[idx] = np.minimum(1.0, 3 * multipletests_holm([res[i][3] for i in idx]))
    c = contrast(rows, common)
    if check_sums:
        s = contrast_by_sums(rows, common)
        assert np.allclose(c, s), (c, s)
        for (_, _, w), r in zip(scopes, res):
            assert np.allclose(r, contrast_by_sums(rows, w))
    print(f"== {name}")
    print(f"common ratio {np.exp(c[0]):.12f} ci [{np.exp(c[0]-c[4]):.12f}, {np.exp(c[0]+c[4]):.12f}] "
          f"se {c[1]:.12f} df {c[2]:.12f} p {c[3]:.12e}")
    for (kind, i, _), r, h in zip(scopes, res, holm):
        print(f"{kind} {i}: departure {np.exp(r[0]):.12f} ci [{np.exp(r[0]-r[4]):.12f}, "
              f"{np.exp(r[0]+r[4]):.12f}] p {r[3]:.12e} holm {h:.12e}")


def multipletests_holm(p):
    p = np.asarray(p)
    m = len(p)
    order = np.argsort(p)
    adj = np.empty(m)
    running = 0.0
    for j, i in enumerate(order):
        running = max(running, min(1.0, (m - j) * p[i]))
        adj[i] = running
    return adj


if __name__ == "__main__":
    report("uniform 0.8", data(lambda a, p: 0.8), True)
    report("arm 1 at 0.7, arm 0 at 0.8", data(lambda a, p: 0.7 if a == 1 else 0.8), True)
    report("uniform 0.8, one value dropped (new run, arm 0, start 2, point 1)",
           data(lambda a, p: 0.8, drop=(1, 0, 2, 1)), False)
