"""Shell tool costs: the time run_shell adds to `true` over a bare subprocess.run, the time
the sandbox adds on top (per backend available here: Landlock alone, bubblewrap with
Landlock), and agentcli's memory growth while a command prints 1 GB.

Targets: under 20 ms added per command; the sandbox under 15 ms more; under 50 MB of memory
growth for 1 GB of output.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.process.env import child_environment
from agentcli.tools.base import ToolContext
from agentcli.tools.shell import RunShell
from agentcli.workspace.root import Workspace


def bare(runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(["bash", "-c", "true"], capture_output=True, check=False)
        times.append(time.perf_counter() - started)
    return times


async def tool(ctx: ToolContext, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        await RunShell().execute({"command": "true"}, ctx)
        times.append(time.perf_counter() - started)
    return times


def sandboxed(scratch: str, backend: str, runs: int) -> list[float]:
    from dataclasses import replace

    from agentcli.sandbox.confine import Sandbox, SandboxSettings

    sandbox = Sandbox(Path(scratch), SandboxSettings(backend=backend))
    ctx = ToolContext(workspace=Workspace(scratch), child_env=child_environment(), sandbox=sandbox)
    ctx = replace(ctx, profile="read-only")
    try:
        asyncio.run(tool(ctx, 3))
        return asyncio.run(tool(ctx, runs))
    finally:
        sandbox.close()


def sandbox_costs(scratch: str, runs: int, plain: float) -> None:
    from agentcli.sandbox.mechanisms import detect

    found = detect()
    backends = [
        b for b, ok in (("landlock", found.landlock_abi), ("bubblewrap", found.bwrap)) if ok
    ]
    if not backends:
        print("sandbox: no backend on this host; nothing to measure")
    for backend in backends:
        median = statistics.median(sandboxed(scratch, backend, runs))
        added = (median - plain) * 1000
        print(
            f"sandbox {backend}: run_shell `true` median {median * 1000:.1f} ms, "
            f"{median / plain:.2f}x unsandboxed, added {added:.1f} ms (target < 15 ms): "
            f"{'PASS' if added < 15 else 'FAIL'}"
        )


async def flood(ctx: ToolContext, gigabytes: float) -> tuple[int, str]:
    me = psutil.Process()
    before = me.memory_info().rss
    peak = before
    done = False

    async def sample() -> None:
        nonlocal peak
        while not done:
            peak = max(peak, me.memory_info().rss)
            await asyncio.sleep(0.05)

    sampler = asyncio.create_task(sample())
    count = int(gigabytes * 1024 * 1024)  # 1 KiB per line
    out = await RunShell().execute(
        {
            "command": f"head -c 1023 /dev/zero | tr '\\0' x; yes \"$(head -c 1023 /dev/zero | "
            f"tr '\\0' y)\" | head -n {count}",
            "timeout": 600,
        },
        ctx,
    )
    done = True
    await sampler
    return peak - before, out.summary or ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--gigabytes", type=float, default=1.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        ctx = ToolContext(
            workspace=Workspace(scratch), child_env=child_environment(), output_dir=None
        )
        asyncio.run(tool(ctx, 3))  # warm up imports and caches
        bare_times = bare(args.runs)
        tool_times = asyncio.run(tool(ctx, args.runs))
        added_ms = (statistics.median(tool_times) - statistics.median(bare_times)) * 1000
        print(
            f"run_shell `true`: median {statistics.median(tool_times) * 1000:.1f} ms; "
            f"bare subprocess.run: {statistics.median(bare_times) * 1000:.1f} ms"
        )
        print(
            f"  ratio {statistics.median(tool_times) / statistics.median(bare_times):.2f}x, "
            f"added {added_ms:.1f} ms (target < 20 ms): {'PASS' if added_ms < 20 else 'FAIL'}"
        )
        sandbox_costs(scratch, args.runs, statistics.median(tool_times))
        if args.gigabytes <= 0:
            return
        growth, summary = asyncio.run(flood(ctx, args.gigabytes))
        mb = growth / 1024 / 1024
        print(
            f"{args.gigabytes:g} GB of output ({summary}): memory growth {mb:.1f} MB "
            f"(target < 50 MB): {'PASS' if mb < 50 else 'FAIL'}"
        )


if __name__ == "__main__":
    main()
