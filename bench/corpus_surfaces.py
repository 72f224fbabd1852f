"""The surfaces added since bench/corpus.py was last extended (issue 50): kernel evidence
and its traces, request_body, images, per_start and optimize designs, the host probe, and the
issue's own classes of failure (misleading messages, inputs accepted silently, the hang, data
lost to kills and a full disk). Registered into corpus.py's list by `register(corpus)`.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FAKE = HERE / "corpus_fake_engine.py"


def register(m):
    case, Fail, spec, Sim = m.case, m.Fail, m.spec, m.Sim

    # ------------------------------------------------------------ kernel evidence

    def kernel_spec(mode, traces, timeout="20s"):
        return f"""apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: kernels}}
spec:
  server:
    command: [python3, "{FAKE}", "${{port}}", {mode}, "{traces}"]
    args: [--profiler-config, '{{"profiler": "torch", "torch_profiler_dir": "{traces}"}}']
    readiness: {{http: {{path: /health}}, interval: 20ms, timeout: 20s}}
    stop: {{signal: SIGTERM, grace: 2s}}
  target: {{model: m, engine: vllm, api: openai-completions, tokenizer: none}}
  variants:
    - name: a
      baseline: true
      server: {{verify: [{{kernel: {{matches: "gemm"}}}}]}}
  workload:
    dataset: {{kind: random, input_tokens: 8, output_tokens: 4}}
    requests: 2
    warmup_requests: 1
  evidence: {{kernels: {{dir: "{traces}", timeout: {timeout}}}}}
  trials: {{count: 1}}
