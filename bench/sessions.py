"""How long `agentcli sessions list` takes with many sessions, before and after its
summary cache holds them.

    python bench/sessions.py [--sessions 500] [--messages 200]

Writes N session files (each with M messages of about 400 characters, like a working
session) into a temporary AGENTCLI_HOME, then times `agentcli sessions list --json`
three ways: the first listing (every file read, the cache written), a warm listing
(nothing changed), and a listing after one session grew. Target: a warm listing of 500
sessions within 2x the time of `agentcli --version`'s process start plus 0.3 s. Always
exits 0.
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

AGENTCLI = Path(sys.executable).parent / "agentcli"


def write_sessions(directory: Path, count: int, messages: int) -> list[Path]:
    directory.mkdir(parents=True)
    paths = []
    for n in range(count):
        path = directory / f"20261130-{n:06d}-bench.jsonl"
        lines = [
            {
                "t": "session",
                "id": path.stem,
                "created": "2026-11-30T10:00:00",
                "workspace": "/work/project",
                "model": "openai:bench",
            }
        ]
        for m in range(messages):
            role = "user" if m % 2 == 0 else "assistant"
            lines.append({"t": "message", "m": {"role": role, "content": f"message {m} " * 40}})
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        paths.append(path)
    return paths


def timed(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run([str(AGENTCLI), *args], env=env, capture_output=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        print(f"agentcli {' '.join(args)} failed: {done.stderr.decode()[-300:]}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--messages", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentcli-bench-") as tmp:
        home = Path(tmp) / "home"
        env = {**os.environ, "AGENTCLI_HOME": str(home)}
        paths = write_sessions(home / "data" / "sessions", args.sessions, args.messages)
        size = sum(p.stat().st_size for p in paths)
        start = min(timed(["--version"], env) for _ in range(5))
        cold = timed(["sessions", "list", "--json"], env)
        warm = min(timed(["sessions", "list", "--json"], env) for _ in range(5))
        with paths[0].open("a", encoding="utf-8") as file:
            file.write(json.dumps({"t": "message", "m": {"role": "user", "content": "more"}}))
            file.write("\n")
        grown = timed(["sessions", "list", "--json"], env)
    target = 2 * start + 0.3
    print(f"{args.sessions} sessions, {size / 1e6:.0f} MB in all")
    print(f"agentcli --version           {start * 1000:7.0f} ms")
    print(f"sessions list, first         {cold * 1000:7.0f} ms  (every file read)")
    print(f"sessions list, warm          {warm * 1000:7.0f} ms  ({cold / warm:.1f}x faster)")
    print(f"sessions list, one grew      {grown * 1000:7.0f} ms")
    verdict = "PASS" if warm <= target else "FAIL"
    print(f"target: warm <= {target * 1000:.0f} ms: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
