#!/usr/bin/env python3
"""How often the host probe's comparison says two runs' hosts differ (docs/statistics-measured.md,
"Host probe"), from probes taken back to back on one quiet host.

    target/release/examples/host_probe 20 | grep '^{' > probes.jsonl
    python3 bench/host-probe-floors.py probes.jsonl

(committed: bench/results/host-probe-h200-quiet.jsonl, 20 probes on the H200 lease's 16-core host.)

Draws two disjoint sets of n probes (n = 1, 3, 7: one probe per run, or one per run and per
server start), scales the second set by a slowdown (1.0: an A/A; 0.9, 0.82, 0.7: a host 10%,
18%, 30% slower) and applies the rule of crates/compare/src/host_probe.rs: the two medians
differ when their log distance exceeds both ln(1 + floor) and three standard errors of the
difference (1.2533·SD(ln x)/√n per set, from 3 probes up). FLOORS must match `FIGURES` there.
Prints, per figure and n, the share of draws that differ. 3,000 seeded draws per cell.
"""
import json
import math
import random
import statistics as st
import sys

FLOORS = {"single_thread": 0.08, "all_core": 0.05, "memory_gbps": 0.40}
SLOWDOWNS = (1.0, 0.9, 0.82, 0.7)
DRAWS = 3000


def log_se(xs):
    if len(xs) < 3:
        return None
    logs = [math.log(x) for x in xs]
    return 1.2533 * st.stdev(logs) / math.sqrt(len(logs))


def differ(a, b, floor):
    d = abs(math.log(st.median(a) / st.median(b)))
    limit = math.log1p(floor)
    sa, sb = log_se(a), log_se(b)
    if sa is not None and sb is not None:
        limit = max(limit, 3 * math.hypot(sa, sb))
    return d > limit


def main():
    probes = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
    rng = random.Random(1)
    print(f"{len(probes)} probes; {DRAWS} draws per cell; share of draws called different")
    print("figure          floor  n  " + "  ".join(f"x{s:<5}" for s in SLOWDOWNS))
    for field, floor in FLOORS.items():
        xs = [p[field] for p in probes]
        for n in (1, 3, 7):
            if 2 * n > len(xs):
                continue
            cells = []
            for slow in SLOWDOWNS:
                hits = 0
                for _ in range(DRAWS):
                    s = rng.sample(xs, 2 * n)
                    hits += differ(s[:n], [x * slow for x in s[n:]], floor)
                cells.append(f"{100 * hits / DRAWS:5.1f}%")
            print(f"{field:15s} {floor:5.2f} {n:2d}  " + "  ".join(cells))


if __name__ == "__main__":
    main()
