"""A model server for the serve benchmarks, in a process of its own: an OpenAI-compatible
chat stream answering every request with one short text, timing its own part of each.

    python bench/model_process.py [--parse]

Prints its port on the first line of stdout; at stdin's end, prints what it took for each
request, in order (a JSON list of seconds), and exits. Its own part is from the request's
body read whole to its answer written: reading a longer request is the client's sending
(agentcli's part), parsing it (with --parse, as a model server reads its request) is the
model's. In a process of its own, it shares neither a GIL nor a heap with the benchmark's
client: a model thread in the client's process made the client slower as its history grew,
which was counted as the server's latency.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

CHUNK = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}


def answer(text: str) -> bytes:
    """A whole streamed answer, as one HTTP response."""
    parts = [
        {**CHUNK, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]},
        {**CHUNK, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    data = ("".join(f"data: {json.dumps(p)}\n\n" for p in parts) + "data: [DONE]\n\n").encode()
    head = (
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + data


class Model(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    parse = False
    took: ClassVar[list[float]] = []  # this process serves one benchmark
    counter = itertools.count()
    lock = threading.Lock()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        start = time.perf_counter()
        if self.parse:
            json.loads(body)
        self.close_connection = True
        self.wfile.write(answer(f"answer {next(self.counter)}"))  # one write: no delayed ACK
        self.wfile.flush()
        with self.lock:
            self.took.append(time.perf_counter() - start)

    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parse", action="store_true", help="parse each request's JSON")
    args = parser.parse_args()
    Model.parse = args.parse
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    print(httpd.server_address[1], flush=True)
    sys.stdin.read()  # until the benchmark is done
    httpd.shutdown()
    with Model.lock:
        print(json.dumps(Model.took), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
