"""Load on `agentcli serve` replicas (issue 43): concurrent runs, then sequential runs on
rolling threads, reported as runs per second, p50/p95, events received, and each replica's
memory (RSS) at start and end.

    python bench/serve_replicas.py [--concurrent 300] [--sequential 5000] [--threads 50]
                                   [--store postgresql://...]

Always measures one replica on the JSONL sessions (the embedded default). With `--store DSN`
(its password in PGPASSWORD) it also measures 3 replicas behind HAProxy sharing that store,
side by side, with the database's connections (pg_stat_activity, via `psql`) at start and
end. Needs agentcli[serve]; HAProxy for the replicas. Not a test: prints figures, exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.* and bench.*

import httpx  # noqa: E402
import psutil  # noqa: E402

from bench.serve import percentile  # noqa: E402
from tests.agui_helpers import free_port, run_input, sse_events, wait_ready  # noqa: E402
from tests.haproxy import HAProxy  # noqa: E402
from tests.scripted_server import Reply, ScriptedServer  # noqa: E402

AGENTCLI = str(Path(sys.executable).with_name("agentcli"))
TOKEN = "bench-token"
HEADERS = {"Accept": "text/event-stream", "Authorization": f"Bearer {TOKEN}"}


async def one_run(client: httpx.AsyncClient, url: str, thread: str, run: str) -> tuple[float, int]:
    body = run_input(thread, run, [{"id": f"u-{run}", "role": "user", "content": "hi"}])
    start = time.monotonic()
    response = await client.post(url, json=body, headers=HEADERS)
    if response.status_code != 200:
        raise SystemExit(f"run {run} on {thread}: {response.status_code} {response.text[:200]}")
    events = sse_events(response.text)
    if events[-1]["type"] != "RUN_FINISHED":
        raise SystemExit(f"run {run} ended with {events[-1]}")
    return time.monotonic() - start, len(events)


async def concurrent(url: str, runs: int, prefix: str = "c") -> list[tuple[float, int]]:
    limits = httpx.Limits(max_connections=runs + 5)
    async with httpx.AsyncClient(timeout=600, limits=limits) as client:
        names = [f"{prefix}{n}" for n in range(runs)]
        return await asyncio.gather(*(one_run(client, url, name, name) for name in names))


async def sequential(url: str, runs: range, threads: int) -> list[tuple[float, int]]:
    async with httpx.AsyncClient(timeout=600) as client:
        return [await one_run(client, url, f"s{n % threads}", f"s{n}") for n in runs]


def rss_mb(processes: list[subprocess.Popen[bytes]]) -> list[float]:
    """Each replica's resident memory, its children included (MB)."""
    sizes = []
    for process in processes:
        tree = psutil.Process(process.pid)
        members = [tree, *tree.children(recursive=True)]
        sizes.append(sum(p.memory_info().rss for p in members) / 2**20)
    return sizes


