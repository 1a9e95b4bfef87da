"""How a tool result reads on a terminal: one line (a mark, the tool, its short summary
and one timing), then, where it matters, the lines worth seeing under it — an edit's
changed lines rather than its diff header."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.conversation import events as ev
from agentcli.conversation.error_kinds import DENIED, INVALID
from agentcli.conversation.fold import StreamFold, ToolCallState
from agentcli.output.visible import one_line
from agentcli.text.words import plural

if TYPE_CHECKING:
    from agentcli.output.style import Styler

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
        return style.red(f"  ✗ {one_line(call.name)}{label}: {first}") + timing
    return style.green("  ✓ ") + f"{one_line(call.name)}: {call.summary or 'done'}" + timing


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
    lines, noun = (
        (changed, "changed line") if changed is not None else (_body(content.splitlines()), "line")
    )
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


def stopped_lines(call: ToolCallState, why: str, style: Styler, now_ms: int) -> list[str]:
    """A call the run's ending caught before its result: what it printed last (a running
    command's latest lines), then that it stopped and why, so the screen keeps them. A
    call that was waiting for approval was answered by its prompt: nothing more."""
    if call.state == "waiting for approval":
        return []
    if call.state != "running":
        return [style.red(f"  ✗ {one_line(call.name)} not run: {why}")]
    shown = [preview_line(line[:PREVIEW_WIDTH], style, diff=False) for line in call.output]
    ran = took(now_ms - call.running_since if call.running_since is not None else None)
    return [*shown, style.red(f"  ✗ {one_line(call.name)} stopped: {why}") + style.dim(ran)]


def ending_lines(fold: StreamFold, event: ev.Event, style: Styler) -> list[str]:
    """At a run's ending, the lines of the calls it stopped (none for other events)."""
    why = _ending_reason(event)
    if why is None:
        return []
    now = ev.now_ms()
    return [line for call in fold.stopped() for line in stopped_lines(call, why, style, now)]


def _ending_reason(event: ev.Event) -> str | None:
    """Why a run's ending stops the calls still running: None when it is no ending."""
    if isinstance(event, ev.RunFinished):
        return "interrupted" if (event.outcome or {}).get("type") == "cancelled" else None
    if isinstance(event, ev.RunError):
        return "the run's --timeout" if event.code == "timeout" else "the run ended"
    return None
