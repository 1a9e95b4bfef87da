"""The chat REPL: how soon the prompt is ready, and what rendering costs per chunk.

    python bench/repl.py [--runs N] [--tokens N] [--repeats N] [--baseline AGENTCLI]

1. Startup: `agentcli chat` spawned in a pseudo-terminal until the prompt `›` is on the
   screen, against `python -c pass` spawned the same way until it exits (medians).
   Target: the prompt ready within 0.3 s; the ratio is printed too. `--baseline PATH` times
   another agentcli executable (an older build) in the same rounds.
2. Rendering, in-process: a synthetic Markdown answer of N tokens (one TEXT_MESSAGE_CONTENT
   event each) through ReplRenderer (and so MarkdownStream) on a rich Console writing to a
   StringIO with force_terminal=True; the mean cost per chunk in the first and last tenth.
   Target: last / first <= 1.5.
"""

from __future__ import annotations

import argparse
import io
import itertools
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect

from agentcli.conversation import events as ev
from agentcli.output.base import RunSummary
from agentcli.ui.markdown_stream import MarkdownStream
from agentcli.ui.render import ReplRenderer

STARTUP_TARGET_S = 0.3
RENDER_TARGET_RATIO = 1.5
WARMUP_RUNS = 2
WARMUP_TOKENS = 2_000
PROMPT = "›"
AGENTCLI = str(Path(sys.executable).with_name("agentcli"))  # the venv's console script
WORDS = (
    "the",
    "prompt",
    "comes",
    "back",
    "at",
    "once",
    "while",
    "completed",
    "blocks",
    "are",
    "printed",
    "a",
    "single",
    "time",
    "and",
    "only",
    "the",
    "open",
    "block",
    "is",
    "drawn",
    "again",
    "by",
    "a",
    "throttled",
    "live",
    "region",
)
CODE = ("async", "def", "turn(self):", "await", "return", "x", "=", "1", "+", "for", "in", "if")

# --- 1. startup in a pseudo-terminal ---


def pty_env(home: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        TERM="xterm",
        PROMPT_TOOLKIT_NO_CPR="1",  # nobody answers cursor-position requests here
        AGENTCLI_HOME=home,
        HOME=home,
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",  # never contacted: no message is sent
        OPENAI_API_KEY="bench",
        AGENTCLI_MODEL="openai:bench-model",
    )
    env.pop("NO_COLOR", None)
    return env


def time_to_prompt(env: dict[str, str], cwd: str, agentcli: str = AGENTCLI) -> float:
    start = time.perf_counter()
    child = pexpect.spawn(
        agentcli, ["chat"], env=env, cwd=cwd, dimensions=(40, 120), encoding="utf-8", timeout=30
    )
    try:
        child.expect_exact(PROMPT)
        took = time.perf_counter() - start
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    if child.exitstatus not in (0, None):
        raise SystemExit(f"agentcli chat exited with {child.exitstatus}")
    return took


def time_to_exit(env: dict[str, str], cwd: str) -> float:
    start = time.perf_counter()
    child = pexpect.spawn(
        sys.executable, ["-c", "pass"], env=env, cwd=cwd, dimensions=(40, 120), timeout=30
    )
    child.expect(pexpect.EOF)
    took = time.perf_counter() - start
    child.close()
    return took


def largest_imports(env: dict[str, str], cwd: str, count: int = 8) -> list[tuple[str, int]]:
    """The top-level imports of `agentcli chat` until its prompt, largest first (-X importtime,
    its stderr sent to a file so that the pseudo-terminal shows only the program)."""
    log = Path(cwd) / "importtime.log"
    child = pexpect.spawn(
        "/bin/sh",
        ["-c", f'exec "{AGENTCLI}" chat 2>"{log}"'],
        env={**env, "PYTHONPROFILEIMPORTTIME": "1"},
        cwd=cwd,
        dimensions=(40, 120),
        encoding="utf-8",
        timeout=30,
    )
    try:
        child.expect_exact(PROMPT)
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    rows = []
    for line in log.read_text().splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _, cumulative, name = line.removeprefix("import time:").split("|")
        if not name[1:].startswith(" "):  # top level only: nested names are indented
            rows.append((name.strip(), int(cumulative)))
    log.unlink()
    return sorted(rows, key=lambda row: -row[1])[:count]


