#!/usr/bin/env python3
"""The `accuracy-dropped` gate's method alone: false alarms and detection of McNemar's exact
test on starts pooled by majority, where an engine's answers vary across server starts.

    python3 bench/accuracy-method.py [--seeds 20000] [--prompts 40] [--starts 3]

The simulator's answers do not vary across starts, so its A/A (bench/accuracy.py) cannot
show the test's level under an engine whose answers do. Here each prompt i has a chance
q_i of being answered right at one server start, each start independent; each arm's starts
are pooled per prompt as `servebench compare` pools them (right when a strict majority of
its starts are right; a tie counts wrong), and the verdict is `lower` when McNemar's exact
two-sided p on the discordant prompts is at most α = 0.05 and the candidate got fewer right
(crates/stats/src/outputs/accuracy.rs; the same arithmetic, in Python). Scenarios:

* `aa-stable`:   q_i 0.97 for 80% of prompts, 0.03 for the rest (answers mostly repeat);
* `aa-unstable`: q_i uniform on [0, 1] (many answers change across starts);
* `drop-d`:      the candidate's q_i is the baseline's times (1 − d), for d = 0.1 and 0.25
                 (on aa-stable's prompts).

Prints, per scenario, the share of seeds whose verdict is `lower` (the gate trips) with a
Wilson 95% interval. Python 3, standard library only; seeded, so a rerun prints the same.
"""

import argparse
import math
import random


def mcnemar(b, c):
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def wilson(k, n, z=1.959964):
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def pooled(rng, q, starts):
    right = sum(rng.random() < q for _ in range(starts))
    return 2 * right > starts


def trial(rng, qs_base, qs_cand, starts, alpha):
    b = c = 0
    for qb, qc in zip(qs_base, qs_cand):
        x, y = pooled(rng, qb, starts), pooled(rng, qc, starts)
        b += x and not y
        c += y and not x
    return mcnemar(b, c) <= alpha and c < b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20000)
    ap.add_argument("--prompts", type=int, default=40)
    ap.add_argument("--starts", type=int, default=3)
    ap.add_argument("--alpha", type=float, default=0.05)
    a = ap.parse_args()
    rng = random.Random(1)
    n = a.prompts

    def stable():
        return [0.97 if rng.random() < 0.8 else 0.03 for _ in range(n)]

    def unstable():
        return [rng.random() for _ in range(n)]

    scenarios = [
        ("aa-stable", lambda: (lambda q: (q, q))(stable())),
        ("aa-unstable", lambda: (lambda q: (q, q))(unstable())),
        ("drop-0.1", lambda: (lambda q: (q, [x * 0.9 for x in q]))(stable())),
        ("drop-0.25", lambda: (lambda q: (q, [x * 0.75 for x in q]))(stable())),
    ]
    for name, make in scenarios:
        hits = 0
        for _ in range(a.seeds):
            qb, qc = make()
            hits += trial(rng, qb, qc, a.starts, a.alpha)
        lo, hi = wilson(hits, a.seeds)
        print(f"{name}: lower in {hits}/{a.seeds} = {hits / a.seeds:.2%} "
              f"(Wilson 95% {lo:.2%}-{hi:.2%}); {n} prompts, {a.starts} starts per arm")


if __name__ == "__main__":
    main()
