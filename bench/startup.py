"""Startup cost of agentcli against a bare interpreter, and what `--help`/`--version` import.

    python bench/startup.py [--runs N]

Target: each command's median wall time <= 3x that of `python -c pass` (same interpreter).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_RATIO = 3.0
WARMUP_RUNS = 3
# Never needed to print help or the version; each costs tens of milliseconds to import.
FORBIDDEN = ("httpx", "jsonschema", "prompt_toolkit", "rich", "rich.markdown")
AGENTCLI = str(Path(sys.executable).with_name("agentcli"))  # the venv's console script
# Installed programs run from .pyc files; let the warm-up write them even where the
# environment forbids it, or each run would compile every changed module again.
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}

COMMANDS: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "agentcli --version": [AGENTCLI, "--version"],
    "agentcli --help": [AGENTCLI, "--help"],
    "python -m agentcli --help": [sys.executable, "-m", "agentcli", "--help"],
}
IMPORT_CHECKS: dict[str, list[str]] = {
    "agentcli --help": [AGENTCLI, "--help"],
    "agentcli --version": [AGENTCLI, "--version"],
    "agentcli run --help": [AGENTCLI, "run", "--help"],
    "python -m agentcli --help": [sys.executable, "-m", "agentcli", "--help"],
}


def wall_time(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV, check=True)
    return time.perf_counter() - start


def import_profile(argv: list[str]) -> list[tuple[str, int, int]]:
    """(module with its nesting indent, self us, cumulative us) for every import of argv."""
    env = {**ENV, "PYTHONPROFILEIMPORTTIME": "1"}  # -X importtime, for any launcher
    result = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    rows = []
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative_us, name = line.removeprefix("import time:").split("|")
        # One space after the "|", then two more per level of nesting.
        rows.append((name.rstrip()[1:], int(self_us), int(cumulative_us)))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="timed runs per command")
    args = parser.parse_args()

    # The console script must run this very interpreter, or the ratios compare two pythons.
    shebang = Path(AGENTCLI).read_text().splitlines()[0].removeprefix("#!")
    if Path(shebang).resolve() != Path(sys.executable).resolve():
        print(f"warning: {AGENTCLI} runs {shebang}, not {sys.executable}")

    for argv in COMMANDS.values():
        for _ in range(WARMUP_RUNS):  # fill the page cache and write the .pyc files
            wall_time(argv)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.runs):  # interleaved, so drift in machine load hits every command
        for name, argv in COMMANDS.items():
            times[name].append(wall_time(argv))

    medians = {name: statistics.median(samples) for name, samples in times.items()}
    base = medians["python -c pass"]
    print(f"startup: median of {args.runs} interleaved runs, target <= {TARGET_RATIO:g}x")
    print(f"{'command':<28}{'median ms':>10}{'min ms':>9}{'ratio':>8}  verdict")
    failed = False
    for name, median in medians.items():
        ratio = median / base
        verdict = "" if name == "python -c pass" else "PASS"
        if ratio > TARGET_RATIO:
            verdict, failed = f"FAIL (+{ratio / TARGET_RATIO - 1:.0%} over target)", True
        low = min(times[name]) * 1000
        print(f"{name:<28}{median * 1000:>10.1f}{low:>9.1f}{ratio:>7.2f}x  {verdict}")

    print("\nheavy imports (must be none):")
    for name, argv in IMPORT_CHECKS.items():
        imported = {row[0].strip() for row in import_profile(argv)}
        heavy = sorted(m for m in imported if m in FORBIDDEN or m.startswith("rich."))
        failed |= bool(heavy)
        print(f"  {name:<28}{'FAIL: ' + ', '.join(heavy) if heavy else 'PASS: none'}")

    rows = import_profile(COMMANDS["agentcli --help"])
    bare = {row[0].strip() for row in import_profile(COMMANDS["python -c pass"])}
    extra = [row for row in rows if row[0].strip() not in bare]  # what agentcli adds
    print("\nslowest imports `agentcli --help` adds to a bare python (cumulative, nested):")
    for name, _self_us, cumulative_us in sorted(extra, key=lambda r: -r[2])[:10]:
        print(f"  {cumulative_us / 1000:7.1f} ms  {name}")
    print("slowest single modules (self time):")
    for name, self_us, _cumulative_us in sorted(extra, key=lambda r: -r[1])[:8]:
        print(f"  {self_us / 1000:7.1f} ms  {name.strip()}")
    total = sum(row[1] for row in extra) / 1000
    print(f"  {len(extra)} modules, {total:.1f} ms in all (self times summed, under importtime)")
    print(f"\nresult: {'FAIL' if failed else 'PASS'}")
    return 0  # a benchmark reports; it does not gate


if __name__ == "__main__":
    sys.exit(main())
