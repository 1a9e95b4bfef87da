"""Benchmark of search_content and search_files against ripgrep run directly.

Builds a tree of about 25,000 files in a temporary directory (a git-like layout: packages
of .py modules, docs, data, a .gitignore, ignored node_modules/build/log files), then
prints medians over several runs:

- search_content (ripgrep backend) vs `rg PATTERN`               target <= 1.5x
- the same in the subdirectory src/ (ripgrep runs there too)     informational
- the same in src/pkg07/, below the root's rule `src/**/generated/` informational
- a look-around pattern (ripgrep lists the files, Python's `re`
  reads them) vs `rg` with the nearest pattern it accepts         informational
- search_content (pure-Python fallback) vs `rg PATTERN`          informational
- search_files (ripgrep backend) vs `rg --files -g PATTERN`      target <= 2x
- search_files (pure-Python fallback) vs `rg --files -g PATTERN` informational

The tools are called in-process through `execute` (asyncio.run), as the agent calls them.
Usage: python bench/search.py [--runs N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentcli.tools.base import ToolContext
from agentcli.tools.search import SearchContent, SearchFiles
from agentcli.tools.search_rg import find_ripgrep
from agentcli.workspace.root import Workspace

CONTENT_PATTERN = r"def process_\w+"
LOOK_AROUND = (r"def process_\w+(?=\(items)", r"def process_\w+\(items")  # and rg's nearest
RARE_PATTERN = r"class Rare\w+Error"
FILES_GLOB = "**/*.py"
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "value",
    "result",
    "item",
    "record",
    "config",
    "state",
    "cache",
    "index",
]


def _python_module(rng: random.Random, n: int) -> str:
    lines = [f'"""Module {n}: {rng.choice(WORDS)} helpers."""', "", "import os", "", ""]
    for f in range(rng.randint(4, 9)):
        word = rng.choice(WORDS)
        name = f"process_{word}" if rng.random() < 0.05 else f"compute_{word}_{f}"
        lines += [
            f"def {name}(items, limit={rng.randint(1, 99)}):",
            f'    """Return the {word} of each item, up to limit."""',
            "    out = []",
            "    for item in items[:limit]:",
            f"        out.append(item.{word} * {rng.randint(2, 9)})",
            "    return out",
            "",
            "",
        ]
    if rng.random() < 0.01:
        lines += ["class RareStateError(Exception):", "    pass", ""]
    return "\n".join(lines) + "\n"


def _prose(rng: random.Random, lines: int) -> str:
    return (
        "\n".join(" ".join(rng.choices(WORDS, k=rng.randint(5, 14))) for _ in range(lines)) + "\n"
    )


def build_tree(root: Path) -> int:
    """Writes the benchmark tree; returns the number of files."""
    rng = random.Random(42)
    count = 0

    def write(rel: str, text: str) -> None:
        nonlocal count
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        count += 1

    (root / ".git" / "refs" / "heads").mkdir(parents=True)  # `rg` alone honours
    write(".git/HEAD", "ref: refs/heads/main\n")  # .gitignore only in a repository
    write(".gitignore", "node_modules/\nbuild/\n*.log\n__pycache__/\n.venv/\nsrc/**/generated/\n")
    n = 0
    for pkg in range(40):
        for mod in range(10):
            for _ in range(30):
                n += 1
                write(f"src/pkg{pkg:02}/mod{mod}/m{n}.py", _python_module(rng, n))
            if rng.random() < 0.3:
                write(f"src/pkg{pkg:02}/mod{mod}/__pycache__/m.cpython-311.pyc", "x" * 200)
        write(f"src/pkg{pkg:02}/run.log", _prose(rng, 50))
    for t in range(2000):
        write(f"tests/unit{t % 20:02}/test_{t}.py", _python_module(rng, t))
    for d in range(3000):
        write(f"docs/section{d % 30:02}/page{d}.md", "# Page\n\n" + _prose(rng, 20))
    for d in range(3000):
        write(f"data/set{d % 50:02}/rows{d}.txt", _prose(rng, 30))
    for j in range(3000):  # ignored
        write(f"node_modules/lib{j % 100:03}/index{j}.js", "function processItem() {}\n" * 20)
    for b in range(1000):
        write(f"build/out{b % 10}/m{b}.py", _python_module(rng, b))
    for h in range(200):
        write(f".config/tool{h % 5}/settings{h}.txt", _prose(rng, 5))
    return count


def median_time(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    fn()  # warm the page cache and the interpreter
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def tool_call(
    tool: type, args: dict[str, Any], ctx: ToolContext, backend: str
) -> Callable[[], Any]:
    def run() -> Any:
        return asyncio.run(tool(backend).execute(args, ctx))

    return run


def rg_call(rg: str, args: list[str], cwd: Path) -> Callable[[], Any]:
    def run() -> Any:
        return subprocess.run([rg, *args], cwd=cwd, capture_output=True, check=False)

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="build the tree here and keep it")
    opts = parser.parse_args()
    rg = find_ripgrep()
    if rg is None:
        print("ripgrep (`rg`) not found; install the `ripgrep` wheel", file=sys.stderr)
        return 2
    tmp = None
    if opts.keep:
        root = opts.keep
        root.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.mkdtemp(prefix="agentcli-bench-")
        root = Path(tmp)
    try:
        started = time.perf_counter()
        files = build_tree(root)
        print(f"tree: {files} files in {root} ({time.perf_counter() - started:.1f}s to build)")
        ctx = ToolContext(workspace=Workspace(root))
        rows: list[tuple[str, float, float, float | None]] = []

        for label, pattern in (("content", CONTENT_PATTERN), ("content, rare", RARE_PATTERN)):
            args = {"pattern": pattern}
            base_t, base = median_time(rg_call(rg, ["-e", pattern], root), opts.runs)
            rg_t, out = median_time(tool_call(SearchContent, args, ctx, "ripgrep"), opts.runs)
            py_t, py_out = median_time(
                tool_call(SearchContent, args, ctx, "python"), max(2, opts.runs // 3)
            )
            assert out.content == py_out.content, "backends disagree"
            direct = len(base.stdout.splitlines())
            print(f"\n{label}: {pattern!r} -> {out.summary}; `rg` alone prints {direct} lines")
            rows.append(
                (f"search_content {label} [ripgrep]", rg_t, base_t, 1.5 if not rows else None)
            )
            rows.append((f"search_content {label} [python]", py_t, base_t, None))

        for sub in ("src", "src/pkg07"):
            args = {"pattern": CONTENT_PATTERN, "path": sub}
            base_t, base = median_time(rg_call(rg, ["-e", CONTENT_PATTERN], root / sub), opts.runs)
            rg_t, out = median_time(tool_call(SearchContent, args, ctx, "ripgrep"), opts.runs)
            py_t, py_out = median_time(tool_call(SearchContent, args, ctx, "python"), 2)
            assert out.content == py_out.content, "backends disagree"
            print(f"\ncontent in {sub}/: {CONTENT_PATTERN!r} -> {out.summary}")
            rows.append((f"search_content in {sub}/ [ripgrep]", rg_t, base_t, None))
            rows.append((f"search_content in {sub}/ [python]", py_t, base_t, None))

        pattern, nearest = LOOK_AROUND
        args = {"pattern": pattern}
        base_t, base = median_time(rg_call(rg, ["-e", nearest], root), opts.runs)
        rg_t, out = median_time(tool_call(SearchContent, args, ctx, "ripgrep"), opts.runs)
        py_t, py_out = median_time(tool_call(SearchContent, args, ctx, "python"), 2)
        assert out.content == py_out.content, "backends disagree"
        print(f"\nlook-around: {pattern!r} -> {out.summary}; `rg` is given {nearest!r}")
        rows.append(("search_content look-around [ripgrep]", rg_t, base_t, None))
        rows.append(("search_content look-around [python]", py_t, base_t, None))

        args = {"pattern": FILES_GLOB}
        base_t, base = median_time(rg_call(rg, ["--files", "-g", FILES_GLOB], root), opts.runs)
        rg_t, out = median_time(tool_call(SearchFiles, args, ctx, "ripgrep"), opts.runs)
        py_t, py_out = median_time(tool_call(SearchFiles, args, ctx, "python"), opts.runs)
        assert out.content == py_out.content, "backends disagree"
        print(f"\nfiles: {FILES_GLOB!r} -> {out.summary}; `rg --files -g` lists", end=" ")
        print(f"{len(base.stdout.splitlines())}")
        rows.append(("search_files [ripgrep]", rg_t, base_t, 2.0))
        rows.append(("search_files [python]", py_t, base_t, None))

        print(f"\n{'measurement (median of runs)':<42}{'tool':>10}{'rg alone':>10}{'ratio':>8}")
        failed = 0
        for name, tool_t, base_t, target in rows:
            ratio = tool_t / base_t
            verdict = ""
            if target is not None:
                ok = ratio <= target
                failed += not ok
                verdict = f"  {'PASS' if ok else 'FAIL'} (target <= {target}x)"
            print(
                f"{name:<42}{tool_t * 1000:>8.1f}ms{base_t * 1000:>8.1f}ms{ratio:>7.2f}x{verdict}"
            )
        return 1 if failed else 0
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
