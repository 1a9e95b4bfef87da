"""Concurrent runs against one `agentcli serve` process, the model a local scripted server.

    python bench/serve.py [--runs 50] [--delay 0.05]

Starts `agentcli serve` on a free loopback port, posts N RunAgentInputs at once (each its own
thread, each answered by a streamed text of 20 pieces, `--delay` seconds apart) and reports
p50 / p95 of the time to the first event and to the end of the stream. Needs agentcli[serve].
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.*

import httpx  # noqa: E402

from tests.agui_helpers import free_port, run_input, sse_events  # noqa: E402
from tests.scripted_server import Reply, ScriptedServer  # noqa: E402

AGENTCLI = str(Path(sys.executable).with_name("agentcli"))
PIECES = 20


async def one_run(client: httpx.AsyncClient, url: str, n: str) -> tuple[float, float, int]:
    body = run_input(f"bench-{n}", f"r{n}", [{"id": "u", "role": "user", "content": "hi"}])
    start = time.monotonic()
    first = None
    text = []
    async with client.stream("POST", url, json=body) as response:
        response.raise_for_status()
        async for chunk in response.aiter_text():
            if first is None:
                first = time.monotonic() - start
            text.append(chunk)
    total = time.monotonic() - start
    events = sse_events("".join(text))  # every event validated with the SDK's models
    if events[-1]["type"] != "RUN_FINISHED":
        raise SystemExit(f"run {n} ended with {events[-1]}")
    return first or total, total, len(events)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def bench(url: str, runs: int, prefix: str) -> list[tuple[float, float, int]]:
    limits = httpx.Limits(max_connections=runs + 5)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        return await asyncio.gather(*(one_run(client, url, f"{prefix}{n}") for n in range(runs)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--delay", type=float, default=0.05, help="seconds between pieces")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home, ScriptedServer() as server:
        for _ in range(args.runs + 1):
            pieces = [f"w{i} " for i in range(PIECES)]
            server.enqueue(Reply.text(pieces, delay=args.delay))
        env = {
            **os.environ,
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "bench",
            "AGENTCLI_HOME": home,
        }
        port = free_port()
        url = f"http://127.0.0.1:{port}/"
        process = subprocess.Popen(
            [*os.environ.get("BENCH_SERVE_CMD", AGENTCLI).split(), "serve", "--port", str(port)],
            env=env,
            cwd=home,
            stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            from tests.agui_helpers import wait_ready

            wait_ready(process, url)  # type: ignore[arg-type]
            asyncio.run(bench(url, 1, "warm"))  # warm-up
            started = time.monotonic()
            results = asyncio.run(bench(url, args.runs, ""))
            wall = time.monotonic() - started
        finally:
            process.terminate()
            process.wait(timeout=10)
    firsts = [r[0] for r in results]
    totals = [r[1] for r in results]
    floor = PIECES * args.delay
    print(f"{args.runs} concurrent runs, one serve process; model stream {floor:.2f} s each")
    print(
        f"  first event  p50 {percentile(firsts, 0.5) * 1000:7.1f} ms   "
        f"p95 {percentile(firsts, 0.95) * 1000:7.1f} ms"
    )
    print(
        f"  whole run    p50 {percentile(totals, 0.5) * 1000:7.1f} ms   "
        f"p95 {percentile(totals, 0.95) * 1000:7.1f} ms"
    )
    print(f"  wall {wall:.2f} s; mean events per run {statistics.mean(r[2] for r in results):.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
