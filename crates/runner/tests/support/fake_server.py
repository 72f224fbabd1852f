#!/usr/bin/env python3
"""A tiny HTTP server that plays an inference server in servebench's server-lifecycle tests.

GET /health answers 503 until --ready-after seconds have passed, then 200.
GET /get_server_info answers the --info JSON. GET /v1/models answers a model list.
Everything it prints goes to stdout/stderr unbuffered, like a real server's log.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, required=True)
p.add_argument("--ready-after", type=float, default=0.0, help="seconds of 503 on /health")
p.add_argument("--ignore-sigterm", action="store_true", help="ignore SIGTERM (and so does the child)")
p.add_argument("--spawn-child", metavar="PIDFILE", help="start `sleep 600` in the same group; write its pid")
p.add_argument("--exit-after", type=float, help="exit with --exit-code after this many seconds")
p.add_argument("--exit-code", type=int, default=3)
p.add_argument("--say", action="append", default=[], help="a line printed at start")
p.add_argument("--say-late", help="a line printed 0.5 s after the server is ready")
p.add_argument("--gpu-mib", type=int, default=0, help="hold this much memory on GPU 0 (needs libcuda.so.1)")
p.add_argument("--info", default='{"version": "fake-1.0", "moe_runner_backend": "flashinfer_cutlass", "tp_size": 8}')
# Unknown flags (a real server's, e.g. --api-key) are accepted and ignored.
args, _ = p.parse_known_args()

start = time.monotonic()

if args.ignore_sigterm:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

for line in args.say:
    print(line, flush=True)


def hold_gpu(mib):
    """Allocates `mib` MiB on GPU 0 through the driver API (no torch needed)."""
    import ctypes

    cuda = ctypes.CDLL("libcuda.so.1")

    def check(r, what):
        if r != 0:
            print(f"fake_server: {what} failed: CUDA error {r}", flush=True)
            sys.exit(4)

    check(cuda.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    check(cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cuda.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    ptr = ctypes.c_uint64()
    check(cuda.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(mib << 20)), "cuMemAlloc")
    print(f"fake_server: holding {mib} MiB on GPU 0", flush=True)
    return ctx, ptr


gpu_memory = hold_gpu(args.gpu_mib) if args.gpu_mib else None

if args.spawn_child:
    child = subprocess.Popen(["sleep", "600"])
    with open(args.spawn_child + ".tmp", "w") as f:
        f.write(str(child.pid))
    os.rename(args.spawn_child + ".tmp", args.spawn_child)


class Handler(BaseHTTPRequestHandler):
    def _send(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        ready = time.monotonic() - start >= args.ready_after
        if self.path == "/health":
            self._send(200 if ready else 503, {"ready": ready})
        elif self.path == "/get_server_info":
            self._send(200, json.loads(args.info))
        elif self.path == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
        else:
            self._send(404, {"error": "not found"})

    def log_message(self, fmt, *a):
        sys.stderr.write("fake_server: " + (fmt % a) + "\n")


def later(delay, fn):
    t = threading.Timer(delay, fn)
    t.daemon = True
    t.start()


if args.exit_after is not None:
    later(args.exit_after, lambda: (print("fake_server: exiting on purpose", flush=True), os._exit(args.exit_code)))
if args.say_late:
    later(args.ready_after + 0.5, lambda: print(args.say_late, flush=True))

server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
print(f"fake_server: listening on 127.0.0.1:{args.port}", flush=True)
server.serve_forever()
