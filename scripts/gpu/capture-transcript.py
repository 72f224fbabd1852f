#!/usr/bin/env python3
"""Record what a running vLLM or SGLang server really sends, for its transcripts folder
(crates/engines/src/<engine>/transcripts/<version>/, README there).

Each exchange is written as `NAME.http`: the status line, the headers and the body as the
server sent them (a streamed body is the raw `text/event-stream`; chunked framing removed, as
`curl -sSiN` shows it). `requests.tsv` lists every file with the request that made it.

    python3 scripts/gpu/capture-transcript.py --engine vllm --base http://127.0.0.1:PORT \
        --model MODEL --out DIR [--trace-dir DIR]

Only the Python standard library: it runs on the GPU image as it is.
"""

import argparse
import http.client
import json
import os
import threading
import time
import urllib.parse

PROMPT = "ka lo mi ner ta sul ve ro qui ban de fu zo pri mal ten gor li sa who"


class Capture:
    def __init__(self, base, out):
        u = urllib.parse.urlparse(base)
        self.host, self.port, self.out = u.hostname, u.port, out
        os.makedirs(out, exist_ok=True)
        self.index = open(os.path.join(out, "requests.tsv"), "w")
        self.index.write("file\tmethod\tpath\tbody\tstatus\tseconds\n")

    def send(self, name, method, path, body=None, timeout=300):
        """One exchange, written to NAME.http; the status and the body."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        data = None if body is None else (body if isinstance(body, str) else json.dumps(body))
        headers = {"content-type": "application/json"} if data is not None else {}
        t0 = time.time()
        conn.request(method, path, body=data, headers=headers)
        r = conn.getresponse()
        raw = r.read()
        dt = time.time() - t0
        head = f"HTTP/1.1 {r.status} {r.reason}\r\n" + "".join(
            f"{k}: {v}\r\n" for k, v in r.getheaders()) + "\r\n"
        with open(os.path.join(self.out, f"{name}.http"), "wb") as f:
            f.write(head.encode() + raw)
        self.index.write(f"{name}.http\t{method}\t{path}\t{data or ''}\t{r.status}\t{dt:.3f}\n")
        self.index.flush()
        conn.close()
        return r.status, raw


def generation(c, model):
    comp = {"model": model, "prompt": PROMPT, "max_tokens": 8, "temperature": 0.0,
            "ignore_eos": True, "min_tokens": 8}
    chat = {"model": model, "messages": [{"role": "user", "content": PROMPT}],
            "max_tokens": 8, "temperature": 0.0, "ignore_eos": True, "min_tokens": 8}
    usage = {"stream": True, "stream_options": {"include_usage": True}}
    c.send("completions", "POST", "/v1/completions", comp)
    c.send("completions-stream", "POST", "/v1/completions", {**comp, **usage})
    c.send("completions-stream-no-usage", "POST", "/v1/completions", {**comp, "stream": True})
    c.send("chat", "POST", "/v1/chat/completions", chat)
    c.send("chat-stream", "POST", "/v1/chat/completions", {**chat, **usage})
    c.send("chat-stream-logprobs", "POST", "/v1/chat/completions",
           {**chat, **usage, "logprobs": True, "top_logprobs": 2})


def errors(c, model):
    c.send("completions-context-overflow", "POST", "/v1/completions",
           {"model": model, "prompt": " ".join([PROMPT] * 300), "max_tokens": 8})
    c.send("completions-max-tokens-overflow", "POST", "/v1/completions",
           {"model": model, "prompt": PROMPT, "max_tokens": 100000})
    c.send("completions-unknown-field", "POST", "/v1/completions",
           {"model": model, "prompt": PROMPT, "max_tokens": 4, "servebench_unknown": 1})
    c.send("completions-bad-model", "POST", "/v1/completions",
           {"model": "no-such-model", "prompt": PROMPT, "max_tokens": 4})
    c.send("chat-bad-model", "POST", "/v1/chat/completions",
           {"model": "no-such-model", "messages": [{"role": "user", "content": PROMPT}], "max_tokens": 4})
    c.send("completions-not-json", "POST", "/v1/completions", "{not json")


def tokenize(c, model):
    c.send("tokenize-prompt", "POST", "/tokenize", {"model": model, "prompt": PROMPT})
    c.send("tokenize-prompt-no-special", "POST", "/tokenize",
           {"model": model, "prompt": PROMPT, "add_special_tokens": False})
    c.send("tokenize-messages", "POST", "/tokenize",
           {"model": model, "messages": [{"role": "user", "content": PROMPT}]})
    c.send("tokenize-messages-generation-prompt", "POST", "/tokenize",
           {"model": model, "messages": [{"role": "user", "content": PROMPT}],
            "add_generation_prompt": True})
    c.send("tokenize-v1", "POST", "/v1/tokenize", {"model": model, "prompt": PROMPT})
    c.send("tokenize-bad-model", "POST", "/tokenize", {"model": "no-such-model", "prompt": PROMPT})
    c.send("detokenize", "POST", "/detokenize", {"model": model, "tokens": [5, 6, 7]})


def metrics_under_load(c, model):
    """Scrape /metrics while 16 streams of 1,024 tokens run. 256 tokens were too few for SGLang
    with CUDA graphs (about 1.5 ms a token): its streams had ended when the scrape came."""
    body = {"model": model, "prompt": PROMPT, "max_tokens": 1024, "ignore_eos": True, "stream": True}

    def one():
        conn = http.client.HTTPConnection(c.host, c.port, timeout=300)
        conn.request("POST", "/v1/completions", json.dumps(body), {"content-type": "application/json"})
        conn.getresponse().read()

    load = [threading.Thread(target=one) for _ in range(16)]
    for t in load:
        t.start()
    time.sleep(0.5)
    c.send("metrics-under-load", "GET", "/metrics")
    for t in load:
        t.join()
    c.send("metrics-after-load", "GET", "/metrics")


def profiler(c, engine, trace_dir, model):
    start = {} if engine == "vllm" else {"output_dir": trace_dir, "activities": ["CPU", "GPU"],
                                         "with_stack": False, "record_shapes": False}
    before = set(os.listdir(trace_dir)) if trace_dir and os.path.isdir(trace_dir) else set()
    c.send("start-profile", "POST", "/start_profile", start)
    c.send("profiled-completion", "POST", "/v1/completions",
           {"model": model, "prompt": PROMPT, "max_tokens": 4})
    t0 = time.time()
    c.send("stop-profile", "POST", "/stop_profile", {})
    answered = time.time() - t0
    if trace_dir and os.path.isdir(trace_dir):
        with open(os.path.join(c.out, "trace-dir-listing.txt"), "w") as f:
            f.write(f"# {trace_dir} after /stop_profile answered ({answered:.2f} s); new files:\n")
            for name in sorted(set(os.listdir(trace_dir)) - before):
                f.write(f"{os.path.getsize(os.path.join(trace_dir, name))}\t{name}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", choices=["vllm", "sglang"], required=True)
    ap.add_argument("--base", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--trace-dir")
    a = ap.parse_args()
    c = Capture(a.base, a.out)
    for name, path in [("models", "/v1/models"), ("health", "/health"), ("version", "/version"),
                       ("metrics-before", "/metrics"), ("server-info", "/server_info"),
                       ("get-server-info", "/get_server_info"), ("model-info", "/model_info"),
                       ("load", "/load")]:
        c.send(name, "GET", path)
    generation(c, a.model)
    tokenize(c, a.model)
    errors(c, a.model)
    metrics_under_load(c, a.model)
    profiler(c, a.engine, a.trace_dir, a.model)
    print(f"capture: {a.out}")


if __name__ == "__main__":
    main()
