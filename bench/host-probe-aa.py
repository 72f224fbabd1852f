#!/usr/bin/env python3
"""The host probe on a loaded shared machine over time (docs/statistics-measured.md,
"Host probe on a loaded shared VM").

    nice -n 19 python3 bench/host-probe-aa.py collect --bin BIN --out FILE [--minutes 60]
                                                      [--every 150] [--hog-every 3]
    python3 bench/host-probe-aa.py analyse FILE

collect: every --every seconds, two short simulator runs back to back
(bench/specs/host-probe-aa.yaml: three server starts, so four probes per run), then
`servebench compare A B --json --no-history` with the binary given. Every --hog-every-th pair
is a real host change made on purpose: one CPU hog per core (`yes`, at the script's own
niceness) runs for the whole of the second run. One JSON line per pair: each run's probes (the
run's own and one per server start), its trials' host loads, the load average before, and the
fingerprint fields compare named (so the rule of the binary given is measured as it ran).

analyse: applies the rules of crates/compare/src/host_probe.rs to every pair: the quiet floors
(FLOORS) and three standard errors of the difference ("before": issue 51's rule); "after": a
pair where either run's host was contended (a trial's other processes >= 0.5 CPU or steal >=
5%) gets a note instead of a difference. Prints, for the A/A pairs (adjacent, and every two
A/A runs of the file) and the hog pairs, how many are called different by each figure and by
any, and the spread of the run medians. Keep FLOORS in step with `FIGURES` there.
"""
import argparse
import itertools
import json
import math
import os
import statistics as st
import subprocess
import sys
import time

SPEC = os.path.join(os.path.dirname(__file__), "specs", "host-probe-aa.yaml")
FIELDS = ("single_thread", "all_core", "memory_gbps")
FLOORS = {"single_thread": 0.08, "all_core": 0.05, "memory_gbps": 0.40}
OTHER_CPUS, STEAL = 0.5, 0.05


def run_once(bin_, workdir, tag):
    out = os.path.join(workdir, tag)
    t0 = time.time()
    p = subprocess.run(
        [bin_, "run", SPEC, "--results-dir", out, "-q"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    files = [os.path.join(dp, f) for dp, _, fs in os.walk(out) for f in fs
             if f.endswith(".json") and not f.endswith(".requests.json")]
    if p.returncode != 0 or not files:
        return None, {"tag": tag, "error": p.stderr[-400:]}
    path = sorted(files)[-1]
    r = json.load(open(path))
    probes = [r.get("host_probe")] + [s.get("host_probe") for s in r.get("servers", [])]
    loads = [t.get("host_load") for t in r.get("trials", []) if t.get("host_load")]
    return path, {
        "tag": tag, "t0": t0, "took_s": round(time.time() - t0, 1),
        "probes": [{k: p[k] for k in FIELDS} for p in probes if p],
        "other_cpus": [round(l["other_cpus"], 2) for l in loads],
        "steal": [round(l["steal_share"], 3) for l in loads],
    }


def fields_named(value, out):
    if isinstance(value, dict):
        if isinstance(value.get("field"), str) and "baseline" in value:
            out.add(value["field"])
        for v in value.values():
            fields_named(v, out)
    elif isinstance(value, list):
        for v in value:
            fields_named(v, out)
    return out


def collect(args):
    deadline = time.time() + 60 * args.minutes
    os.makedirs(args.workdir, exist_ok=True)
    i = 0
    while time.time() < deadline:
        start = time.time()
        hog = args.hog_every > 0 and i % args.hog_every == args.hog_every - 1
        load = os.getloadavg()[0]
        a_path, a = run_once(args.bin, args.workdir, f"p{i}-a")
        hogs = []
        if hog:
            hogs = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL)
                    for _ in range(os.cpu_count() or 1)]
            time.sleep(1)
        try:
            b_path, b = run_once(args.bin, args.workdir, f"p{i}-b")
        finally:
            for h in hogs:
                h.kill()
                h.wait()
        line = {"pair": i, "hog": hog, "loadavg": round(load, 2), "a": a, "b": b}
        if a_path and b_path:
            c = subprocess.run([args.bin, "compare", a_path, b_path, "--json", "--no-history"],
                               capture_output=True, text=True)
            try:
                line["compare_fields"] = sorted(fields_named(json.loads(c.stdout), set()))
            except json.JSONDecodeError:
                line["compare_error"] = c.stderr[-400:]
        with open(args.out, "a") as f:
            f.write(json.dumps(line) + "\n")
        print(f"pair {i} hog={hog} load={load:.1f} fields={line.get('compare_fields')}",
              flush=True)
        i += 1
        time.sleep(max(0.0, args.every - (time.time() - start)))


