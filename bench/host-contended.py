#!/usr/bin/env python3
"""Calibrate `host-contended` (docs/statistics-measured.md, "host-contended").

Runs a small simulator A/A (bench/specs/host-contended-aa.yaml) with servebench and reads
each trial's `host_load` (other processes' CPU and steal during the trial):

  aa   : as the machine is; every flagged trial is a false alarm if the machine is quiet
  hog  : the same, with a bounded CPU hog (`timeout 2 yes > /dev/null`) started every
         6 s, 1 s into a cycle; a trial counts as hit when the hog ran for >= 1 s of it

    python3 bench/host-contended.py aa  target/debug/servebench
    python3 bench/host-contended.py hog target/debug/servebench

Prints per trial: other CPUs, steal, whether the hog overlapped it, whether the
thresholds (other processes >= 0.5 CPU, or steal >= 5%: OTHER_CPUS, STEAL) flag it,
then the rates. The machine's load average before and after is printed: on a machine
shared with other work the A/A rate is the rate of that work, not a false alarm.
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

SPEC = os.path.join(os.path.dirname(__file__), "specs", "host-contended-aa.yaml")
# Keep in step with servebench_stats::flags::host::HostThresholds::default().
OTHER_CPUS = 0.5
STEAL = 0.05


def parse(ts):
    return datetime.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def hog(stop, spans):
    while not stop.is_set():
        if stop.wait(1.0):
            break
        start = time.time()
        subprocess.run(["timeout", "2", "sh", "-c", "yes > /dev/null"], check=False)
        spans.append((start, time.time()))
        stop.wait(3.0)


def main():
    mode, sb = sys.argv[1], sys.argv[2]
    spans, stop = [], threading.Event()
    t = threading.Thread(target=hog, args=(stop, spans))
    print("load average before:", open("/proc/loadavg").read().split()[:3])
    with tempfile.TemporaryDirectory() as d:
        if mode == "hog":
            t.start()
        try:
            subprocess.run([sb, "run", "--quiet", "--results-dir", d, SPEC], check=True)
        finally:
            stop.set()
            if mode == "hog":
                t.join()
        path = next(os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs
                    if f.endswith(".json") and ".requests" not in f)
        result = json.load(open(path))
    print("load average after:", open("/proc/loadavg").read().split()[:3])
    flagged = hit = hit_flagged = n = 0
    for tr in result["trials"]:
        load = tr.get("host_load")
        if not load:
            continue
        n += 1
        a, b = parse(tr["started_at"]), parse(tr["ended_at"])
        overlap = sum(max(0.0, min(b, e) - max(a, s)) for s, e in spans)
        is_hit = overlap >= 1.0
        is_flag = load["other_cpus"] >= OTHER_CPUS or load["steal_share"] >= STEAL
        flagged += is_flag
        hit += is_hit
        hit_flagged += is_hit and is_flag
        print(f"{tr['variant']} t={tr['trial']} {b - a:5.2f}s other={load['other_cpus']:.3f} "
              f"cpus={load['cpus']} steal={load['steal_share']:.3f} "
              f"server={load.get('server_cpus')} servebench={load['servebench_cpus']:.3f} "
              f"hog={overlap:.1f}s flag={is_flag}")
    print(f"trials {n}, flagged {flagged}; hog overlapped >= 1 s: {hit}, of which flagged {hit_flagged}")


if __name__ == "__main__":
    main()
