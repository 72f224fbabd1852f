#!/usr/bin/env python3
"""A corpus of bad inputs and faults for every surface of servebench (issues 42 and 50;
the surfaces of issue 50 are in corpus_surfaces.py).

Each case runs the real binary in a scratch folder, on 127.0.0.1 only, under a time bound,
and asserts its exit code and its message (and, where it matters, what must NOT happen: a
file written outside the repository, an escape byte on the terminal, a server left running).
A case that runs past its bound is a hang and fails. Every case says whether CI runs it
(and under which cargo test) or only this script.

    bench/corpus.py                          # target/debug/servebench, every case
    bench/corpus.py --bin /path/to/servebench --only gate,probe
    bench/corpus.py --ci                     # only the cases CI also runs as cargo tests

Prints one line per case and the totals; exits 1 when any case fails.
"""

import argparse
import http.server
import json
import os
import re
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIX = REPO / "crates/cli/tests/fixtures"
RESULT = next((FIX / "rerun/results/sim-rerun").glob("*.json"))
VLLM = FIX / "import/vllm-bench-serve.json"
VLLM_REPEATED = FIX / "import/vllm-repeated.jsonl"
TRACE = REPO / "crates/runner/tests/fixtures/trace-plain.jsonl"
BOM = b"\xef\xbb\xbf"
ESC = "\\u001b]0;pwned\\u0007\\u001b[31mred"

CASES = []


def case(name, surface, ci=None, bound=30):
    """Register a case; `ci` names the cargo test that runs the same check in CI."""

    def wrap(fn):
        CASES.append({"name": name, "surface": surface, "ci": ci, "bound": bound, "fn": fn})
        return fn

    return wrap


class Fail(Exception):
    pass


class Ctx:
    def __init__(self, binary, root):
        self.bin = binary
        self.root = root
        self.dir = None
        self.bound = 30

    def sb(self, *args, code=None, has=(), lacks=(), stdin=None, env=None):
        """Run servebench; assert the exit code and that the output holds each of `has`."""
        try:
            p = subprocess.run(
                [self.bin, *map(str, args)],
                cwd=self.dir,
                capture_output=True,
                timeout=self.bound,
                input=stdin,
                env=env,
            )
        except subprocess.TimeoutExpired:
            raise Fail(f"hang: no exit within {self.bound} s")
        out = p.stdout.decode("utf-8", "replace") + p.stderr.decode("utf-8", "replace")
        if code is not None and p.returncode != code:
            raise Fail(f"exit {p.returncode}, expected {code}: {squeeze(out)}")
        for h in has:
            if not re.search(h, out):
                raise Fail(f"no /{h}/ in: {squeeze(out)}")
        for l in lacks:
            if l in out:
                raise Fail(f"{l!r} in the output: {squeeze(out)}")
        return out

    def write(self, name, data):
        p = self.dir / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
        return p


def squeeze(s, n=400):
    s = " ".join(s.split())
    return s if len(s) <= n else s[:n] + "…"


def spec(extra="", dataset="dataset: {kind: random, input_tokens: 8, output_tokens: 8}\n    requests: 8"):
    return f"""apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: corpus}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --preset, fast]
    readiness: {{http: {{path: /health}}, interval: 20ms, timeout: 20s}}
    stop: {{signal: SIGTERM, grace: 5s}}
  target: {{model: sim-model}}
  variants: [{{name: a, baseline: true}}]
  workload:
    {dataset}
    warmup_requests: 0
{extra}"""


