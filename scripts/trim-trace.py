#!/usr/bin/env python3
"""Cut a PyTorch profiler trace (Chrome trace JSON, gzip or not) to a small fixture.

    python3 scripts/trim-trace.py IN OUT.json.gz [--events N] [--from REGEX]...

Keeps the trace's header fields and the first N complete events (`ph: X`) of any category
from the first event whose name matches a REGEX (the first REGEX that matches any; default:
the first event), plus the
non-complete events among them; writes gzip. Used for the committed fixtures under
crates/result/tests/fixtures/kernels/ (docs/kernels.md says which run each comes from).
"""
import argparse
import gzip
import json
import re


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("--events", type=int, default=1500)
    ap.add_argument("--from", dest="start", action="append", default=[],
                    help="a name regex; repeated: the first that matches any event wins")
    a = ap.parse_args()
    opener = gzip.open if open(a.inp, "rb").read(2) == b"\x1f\x8b" else open
    with opener(a.inp, "rt") as f:
        doc = json.load(f)
    events = sorted(doc["traceEvents"], key=lambda e: e.get("ts", 0) or 0)
    begin = 0
    for p in a.start:
        pat = re.compile(p)
        hit = next((i for i, e in enumerate(events) if pat.search(str(e.get("name", "")))), None)
        if hit is not None:
            begin = hit
            break
    # Back up to the step's start: the enclosing events that began before the match.
    t0 = events[begin].get("ts", 0)
    kept = []
    complete = 0
    for e in events:
        end = (e.get("ts", 0) or 0) + (e.get("dur", 0) or 0)
        if end < t0 - 5000:
            continue
        kept.append(e)
        if e.get("ph") == "X":
            complete += 1
            if complete >= a.events:
                break
    doc["traceEvents"] = kept
    with gzip.open(a.out, "wt", compresslevel=9) as f:
        json.dump(doc, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