"""

    def kernel_run(c, mode, timeout="20s", code=1, has=(), within=None):
        c.write("s.yaml", kernel_spec(mode, c.dir / "traces", timeout))
        t = time.monotonic()
        out = c.sb("run", "--no-bars", "s.yaml", code=code, has=has)
        took = time.monotonic() - t
        if within is not None and took > within:
            raise Fail(f"took {took:.0f} s: waited for a trace that can never become readable")
        return out

    @case("kernel trace that is an HTML page", "kernel evidence",
          ci="result kernels::tests::not_json_a_gzip_bomb_and_a_cut_gzip_are_each_said_for_what_they_are",
          bound=60)
    def _(c):
        kernel_run(c, "notjson", has=["not a Chrome trace", "the file begins `<html>"], within=15)

    @case("kernel trace that is a gzip bomb (256 MiB of blanks)", "kernel evidence",
          ci="result kernels::tests::not_json_a_gzip_bomb_and_a_cut_gzip_are_each_said_for_what_they_are",
          bound=60)
    def _(c):
        kernel_run(c, "bomb", has=["inflates beyond 200×"], within=15)

    @case("kernel trace cut short, never finished", "kernel evidence", bound=60)
    def _(c):
        kernel_run(c, "truncated", timeout="3s", has=["the trace ends early"])

    @case("kernel trace with no kernel at all", "kernel evidence", bound=60)
    def _(c):
        kernel_run(c, "nokernels", has=["no trace holds kernels or CPU operators"])

    @case("kernel trace with one 8 MiB kernel name", "kernel evidence", bound=60)
    def _(c):
        kernel_run(c, "hugename", code=0)
        r = m.result_of(c.dir / "results")
        if r.stat().st_size > 2 << 20:
            raise Fail(f"the result file is {r.stat().st_size} bytes: the name was kept whole")

    @case("kernel trace of 200,000 events (40 MB)", "kernel evidence", bound=90)
    def _(c):
        kernel_run(c, "huge", code=0)

    # ------------------------------------------------------------ workload traces

    @case("trace window that holds no request (start after the last)", "traces",
          ci="runner dataset::trace::tests::a_window_with_no_request_says_where_the_requests_are_and_which_key_to_change")
    def _(c):
        c.write("t.jsonl", '{"timestamp": 0, "input_tokens": 8, "output_tokens": 2}\n')
        c.write("s.yaml", spec(dataset="dataset: {kind: trace, path: t.jsonl, trace: {start: 60s}}"))
        c.sb("validate", "s.yaml", code=1, has=["`trace.start` is 60 s, after the last request"],
             lacks=["invalid length distribution"])

    @case("trace that is a gzip file", "traces")
    def _(c):
        import gzip
        c.write("t.jsonl", gzip.compress(b'{"timestamp": 0, "input_tokens": 8, "output_tokens": 2}\n'))
        c.write("s.yaml", spec(dataset="dataset: {kind: trace, path: t.jsonl}"))
        c.sb("validate", "s.yaml", code=1, has=[r"t\.jsonl:1"])

    # ------------------------------------------------------------ request_body

    for name, body, words in [
        ("a number instead of a mapping", "5", r"request_body"),
        ("a field servebench owns (stream: false)", "{stream: false}", r"stream"),
        ("max_tokens: 0", "{max_tokens: 0}", r"max_tokens"),
        ("a null for a field servebench needs (model)", "{model: null}", r"model"),
    ]:

        def _make(body=body, words=words):
            def run(c):
                c.write("s.yaml", spec(f"    request_body: {body}\n").replace(
                    "    warmup_requests: 0\n    request_body", "    warmup_requests: 0\n    request_body"))
                c.sb("validate", "s.yaml", code=1, has=[words, r"s\.yaml:\d+:\d+"])
            return run

        case(f"workload.request_body: {name}", "request_body")(_make())

    # ------------------------------------------------------------ images

    for name, data, words in [
        ("an empty file", b"", "empty|no image|not a PNG"),
        ("a text file named .png", b"hello\n", "not a PNG|PNG/JPEG|recognise"),
        ("a PNG cut after its signature", b"\x89PNG\r\n\x1a\n", "cut|truncated|not a|cannot"),
    ]:

        def _make(data=data, words=words):
            def run(c):
                c.write("img/x.png", data)
                c.write("p.jsonl", '{"prompt": "what is it", "images": ["img/x.png"], "max_tokens": 4}\n')
                c.write("s.yaml", spec(dataset="dataset: {kind: jsonl, path: p.jsonl}\n    requests: 1")
                        .replace("target: {model: sim-model}", "target: {model: sim-model, api: openai-chat}"))
                c.sb("validate", "s.yaml", code=1, has=[r"p\.jsonl:1", words])
            return run

        case(f"prompt-file image: {name}", "images")(_make())

    for name, image, words in [
        ("count 0", "{count: 0}", r"image\.count"),
        ("width 100000", "{width: 100000}", r"image\.width"),
    ]:

        def _make(image=image, words=words):
            def run(c):
                c.write("s.yaml", spec(dataset=f"dataset: {{kind: image, input_tokens: 8, output_tokens: 8, image: {image}}}\n    requests: 8")
                        .replace("target: {model: sim-model}", "target: {model: sim-model, api: openai-chat}"))
                c.sb("validate", "s.yaml", code=1, has=[words])
            return run

        case(f"image dataset: {name}", "images")(_make())

    # ------------------------------------------------------------ per_start and optimize

    for name, trials, code, words in [
        ("per_start: 0", "{count: 3, per_start: 0}", 1, r"per_start"),
        ("per_start: 2.5", "{count: 3, per_start: 2.5}", 1, r"per_start"),
        ("per_start: 4294967295", "{count: 3, per_start: 4294967295}", 1, r"per_start"),
        ("optimize without its block", "{design: optimize}", 1, r"optimize"),
        ("optimize with sd 0 and start 0 s",
         "{design: optimize, optimize: {sd_between: 0, sd_within: 0, start_seconds: 0, trial_seconds: 1}}",
         1, r"both `sd_between` and `sd_within` are 0"),
        ("optimize with trial_seconds: 1e300",
         "{design: optimize, optimize: {sd_between: 0.05, sd_within: 0.05, start_seconds: 60, trial_seconds: 1e300}}",
         1, r"`trial_seconds: 1e300` is above a week"),
        ("optimize with max_per_start: 2.5",
         "{design: optimize, optimize: {sd_between: 0.05, sd_within: 0.05, start_seconds: 60, trial_seconds: 10, max_per_start: 2.5}}",
         1, r"max_per_start"),
        ("optimize with theta 1e-9",
         "{design: optimize, optimize: {sd_between: 0.05, sd_within: 0.05, start_seconds: 60, trial_seconds: 10, theta: 1e-9}}",
         1, r"`theta: 1e-9` is outside \[0\.001, 1\)"),
    ]:

        def _make(trials=trials, code=code, words=words):
            def run(c):
                c.write("s.yaml", spec(f"  trials: {trials}\n"))
                c.sb("plan", "s.yaml", code=code, has=[words])
            return run

        case(f"trials: {name}", "designs")(_make())

    # ------------------------------------------------------------ the host probe

    def probed(c, **fields):
        r = json.loads(m.RESULT.read_text())
        probe = {"version": 1, "scope": "client-host", "single_thread": 400.0, "all_core": 1600.0,
                 "threads": 4, "memory_gbps": 10.0, "took_s": 1.0}
        probe.update(fields)
        r["host_probe"] = probe
        return r

    for name, fields, words in [
        ("single_thread 0", {"single_thread": 0.0}, r"`host_probe\.single_thread` is 0"),
        ("memory_gbps negative", {"memory_gbps": -5.0}, r"`host_probe\.memory_gbps` is -5"),
        ("a string for a number", {"all_core": "fast"}, r"at `host_probe\.all_core`"),
    ]:

        def _make(fields=fields, words=words):
            def run(c):
                good = probed(c)
                bad = probed(c, **fields)
                bad["run_id"] = bad["run_id"] + "-b"
                c.write("a.json", json.dumps(good))
                c.write("b.json", json.dumps(bad))
                out = c.sb("compare", "--no-history", "a.json", "b.json", code=2, has=[words])
                if re.search(r"\b(NaN|inf)\b", out):
                    raise Fail(f"NaN or inf printed: {m.squeeze(out)}")
            return run

        case(f"host probe of a result: {name}", "host probe")(_make())

    # ------------------------------------------------------------ issue 50's own classes

    def answering(status, kind, body):
        import http.server
        import socketserver
        import threading

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def go(self):
                n = int(self.headers.get("content-length", 0) or 0)
                self.rfile.read(n)
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = go

        class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        srv = S(("127.0.0.1", 0), H)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        return srv.server_address[1]

    for name, status, kind, body, words in [
        ("an HTML page", 200, "text/html", b"<!DOCTYPE html><title>nginx</title>", r"HTTP 200, text/html"),
        ("a 404", 404, "text/plain", b"404 page not found", r"HTTP 404, text/plain"),
        ("a 500", 500, "application/json", b'{"error": "loading"}', r"HTTP 500"),
        ("bytes that are not JSON", 200, "application/json", b"\x00\x01garbage", r"9 bytes starting"),
    ]:

        def _make(status=status, kind=kind, body=body, words=words):
            def run(c):
                port = answering(status, kind, body)
                c.sb("probe", f"http://127.0.0.1:{port}", "--deadline", "5", code=1,
                     has=[words, "give --model NAME"], lacks=["lists no model in"])
            return run

        case(f"probe: /v1/models answers {name}", "probe",
             ci="refusals::probe_says_what_v1_models_answered_instead_of_a_model_list")(_make())

    @case("probe: a URL that already ends in /v1", "probe",
          ci="refusals::probe_says_what_v1_models_answered_instead_of_a_model_list")
    def _(c):
        with Sim(c) as s:
            c.sb("probe", f"http://127.0.0.1:{s.port}/v1", "--deadline", "5", code=1,
                 has=[f"give `http://127.0.0.1:{s.port}`"])

    @case("run against a stream of `event: ping` only", "SSE",
          ci="runner loadgen::stream::tests::a_stream_of_pings_only_is_called_an_event_stream_without_data")
    def _(c):
        port = answering(200, "text/event-stream", b"event: ping\n\n: keep-alive\n\nevent: ping\n\n")
        c.write("s.yaml", f"""apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: ping}}
