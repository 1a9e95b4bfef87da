"""An answered approval as one line of the transcript (`✓ edit_file calc.py · allowed
once`), and how many terminal rows the block it replaces took, so that the block can be
erased exactly. The call's subject is made visible (one_line) and cut to the width before
any colour is added, so a cut never falls inside an escape sequence."""

from __future__ import annotations

import re
from typing import Any

from agentcli.output.visible import one_line
from agentcli.policy.engine import Prompt, remembered
from agentcli.risk import ApprovalRequest

OUTCOME = {
    "once": "allowed once",
    "session": "allowed for this session",
    "project": "allowed in this project",
    "deny": "denied",
    "deny_session": "denied for this session",
    "cancelled": "denied (cancelled)",
}
_SGR = re.compile(r"\x1b\[[0-9;]*m")  # agentcli's own styles: the only escapes in a block


def outcome_words(prompt: Prompt, outcome: str) -> str:
    """The answer as the folded line says it: a wider grant names the rule it added
    (`allowed run_shell(touch *) for this session`), as its choice's label did."""
    if outcome not in ("session", "project", "deny_session"):
        return OUTCOME[outcome]
    risk = prompt.request.assessment.risk
    kept = remembered(outcome, risk, prompt.session_rules)  # type: ignore[arg-type]
    rules = prompt.session_rules if outcome == "project" else kept
    named = ", ".join(one_line(rule) for rule in rules)
    if not named:
        return OUTCOME[outcome]
    if outcome == "session":
        return f"allowed {named} for this session"
    if outcome == "project":
        return f"always allowed {named} in this project"
    return f"refused {named} for this session"


def _style(enabled: bool, code: str, text: str) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if enabled else text


def subject(request: ApprovalRequest) -> str:
    """What the call acts on, in a few words: a command, a path, else its first text."""
    arguments = request.arguments
    for key in ("command", "path", "url", "query", "code"):
        if isinstance(arguments.get(key), str):
            return one_line(" ".join(arguments[key].split()))
    first = next((v for v in arguments.values() if isinstance(v, str)), "")
    return one_line(" ".join(first.split()))


def cells(text: str) -> int:
    from rich.cells import cell_len

    return cell_len(_SGR.sub("", text))


def cut(text: str, room: int) -> str:
    """`text` in at most `room` cells, `…` at its end when cut (a wide character whole)."""
    from rich.cells import cell_len

    if cell_len(text) <= room:
        return text
    kept, used = [], 0
    for char in text:
        width = cell_len(char)
        if used + width > room - 1:
            break
        kept.append(char)
        used += width
    return "".join(kept) + "…"


def folded_line(prompt: Prompt, outcome: str, number: int, width: int, color: bool) -> str:
    """`  ✓ edit_file calc.py · allowed once (ctrl+o to expand · /expand 3)`, in `width`
    columns: the hint shortens first, then the subject. When the answer itself leaves
    too little room (a session's rule at 40 columns) it goes on a second row, whole as
    far as the width allows: what was granted is the line's point."""
    request = prompt.request
    allowed = outcome in ("once", "session", "project")
    mark = "✓" if allowed else "✗"
    who = f"subagent {one_line(request.asker)}: " if request.asker else ""
    tool = one_line(request.tool)
    answer = outcome_words(prompt, outcome)
    room = width - 1  # the last column left alone: no terminal wraps early there
    fixed, what = f"  {mark} {who}{tool}", subject(request)
    hints = (f" (ctrl+o to expand · /expand {number})", f" (/expand {number})", "")
    head = len(f"  {mark}")
    for hint in hints:
        left = room - cells(fixed) - cells(f" · {answer}") - cells(hint) - 1  # 1: a space
        if left >= min(12, cells(what)):
            shown = f" {cut(what, left)}" if what and left >= 2 else ""
            line = cut(f"{fixed}{shown} · {answer}", room - cells(hint))
            return _marked(color, allowed, line, head) + _hint(color, hint)
    first = cut(f"{fixed} {what}" if what else fixed, room)  # at 20 columns even the tool
    second = cut(f"    {answer}", room)
    hint = next((h for h in hints if cells(second) + cells(h) <= room), "")
    return _marked(color, allowed, first, head) + "\n" + second + _hint(color, hint)


def _marked(color: bool, allowed: bool, line: str, head: int) -> str:
    return _style(color, "32" if allowed else "31", line[:head]) + line[head:]


def _hint(color: bool, hint: str) -> str:
    return _style(color, "2", hint) if hint else ""


def title(prompt: Prompt, outcome: str) -> str:
    """The folded line's words without its hint or colour, for /expand's header."""
    request = prompt.request
    mark = "✓" if outcome in ("once", "session", "project") else "✗"
    who = f"subagent {one_line(request.asker)}: " if request.asker else ""
    what = cut(subject(request), 60)
    tool = one_line(request.tool) + (f" {what}" if what else "")
    return f"{mark} {who}{tool} · {outcome_words(prompt, outcome)}"


def rows_of(text: str, width: int) -> int:
    """The rows `text` (lines ending in newlines, agentcli's own SGR styles in them) takes
    on a terminal `width` columns wide: a line longer than the width wraps."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return sum(max(1, -(-cells(line) // width)) for line in lines)


def lines_of_block(prompt: Any, color: bool) -> Any:
    """The folded block's lines again, at the width of the day it is expanded: the call
    and its whole preview (no choices: it was answered)."""
    from agentcli.ui.approval_block import block_lines

    return lambda width: block_lines(prompt, color, width, whole=True)
