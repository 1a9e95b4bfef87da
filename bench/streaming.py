"""Streaming cost: the cost of one chunk must not grow with the length of the answer.

    python bench/streaming.py [--tokens N]

In-process: a synthetic Markdown answer of N tokens (one chunk each) goes through
ChatStreamAccumulator + TurnCollector + one output; each chunk's handling is timed.
Target: mean cost per chunk of the last tenth <= 1.5x that of the first tenth, per path.
End to end: the scripted server streams the same answer to a real `agentcli run` (stdout
a pipe); reports wall time and tokens per second (no target).
"""

from __future__ import annotations

import argparse
import http.client
import io
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.scripted_server

from agentcli import events as ev  # noqa: E402
from agentcli.messages import TurnCollector  # noqa: E402
from agentcli.output.base import RunSummary  # noqa: E402
from agentcli.output.jsonl import JsonlOutput  # noqa: E402
from agentcli.output.text import TextOutput  # noqa: E402
from agentcli.providers.openai_stream import ChatStreamAccumulator  # noqa: E402
from agentcli.ui.markdown_stream import MarkdownStream  # noqa: E402
from tests.scripted_server import Reply, ScriptedServer  # noqa: E402

TARGET_RATIO = 1.5
WARMUP_CHUNKS = 2_000
AGENTCLI = str(Path(sys.executable).with_name("agentcli"))
PROSE = (
    "the stream renders every block once as soon as it is complete while only the open "
    "block is redrawn by a throttled live region so that cost per chunk stays flat"
)
CODE = ("def", "feed(self,", "delta):", "return", "None", "x", "=", "1", "+", "for", "in", "if")

# --- the synthetic answer ---


def synthetic_tokens(count: int, seed: int = 0) -> list[str]:
    """Markdown in token-sized pieces: paragraphs, lists, fenced code, headings.

    The kinds of block come in a fixed cycle, so every tenth of the answer has the same mix
    and the first and last tenths compare like with like; words and sizes are random."""
    rng = random.Random(seed)  # the same answer on every run
    vocabulary = PROSE.split()
    kinds = itertools.cycle(("heading", "paragraph", "list", "paragraph", "code"))

    def words(n: int) -> list[str]:
        return [(" " if i else "") + rng.choice(vocabulary) for i in range(n)]

    tokens: list[str] = []
    while len(tokens) < count:
        kind = next(kinds)
        if kind == "paragraph":
            tokens += [*words(rng.randint(30, 120)), ".", "\n\n"]
        elif kind == "list":
            for _ in range(rng.randint(3, 6)):
                tokens += ["- ", *words(rng.randint(4, 14)), "\n"]
            tokens.append("\n")
        elif kind == "code":
            tokens += ["```", "python", "\n"]
            for _ in range(rng.randint(4, 16)):
                tokens.append("    " * rng.randint(0, 2))
                tokens += [rng.choice(CODE) + " " for _ in range(rng.randint(3, 9))]
                tokens.append("\n")
            tokens += ["```", "\n\n"]
        else:
            tokens += ["## ", *words(rng.randint(2, 6)), "\n\n"]
    return tokens[:count]


def openai_chunks(tokens: list[str]) -> list[dict[str, Any]]:
    head = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0}
    chunks = [
        {**head, "choices": [{"index": 0, "delta": {"content": token}, "finish_reason": None}]}
        for token in tokens
    ]
    chunks[0]["choices"][0]["delta"]["role"] = "assistant"
    chunks.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return chunks


# --- in-process paths: (handle each event, finish) ---

Path_ = tuple[Callable[[ev.Event], None], Callable[[str], None]]


def summary(text: str) -> RunSummary:
    return RunSummary("thread", "run", "openai:bench", "finished", 0, 1, ev.Usage(), text)


def core_path() -> Path_:
    return (lambda event: None), (lambda text: None)


def text_path() -> Path_:
    output = TextOutput(io.StringIO(), io.StringIO(), markdown=False)  # as in a pipe
    return output.handle, lambda text: output.finish(summary(text))


def jsonl_path() -> Path_:
    output = JsonlOutput(io.StringIO())
    return output.handle, lambda text: output.finish(summary(text))


def markdown_path() -> Path_:
    from rich.console import Console

    console = Console(file=io.StringIO(), force_terminal=True, width=100, color_system="256")
    stream = MarkdownStream(console)

    def handle(event: ev.Event) -> None:
        if isinstance(event, ev.TextMessageContent):
            stream.feed(event.delta)

    return handle, lambda text: stream.close()


PATHS: dict[str, Callable[[], Path_]] = {
    "core (accumulator+collector)": core_path,
    "text output, pipe": text_path,
    "jsonl output": jsonl_path,
    "markdown, terminal": markdown_path,
}


