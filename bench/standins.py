"""What each hand-written stand-in for a library saves, measured by swapping it back.

    python bench/standins.py [--runs N]

agentcli keeps a few replacements of library code on its start-up path (frozen: no new
ones): the option fast path (`agentcli/cli/options.py`: a plain `run`/`chat` line parsed
without Typer), `quick_schema` (tool arguments checked without jsonschema), `records`
(data classes without `dataclasses`' exec), `light_http` (the light transport for
http:// and https:// servers instead of httpcore) and the plug-ins' entry-point cache
(instead of reading every installed distribution's metadata). Each variant runs the
installed agentcli in-process through a wrapper that puts the library's way back before
anything else is imported; the CPU (user + system) of the child is what is compared, over
interleaved rounds (medians), for `run hi` and for a run with one tool call (the only path
where arguments are checked).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.scripted_server

from tests.scripted_server import DEFAULT_MODEL, Reply, ScriptedServer  # noqa: E402

SWAPS = {
    "all stand-ins (as shipped)": "",
    "option parsing by Typer": (
        "import agentcli.cli.options as o\no.parse = lambda command, args: None\n"
    ),
    "jsonschema for every call": (
        "import agentcli.agent.quick_schema as q\nq.conforms = lambda schema, value: None\n"
    ),
    "dataclasses for records": (
        "import dataclasses, agentcli.records as r\n"
        "r.dataclass, r.field, r.fields = dataclasses.dataclass, dataclasses.field, "
        "dataclasses.fields\n"
        "r.replace, r.asdict, r.MISSING = dataclasses.replace, dataclasses.asdict, "
        "dataclasses.MISSING\n"
        "r.is_record = dataclasses.is_dataclass\n"
    ),
    "httpcore for http://": (
        "import agentcli.providers.http as h\nh.light_transport = lambda base_url: None\n"
    ),
    "entry points read each run": (
        "import agentcli.plugins.discovery as d\n"
        "d._read = lambda path, key: None\nd._write = lambda path, data: None\n"
    ),
}
RUN = (
    "import sys\nfrom agentcli.__main__ import main\n"
    "sys.argv = ['agentcli', *sys.argv[1:]]\nmain()\n"
)
WARMUP = 2


def cpu_of(argv: list[str], env: dict[str, str], cwd: str, answer: bytes) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        argv, stdin=subprocess.DEVNULL, capture_output=True, env=env, cwd=cwd, timeout=60
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or answer not in done.stdout:
        tail = "\n".join(done.stderr.decode(errors="replace").splitlines()[-6:])
        raise SystemExit(f"{argv[:4]} failed (exit {done.returncode}):\n{tail}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="timed rounds")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home, ScriptedServer() as server:
        Path(home, "README.md").write_text("# bench\n")
        env = {
            **os.environ,
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "bench",
            "AGENTCLI_MODEL": f"openai:{DEFAULT_MODEL}",
            "AGENTCLI_HOME": str(Path(home) / "agentcli"),
            "NO_COLOR": "1",
        }
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # from .pyc files, as installed
        cpu: dict[tuple[str, str], list[float]] = {}
        for round_ in range(WARMUP + args.runs):
            for name, swap in SWAPS.items():  # interleaved: load drift hits all alike
                argv = [sys.executable, "-c", swap + RUN]
                server.enqueue(Reply.text(["Hello", "!"]))
                hi = cpu_of([*argv, "run", "hi"], env, home, b"Hello")
                call = {"id": "c1", "name": "read_file", "arguments": {"path": "README.md"}}
                server.enqueue(Reply.tool_calls([call]), Reply.text(["Read", " it."]))
                tool = cpu_of([*argv, "run", "--yes", "read it"], env, home, b"Read it")
                if round_ >= WARMUP:
                    cpu.setdefault((name, "hi"), []).append(hi)
                    cpu.setdefault((name, "tool"), []).append(tool)
    load = os.getloadavg()[0]
    base = {kind: statistics.median(cpu[(next(iter(SWAPS)), kind)]) for kind in ("hi", "tool")}
    print(f"CPU of one run, median of {args.runs} interleaved rounds (load average {load:.1f})")
    print(f"{'':<30}{'run hi':>10}{'saves':>8}{'tool call':>11}{'saves':>8}")
    for name in SWAPS:
        hi, tool = (statistics.median(cpu[(name, kind)]) for kind in ("hi", "tool"))
        saves = "" if not SWAPS[name] else f"{(hi - base['hi']) * 1000:>7.0f}"
        saves_tool = "" if not SWAPS[name] else f"{(tool - base['tool']) * 1000:>7.0f}"
        print(f"{name:<30}{hi * 1000:>8.0f}ms{saves:>8}{tool * 1000:>9.0f}ms{saves_tool:>8}")
    return 0  # a benchmark reports; it does not gate


if __name__ == "__main__":
    sys.exit(main())
