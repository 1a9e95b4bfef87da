"""How a tool result reads on a terminal: one line (a mark, the tool, its short summary
and one timing), then, where it matters, the lines worth seeing under it — an edit's
changed lines rather than its diff header."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.error_kinds import DENIED, INVALID
from agentcli.fold import ToolCallState
from agentcli.words import plural

if TYPE_CHECKING:
    from agentcli.output.text import Styler

PREVIEW_WIDTH = 160


def took(latency_ms: int | None) -> str:
    """The call's one timing, ` (25 ms)` or ` (1.4s)`; empty when unknown."""
    if latency_ms is None:
        return ""
    return f" ({latency_ms} ms)" if latency_ms < 1000 else f" ({latency_ms / 1000:.1f}s)"


def result_line(call: ToolCallState, style: Styler) -> str:
    timing = style.dim(took(call.latency_ms))
    if call.state == "error":
        first = (str(call.error or "").splitlines() or ["failed"])[0]
        label = {DENIED: " denied", INVALID: ""}.get(call.error_kind or "", " failed")
        if call.error_kind == DENIED:
            first = first.removeprefix("denied: ")  # said once, by the label
        return style.red(f"  ✗ {call.name}{label}: {first}") + timing
    return style.green("  ✓ ") + f"{call.name}: {call.summary or 'done'}" + timing


def changed_lines(content: str) -> list[str] | None:
    """The `-`/`+` lines of a unified diff in `content` (its hunks, not its `---`/`+++`
    header); None when `content` holds no diff."""
    lines = content.splitlines()
    hunk = next((i for i, line in enumerate(lines) if line.startswith("@@ ")), None)
    if hunk is None:
        return None
    return [line for line in lines[hunk:] if line[:1] in ("-", "+")]


def _body(lines: list[str]) -> list[str]:
    """A command's output without the header above it (`$ cmd`, `exit code 0 · 0.01s`,
    `output:`): the exit code and the time are on the result line already."""
    for number, line in enumerate(lines[:12]):
        if line in ("output:", "output: (none)"):
            return lines[number + 1 :]
    return lines


def preview(content: str, limit: int, *, diff_only: bool = False) -> list[str]:
    """Up to `limit` lines worth showing under a result, then `… N more lines` if cut:
    a diff's changed lines, a command's output, otherwise the first lines (none with
    `diff_only`)."""
    changed = changed_lines(content)
    if changed is None and diff_only:
        return []
    lines, noun = (changed, "changed line") if changed is not None else (
        _body(content.splitlines()), "line"
    )  # fmt: skip
    shown = [line[:PREVIEW_WIDTH] for line in lines[:limit]]
    if len(lines) > limit:
        shown.append(f"… {plural(len(lines) - limit, 'more ' + noun)}")
    return shown


def preview_line(line: str, style: Styler, *, diff: bool) -> str:
    """One preview line, indented under its result; a diff's lines in red and green."""
    if diff and line.startswith("-"):
        return style.red(f"    {line}")
    if diff and line.startswith("+"):
        return style.green(f"    {line}")
    return style.dim(f"    {line}")