def startup(runs: int, baseline: str | None = None) -> bool:
    with tempfile.TemporaryDirectory() as home:
        workspace = Path(home) / "ws"
        workspace.mkdir()
        env, cwd = pty_env(home), str(workspace)
        for _ in range(WARMUP_RUNS):  # page cache, .pyc files
            time_to_prompt(env, cwd)
            time_to_exit(env, cwd)
        chat, bare, before = [], [], []
        for _ in range(runs):  # interleaved, so drift in load hits both
            chat.append(time_to_prompt(env, cwd))
            bare.append(time_to_exit(env, cwd))
            if baseline:
                before.append(time_to_prompt(env, cwd, baseline))
        imports = largest_imports(env, cwd)
    chat_median, bare_median = statistics.median(chat), statistics.median(bare)
    verdict = "PASS" if chat_median <= STARTUP_TARGET_S else "FAIL"
    print(f"1. startup in a pseudo-terminal, median of {runs} runs (after {WARMUP_RUNS} warm-up)")
    print(f"   {'python -c pass, until it exits':<38}{bare_median * 1000:8.0f} ms")
    print(
        f"   {'agentcli chat, until the prompt':<38}{chat_median * 1000:8.0f} ms"
        f"   (min {min(chat) * 1000:.0f}, max {max(chat) * 1000:.0f})"
    )
    if before:
        print(
            f"   {'baseline agentcli, until the prompt':<38}"
            f"{statistics.median(before) * 1000:8.0f} ms   (min {min(before) * 1000:.0f})"
        )
    print(f"   ratio to python -c pass: {chat_median / bare_median:.1f}x")
    print(f"   target: prompt within {STARTUP_TARGET_S:g} s: {verdict}")
    print("   largest top-level imports until the prompt (cumulative, one run):")
    for name, microseconds in imports:
        print(f"     {microseconds / 1000:7.1f} ms  {name}")
    return verdict == "PASS"


# --- 2. rendering cost per chunk ---


def synthetic_tokens(count: int, seed: int = 0) -> list[str]:
    """Markdown in token-sized pieces, block kinds in a fixed cycle (every tenth has the
    same mix, so the first and last tenths compare like with like)."""
    rng = random.Random(seed)
    kinds = itertools.cycle(("heading", "paragraph", "list", "paragraph", "code", "quote"))

    def words(n: int) -> list[str]:
        return [(" " if i else "") + rng.choice(WORDS) for i in range(n)]

    tokens: list[str] = []
    while len(tokens) < count:
        kind = next(kinds)
        if kind == "paragraph":
            tokens += [*words(rng.randint(30, 120)), " **", "bold", "** and `", "code", "`.\n\n"]
        elif kind == "list":
            for _ in range(rng.randint(3, 6)):
                tokens += ["- ", *words(rng.randint(4, 14)), "\n"]
            tokens.append("\n")
        elif kind == "code":
            tokens += ["```", "python", "\n"]
            for _ in range(rng.randint(4, 16)):
                tokens.append("    " * rng.randint(0, 2))
                tokens += [rng.choice(CODE) + " " for _ in range(rng.randint(3, 9))]
                tokens.append("\n")
            tokens += ["```", "\n\n"]
        elif kind == "quote":
            tokens += ["> ", *words(rng.randint(8, 30)), "\n\n"]
        else:
            tokens += ["## ", *words(rng.randint(2, 6)), "\n\n"]
    return tokens[:count]


class TerminalBuffer(io.StringIO):
    """A StringIO that says it is a terminal, as the REPL's stdout is."""

    def isatty(self) -> bool:
        return True


def terminal_console(stream: io.StringIO) -> Any:
    from rich.console import Console

    return Console(file=stream, force_terminal=True, width=100, color_system="256")


