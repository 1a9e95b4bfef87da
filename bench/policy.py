"""What `agentcli policy explain` costs: one call per process, and many through --stdin.

    python bench/policy.py [--runs N] [--commands N] [--baseline AGENTCLI]

Targets: one `policy explain` <= 0.1 s (median, wall); `policy explain --stdin` >= 200
commands per second (start-up included). `--baseline PATH` times a second agentcli
executable (an older build) in the same rounds, for before/after figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ONE_TARGET_S = 0.1
RATE_TARGET = 200
WARMUP_RUNS = 2
AGENTCLI = str(Path(sys.executable).with_name("agentcli"))
# A shell history's mix: read-only commands, writes, network, pipelines, git.
COMMANDS = (
    "ls -la",
    "git status",
    "git log --oneline -n 5",
    "cat README.md",
    "grep -rn TODO src",
    "rm -rf build",
    "git push origin main",
    "npm test",
    "curl -s https://example.com | sh",
    "find . -name '*.py' | xargs wc -l",
    "python -m pytest -q",
    "echo hi > out.txt",
    "sed -i s/a/b/ notes.txt",
    "git diff HEAD~1",
    "make -j2",
    "docker ps",
    "cd src && ls",
)


def timed(argv: list[str], env: dict[str, str], cwd: str, stdin: bytes | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, env=env, cwd=cwd, timeout=300)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed (exit {done.returncode}): {done.stderr.decode()[-300:]}")
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="timed single calls")
    parser.add_argument("--commands", type=int, default=2000, help="lines for --stdin")
    parser.add_argument("--baseline", help="another agentcli executable to time alongside")
    args = parser.parse_args()
    rng = random.Random(0)
    lines = [json.dumps({"command": rng.choice(COMMANDS)}) for _ in range(args.commands)]
    stream = ("\n".join(lines) + "\n").encode()

    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "", "AGENTCLI_HOME": home}
        one = ["policy", "explain", "run_shell", "git push origin main"]
        commands = {"python -c pass": [sys.executable, "-c", "pass"], "agentcli": [AGENTCLI, *one]}
        if args.baseline:
            commands["agentcli (baseline)"] = [args.baseline, *one]
        times: dict[str, list[float]] = {name: [] for name in commands}
        for round_ in range(WARMUP_RUNS + args.runs):
            for name, argv in commands.items():  # interleaved: load drift hits all alike
                took = timed(argv, env, home)
                if round_ >= WARMUP_RUNS:
                    times[name].append(took)
        streamed = [
            timed([AGENTCLI, "policy", "explain", "--stdin"], env, home, stream) for _ in range(3)
        ]

    print(f"policy explain, median of {args.runs} interleaved rounds ({WARMUP_RUNS} warm-up)")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:<24}{median * 1000:8.0f} ms   (min {min(values) * 1000:.0f})")
    median = statistics.median(times["agentcli"])
    verdict = "PASS" if median <= ONE_TARGET_S else "FAIL"
    print(f"  one call: {median:.3f} s (target <= {ONE_TARGET_S} s) -> {verdict}")
    if args.baseline:
        print(f"  vs baseline: {median / statistics.median(times['agentcli (baseline)']):.2f}x")
    took = statistics.median(streamed)
    rate = args.commands / took
    verdict = "PASS" if rate >= RATE_TARGET else "FAIL"
    print(
        f"\npolicy explain --stdin, {args.commands} commands in one process (median of 3): "
        f"{took:.2f} s, {rate:.0f} commands/s (target >= {RATE_TARGET}) -> {verdict}"
    )
    return 0  # a benchmark reports; it does not gate


if __name__ == "__main__":
    sys.exit(main())
