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
        return Answer(failure=_ended(exit_code) + (f": {said}" if said else ""))
    text = stdout.strip()
    if not text.startswith("{"):
        if event in CONTEXT_EVENTS:
            return Answer(context=_cut(text))
        # Plain text is ignored, as Claude Code does; JSON of another kind (`"deny"`,
        # `[1, 2]`, `null`) was meant as an answer, and a guard's unread answer refuses.
        wrong = _not_an_object(text)
        return Answer(failure=_unreadable(wrong) if wrong else None)
    try:
        data = json.loads(text)
    except ValueError as error:
        return Answer(
            failure=_unreadable(f"its output is not valid JSON: {error.msg} at {error.pos}")
        )
    try:
        return _from_json(event, data)
    except _Wrong as wrong:
        return Answer(failure=_unreadable(str(wrong)))


def _ended(exit_code: int | None) -> str:
    """`exited with 1`, or the signal that killed it (a negative code: `-11`)."""
    import signal

    if exit_code is None or exit_code >= 0:
        return f"exited with {exit_code}"
    try:
        return f"was killed by {signal.Signals(-exit_code).name}"
    except ValueError:
        return f"was killed by signal {-exit_code}"


def _unreadable(why: str) -> str:
    return f"gave an answer agentcli cannot read ({why})"


class _Wrong(Exception):
    pass


def _not_an_object(text: str) -> str | None:
    """Why JSON that is not an object is no answer; None for text that is not JSON."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return f"its output is JSON but {_kind(data)}, not an object"


def _kind(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    return {list: "an array", str: "a string"}.get(type(value), "a number")


def _from_json(event: str, data: Any) -> Answer:
    if not isinstance(data, dict):
        raise _Wrong("its JSON output is not an object")
    specific = data.get("hookSpecificOutput")
    specific = {} if specific is None else specific  # `[]` is a wrong answer, not none
    if not isinstance(specific, dict):
        raise _Wrong("hookSpecificOutput is not an object")
    for key in ("continue", "suppressOutput"):  # `"false"` or 0 is not false: not read
        if data.get(key) is not None and not isinstance(data[key], bool):
            raise _Wrong(f"{key} is not true or false")
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
