#!/usr/bin/env python3
"""Kill a simulator run with SIGKILL, kill its resume too, then resume to the end; repeat with
kill moments drawn at random. Checks what issue 50 found lost: every trial the first run had
finished must be in the final result unchanged, every trial must have all its request records,
and the run must end complete.

    bench/kill-twice.py [--rounds 20] [--bin target/debug/servebench] [--seed 1]

Prints one line per round and the totals; exits 1 when a round lost or mixed data.
"""

import argparse
import csv
import io
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TINY = (REPO / "crates/cli/tests/specs/tiny-ab.yaml").read_text().replace(
    "requests: 8", "requests: 24")
# The designs a kill may land in: plain blocks, several trials per start (a nested design),
# one server start for every trial (`server_restart: once`).
SPECS = {
    "plain": TINY.replace("count: 2", "count: 3"),
    "nested": TINY.replace("trials: {count: 2}", "trials: {count: 3, per_start: 2}"),
    "once": TINY.replace("trials: {count: 2}", "trials: {count: 3, server_restart: once}"),
}


def result_of(d):
    for p in sorted(Path(d).rglob("*.json")):
        if not p.name.startswith("."):
            return p
    return None


def load(p):
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return None


def records(binary, result):
    """Measured records per trial seq, read by servebench's own reader (export)."""
    out = subprocess.run([binary, "export", "--table", "requests", str(result)],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        return None, out.stderr
    counts = {}
    for row in csv.DictReader(io.StringIO(out.stdout)):
        if row.get("warmup") in ("true", "1"):
            continue
        counts[int(row["seq"])] = counts.get(int(row["seq"]), 0) + 1
    return counts, ""


def run_killed(binary, d, args, delay):
    p = subprocess.Popen([binary, "run", "--no-bars", *args], cwd=d,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        p.wait(delay)
        return False
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGKILL)
        p.wait()
        return True


def one_round(binary, rng, spec):
    with tempfile.TemporaryDirectory(prefix="kill-twice-") as d:
        Path(d, "spec.yaml").write_text(SPECS[spec])
        t1, t2 = rng.uniform(1.0, 8.0), rng.uniform(0.05, 6.0)
        if not run_killed(binary, d, ["spec.yaml"], t1):
            return "first run ended before its kill", None
        r = result_of(Path(d, "results"))
        if r is None:
            return "killed before the result existed: nothing to lose", None
        first = {t["seq"]: t for t in (load(r) or {}).get("trials", [])}
        run_killed(binary, d, ["--resume", str(r)], t2)
        mid = {t["seq"]: t for t in (load(r) or {}).get("trials", [])}
        end = subprocess.run([binary, "run", "--no-bars", "--resume", str(r)], cwd=d,
                             capture_output=True, text=True, timeout=300)
        final = load(r) or {}
        trials = {t["seq"]: t for t in final.get("trials", [])}
        problems = []
        for seq, t in first.items():
            if seq not in trials:
                problems.append(f"trial {seq} of the first run is gone")
            elif trials[seq] != t:
                problems.append(f"trial {seq} of the first run changed")
        for seq, t in mid.items():
            if seq not in trials:
                problems.append(f"trial {seq} of the killed resume is gone")
        if end.returncode != 0 or final.get("status") != "complete":
            problems.append(f"final resume exit {end.returncode}, status {final.get('status')}: "
                            f"{end.stderr.strip()[-300:]}")
        counts, err = records(binary, r)
        if counts is None:
            problems.append(f"the sidecar cannot be read: {err.strip()[-200:]}")
        else:
            for seq, t in trials.items():
                want = (t.get("summary") or {}).get("all", {}).get("requests")
                if t.get("status") == "ok" and want is not None and counts.get(seq, 0) != want:
                    problems.append(f"trial {seq}: {counts.get(seq, 0)} of {want} records")
        line = (f"t1={t1:.2f}s ({len(first)} trials) t2={t2:.2f}s (+{len(mid) - len(first)}) "
                f"→ {len(trials)} trials")
        return line, "; ".join(problems) or None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(REPO / "target/debug/servebench"))
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--spec", choices=sorted(SPECS), default="plain")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    bad = 0
    started = time.monotonic()
    for i in range(a.rounds):
        line, problem = one_round(a.bin, rng, a.spec)
        bad += problem is not None
        print(f"{'LOST' if problem else 'ok  '} round {i + 1}: {line or ''} {problem or ''}",
              flush=True)
    print(f"\n{a.rounds - bad} of {a.rounds} rounds kept every trial; {bad} lost or mixed data; "
          f"{time.monotonic() - started:.0f} s ({a.spec} design, {a.bin})")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