def time_path(make: Callable[[], Path_], chunks: list[dict[str, Any]]) -> list[int]:
    """Nanoseconds spent on each chunk: accumulator, collector and the output."""
    accumulator = ChatStreamAccumulator("openai", "bench")
    collector = TurnCollector()
    handle, finish = make()
    costs = []
    clock = time.perf_counter_ns
    for chunk in chunks:
        start = clock()
        for event in accumulator.feed(chunk):
            collector.feed(event)
            handle(event)
        costs.append(clock() - start)
    for event in accumulator.finish():
        collector.feed(event)
        handle(event)
    finish(collector.text)
    return costs


def in_process(tokens: list[str], repeats: int) -> bool:
    chunks = openai_chunks(tokens)
    tenth = len(chunks) // 10
    print(
        f"in-process: {len(tokens):,} tokens, one chunk each, median of {repeats} runs; "
        f"target last/first <= {TARGET_RATIO:g}x"
    )
    print(f"{'path':<30}{'first us':>9}{'last us':>9}{'ratio':>7}{'total s':>9}  verdict")
    profiles, ok = {}, True
    for name, make in PATHS.items():
        time_path(make, chunks[:WARMUP_CHUNKS])  # imports, lexers, caches: not the answer's cost
        runs = []
        for _ in range(repeats):  # the median per tenth damps other load on the machine
            costs = time_path(make, chunks)
            runs.append([sum(costs[i * tenth : (i + 1) * tenth]) / tenth / 1000 for i in range(10)])
        means = [statistics.median(run[i] for run in runs) for i in range(10)]
        first, last = means[0], means[-1]
        verdict = "PASS" if last / first <= TARGET_RATIO else "FAIL"
        ok &= verdict == "PASS"
        total = statistics.median(sum(run) * tenth / 1e6 for run in runs)
        print(f"{name:<30}{first:>9.2f}{last:>9.2f}{last / first:>6.2f}x{total:>9.2f}  {verdict}")
        profiles[name] = means
    print("mean us per chunk, by tenth of the answer:")
    for name, means in profiles.items():
        print(f"  {name:<30}" + " ".join(f"{m:6.1f}" for m in means))
    return ok


# --- end to end ---


def drain_server(server: ScriptedServer, tokens: list[str]) -> float:
    """Seconds for the server alone to stream the answer to a client that only reads."""
    server.enqueue(Reply.text(tokens))
    parts = urlsplit(server.base_url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    body = json.dumps({"model": "m", "messages": [], "stream": True})
    start = time.monotonic()
    connection.request("POST", f"{parts.path}/chat/completions", body=body)
    response = connection.getresponse()
    while response.read(65536):
        pass
    connection.close()
    return time.monotonic() - start


def end_to_end(tokens: list[str]) -> None:
    expected = "".join(tokens)
    with tempfile.TemporaryDirectory() as home, ScriptedServer() as server:
        server_only = drain_server(server, tokens)
        server.enqueue(Reply.text(tokens))
        env = {
            **os.environ,
            "PYTHONDONTWRITEBYTECODE": "",  # run from .pyc files, as an installed program does
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "bench",
            "AGENTCLI_MODEL": "openai:scripted-model",
            "AGENTCLI_HOME": home,
            "NO_COLOR": "1",
        }
        start = time.monotonic()
        result = subprocess.run(
            [AGENTCLI, "run", "hi"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=env,
            cwd=home,
            timeout=300,
        )
        wall = time.monotonic() - start
        arrived = server.requests[-1].time - start
    if result.returncode != 0 or not result.stdout.startswith(expected):
        tail = "\n".join(result.stderr.splitlines()[-6:])
        raise SystemExit(f"agentcli run failed (exit {result.returncode}):\n{tail}")
    streaming = wall - arrived
    print(
        f"\nend to end: scripted server -> `agentcli run` (stdout a pipe), {len(tokens):,} tokens"
    )
    print(
        f"  server alone, to a reading-only client: {server_only:6.2f} s "
        f"({len(tokens) / server_only:,.0f} tokens/s)"
    )
    print(
        f"  agentcli total wall time:               {wall:6.2f} s "
        f"({len(tokens) / wall:,.0f} tokens/s)"
    )
    print(f"  of which startup until the request:     {arrived:6.2f} s")
    print(
        f"  request until exit (streaming):         {streaming:6.2f} s "
        f"({len(tokens) / streaming:,.0f} tokens/s)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=50_000, help="length of the answer")
    parser.add_argument("--repeats", type=int, default=3, help="in-process runs per path")
    parser.add_argument("--skip-e2e", action="store_true", help="in-process part only")
    args = parser.parse_args()
    tokens = synthetic_tokens(args.tokens)
    ok = in_process(tokens, args.repeats)
    if not args.skip_e2e:
        end_to_end(tokens)
    print(f"\nresult: {'PASS' if ok else 'FAIL'}")
    return 0  # a benchmark reports; it does not gate


if __name__ == "__main__":
    sys.exit(main())
