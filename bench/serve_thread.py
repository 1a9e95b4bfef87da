"""Sequential runs on ONE thread of one `agentcli serve` process, the model a local scripted
server: does a run's latency stay flat as the thread grows?

    python bench/serve_thread.py [--runs 2000] [--window 50] [--full-history] [--blind-model]

Starts `agentcli serve` on a free loopback port and posts N RunAgentInputs one after
another on the same thread, each a new user message; with --full-history, after the whole
history as the client holds it (what the runs' events and snapshots make of its messages,
as @ag-ui/client applies them: tests.agui_helpers.applied), as AG-UI clients send it.
Reports the median latency of the first and the last `--window` runs and their ratio
(target: at most 1.2x from run 1 to run 2,000). Then `--window` more runs of the thread,
each followed by a run of a new thread, and the ratio of their medians: the same
comparison under the same load (on a shared machine the load drifts over the minutes
between run 1 and run 2,000).

The model request carries the whole thread (what every chat API takes); with
--blind-model the model is a server that reads each request's body and parses none of it
(nor keeps it, as the scripted server does), which leaves agentcli's part of the drift:
the difference is the model server's reading of a growing request.
`BENCH_SERVE_CMD` runs another build (an older one, in its own venv) instead.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.*

import httpx  # noqa: E402

from tests.agui_helpers import applied, free_port, run_input, sse_events, wait_ready  # noqa: E402
from tests.scripted_server import Reply, ScriptedServer  # noqa: E402

AGENTCLI = str(Path(sys.executable).with_name("agentcli"))
TARGET = 1.2


class BlindModel(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat stream that reads the request's body and ignores it."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
        parts = [
            {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"}}]},
            {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        body = "".join(f"data: {json.dumps(p)}\n\n" for p in parts) + "data: [DONE]\n\n"
        data = body.encode()
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
        )
        self.close_connection = True
        self.wfile.write(head.encode() + data)  # one write: no wait on a delayed ACK

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def blind_model() -> Iterator[str]:
    """The blind model's base URL while it serves."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), BlindModel)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


Model = Iterator[tuple[str, Callable[[], None]]]  # a base URL, and what forgets its requests


@contextlib.contextmanager
def scripted_model(runs: int) -> Model:
    """The scripted server's base URL, and what forgets the requests it recorded: it parses
    each one (a model reads its request), but keeping 2,000 of them, up to 0.2 MB each, as
    parsed JSON would make this process (the bench's client too) slower with each run,
    which is no part of the server under test."""
    with ScriptedServer() as server:
        for n in range(runs):
            server.enqueue(Reply.text([f"answer {n}"]))
        yield server.base_url, server.requests.clear


@contextlib.contextmanager
def blind(model: contextlib.AbstractContextManager[str]) -> Model:
    with model as base_url:
        yield base_url, lambda: None


def one_run(
    client: httpx.Client, url: str, thread: str, n: int, history: list[dict] | None
) -> float:
    """One run's latency; `history`: the client's messages, sent whole and kept up to date
    from the run's events (None: only the new message is sent)."""
    message = {"id": f"u{n}", "role": "user", "content": f"message {n}"}
    sent = [*(history or []), message]
    # Encoded before the clock starts: the client's own JSON encoding of a long history is
    # not the server's latency.
    body = json.dumps(run_input(thread, f"r{n}", sent)).encode()
    headers = {"Accept": "text/event-stream", "Content-Type": "application/json"}
    start = time.monotonic()
    response = client.post(url, content=body, headers=headers)
    elapsed = time.monotonic() - start
    response.raise_for_status()
    events = sse_events(response.text)
    if events[-1]["type"] != "RUN_FINISHED":
        raise SystemExit(f"run {n} ended with {events[-1]}")
    if history is not None:
        history[:] = applied(sent, events)
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--window", type=int, default=50, help="runs in each median")
    parser.add_argument("--full-history", action="store_true", help="send every message")
    parser.add_argument("--blind-model", action="store_true", help="a model ignoring the body")
    args = parser.parse_args()
    window = min(args.window, max(1, args.runs // 4))
    model = blind(blind_model()) if args.blind_model else scripted_model(args.runs + 2 * window)
    with tempfile.TemporaryDirectory() as home, model as (base_url, forget):
        env = {
            **os.environ,
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "bench",
            "AGENTCLI_HOME": home,
        }
        port = free_port()
        url = f"http://127.0.0.1:{port}/"
        command = os.environ.get("BENCH_SERVE_CMD", AGENTCLI).split()
        process = subprocess.Popen(
            [*command, "serve", "--port", str(port), "--no-token"],
            env=env,
            cwd=home,
            stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        latencies: list[float] = []
        # After the N runs: `window` more on the long thread, each followed by a run of a
        # new thread (its runs 1 to `window`), so that both are timed under the same load.
        late: list[float] = []
        fresh: list[float] = []
        try:
            wait_ready(process, url)
            histories: dict[str, list[dict]] = {"long": [], "fresh": []}

            def run(thread: str, n: int) -> float:
                kept = histories[thread] if args.full_history else None
                elapsed = one_run(client, url, f"bench-{thread}", n, kept)
                forget()
                return elapsed

            with httpx.Client(timeout=120) as client:
                latencies = [run("long", n) for n in range(args.runs)]
                for n in range(window):
                    late.append(run("long", args.runs + n))
                    fresh.append(run("fresh", n))
        finally:
            process.terminate()
            process.wait(timeout=10)
            size = sum(p.stat().st_size for p in Path(home).rglob("thread-bench-long.jsonl"))
    first = statistics.median(latencies[:window])
    last = statistics.median(latencies[-window:])
    ratio = last / first
    sends = "the whole history" if args.full_history else "the new message"
    model = "a model server ignoring the body" if args.blind_model else "the scripted model"
    print(f"{args.runs} sequential runs on one thread ({sends}; {model});")
    print(f"  the session file ends at {size:,} bytes")
    print(f"  median of runs 1-{window}: {first * 1000:7.1f} ms")
    print(f"  median of the last {window}:   {last * 1000:7.1f} ms")
    verdict = "PASS" if ratio <= TARGET else "FAIL"
    print(f"  ratio {ratio:.2f}x (target <= {TARGET}x): {verdict}")
    interleaved = statistics.median(late) / statistics.median(fresh)
    print(
        f"  then interleaved, under the same load: runs {args.runs + 1}-{args.runs + window} "
        f"of this thread {statistics.median(late) * 1000:.1f} ms, runs 1-{window} of a new one "
        f"{statistics.median(fresh) * 1000:.1f} ms"
    )
    verdict = "PASS" if interleaved <= TARGET else "FAIL"
    print(f"  ratio {interleaved:.2f}x (target <= {TARGET}x): {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