def pg_connections(dsn: str | None) -> str:
    if dsn is None or shutil.which("psql") is None:
        return "-"
    query = "select count(*) from pg_stat_activity where datname = current_database()"
    done = subprocess.run(["psql", "-Atc", query, dsn], capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else "?"


def db_rows(dsn: str) -> str:
    """The store's rows by kind (event, message, session header...) and duplicates of a
    (thread, seq), which the primary key forbids: every record once."""
    import psycopg

    with psycopg.connect(dsn) as connection:
        kinds = connection.execute(
            "SELECT record->>'t', count(*) FROM events GROUP BY 1 ORDER BY 1"
        ).fetchall()
        [(threads,)] = connection.execute("SELECT count(DISTINCT thread_id) FROM events")
    return f"{dict(kinds)} across {threads} threads"


def start_replicas(
    count: int, server: ScriptedServer, home: str, store: str | None
) -> list[tuple[subprocess.Popen[bytes], str, int]]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": home,
        "AGENTCLI_HOME": str(Path(home) / "agentcli"),
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "bench",
        "AGUI_TOKEN": TOKEN,
        **({"PGPASSWORD": os.environ["PGPASSWORD"]} if "PGPASSWORD" in os.environ else {}),
    }
    started = []
    for _ in range(count):
        port = free_port()
        args = [AGENTCLI, "serve", "--port", str(port), "--token-env", "AGUI_TOKEN"]
        args += ["--store", store] if store else []
        process = subprocess.Popen(
            args, env=env, cwd=home, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        started.append((process, f"http://127.0.0.1:{port}/", port))
    for process, url, _ in started:
        wait_ready(process, url, deadline=60)  # type: ignore[arg-type]
    return started


def measure(label: str, args: argparse.Namespace, store: str | None, count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as home, ScriptedServer() as server:
        for _ in range(args.concurrent + args.sequential + 1):
            server.enqueue(Reply.text([f"w{i} " for i in range(args.pieces)]))
        replicas = start_replicas(count, server, home, store)
        proxy = None
        try:
            url = replicas[0][1]
            if count > 1:
                proxy = HAProxy(Path(home), [port for _, _, port in replicas])
                proxy.wait_backends_up(count)
                url = proxy.url
            processes = [p for p, _, _ in replicas]
            asyncio.run(concurrent(url, 1, "warm"))  # warm-up, a thread of its own
            rss_start, conns_start = rss_mb(processes), pg_connections(store)
            started = time.monotonic()
            burst = asyncio.run(concurrent(url, args.concurrent))
            burst_wall = time.monotonic() - started
            rss_burst = rss_mb(processes)
            # In two halves, RSS between them: growth after the burst's high-water mark is
            # what a long-running replica would keep gaining.
            half = args.sequential // 2
            started = time.monotonic()
            rolling = asyncio.run(sequential(url, range(half), args.threads))
            rss_half = rss_mb(processes)
            rolling += asyncio.run(sequential(url, range(half, args.sequential), args.threads))
            rolling_wall = time.monotonic() - started
            rss_end, conns_end = rss_mb(processes), pg_connections(store)
        finally:
            if proxy is not None:
                proxy.stop()
            for process, _, _ in replicas:
                process.terminate()
                process.wait(timeout=20)
    return {
        "label": label,
        "burst": burst,
        "burst_wall": burst_wall,
        "rolling": rolling,
        "rolling_wall": rolling_wall,
        "rss": (rss_start, rss_burst, rss_half, rss_end),
        "conns": (conns_start, conns_end),
    }


def report(result: dict[str, Any]) -> None:
    print(f"{result['label']}:")
    for name in ("burst", "rolling"):
        runs, wall = result[name], result[f"{name}_wall"]
        times = [t for t, _ in runs]
        print(
            f"  {name:8} {len(runs):5} runs  {len(runs) / wall:7.1f} runs/s  "
            f"p50 {percentile(times, 0.5) * 1000:7.1f} ms  "
            f"p95 {percentile(times, 0.95) * 1000:7.1f} ms"
            f"  events received {sum(n for _, n in runs)}"
        )
    start, burst, half, end = ([round(x) for x in sizes] for sizes in result["rss"])
    print(
        f"  RSS MB per replica  start {start}  after the burst {burst}  "
        f"half the sequential runs {half}  end {end}"
    )
    print(f"  pg connections      start {result['conns'][0]}  end {result['conns'][1]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrent", type=int, default=300)
    parser.add_argument("--sequential", type=int, default=5000)
    parser.add_argument("--threads", type=int, default=50, help="rolling threads (sequential)")
    parser.add_argument("--pieces", type=int, default=5, help="streamed pieces per answer")
    parser.add_argument("--store", help="a PostgreSQL DSN: also measure 3 replicas on it")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    report(measure("1 replica, JSONL sessions", args, None, 1))
    if args.store:
        report(measure("3 replicas behind HAProxy, PostgreSQL store", args, args.store, 3))
        print(f"  rows in the database: {db_rows(args.store)}")
    else:
        print("(no --store: the 3-replica PostgreSQL side was not measured)")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
