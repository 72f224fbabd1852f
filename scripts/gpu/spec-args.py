#!/usr/bin/env python3
"""Print a spec's server command line for its baseline variant, shell-quoted, with `${port}`
and the baseline's `${variant.*}` filled in and the kernel-evidence folder replaced by
TRACE_DIR: the same server servebench starts, for a start by hand (the transcript capture of
scripts/gpu-engine-e2e). Reads YAML with PyYAML (transformers brings it).

    python3 scripts/gpu/spec-args.py SPEC PORT TRACE_DIR
"""
import re
import shlex
import sys

import yaml

spec_path, port, trace_dir = sys.argv[1:4]
spec = yaml.safe_load(open(spec_path))["spec"]
base = next(v for v in spec["variants"] if v.get("baseline"))
words = spec["server"]["command"] + spec["server"].get("args", []) + base.get("server", {}).get("args", [])
evidence = spec.get("evidence", {}).get("kernels", {}).get("dir")


def fill(w):
    w = w.replace("${port}", port)
    w = re.sub(r"\$\{variant\.(\w+)\}", lambda m: str(base["vars"][m.group(1)]), w)
    return w.replace(evidence, trace_dir) if evidence else w


env = [f"{k}={v}" for k, v in spec["server"].get("env", {}).items()]
print(shlex.join(["env"] + env + [fill(w) for w in words]))
