"""How fast the embedded local model is where a user meets it, against issue 30's targets.

    python bench/local_speed.py [--runs 3] [--first-command]

- load: the model loaded in a fresh process (`Engine(...)`, median of --runs; target 2 s);
- run, cold: `agentcli run --model local --yes "show me README.md"` end to end, with no
  saved prompt (the first run on a machine: the fixed part of the prompt is evaluated and
  saved), wall clock and CPU of the whole process tree;
- run, warm: the same again, the saved prompt found (every later run; target 5 s);
- REPL turns: two requests in one process (`LocalProvider`, as the REPL keeps it): the
  second turn's seconds, the model already loaded;
- with --first-command: the README's first command itself, as written there (a fresh
  venv, the install with no pip cache, one offline answer), in a temporary directory with
  a copy of the checkout; target 90 s on an idle 2-core machine. Downloads about 250 MB.

Prints each figure with its target and the ratio, and the machine's load average (the
targets are for an idle machine: a busy one is slower, and says so). Always exits 0.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
AGENTCLI = Path(sys.executable).parent / "agentcli"
TARGETS = {"load": 2.0, "run, warm": 5.0, "first command": 90.0}

LOAD = """
import sys, time
from pathlib import Path
from agentcli.providers.local.engine import Engine, default_threads
from agentcli.providers.local.models import resolve_model_file
path, _ = resolve_model_file("smollm2")
started = time.monotonic()
Engine(Path(path), n_ctx=4096, n_threads=default_threads())
print(time.monotonic() - started)
"""

TURNS = """
import asyncio, sys, time
from pathlib import Path
from agentcli.conversation.messages import Message
from agentcli.providers.base import ModelRequest
from agentcli.providers.local import LocalProvider
from agentcli.assembly import builtin_tools
tools = [t.spec() for t in builtin_tools()]
provider = LocalProvider(progress=lambda text: None, workspace=Path.cwd())
async def turn(text):
    request = ModelRequest(system="", messages=[Message.user(text)], tools=tools)
    started = time.monotonic()
    async for _ in provider.stream(request):
        pass
    return time.monotonic() - started
first = asyncio.run(turn("show me README.md"))
second = asyncio.run(turn("what is 17*23?"))
print(first, second)
"""


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall-clock and CPU seconds of a command (and its children)."""
    cpu, started = children_cpu(), time.monotonic()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.monotonic() - started
    if done.returncode != 0:
        print(f"  ({' '.join(command[:3])}... exited {done.returncode}: {done.stderr[-300:]})")
    return wall, children_cpu() - cpu


def workspace() -> Path:
    root = Path(tempfile.mkdtemp(prefix="agentcli-speed-"))
    (root / "README.md").write_text("# Demo\nThis project greets people.\n", encoding="utf-8")
    return root


def report(name: str, seconds: float, cpu: float | None = None) -> None:
    target = TARGETS.get(name)
    line = f"{name:<16} {seconds:7.2f} s"
    if cpu is not None:
        line += f"  (CPU {cpu:.2f} s)"
    if target is not None:
        verdict = "ok" if seconds <= target else "over"
        line += f"  target {target:.0f} s, ratio {seconds / target:.2f} ({verdict})"
    print(line, flush=True)


def first_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = re.findall(r"```sh\n(.*?)\n```", readme, re.DOTALL)[0].strip()
    scratch = Path(tempfile.mkdtemp(prefix="agentcli-first-"))
    checkout = scratch / "agentcli"
    shutil.copytree(ROOT, checkout, ignore=shutil.ignore_patterns(".git", ".venv", "*.egg-info"))
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if "venv" not in p
    )
    env["PIP_NO_CACHE_DIR"] = "1"
    env["AGENTCLI_HOME"] = str(scratch / "home")
    wall, cpu = timed(["bash", "-c", command], checkout, env)
    report("first command", wall, cpu)
    shutil.rmtree(scratch, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--first-command", action="store_true")
    args = parser.parse_args()

    from agentcli.providers.local import install_hint, local_available

    if not local_available():
        print(f"not installed: {install_hint()}")
        return 0
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start")
    loads = []
    for _ in range(args.runs):
        done = subprocess.run([sys.executable, "-c", LOAD], capture_output=True, text=True)
        loads.append(float(done.stdout.strip().splitlines()[-1]))
    report("load", statistics.median(loads))

    home = Path(tempfile.mkdtemp(prefix="agentcli-speed-home-"))
    env = {**os.environ, "AGENTCLI_HOME": str(home)}
    run = [str(AGENTCLI), "run", "--model", "local", "--yes", "show me README.md"]
    space = workspace()
    report("run, cold", *timed(run, space, env))  # no saved prompt in this new home
    warm = [timed(run, space, env) for _ in range(args.runs)]
    walls = [w for w, _ in warm]
    median = walls.index(statistics.median_low(walls))
    report("run, warm", *warm[median])

    done = subprocess.run(
        [sys.executable, "-c", TURNS], cwd=space, env=env, capture_output=True, text=True
    )
    first, second = (float(x) for x in done.stdout.split())
    report("REPL turn 1", first)
    report("REPL turn 2", second)
    if args.first_command:
        first_command()
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(space, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
