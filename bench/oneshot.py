"""One-shot end to end: `agentcli run hi` against `llm -m ... hi`, the same request to the same
local server (which answers at once), in the same run.

    python bench/oneshot.py [--runs N] [--baseline AGENTCLI] [--llm LLM]

Target: agentcli's median <= 0.25x llm's. `llm` (PyPI) is installed on first use into its own
virtualenv under the cache directory ($XDG_CACHE_HOME or ~/.cache, agentcli-bench/llm-venv),
never into agentcli's; `--llm PATH` uses one you have. `--baseline PATH` times a second
agentcli executable (an older build) in the same rounds, for before/after figures.
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

from tests.scripted_server import DEFAULT_MODEL, Reply, ScriptedServer  # noqa: E402

TARGET_RATIO = 0.25
WARMUP_RUNS = 2
AGENTCLI = str(Path(sys.executable).with_name("agentcli"))


def llm_executable(given: str | None) -> str:
    """`llm` from its own virtualenv in the cache, created (pip install llm) on first use."""
    if given:
        return given
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    venv = cache / "agentcli-bench" / "llm-venv"
    llm = venv / "bin" / "llm"
    if not llm.exists():
        print(f"installing llm into {venv} (once) ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "llm"]
        subprocess.run(pip, check=True)
    return str(llm)


def timed(argv: list[str], env: dict[str, str], cwd: str, answer: bytes = b"Hello") -> float:
    start = time.perf_counter()
    done = subprocess.run(
        argv, stdin=subprocess.DEVNULL, capture_output=True, env=env, cwd=cwd, timeout=60
    )
    took = time.perf_counter() - start
    if done.returncode != 0 or answer not in done.stdout:
        tail = "\n".join(done.stderr.decode(errors="replace").splitlines()[-6:])
        raise SystemExit(f"{argv[0]} failed (exit {done.returncode}):\n{tail}")
    return took


def imports_of(argv: list[str], env: dict[str, str], cwd: str) -> list[str]:
    """Every top-level import of one run, largest first (-X importtime, cumulative; a
    module imported again later, inside a function, is counted once with its repeats)."""
    done = subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**env, "PYTHONPROFILEIMPORTTIME": "1"},
        check=True,
    )
    totals: dict[str, int] = {}
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            _, cumulative, name = line.removeprefix("import time:").split("|")
            if not name[1:].startswith(" "):  # top level only: nested names are indented
                totals[name.strip()] = totals.get(name.strip(), 0) + int(cumulative)
    rows = sorted(((us, name) for name, us in totals.items()), reverse=True)
    return [f"{us / 1000:6.1f} ms  {name}" for us, name in rows]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="timed rounds")
    parser.add_argument("--baseline", help="another agentcli executable to time alongside")
    parser.add_argument("--llm", help="the llm executable (default: its own cached venv)")
    parser.add_argument("--imports", action="store_true", help="print every top-level import")
    args = parser.parse_args()
    llm = llm_executable(args.llm)

    with tempfile.TemporaryDirectory() as home, ScriptedServer() as server:
        llm_home = Path(home) / "llm"
        llm_home.mkdir()
        model = f"- model_id: scripted\n  model_name: {DEFAULT_MODEL}\n"
        model += f'  api_base: "{server.base_url}"\n'
        (llm_home / "extra-openai-models.yaml").write_text(model)
        env = {
            **os.environ,
            "PYTHONDONTWRITEBYTECODE": "",  # run from .pyc files, as an installed program does
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "bench",
            "AGENTCLI_MODEL": f"openai:{DEFAULT_MODEL}",
            "AGENTCLI_HOME": str(Path(home) / "agentcli"),  # the bench's data stays here
            "LLM_USER_PATH": str(llm_home),
            "NO_COLOR": "1",
        }
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "llm -m scripted hi": [llm, "-m", "scripted", "hi"],
            "agentcli run hi": [AGENTCLI, "run", "hi"],
        }
        if args.baseline:
            commands["agentcli run hi (baseline)"] = [args.baseline, "run", "hi"]
        times: dict[str, list[float]] = {name: [] for name in commands}
        for round_ in range(WARMUP_RUNS + args.runs):
            for name, argv in commands.items():  # interleaved: load drift hits all alike
                bare = argv[0] == sys.executable
                if not bare:
                    server.enqueue(Reply.text(["Hello", "!"]))
                took = timed(argv, env, home, b"" if bare else b"Hello")
                if round_ >= WARMUP_RUNS:
                    times[name].append(took)
        server.enqueue(Reply.text(["Hello"]))
        imports = imports_of(commands["agentcli run hi"], env, home)

    medians = {name: statistics.median(values) for name, values in times.items()}
    llm_median = medians["llm -m scripted hi"]
    print(f"one-shot end to end, median of {args.runs} interleaved rounds ({WARMUP_RUNS} warm-up)")
    print(f"{'':<30}{'median ms':>10}{'min':>7}{'max':>7}{'vs llm':>8}")
    for name, values in times.items():
        print(
            f"{name:<30}{medians[name] * 1000:>10.0f}{min(values) * 1000:>7.0f}"
            f"{max(values) * 1000:>7.0f}{medians[name] / llm_median:>7.2f}x"
        )
    ratio = medians["agentcli run hi"] / llm_median
    verdict = "PASS" if ratio <= TARGET_RATIO else "FAIL"
    print(f"\nagentcli / llm: {ratio:.2f}x (target <= {TARGET_RATIO}x) -> {verdict}")
    shown = imports if args.imports else imports[:12]
    print(f"top-level imports of `agentcli run hi` ({len(imports)}; cumulative, one run):")
    for line in shown:
        print(f"  {line}")
    return 0  # a benchmark reports; it does not gate


if __name__ == "__main__":
    sys.exit(main())
