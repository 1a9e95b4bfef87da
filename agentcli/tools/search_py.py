"""The search tools' pure-Python backend: a walk of the searched directory through its
open fd (agentcli.tools.ignore gives ripgrep's ignore rules) and Python's `re`.

The walk serves where ripgrep cannot: where the `ripgrep` wheel does not exist (Windows on
ARM, the BSDs, Linux on RISC-V and other machines without a wheel; the wheel covers Linux
x86-64, aarch64, armv7l, i686, ppc64le, s390x, musl x86-64 and aarch64, macOS x86-64 and
arm64, Windows x86-64 and x86), when `rg` could not be started, and below a `.gitignore`
line too costly to rewrite for ripgrep (ignore_rebase.MAX_WRITTEN_OUT). Python's `re` also
runs, over the files ripgrep lists, a regular expression the wheel's ripgrep (built without
PCRE2) rejects: look-around, backreferences. It is the `regex` module, in `re`'s dialect
(VERSION0), for one thing `re` lacks: a bound on a match's time. `re` backtracks without
end on `(?<=a)(a|aa)+$` over a line of a's, holding the GIL, so not even a signal could
stop it; here the whole search has MATCH_SECONDS, and each match releases the GIL.

Known, accepted difference: on a line that is not valid UTF-8, ripgrep never matches the
invalid bytes while Python matches the U+FFFD that replaced them (so `caf.` finds `caf\\xe9`
only here). Regular expression dialects differ in corners too (`[[:alpha:]]`).
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from agentcli.tools.search_plan import FileHits, Line, PinnedTree, Plan, display, open_found

WHOLE_FILE_BYTES = 16 * 1024 * 1024  # smaller files are read in one go
MATCH_SECONDS = 10.0  # for all of one search's matching: past it, TimeoutError

# A per-line match implies a match of the whole text in MULTILINE mode unless the pattern
# can look past a line's ends; only then is the cheap whole-file pre-check skipped.
_LOOKS_AROUND = ("(?=", "(?!", "(?<=", "(?<!", "\\A", "\\Z", "(?-", "(?(")


def has_nul(path: str) -> bool | None:
    """Whether a file has a NUL byte anywhere (None: unreadable); read in chunks."""
    try:
        with open_found(path) as f:
            while chunk := f.read(1 << 20):
                if b"\0" in chunk:
                    return True
    except OSError:
        return None
    return False


def python_files(plan: Plan, stop: Callable[[], bool]) -> tuple[list[str], bool]:
    assert plan.start is not None
    return list(PinnedTree(plan.target, plan.start, plan.glob).walk(stop)), False


class _Binary(Exception):
    pass


def _stream_lines(stream: Iterable[bytes]) -> Iterator[str]:
    for raw in stream:
        if b"\0" in raw:
            raise _Binary
        yield raw.removesuffix(b"\n").decode("utf-8", "replace")


def _scan(lines: Iterable[str], search: Callable[[str], Any], context: int, keep: int) -> FileHits:
    """Counts the matching lines and records the first `keep` with their context; the
    context after the last recorded match stops at the next match (as in _render)."""
    hits = FileHits("", 0)
    records = hits.lines
    before: deque[tuple[int, str]] = deque(maxlen=context)
    after = 0
    numbered = enumerate(lines, 1)
    for number, line in numbered:
        match = search(line)
        if match:
            hits.matches += 1
            if hits.matches > keep:
                # Recorded all we may: count the rest.
                hits.matches += sum(1 for _, rest in numbered if search(rest))
                break
            records.extend(Line(n, False, display(text, 0)) for n, text in before)
            before.clear()
            records.append(Line(number, True, display(line, match.start())))
            after = context
        elif after:
            records.append(Line(number, False, display(line, 0)))
            after -= 1
        elif context:
            before.append((number, line))
    return hits


def bounded(pattern: Any, deadline: float) -> Callable[[str], Any]:
    """`pattern.search`, each call within what is left until `deadline` (TimeoutError
    past it), releasing the GIL while it matches."""

    def search(text: str) -> Any:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        return pattern.search(text, timeout=left, concurrent=True)

    return search


def _scan_file(
    path: str,
    search: Callable[[str], Any],
    whole: Callable[[str], Any] | None,
    context: int,
    keep: int,
) -> FileHits | None:
    """One file's hits; None for a binary or unreadable file."""
    try:
        with open_found(path) as f:
            if os.fstat(f.fileno()).st_size > WHOLE_FILE_BYTES:
                return _scan(_stream_lines(f), search, context, keep)
            data = f.read()
    except _Binary:
        return None
    except OSError:
        return None
    if b"\0" in data:
        return None
    text = data.decode("utf-8", "replace")
    if whole is not None and whole(text) is None:
        return FileHits("", 0)
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # after the final newline
    return _scan(lines, search, context, keep)


def python_content(
    plan: Plan,
    regex: Any,
    context: int,
    max_results: int,
    listed: Iterable[str] | None,
    stop: Callable[[], bool],
) -> list[FileHits]:
    """Runs `regex` over the files `listed` (sorted, relative to the target's base; when
    None, the walk's), returning their hits in that order."""
    target = plan.target
    assert plan.start is not None
    import regex as regex_module

    deadline = time.monotonic() + MATCH_SECONDS
    search, whole = bounded(regex, deadline), None
    if not any(marker in regex.pattern for marker in _LOOKS_AROUND):
        multiline = regex_module.compile(regex.pattern, regex.flags | regex_module.MULTILINE)
        whole = bounded(multiline, deadline)
    if target.is_file:
        paths: Iterable[str] = [target.rel]
    elif listed is not None:
        paths = listed
    else:
        paths = PinnedTree(target, plan.start, plan.glob).walk(stop)
    files = []
    budget = max_results
    for rel in paths:  # in sorted order, so only the first max_results need recording
        if stop():
            break
        hits = _scan_file(target.path_of(rel), search, whole, context, budget)
        if hits is None or not hits.matches:
            continue
        hits.path = rel
        budget = max(0, budget - hits.matches)
        files.append(hits)
    return files