spec:
  target: {{base_url: "http://127.0.0.1:{port}", model: m, api: openai-completions, tokenizer: none}}
  variants: [{{name: a, baseline: true}}]
  workload: {{dataset: {{kind: random, input_tokens: 8, output_tokens: 4}}, requests: 2, warmup_requests: 0}}
  trials: {{count: 1}}
""")
        # The failure kind is the stream's (no event with data), not a malformed event.
        c.sb("run", "--no-bars", "s.yaml", has=["no_content: 2"], lacks=["malformed_event"])

    @case("--gate-margin -0.05 (a negative number)", "cli",
          ci="refusals::a_negative_margin_reaches_the_margins_own_check")
    def _(c):
        c.write("s.yaml", spec())
        c.sb("plan", "s.yaml", "--fail-on", "not-shown-non-inferior", "--gate-margin", "-0.05",
             code=2, has=["the margin is a fraction in \\(0, 1\\)"], lacks=["unexpected argument"])

    @case("--fail-on none,regressed", "gate", ci="refusals::fail_on_none_beside_a_condition_is_refused")
    def _(c):
        c.write("s.yaml", spec())
        c.sb("plan", "s.yaml", "--fail-on", "none,regressed", code=2, has=["holds `none` beside"])

    @case("a binary file given as a spec", "spec",
          ci="spec invalid_corpus::a_binary_file_is_refused_as_not_text_at_its_first_such_byte")
    def _(c):
        c.write("s.yaml", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
        c.sb("validate", "s.yaml", code=1, has=["the file is not text"], lacks=["empty"])

    @case("a spec of NUL bytes", "spec",
          ci="spec invalid_corpus::a_binary_file_is_refused_as_not_text_at_its_first_such_byte")
    def _(c):
        c.write("s.yaml", b"\0" * 64)
        c.sb("validate", "s.yaml", code=1, has=["the file is not text"], lacks=["empty"])

    @case("prompt file with max_tokens: 0", "prompt files",
          ci="runner dataset::files::tests::jsonl_problems_are_named_at_their_line_with_what_to_write")
    def _(c):
        c.write("p.jsonl", '{"prompt": "hi", "max_tokens": 0}\n')
        c.write("s.yaml", spec(dataset="dataset: {kind: jsonl, path: p.jsonl}\n    requests: 1"))
        c.sb("validate", "s.yaml", code=1, has=[r"p\.jsonl:1", "`max_tokens` is 0"])

    @case("from sglang --host 127.0.0.1:8000 (a port in the host)", "peer",
          ci="spec peer::a_host_holding_a_port_or_a_url_is_refused_with_the_flags_to_write")
    def _(c):
        c.sb("from", "sglang", "--", "--host", "127.0.0.1:8000", code=2,
             has=["give `--host 127.0.0.1 --port 8000`"], lacks=["[127.0.0.1:8000]"])

    for key in ["workload.requests", "workload.warmup_requests", "trials.count", "workload.seed",
                "sweep.max_concurrency", "trials.per_start"]:

        def _make(key=key):
            def run(c):
                c.write("s.yaml", spec())
                value = "[2.5]" if key == "sweep.max_concurrency" else "2.5"
                c.sb("plan", "s.yaml", "--set", f"{key}={value}", code=1,
                     has=[re.escape(key.split(".")[-1])])
            return run

        case(f"--set {key}=2.5 (a float where an integer belongs)", "--set")(_make())

    # ------------------------------------------------------------ measured data

    def trials_of(r):
        try:
            return json.loads(r.read_text()).get("trials", [])
        except (OSError, ValueError):
            return []

    def kill_after(c, args, n, result=None):
        p = subprocess.Popen([c.bin, "run", "--no-bars", *map(str, args)], cwd=c.dir,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        end = time.monotonic() + 40
        while time.monotonic() < end:
            r = result or m.result_of(c.dir / "results")
            if r is not None and len(trials_of(r)) >= n:
                break
            time.sleep(0.01)
        p.send_signal(signal.SIGKILL)
        p.wait()
        return result or m.result_of(c.dir / "results")

    @case("SIGKILL during the resume of a SIGKILLed run", "measured data", bound=120)
    def _(c):
        tiny = (m.REPO / "crates/cli/tests/specs/tiny-ab.yaml").read_text()
        c.write("s.yaml", tiny.replace("count: 2", "count: 3"))
        r = kill_after(c, ["s.yaml"], 2)
        first = {t["seq"]: t for t in trials_of(r)}
        kill_after(c, ["--resume", r], len(first) + 2, result=r)
        c.sb("run", "--no-bars", "--resume", r, code=0)
        final = {t["seq"]: t for t in trials_of(r)}
        lost = [s for s, t in first.items() if final.get(s) != t]
        if lost or len(final) != 12:
            raise Fail(f"trials of the first run lost or changed: {lost}; {len(final)} of 12")

    @case("a disk that fills mid-run (a tmpfs of its own, unshare)", "measured data",
          ci="fault_disk::a_disk_that_fills_mid_run_keeps_every_trial_and_leaves_a_resumable_result",
          bound=120)
    def _(c):
        if subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode != 0:
            raise Fail("this machine does not allow unshare --user --mount")
        src = (m.REPO / "crates/cli/tests/it/fault_disk.rs").read_text()
        script = src.split('const SCRIPT: &str = r#"')[1].split('"#;')[0]
        c.write("spec.yaml", spec("  trials: {count: 8, server_restart: once}\n")
                .replace("requests: 8", "requests: 120"))
        (c.dir / "disk").mkdir()
        subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script,
                        str(c.dir), c.bin], timeout=c.bound, check=True)
        err = (c.dir / "stderr").read_text()
        finished = sum(" ok / " in ln for ln in err.splitlines())
        r = m.result_of(c.dir / "out")
        kept = len(trials_of(r)) if r else 0
        if (c.dir / "rc").read_text().strip() != "2" or kept != finished or "--resume" not in err:
            raise Fail(f"{finished} trials finished, {kept} kept: {m.squeeze(err)}")
