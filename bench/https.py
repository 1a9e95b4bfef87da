"""What a streamed piece costs over https:// against plain http://, whole process measured.

    python bench/https.py [--pieces N] [--rounds N] [--program AGENTCLI]

Two scripted servers, each in its own process (bench/serving.py), one over http:// and one
over https:// with a loopback certificate from a test CA that the client trusts through
SSL_CERT_FILE, each answering the N-piece answer (default 20,000) or the same answer in one
piece. In each round, interleaved, `agentcli run -o text` asks each server for each (stdout
a pipe), and the CPU of its whole process tree (user + system, every process it waited
for) is read from the kernel. CPU per piece = (N-piece run - one-piece run) / N, from the medians.

Targets: https per piece <= 1.2x http per piece; each <= 15 us.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.serving import load_average, served, timed_run, tls_files  # noqa: E402

RATIO_TARGET = 1.2
PIECE_TARGET_US = 15
AGENTCLI = str(Path(sys.executable).with_name("agentcli"))


def environment(base_url: str, home: str, ca_file: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "PYTHONDONTWRITEBYTECODE": "",  # run from .pyc files, as an installed program does
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": "bench",
        "AGENTCLI_MODEL": "openai:scripted-model",
        "AGENTCLI_HOME": home,
        "SSL_CERT_FILE": str(ca_file),  # as a user trusts a private CA
        "NO_COLOR": "1",
    }
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY"):
        env.pop(name, None)
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pieces", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--program", default=AGENTCLI, help="the agentcli executable")
    args = parser.parse_args()
    n = args.pieces
    print(f"load average at the start: {load_average()}")
    with tempfile.TemporaryDirectory() as home, ExitStack() as stack:
        certificates = Path(home) / "tls"
        certificates.mkdir()
        ca_file = tls_files(certificates)
        urls = {
            scheme: stack.enter_context(
                served("chat", pieces=n, tls=certificates if scheme == "https" else None)
            )
            for scheme in ("http", "https")
        }
        keys = [(scheme, reply) for scheme in urls for reply in ("whole", "pieces")]
        cpu: dict[tuple[str, str], list[float]] = {key: [] for key in keys}
        wall: dict[tuple[str, str], list[float]] = {key: [] for key in keys}
        prompts = {"whole": "bench-whole", "pieces": "bench-stream"}
        for round_ in range(args.warmup + args.rounds):
            for key in keys:  # interleaved: the load of the moment falls on all
                scheme, reply = key
                argv = [args.program, "run", "-o", "text", prompts[reply]]
                run = timed_run(argv, environment(urls[scheme], home, ca_file), home)
                if round_ >= args.warmup:
                    cpu[key].append(run.cpu)
                    wall[key].append(run.wall)
        print(f"load average at the end: {load_average()}")
    print(
        f"\n`agentcli run -o text` (stdout a pipe), {n:,} pieces against the same answer in "
        f"one piece, {args.rounds} interleaved rounds; CPU of the whole process tree, medians"
    )
    print(f"{'scheme':<8}{'one piece':>11}{'all pieces':>12}{'wall':>9}{'per piece':>11}")
    per_piece = {}
    for scheme in ("http", "https"):
        one = statistics.median(cpu[scheme, "whole"])
        every = statistics.median(cpu[scheme, "pieces"])
        per_piece[scheme] = (every - one) / n * 1e6
        took = statistics.median(wall[scheme, "pieces"])
        print(f"{scheme:<8}{one:>10.3f}s{every:>11.3f}s{took:>8.3f}s{per_piece[scheme]:>9.1f}us")
    pairs = [
        (hp - hw) / (p - w)
        for hp, hw, p, w in zip(
            cpu["https", "pieces"],
            cpu["https", "whole"],
            cpu["http", "pieces"],
            cpu["http", "whole"],
            strict=True,
        )
        if p > w
    ]
    ratio = per_piece["https"] / per_piece["http"]
    print(
        f"\nhttps / http per piece: {ratio:.2f}x (round by round: "
        + ", ".join(f"{r:.2f}" for r in pairs)
        + f"); target <= {RATIO_TARGET}x: {'PASS' if ratio <= RATIO_TARGET else 'FAIL'}"
    )
    for scheme in ("http", "https"):
        verdict = "PASS" if per_piece[scheme] <= PIECE_TARGET_US else "FAIL"
        print(f"{scheme} per piece {per_piece[scheme]:.1f} us; target <= 15 us: {verdict}")
    return 0  # a benchmark reports; it does not gate


if __name__ == "__main__":
    sys.exit(main())
