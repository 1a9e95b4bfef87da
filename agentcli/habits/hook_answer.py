"""What a hook answered, read as Claude Code reads it, so that a user's scripts work
unchanged: exit 0 goes on (its stdout may be JSON); exit 2 blocks, with its stderr as the
reason; any other exit is the hook's failure. JSON on stdout: `decision` (`block`, or the
older `approve`) with `reason`; `continue: false` with `stopReason`; `systemMessage` for
the user; `hookSpecificOutput` with `permissionDecision` (`allow` / `deny` / `ask`),
`permissionDecisionReason` and `updatedInput` (PreToolUse) or `additionalContext`
(UserPromptSubmit, SessionStart, PostToolUse). Plain text on stdout is context for
UserPromptSubmit and SessionStart, and ignored elsewhere."""

from __future__ import annotations

import json
from typing import Any, Literal

from agentcli.records import dataclass

Decision = Literal["allow", "deny", "ask", "block"]
CONTEXT_EVENTS = ("UserPromptSubmit", "SessionStart")
MAX_REASON = 4000  # characters of a reason or a context the model gets from one hook


@dataclass(frozen=True, slots=True)
class Answer:
    decision: Decision | None = None  # None: go on as if there were no hook
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    context: str = ""  # for the model
    message: str = ""  # systemMessage: for the user
    failure: str | None = None  # the hook failed: why, in a few words


def read_answer(
    event: str, exit_code: int | None, stdout: str, stderr: str, *, timed_out: bool, timeout: float
) -> Answer:
    if timed_out:
        return Answer(failure=f"timed out after {timeout:g}s and was stopped")
    if exit_code == 2:
        return Answer("block", _cut(stderr.strip()) or "(the hook gave no reason)")
    if exit_code != 0:
        said = _last_line(stderr) or _last_line(stdout)  # a traceback's last line says why
        return Answer(failure=f"exited with {exit_code}" + (f": {said}" if said else ""))
    text = stdout.strip()
    if not text.startswith("{"):
        return Answer(context=_cut(text) if event in CONTEXT_EVENTS else "")
    try:
        data = json.loads(text)
    except ValueError as error:
        return Answer(failure=f"its output is not valid JSON ({error.msg} at {error.pos})")
    try:
        return _from_json(event, data)
    except _Wrong as wrong:
        return Answer(failure=str(wrong))


class _Wrong(Exception):
    pass


def _from_json(event: str, data: Any) -> Answer:
    if not isinstance(data, dict):
        raise _Wrong("its JSON output is not an object")
    specific = data.get("hookSpecificOutput") or {}
    if not isinstance(specific, dict):
        raise _Wrong("hookSpecificOutput is not an object")
    decision: Decision | None = None
    reason = _string(data, "reason")
    legacy = data.get("decision")
    if legacy is not None:
        if legacy not in ("block", "approve", "allow", "deny", "ask"):
            raise _Wrong(f"decision {legacy!r} is not block or approve")
        decision = {"approve": "allow"}.get(legacy, legacy)  # type: ignore[assignment]
    chosen = specific.get("permissionDecision")
    if chosen is not None:
        if chosen not in ("allow", "deny", "ask", "defer"):
            raise _Wrong(f"permissionDecision {chosen!r} is not allow, deny or ask")
        decision = "ask" if chosen == "defer" else chosen
        reason = _string(specific, "permissionDecisionReason") or reason
    if data.get("continue") is False:
        decision, reason = "block", _string(data, "stopReason") or reason
    updated = specific.get("updatedInput")
    if updated is not None and not isinstance(updated, dict):
        raise _Wrong("updatedInput is not an object")
    context = _string(specific, "additionalContext")
    return Answer(
        decision,
        _cut(reason),
        updated if event == "PreToolUse" else None,
        _cut(context),
        _cut(_string(data, "systemMessage")),
    )


def _string(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Wrong(f"{key} is not a string")
    return value


def _last_line(text: str) -> str:
    line = next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")
    return line if len(line) <= 200 else line[:199] + "…"


def _cut(text: str) -> str:
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1] + "…"
