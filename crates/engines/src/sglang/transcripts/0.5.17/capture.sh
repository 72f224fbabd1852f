#!/usr/bin/env bash
# Records this folder on a GPU machine (docs/gpu.md, "Real vLLM and SGLang"): after the wheel
# set is carried and installed, scripts/gpu-engine-e2e starts SGLang by hand with the baseline
# arguments of specs/gpu-sglang-moe-backend.yaml (scripts/gpu/spec-args.py), waits for
# /health, and scripts/gpu/capture-transcript.py sends each request of README.md's table,
# writing NAME.http and requests.tsv; the server's whole log is startup.log. No job runs.
set -euo pipefail
cd "$(dirname "$0")/../../../../../.."
ENGINE_SET=sglang-0.5.17 CAPTURE=1 JOBS=" " exec scripts/gpu-engine-e2e