def summary() -> RunSummary:
    return RunSummary("thread", "run", "openai:bench", "finished", 0, 1, ev.Usage(), "")


def renderer_path(tokens: list[str]) -> list[int]:
    """ReplRenderer.handle per TEXT_MESSAGE_CONTENT event, as the REPL calls it."""
    stream = TerminalBuffer()
    renderer = ReplRenderer(stream)
    renderer.console = terminal_console(stream)  # force_terminal, a fixed width
    renderer.handle(ev.RunStarted(thread_id="thread", run_id="run"))  # the spinner starts
    renderer.handle(ev.TextMessageStart(message_id="m"))
    events = [ev.TextMessageContent(message_id="m", delta=token) for token in tokens]

    def close() -> None:
        renderer.handle(ev.TextMessageEnd(message_id="m"))
        renderer.finish(summary())

    return timed(events, renderer.handle, close)


def markdown_path(tokens: list[str]) -> list[int]:
    """MarkdownStream.feed alone, on the same kind of console."""
    stream = MarkdownStream(terminal_console(TerminalBuffer()))
    return timed(tokens, stream.feed, stream.close)


def timed(
    items: list[Any], feed: Callable[[Any], object], close: Callable[[], object]
) -> list[int]:
    """Nanoseconds for each `feed(item)`; then `close()`, untimed."""
    costs = []
    clock = time.perf_counter_ns
    for item in items:
        start = clock()
        feed(item)
        costs.append(clock() - start)
    close()
    return costs


PATHS: dict[str, Callable[[list[str]], list[int]]] = {
    "ReplRenderer.handle": renderer_path,
    "MarkdownStream.feed": markdown_path,
}


def rendering(count: int, repeats: int) -> bool:
    tokens = synthetic_tokens(count)
    tenth = len(tokens) // 10
    print(
        f"\n2. rendering a {count:,}-token Markdown answer in-process (rich Console on a "
        f"StringIO, force_terminal), median of {repeats} runs"
    )
    print(f"   {'path':<22}{'first us':>9}{'last us':>9}{'ratio':>8}{'total s':>9}  verdict")
    ok, profiles = True, {}
    for name, path in PATHS.items():
        path(synthetic_tokens(WARMUP_TOKENS, seed=1))  # imports, lexers, caches
        runs = []
        for _ in range(repeats):
            costs = path(tokens)
            runs.append([sum(costs[i * tenth : (i + 1) * tenth]) / tenth / 1000 for i in range(10)])
        means = [statistics.median(run[i] for run in runs) for i in range(10)]
        first, last = means[0], means[-1]
        verdict = "PASS" if last / first <= RENDER_TARGET_RATIO else "FAIL"
        ok &= verdict == "PASS"
        total = statistics.median(sum(run) * tenth / 1e6 for run in runs)
        print(
            f"   {name:<22}{first:>9.1f}{last:>9.1f}{last / first:>7.2f}x{total:>9.2f}  {verdict}"
        )
        profiles[name] = means
    print("   mean us per chunk, by tenth of the answer:")
    for name, means in profiles.items():
        print(f"     {name:<22}" + " ".join(f"{m:6.1f}" for m in means))
    print(f"   target: last tenth <= {RENDER_TARGET_RATIO:g}x the first")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="startup runs")
    parser.add_argument("--tokens", type=int, default=20_000, help="length of the answer")
    parser.add_argument("--repeats", type=int, default=3, help="rendering runs per path")
    parser.add_argument("--baseline", help="another agentcli executable to time alongside")
    parser.add_argument("--skip-rendering", action="store_true", help="startup only")
    args = parser.parse_args()
    ok = startup(args.runs, args.baseline)
    if args.skip_rendering:
        return 0
    ok &= rendering(args.tokens, args.repeats)
    print(f"\nresult: {'PASS' if ok else 'FAIL'}")
    return 0  # a benchmark reports; it does not gate


if __name__ == "__main__":
    sys.exit(main())
