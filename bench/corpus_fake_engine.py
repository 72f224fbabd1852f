#!/usr/bin/env python3
"""A scripted vLLM-like server for bench/corpus.py's kernel-evidence cases (issue 50).

    corpus_fake_engine.py PORT MODE TRACE_DIR

Answers /health, /v1/models (owned_by vllm), streamed /v1/completions, /start_profile and
/stop_profile; at the stop it writes into TRACE_DIR the trace MODE names: `ok` (one gemm
kernel), `notjson` (an HTML page), `bomb` (a gzip bomb: blanks inflating 1000x), `truncated`
(a trace cut in the middle, never finished), `nokernels` (a valid trace of CPU markers only),
`hugename` (one kernel whose name is 8 MiB), `huge` (200,000 kernel events, about 40 MB).
"""

import gzip
import http.server
import json
import os
import socketserver
import sys
from pathlib import Path

PORT, MODE, DIR = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])


def kernel(name, ts):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": 5.0}


def write_trace():
    DIR.mkdir(parents=True, exist_ok=True)
    path = DIR / f"rank0.{os.getpid()}.pt.trace.json"
    if MODE == "ok":
        path.write_text(json.dumps({"traceEvents": [kernel("sm90_gemm_bf16", 1.0)]}))
    elif MODE == "notjson":
        path.write_text("<html><body>502 Bad Gateway</body></html>\n")
    elif MODE == "bomb":
        with gzip.open(str(path) + ".gz", "wb", compresslevel=9) as f:
            f.write(b'{"traceEvents": [')
            blank = b" " * (1 << 20)
            for _ in range(256):
                f.write(blank)
            f.write(b"]}")
    elif MODE == "truncated":
        text = json.dumps({"traceEvents": [kernel("sm90_gemm_bf16", float(i)) for i in range(50)]})
        path.write_text(text[: len(text) // 2])
    elif MODE == "nokernels":
        path.write_text(json.dumps({"traceEvents": [{"ph": "i", "name": "marker", "ts": 1}]}))
    elif MODE == "hugename":
        path.write_text(json.dumps({"traceEvents": [kernel("sm90_gemm_" + "x" * (8 << 20), 1.0)]}))
    elif MODE == "huge":
        with open(path, "w") as f:
            f.write('{"traceEvents": [')
            f.write(",".join(json.dumps(kernel(f"sm90_gemm_{i % 50}", float(i))) for i in range(200000)))
            f.write("]}")


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, status, obj):
        b = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_GET(self):
        if self.path == "/health":
            return self.reply(200, {})
        if self.path == "/v1/models":
            return self.reply(200, {"object": "list", "data": [
                {"id": "m", "object": "model", "owned_by": "vllm", "max_model_len": 4096}]})
        self.reply(404, {"detail": "Not Found"})

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        if self.path == "/start_profile":
            return self.reply(200, {})
        if self.path == "/stop_profile":
            write_trace()
            return self.reply(200, {})
        if self.path != "/v1/completions":
            return self.reply(404, {"detail": "Not Found"})
        n = max(1, int(json.loads(body or b"{}").get("max_tokens") or 4))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for i in range(n):
            last = i == n - 1
            ev = {"id": "c", "object": "text_completion", "model": "m",
                  "choices": [{"index": 0, "text": " w", "finish_reason": "length" if last else None}]}
            if last:
                ev["usage"] = {"prompt_tokens": 8, "completion_tokens": n, "total_tokens": 8 + n}
            self.chunk(f"data: {json.dumps(ev)}\n\n")
        self.chunk("data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")

    def chunk(self, text):
        b = text.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
        self.wfile.flush()


class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


S(("127.0.0.1", PORT), H).serve_forever()
