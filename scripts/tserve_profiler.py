#!/usr/bin/env python3
"""`transformers serve` with a profiler: `POST /start_profile` and `POST /stop_profile`.

    python3 scripts/tserve_profiler.py [--chdir DIR] SERVE_ARGS...

runs `transformers serve SERVE_ARGS...` (from DIR when given) with two more routes, the shape
of SGLang's (docs/kernels.md):

    POST /start_profile   {"output_dir": DIR, "activities": ["GPU"]}          → 200
    POST /stop_profile                                                         → 200, once the
                                                                                 trace is written

`activities` are torch.profiler's: `GPU` (CUDA kernels and copies), `CPU` (operators); a
machine without a GPU records the CPU operators whatever is asked. Each start writes one
Chrome trace, `<output_dir>/tserve-<pid>-<n>.pt.trace.json`, written to
a temporary name and renamed when complete. `scripts/gpu/tserve-moe.py` installs the same
routes (`install()`).

Where the profiler must run: torch.profiler records the CPU operators of the thread that
started it only, and transformers serve (5.24.0) never generates on the request's thread.
Without continuous batching, `model.generate` runs on one persistent `InferenceThread`
(cli/serving/utils.py:724-765, `GenerateManager.submit`); with `--continuous-batching`, on the
`ContinuousBatchingManager`'s generation thread, which calls `_generation_loop_body` at least
every 0.1 s while idle (generation/continuous_batching/continuous_api.py:1086-1108, 1110-1155).
So the routes do not profile in the handler: they ask each generation thread to start (or
stop) the profiler itself — a job submitted to the InferenceThread's queue, a flag the CB loop
checks at its next turn — and wait until it has. GPU kernels (CUPTI) would be seen from any
thread; the CPU operators, which a CPU run has instead of kernels, would not.

The app is reached by wrapping `transformers.cli.serving.server.build_server`, which serve
imports when it starts (cli/serve.py:129, 210).
"""

import json
import os
import sys
import threading
import time

_lock = threading.Lock()
_threads = []  # the InferenceThreads made so far
_cb_state = {"want": None, "done": threading.Event(), "error": None}
_session = {"n": 0, "dir": None, "profilers": [], "activities": None}


def _activities(names):
    import torch

    acts = []
    for n in names or ["CPU", "GPU"]:
        n = str(n).upper()
        if n == "CPU":
            acts.append(torch.profiler.ProfilerActivity.CPU)
        elif n in ("GPU", "CUDA") and torch.cuda.is_available():
            acts.append(torch.profiler.ProfilerActivity.CUDA)
    return acts or [torch.profiler.ProfilerActivity.CPU]


def _start_here():
    """Start a profiler on the calling (generation) thread."""
    import torch

    prof = torch.profiler.profile(activities=_session["activities"], record_shapes=False,
                                  with_stack=False)
    prof.start()
    return prof


def _export(profs):
    """Stop every profiler (each on its own thread, done by the caller) and write one trace."""
    os.makedirs(_session["dir"], exist_ok=True)
    written = []
    for i, prof in enumerate(profs):
        name = f"tserve-{os.getpid()}-{_session['n']}" + (f"-{i}" if i else "") + ".pt.trace.json"
        final = os.path.join(_session["dir"], name)
        tmp = os.path.join(_session["dir"], "." + name + ".tmp")
        prof.export_chrome_trace(tmp)
        os.replace(tmp, final)
        written.append(final)
    return written


def _on_generation_thread(action):
    """Run `action` ("start" or "stop") on the thread that generates: the continuous-batching
    loop when one runs, else the inference threads. One profiler at a time (torch allows one).
    Returns the profilers started and the errors."""
    out = []
    errors = []
    if _cb_running():
        _cb_state["done"].clear()
        _cb_state["error"] = None
        _cb_state["want"] = action
        if not _cb_state["done"].wait(timeout=600):
            errors.append("the continuous-batching loop did not come round in 600 s")
        elif _cb_state["error"]:
            errors.append(_cb_state["error"])
        elif action == "start":
            out.append(_cb_state["prof"])
        return out, errors
    for t in list(_threads)[:1]:
        fut = t.submit(_start_here if action == "start" else _stop_current)
        try:
            r = fut.result(timeout=600)
            if r is not None:
                out.append(r)
        except Exception as e:  # noqa: BLE001 - said to the caller
            errors.append(f"inference thread: {e}")
    return out, errors


