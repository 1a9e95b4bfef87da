"""Time from starting `agentcli run hi` to its request arriving at a (local, scripted) server.

    python bench/first_request.py [--runs N]

Target: median and max <= 0.4 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.scripted_server

from tests.scripted_server import Reply, ScriptedServer  # noqa: E402

TARGET_SECONDS = 0.4
WARMUP_RUNS = 2
AGENTCLI = str(Path(sys.executable).with_name("agentcli"))


def one_run(server: ScriptedServer, env: dict[str, str], cwd: str) -> tuple[float, float]:
    """(seconds until the request arrived, seconds until the process exited)."""
    server.enqueue(Reply.text(["Hello", "!"]))
    seen = len(server.requests)
    start = time.monotonic()  # the server stamps arrivals with the same clock
    process = subprocess.Popen(
        [AGENTCLI, "run", "hi"],
        stdin=subprocess.DEVNULL,  # not a terminal, and at end of file: no stdin wait
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
    )
    _, stderr = process.communicate(timeout=30)
    exited = time.monotonic() - start
    if process.returncode != 0 or len(server.requests) != seen + 1:
        tail = "\n".join(stderr.decode().splitlines()[-6:])
        raise SystemExit(f"agentcli run failed (exit {process.returncode}):\n{tail}")
    return server.requests[seen].time - start, exited


def slowest_imports(env: dict[str, str], cwd: str, server: ScriptedServer) -> list[str]:
    """The largest imports of one `agentcli run hi`, to show what the startup is made of."""
    server.enqueue(Reply.text(["Hello"]))
    result = subprocess.run(
        [AGENTCLI, "run", "hi"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**env, "PYTHONPROFILEIMPORTTIME": "1"},
        cwd=cwd,
        check=True,
    )
    rows = []
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            _self, cumulative, name = line.removeprefix("import time:").split("|")
            rows.append((int(cumulative), name.rstrip()[1:]))
    return [f"{us / 1000:7.1f} ms  {name}" for us, name in sorted(rows, reverse=True)[:12]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as home, ScriptedServer() as server:
        env = {
            **os.environ,
            "PYTHONDONTWRITEBYTECODE": "",  # run from .pyc files, as an installed program does
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "bench",
            "AGENTCLI_MODEL": "openai:scripted-model",
            "AGENTCLI_HOME": home,  # keep the bench's data out of the user's directories
            "NO_COLOR": "1",
        }
        for _ in range(WARMUP_RUNS):
            one_run(server, env, home)
        runs = [one_run(server, env, home) for _ in range(args.runs)]
        imports = slowest_imports(env, home, server)

    arrivals = [arrival for arrival, _ in runs]
    exits = [exited for _, exited in runs]
    median, worst = statistics.median(arrivals), max(arrivals)
    print(f"first request: {args.runs} runs of `agentcli run hi`, target <= {TARGET_SECONDS} s")
    print(f"{'':<28}{'median s':>10}{'min s':>8}{'max s':>8}{'ratio':>8}")
    rows = (("start -> request arrives", arrivals), ("start -> process exits", exits))
    for label, values in rows:
        med = statistics.median(values)
        print(
            f"{label:<28}{med:>10.3f}{min(values):>8.3f}{max(values):>8.3f}"
            f"{med / TARGET_SECONDS:>7.2f}x"
        )
    verdict = "PASS" if worst <= TARGET_SECONDS else "FAIL"
    print(
        f"\narrival vs target: median {median / TARGET_SECONDS:.2f}x, "
        f"max {worst / TARGET_SECONDS:.2f}x -> {verdict}"
    )
    print("largest imports of `agentcli run hi` (cumulative, nested, under importtime):")
    for line in imports:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