def log_se(xs):
    if len(xs) < 3:
        return None
    return 1.2533 * st.stdev([math.log(x) for x in xs]) / math.sqrt(len(xs))


def contended(run):
    return any(o >= OTHER_CPUS for o in run["other_cpus"]) or any(
        s >= STEAL for s in run["steal"])


def judge(a, b, field, after=True):
    """'difference', 'note' or None for one figure of two runs, by the rule before issue 51
    (after=False) or after it."""
    xa = [p[field] for p in a["probes"] if p[field] > 0]
    xb = [p[field] for p in b["probes"] if p[field] > 0]
    if not xa or not xb:
        return None
    d = abs(math.log(st.median(xb) / st.median(xa)))
    limit = math.log1p(FLOORS[field])
    sa, sb = log_se(xa), log_se(xb)
    if sa is not None and sb is not None:
        limit = max(limit, 3 * math.hypot(sa, sb))
    if d <= limit:
        return None
    if after and (contended(a) or contended(b)):
        return "note"
    return "difference"


def tally(name, pairs, after):
    if not pairs:
        return
    n = len(pairs)
    diff = {f: 0 for f in FIELDS}
    note = {f: 0 for f in FIELDS}
    anyd = 0
    for a, b in pairs:
        js = {f: judge(a, b, f, after) for f in FIELDS}
        for f, j in js.items():
            diff[f] += j == "difference"
            note[f] += j == "note"
        anyd += any(j == "difference" for j in js.values())
    cells = "  ".join(f"{f} {diff[f]}/{n} (+{note[f]} notes)" for f in FIELDS)
    print(f"{name:<28} n={n:<4} NOT COMPARABLE {anyd}/{n} = {100 * anyd / n:5.1f}%   {cells}")


def spread(name, runs):
    for f in FIELDS:
        xs = [st.median([p[f] for p in r["probes"]]) for r in runs if r["probes"]]
        if len(xs) > 1:
            m = st.median(xs)
            print(f"{name} {f:<14} run medians: median {m:.3g}, "
                  f"min {min(xs) / m - 1:+.1%}, max {max(xs) / m - 1:+.1%}")


def analyse(args):
    lines = [json.loads(l) for l in open(args.file) if l.strip()]
    ok = [l for l in lines if l["a"].get("probes") and l["b"].get("probes")]
    aa = [l for l in ok if not l["hog"]]
    hog = [l for l in ok if l["hog"]]
    loads = [l["loadavg"] for l in lines]
    print(f"{len(lines)} pairs ({len(aa)} A/A, {len(hog)} with a hog); load average "
          f"{min(loads):.1f}-{max(loads):.1f}")
    old = sum(any(f.startswith("host_probe.") for f in l.get("compare_fields", []))
              for l in aa)
    print(f"as run (the binary's rule): A/A pairs NOT COMPARABLE on host_probe: {old}/{len(aa)}")
    old_h = sum(any(f.startswith("host_probe.") for f in l.get("compare_fields", []))
                for l in hog)
    print(f"as run (the binary's rule): hog pairs NOT COMPARABLE on host_probe: "
          f"{old_h}/{len(hog)}")
    runs = [l["a"] for l in ok] + [l["b"] for l in aa]
    for after in (False, True):
        print("rule after issue 51:" if after else "rule before issue 51:")
        tally("  A/A, back to back", [(l["a"], l["b"]) for l in aa], after)
        tally("  A/A, any two runs", list(itertools.combinations(runs, 2)), after)
        tally("  hog in the second run", [(l["a"], l["b"]) for l in hog], after)
    spread("no hog:", runs)
    spread("hog:   ", [l["b"] for l in hog])
    share = sum(contended(r) for r in runs) / max(1, len(runs))
    print(f"runs without a hog whose host_load reads contended: {share:.0%}")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--bin", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--workdir", default="/tmp/host-probe-aa")
    c.add_argument("--minutes", type=float, default=60)
    c.add_argument("--every", type=float, default=150)
    c.add_argument("--hog-every", type=int, default=3)
    a = sub.add_parser("analyse")
    a.add_argument("file")
    args = ap.parse_args()
    collect(args) if args.cmd == "collect" else analyse(args)


if __name__ == "__main__":
    sys.exit(main())
