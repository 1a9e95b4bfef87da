"""With three MCP servers configured, the first request leaves no later than the slowest
server's start: the servers start concurrently, and the request follows the last one.

    python bench/mcp_start.py [--runs N]

Runs `agentcli run hi -o jsonl` against the scripted server with mcp-server-time,
mcp-server-git and server-everything (when AGENTCLI_TEST_MCP_EVERYTHING names it; else a
second time server) configured. From the `mcp_server` events (each server's start and
ready times) and the request's arrival it prints, per run: each server's start, the span
from the first start to the last ready (concurrent: about the slowest start; one after
another: the sum), and how long after the last server was ready the request arrived.
Target: the span <= the slowest start × 1.15, and the request <= 0.1 s after the last ready.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from first_request import AGENTCLI, ROOT, Reply, ScriptedServer

SPAN_RATIO = 1.15
AFTER_READY = 0.1
BIN = Path(sys.executable).parent


def config_text() -> str:
    everything = os.environ.get("AGENTCLI_TEST_MCP_EVERYTHING")
    third = everything if everything and Path(everything).exists() else BIN / "mcp-server-time"
    return (
        f'[mcp.servers.time]\ncommand = "{BIN / "mcp-server-time"}"\n'
        f'[mcp.servers.git]\ncommand = "{BIN / "mcp-server-git"}"\n'
        f'args = ["--repository", "{ROOT}"]\n'
        f'[mcp.servers.third]\ncommand = "{third}"\n'
    )


def one_run(server: ScriptedServer, env: dict[str, str], cwd: str) -> dict[str, float]:
    server.enqueue(Reply.text(["Hello"]))
    seen = len(server.requests)
    wall, mono = time.time(), time.monotonic()
    done = subprocess.run(
        [AGENTCLI, "run", "hi", "-o", "jsonl"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )
    if done.returncode != 0 or len(server.requests) != seen + 1:
        raise SystemExit(f"agentcli run failed (exit {done.returncode}):\n{done.stderr}")
    arrival = wall + (server.requests[seen].time - mono)  # on the events' clock
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    servers = [e["value"] for e in events if e.get("name") == "mcp_server"]
    if len(servers) != 3 or any(s["state"] != "running" for s in servers):
        raise SystemExit(f"a server did not start: {servers}\n{done.stderr}")
    starts = {s["server"]: (s["readyAt"] - s["startedAt"]) / 1000 for s in servers}
    first = min(s["startedAt"] for s in servers) / 1000
    last = max(s["readyAt"] for s in servers) / 1000
    return {**starts, "span": last - first, "after": arrival - last, "total": arrival - wall}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home, ScriptedServer() as server:
        env = {
            **os.environ,
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "bench",
            "AGENTCLI_MODEL": "openai:scripted-model",
            "AGENTCLI_HOME": home,
        }
        (Path(home) / "config.toml").write_text(config_text(), encoding="utf-8")
        one_run(server, env, home)  # warm-up
        runs = [one_run(server, env, home) for _ in range(args.runs)]
    print("three MCP servers: each start, first start -> last ready, last ready -> request (s)")
    print(f"{'time':>7}{'git':>7}{'third':>7}{'sum':>7}{'span':>7}{'after':>7}{'total':>7}")
    verdicts = []
    for run in runs:
        alone = [run["time"], run["git"], run["third"]]
        print(
            "".join(
                f"{v:>7.2f}" for v in [*alone, sum(alone), run["span"], run["after"], run["total"]]
            )
        )
        verdicts.append(run["span"] <= max(alone) * SPAN_RATIO and run["after"] <= AFTER_READY)
    verdict = "PASS" if all(verdicts) else "FAIL"
    print(f"\nspan <= slowest x {SPAN_RATIO} and request <= {AFTER_READY} s after it -> {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