_current = threading.local()


def _stop_current():
    prof = getattr(_current, "prof", None)
    if prof is not None:
        prof.stop()
        _current.prof = None
    return prof


def _cb_managers():
    return [m for m in _cb_list if m.is_running()]


_cb_list = []


def _cb_running():
    return bool(_cb_managers())


def install():
    """Patch transformers serve: register its generation threads and add the two routes."""
    from transformers.cli.serving import server, utils
    from transformers.generation.continuous_batching import continuous_api

    init = utils.InferenceThread.__init__

    def init_and_register(self, *a, **k):
        init(self, *a, **k)
        _threads.append(self)

    utils.InferenceThread.__init__ = init_and_register

    # A profiler started on the inference thread is kept there until its stop.
    orig_start_here = _start_here

    def start_on_thread():
        _current.prof = orig_start_here()
        return _current.prof

    globals()["_start_here"] = start_on_thread

    manager = continuous_api.ContinuousBatchingManager
    cb_start = manager.start
    body = manager._generation_loop_body

    def start_and_register(self, *a, **k):
        _cb_list.append(self)
        return cb_start(self, *a, **k)

    def body_with_profiler(self, *a, **k):
        want = _cb_state["want"]
        if want is not None:
            _cb_state["want"] = None
            try:
                if want == "start":
                    _current.prof = orig_start_here()
                    _cb_state["prof"] = _current.prof
                else:
                    _stop_current()
            except Exception as e:  # noqa: BLE001 - reported by the route
                _cb_state["error"] = f"continuous-batching loop: {e}"
            _cb_state["done"].set()
        return body(self, *a, **k)

    manager.start = start_and_register
    manager._generation_loop_body = body_with_profiler

    build = server.build_server

    def build_with_profiler(*a, **k):
        app = build(*a, **k)
        _add_routes(app)
        return app

    server.build_server = build_with_profiler


def _add_routes(app):
    from fastapi import Request
    from fastapi.responses import JSONResponse

    @app.post("/start_profile")
    async def start_profile(request: Request):
        import asyncio

        try:
            body = await request.json()
        except Exception:  # noqa: BLE001 - an empty body is allowed
            body = {}
        body = body if isinstance(body, dict) else {}
        with _lock:
            if _session["profilers"]:
                return JSONResponse({"error": "the profiler is already running"}, status_code=409)
            out_dir = body.get("output_dir") or os.environ.get("SERVEBENCH_PROFILE_DIR")
            if not out_dir:
                return JSONResponse({"error": "no output_dir (body) or SERVEBENCH_PROFILE_DIR"},
                                    status_code=400)
            _session["n"] += 1
            _session["dir"] = os.path.abspath(out_dir)
            _session["activities"] = _activities(body.get("activities"))
        profs, errors = await asyncio.to_thread(_on_generation_thread, "start")
        if not _threads and not _cb_running():
            errors.append("no generation thread yet: send one request before starting the profiler")
        if errors:
            await asyncio.to_thread(_on_generation_thread, "stop")
            return JSONResponse({"error": "; ".join(errors)}, status_code=500)
        _session["profilers"] = profs
        print(f"servebench-profiler: started on {len(profs)} generation thread(s), "
              f"traces to {_session['dir']}", flush=True)
        return JSONResponse({"started": len(profs), "output_dir": _session["dir"]})

    @app.post("/stop_profile")
    async def stop_profile():
        import asyncio

        profs = _session["profilers"]
        if not profs:
            return JSONResponse({"error": "the profiler is not running"}, status_code=409)
        t0 = time.monotonic()
        _, errors = await asyncio.to_thread(_on_generation_thread, "stop")
        written = await asyncio.to_thread(_export, profs)
        _session["profilers"] = []
        print(f"servebench-profiler: stopped, wrote {', '.join(written)} in "
              f"{time.monotonic() - t0:.2f} s", flush=True)
        status = 500 if errors else 200
        return JSONResponse({"traces": written, "errors": errors}, status_code=status)


def main():
    args = sys.argv[1:]
    if args[:1] == ["--chdir"]:
        os.chdir(args[1])
        args = args[2:]
    install()
    from transformers.cli.transformers import main as cli

    sys.argv = ["transformers", "serve", *args]
    cli()


if __name__ == "__main__":
    main()