# ---------------------------------------------------------------- scripted servers


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scripted(mode):
    """A scripted OpenAI-like server on 127.0.0.1 (threads of this process); its port."""

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def reply(self, status, body):
            b = body.encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)

        def do_GET(self):
            if self.path == "/v1/models" and mode == "hostile":
                self.reply(200, '{"data":[{"id":"m%s"}]}' % ESC)
            else:
                self.reply(404, '{"error":"no"}')

        def do_POST(self):
            n = int(self.headers.get("content-length", 0))
            self.rfile.read(n)
            if mode == "hostile":
                return self.reply(500, '{"error":"boom%s"}' % ESC)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            ev = 'data: {"id":"c","object":"text_completion","model":"m","choices":[{"index":0,"text":"w ","finish_reason":null}]}\n\n'
            chunk = b"%x\r\n%s\r\n" % (len(ev), ev.encode())
            try:
                for i in range(1 << 30):
                    self.wfile.write(chunk)
                    self.wfile.flush()
                    if mode == "stall" and i == 2:
                        time.sleep(120)
            except OSError:
                pass

    class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True

    srv = S(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv.server_address[1]


class Sim:
    """`servebench sim` on a free 127.0.0.1 port, stopped on exit."""

    def __init__(self, ctx, *args):
        self.port = free_port()
        self.p = subprocess.Popen(
            [ctx.bin, "sim", "--port", str(self.port), "--preset", "fast", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise Fail("the simulator did not start")

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.p.terminate()
        self.p.wait(10)


def imported(ctx):
    out = ctx.sb("import", "vllm", VLLM, "--results-dir", "imp", "--input-tokens", "128",
                 "--output-tokens", "16", code=0)
    return ctx.dir / out.split("imported: ")[1].split()[0]


# ---------------------------------------------------------------- gates


@case("gate: no sweep point in common, --fail-on not-shown-non-inferior,suspicious", "gate",
      ci="hardening::a_gate_with_no_gated_cell_or_no_probe_fails_and_says_why_unless_allowed")
def _(c):
    c.sb("compare", RESULT, imported(c), "--fail-on", "not-shown-non-inferior,suspicious",
         code=1, has=["TRIPPED", "no gated cell", "--allow-unjudged"])


@case("gate: the same with --allow-unjudged passes", "gate",
      ci="hardening::a_gate_with_no_gated_cell_or_no_probe_fails_and_says_why_unless_allowed")
def _(c):
    c.sb("compare", RESULT, imported(c), "--fail-on", "not-shown-non-inferior,suspicious",
         "--allow-unjudged", code=0, has=["passed"])


@case("gate: output-changed on a run with no probe recorded", "gate",
      ci="hardening::a_gate_with_no_gated_cell_or_no_probe_fails_and_says_why_unless_allowed")
def _(c):
    c.sb("compare", RESULT, "--fail-on", "output-changed", code=1, has=["no output probe"])


@case("gate: accuracy-dropped with no reference answers", "gate")
def _(c):
    c.sb("compare", RESULT, "--fail-on", "accuracy-dropped", code=1,
         has=["no accuracy on reference answers"])


@case("gate: --fail-on regressed on cells without a verdict (one trial per arm)", "gate")
def _(c):
    out = c.sb("import", "vllm", VLLM_REPEATED, "--results-dir", "imp", "--input-tokens", "1024",
               "--output-tokens", "128", code=0)
    one, two = [ln.split("imported: ")[1] for ln in out.splitlines() if "imported: " in ln][:2]
    c.sb("compare", "--no-history", one, two, "--fail-on", "regressed", code=1,
         has=["gated cell\\(s\\) without a verdict"])


@case("gate: an unknown condition", "gate")
def _(c):
    c.sb("compare", RESULT, "--fail-on", "bogus", code=2, has=["is not a gate"])


@case("gate: a gated point that matches nothing", "gate")
def _(c):
    c.sb("compare", RESULT, "--fail-on", "regressed", "--gate-point", "c=999", code=2,
         has=["matches no compared point"])


# ---------------------------------------------------------------- equivalence files

PROBE_FILES = [
    ("empty.jsonl", b"", "no usable entry", False),
    ("latin1.jsonl", b'{"prompt": "caf\xe9"}\n', "not UTF-8", True),
    ("bom.jsonl", BOM + b'{"prompt": "hi"}\n', "byte-order mark", True),
    ("array.jsonl", b'[{"prompt": "hi"}]\n', "JSON array", True),
    ("missing.jsonl", None, "cannot read it", False),
]
for _name, _bytes, _words, _line in PROBE_FILES:

    def _make(name=_name, data=_bytes, words=_words, line=_line):
        def run(c):
            if data is not None:
                c.write(name, data)
            c.write("s.yaml", spec(f"  equivalence: {{prompts_file: {name}}}\n"))
            has = [words, "equivalence.prompts_file", re.escape(name) + (":1:" if line else "")]
            c.sb("validate", "s.yaml", code=1, has=has)

        return run

    case(f"equivalence.prompts_file {_name}: refused at validate", "equivalence",
         ci="hardening::an_equivalence_prompt_file_that_cannot_be_used_is_refused_at_validate_with_its_location")(_make())

for _name, _bytes, _words in [
    ("ref-bom.jsonl", BOM + b'{"prompt": "2+2", "answer": "4"}\n', "byte-order mark"),
    ("ref-array.jsonl", b'[{"prompt": "2+2", "answer": "4"}]\n', "JSON array"),
    ("ref-empty.jsonl", b"\n", "no reference lines"),
    ("ref-latin1.jsonl", b'{"prompt": "caf\xe9", "answer": "4"}\n', "not UTF-8"),
]:

    def _make(name=_name, data=_bytes, words=_words):
        def run(c):
            c.write(name, data)
            c.write("s.yaml", spec(f"  equivalence: {{reference: {name}}}\n"))
            c.sb("validate", "s.yaml", code=1, has=[words, "equivalence.reference", re.escape(name)])

        return run

    case(f"equivalence.reference {_name}: refused at validate", "equivalence")(_make())


@case("equivalence.warmup_requests: 4294967295", "spec ceilings",
      ci="hardening::every_count_of_the_equivalence_probe_is_bounded_like_its_siblings")
def _(c):
    c.write("s.yaml", spec("  equivalence: {warmup_requests: 4294967295}\n"))
    c.sb("validate", "s.yaml", code=1,
         has=["spec.equivalence.warmup_requests", "10,000,000", r"s\.yaml:\d+:\d+"])


@case("equivalence.concurrency: [4294967295]", "spec ceilings")
def _(c):
    c.write("s.yaml", spec("  equivalence: {concurrency: [4294967295]}\n"))
    c.sb("validate", "s.yaml", code=1, has=[r"equivalence\.concurrency\[0\]", "10,000,000"])


@case("workload.requests: 5000000000", "spec ceilings",
      ci="bad_inputs::sizes_beyond_the_ceilings_are_refused_at_validate_with_the_key_and_the_limit")
def _(c):
    c.write("s.yaml", spec().replace("requests: 8", "requests: 50000000"))
    c.sb("validate", "s.yaml", code=1, has=["workload.requests", "ceiling"])


@case("trace line asking 2,000,000,000 input tokens", "traces",
      ci="bad_inputs::bad_trace_lines_are_refused_at_their_line_by_validate_and_before_run_starts_anything")
def _(c):
    c.write("t.jsonl", '{"timestamp": 0, "input_tokens": 2000000000, "output_tokens": 2}\n')
    c.write("s.yaml", spec(dataset="dataset: {kind: trace, path: t.jsonl}"))
    c.sb("validate", "s.yaml", code=1, has=[r"t\.jsonl:1", "ceiling"])


@case("trace file with a BOM", "traces")
def _(c):
    c.write("t.jsonl", BOM + b'{"timestamp": 0, "input_tokens": 8, "output_tokens": 2}\n')
    c.write("s.yaml", spec(dataset="dataset: {kind: trace, path: t.jsonl}"))
    c.sb("validate", "s.yaml", code=1, has=[r"t\.jsonl:1", "byte-order mark"])


@case("workload prompt file with a BOM", "prompt files")
def _(c):
    c.write("p.jsonl", BOM + b'{"prompt": "hi", "max_tokens": 4}\n' * 1)
    c.write("s.yaml", spec(dataset="dataset: {kind: jsonl, path: p.jsonl}\n    requests: 1"))
    c.sb("validate", "s.yaml", code=1, has=[r"p\.jsonl:1", "byte-order mark"])


@case("workload prompt file holding a JSON array", "prompt files")
def _(c):
    c.write("p.jsonl", b'[{"prompt": "hi", "max_tokens": 4}]\n')
    c.write("s.yaml", spec(dataset="dataset: {kind: jsonl, path: p.jsonl}\n    requests: 1"))
    c.sb("validate", "s.yaml", code=1, has=[r"p\.jsonl:1", "JSON array"])


# ---------------------------------------------------------------- --set


@case("--set server.env.FOO=1 (a free map's key)", "--set",
      ci="hardening::free_map_keys_take_set_and_a_bad_value_names_its_key")
def _(c):
    c.write("s.yaml", spec())
    c.sb("plan", "s.yaml", "--set", "server.env.FOO=1", code=0)


@case("--set sweep.max_concurrency=[5000000000]: the key named", "--set",
      ci="hardening::free_map_keys_take_set_and_a_bad_value_names_its_key")
def _(c):
    c.write("s.yaml", spec())
    c.sb("plan", "s.yaml", "--set", "sweep.max_concurrency=[5000000000]", code=1,
         has=[r"at key: spec\.sweep\.max_concurrency\[0\]", "set by `--set"])


@case("--set workload.requests=abc", "--set")
def _(c):
    c.write("s.yaml", spec())
    c.sb("plan", "s.yaml", "--set", "workload.requests=abc", code=1,
         has=["workload.requests", "set by `--set workload.requests=abc`"])


@case("--set a key the spec does not have", "--set")
def _(c):
    c.write("s.yaml", spec())
    c.sb("plan", "s.yaml", "--set", "workload.reqests=4", code=2, has=["did you mean `requests`"])


# ---------------------------------------------------------------- files and BOMs


@case("compare of a result with a BOM", "result files", ci="hardening::a_bom_is_named_as_such")
def _(c):
    c.write("bom.json", BOM + RESULT.read_bytes())
    c.sb("compare", "bom.json", code=2, has=["byte-order mark"], lacks=["expected value"])


@case("import of a vLLM file with a BOM", "import")
def _(c):
    c.write("bom.json", BOM + VLLM.read_bytes())
    c.sb("import", "vllm", "bom.json", "--stdout", code=2, has=[r"bom\.json:1", "byte-order mark"])


@case("export of a result with a BOM", "export")
def _(c):
    c.write("bom.json", BOM + RESULT.read_bytes())
    c.sb("export", "bom.json", code=2, has=["byte-order mark"])


@case("history of a folder holding only a BOM result", "history")
def _(c):
    c.write("r/bom.json", BOM + RESULT.read_bytes())
    c.sb("history", "r", code=2, has=["byte-order mark"])


@case("import --as-trials of the same runs twice", "import",
      ci="hardening::the_same_runs_given_twice_are_not_pooled_as_more_trials")
def _(c):
    c.sb("import", "vllm", VLLM_REPEATED, VLLM_REPEATED, "--as-trials", "--input-tokens", "1024",
         "--output-tokens", "128", "--stdout", code=2, has=["is the same as"])


@case("import sglang of a vLLM file", "import",
      ci="bad_inputs::import_refuses_the_other_tools_file_and_says_which_it_is")
def _(c):
    c.sb("import", "sglang", VLLM, "--stdout", code=2, has=["import it with `servebench import vllm"])


@case("rerun of an imported result", "rerun")
def _(c):
    c.sb("rerun", imported(c), code=2, has=["is imported from"])


# ---------------------------------------------------------------- history and git


@case("history --git=--output=../victim.txt results/", "history",
      ci="hardening::history_never_passes_a_user_value_to_git_as_an_option")
def _(c):
    repo = c.dir / "repo"
    (repo / "results").mkdir(parents=True)
    g = lambda *a: subprocess.run(["git", "-C", repo, *a], check=True, capture_output=True)
    g("init", "-q")
    g("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
    c.write("victim.txt", "keep me")
    c.dir, here = repo, c.dir
    try:
        c.sb("history", "--git=--output=../victim.txt", "results/", code=2, has=["not `-`"])
    finally:
        c.dir = here
    if (here / "victim.txt").read_text() != "keep me":
        raise Fail("victim.txt was written")


@case("history --git HEAD of a path that holds nothing", "history",
      ci="bad_inputs::history_fails_on_a_path_or_git_range_that_holds_nothing")
def _(c):
    repo = c.dir / "repo"
    repo.mkdir()
    g = lambda *a: subprocess.run(["git", "-C", repo, *a], check=True, capture_output=True)
    g("init", "-q")
    g("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
    c.dir = repo
    c.sb("history", "--git", "HEAD", "reslts/", code=2, has=["holds no servebench result"])


# ---------------------------------------------------------------- pipes and signals


def closed_stdout(c, *args):
    p = subprocess.Popen([c.bin, *map(str, args)], cwd=c.dir, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.read(1)
    p.stdout.close()
    try:
        err = p.stderr.read().decode()
        code = p.wait(c.bound)
    except subprocess.TimeoutExpired:
        p.kill()
        raise Fail("hang after the reader left")
    if code != 0 or err:
        raise Fail(f"exit {code} (−13 is SIGPIPE), stderr {squeeze(err)!r}")


@case("schema | head -c1", "pipes", ci="hardening::a_closed_stdout_ends_a_printing_command_quietly")
def _(c):
    closed_stdout(c, "schema")


@case("compare --json | head -c1", "pipes")
def _(c):
    closed_stdout(c, "compare", "--json", RESULT)


@case("export --table requests | head -c1", "pipes")
def _(c):
    closed_stdout(c, "export", "--table", "requests", RESULT)


@case("probe https:// of a plain-HTTP server (x5)", "probe",
      ci="hardening_probe::https_to_a_plain_http_server_is_said_in_words_not_a_sigpipe")
def _(c):
    with Sim(c) as s:
        for _ in range(5):
            c.sb("probe", f"https://127.0.0.1:{s.port}", code=1, has=["serves plain HTTP"])


# ---------------------------------------------------------------- probe and network waits


@case("probe of a stream that stalls after three tokens, --deadline 2", "probe",
      ci="hardening_probe::a_stalled_or_endless_stream_ends_at_the_probe_deadline_with_what_was_seen")
def _(c):
    t = time.monotonic()
    c.sb("probe", f"http://127.0.0.1:{scripted('stall')}", "--model", "m", "--deadline", "2",
         code=1, has=["cut at the deadline of 2 s", "stalled", r"streaming request \(deadline 2 s\)"])
    if time.monotonic() - t > 15:
        raise Fail("the deadline did not bound the probe")


@case("probe of a stream that never ends (16 asked, thousands sent)", "probe",
      ci="hardening_probe::a_stalled_or_endless_stream_ends_at_the_probe_deadline_with_what_was_seen")
def _(c):
    c.sb("probe", f"http://127.0.0.1:{scripted('endless')}", "--model", "m", "--deadline", "2",
         code=1, has=["did not end", "ignores max_tokens"])


@case("probe of a server that sends escape sequences", "terminal",
      ci="hardening_probe::what_a_server_sends_is_escaped_before_it_reaches_the_terminal")
def _(c):
    out = c.sb("probe", f"http://127.0.0.1:{scripted('hostile')}", "--deadline", "5",
               has=[r"\\x1b\]0;pwned"])
    if "\x1b" in out or "\x07" in out:
        raise Fail("an escape byte reached the terminal")


@case("probe --deadline 0", "probe")
def _(c):
    c.sb("probe", "http://127.0.0.1:9", "--deadline", "0", code=2, has=["--deadline"])


@case("probe of a port nothing listens on", "probe",
      ci="probe_cli::a_run_that_reaches_no_server_or_the_wrong_model_writes_no_result")
def _(c):
    c.sb("probe", f"http://127.0.0.1:{free_port()}", code=1, has=["connection refused"])


# ---------------------------------------------------------------- runs: resume, rerun, compare


def run_bg(c, spec_path):
    return subprocess.Popen([c.bin, "run", "--no-bars", spec_path], cwd=c.dir,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def result_of(d):
    for p in sorted(Path(d).rglob("*.json")):
        if not p.name.startswith("."):
            return p
    return None


@case("resume after the probe's prompt file was rewritten (the server stopped too)", "resume",
      ci="fault_kill::a_probe_prompt_file_edited_before_a_resume_is_refused_and_the_killed_runs_server_stopped",
      bound=60)
def _(c):
    shutil.copy(TRACE, c.dir / "trace.jsonl")
    c.write("probe.jsonl", '{"prompt": "Name a colour."}\n{"prompt": "Name a fruit."}\n')
    c.write("s.yaml", spec("  trials: {count: 3, cooldown: 300ms}\n"
                           "  equivalence: {prompts_file: probe.jsonl, output_tokens: 4}\n",
                           dataset="dataset: {kind: trace, path: trace.jsonl}"))
    p = run_bg(c, "s.yaml")
    end = time.monotonic() + 40
    while True:
        r = result_of(c.dir / "results")
        try:
            v = json.loads(r.read_text()) if r else {}
        except ValueError:
            v = {}
        if len(v.get("trials", [])) >= 1:
            break
        if time.monotonic() > end:
            p.kill()
            raise Fail("the first trial never came")
        time.sleep(0.01)
    p.send_signal(signal.SIGKILL)
    p.wait()
    pgid = v["servers"][0]["pgid"]
    c.write("probe.jsonl", '{"prompt": "Name a colour."}\n{"prompt": "Name a metal."}\n')
    c.sb("run", "--no-bars", "--resume", r, code=2,
         has=["probe.jsonl changed since the run began", f"server group {pgid} .* still alive"])
    for _ in range(100):
        if not Path(f"/proc/{pgid}").exists():
            return
        time.sleep(0.05)
    os.killpg(pgid, signal.SIGKILL)
    raise Fail(f"the killed run's server {pgid} was left running")


@case("compare and rerun after the trace was edited", "rerun",
      ci="hardening::a_changed_input_file_is_named_by_compare_and_refused_by_rerun", bound=60)
def _(c):
    c.write("trace.jsonl", '{"timestamp": 0, "input_tokens": 8, "output_tokens": 2}\n'
                           '{"timestamp": 50, "input_tokens": 8, "output_tokens": 2}\n')
    c.write("s.yaml", spec(dataset="dataset: {kind: trace, path: trace.jsonl}"))
    c.sb("run", "-q", "--results-dir", "one", "s.yaml", code=0)
    c.write("trace.jsonl", '{"timestamp": 0, "input_tokens": 8, "output_tokens": 3}\n'
                           '{"timestamp": 50, "input_tokens": 8, "output_tokens": 2}\n')
    c.sb("run", "-q", "--results-dir", "two", "s.yaml", code=0)
    one, two = result_of(c.dir / "one"), result_of(c.dir / "two")
    c.sb("compare", "--no-history", one, two, code=0, has=[r"provenance\.inputs\[trace\.jsonl\]"])
    c.sb("rerun", one, "--spec-dir", ".", "-q", code=2,
         has=["trace.jsonl is not the file the published run read"])
    c.sb("rerun", one, "--with", two, code=2,
         has=["trace.jsonl is not the file the published run read"])


# ---------------------------------------------------------------- issue 50's surfaces

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus_surfaces  # noqa: E402

corpus_surfaces.register(sys.modules[__name__])


# ---------------------------------------------------------------- driver


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(REPO / "target/debug/servebench"))
    ap.add_argument("--only", default="", help="comma list of surfaces")
    ap.add_argument("--ci", action="store_true", help="only the cases CI also runs")
    a = ap.parse_args()
    surfaces = {s for s in a.only.split(",") if s}
    root = Path(tempfile.mkdtemp(prefix="servebench-corpus-"))
    ok = failed = 0
    started = time.monotonic()
    for i, k in enumerate(CASES):
        if surfaces and k["surface"] not in surfaces or (a.ci and not k["ci"]):
            continue
        ctx = Ctx(a.bin, root)
        ctx.dir = root / f"case{i:03d}"
        ctx.dir.mkdir()
        ctx.bound = k["bound"]
        t = time.monotonic()
        try:
            k["fn"](ctx)
            verdict, why = "ok  ", ""
            ok += 1
        except Fail as e:
            verdict, why = "FAIL", f"\n       {e}"
            failed += 1
        except Exception as e:  # a broken case counts as failed, said
            verdict, why = "FAIL", f"\n       {type(e).__name__}: {e}"
            failed += 1
        took = time.monotonic() - t
        where = f"CI: {k['ci'].split('::')[-1][:40]}…" if k["ci"] else "corpus only"
        print(f"{verdict} {took:5.1f}s [{k['surface']}] {k['name']} ({where}){why}", flush=True)
    total = ok + failed
    print(f"\n{ok} of {total} cases handled well, {failed} failed; "
          f"{sum(1 for k in CASES if k['ci'])} of {len(CASES)} also run in CI; "
          f"{time.monotonic() - started:.0f} s ({a.bin})")
    shutil.rmtree(root, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
