"""A tool call's line ("● write_file path=…") waits until the call's fate is known: a call
that asks for approval is shown once, by the approval block, not also by its call line and
a "waiting for approval" line; any other call's line is drawn before its next news."""

from __future__ import annotations

from agentcli.conversation import events as ev


class HeldCallLines:
    def __init__(self) -> None:
        self._held: dict[str, str] = {}  # tool call id → its line, not drawn yet

    def hold(self, call_id: str, line: str) -> None:
        self._held[call_id] = line

    def take(self, call_id: str) -> str | None:
        """A call's line, not to be drawn here (a folded read-only call keeps it)."""
        return self._held.pop(call_id, None)

    def release(self, event: ev.Event) -> list[str]:
        """The lines to draw before `event`: its call's, unless the call waits for an
        approval (the prompt shows it); every one left at the end of a run."""
        if isinstance(event, (ev.RunFinished, ev.RunError)):
            lines, self._held = list(self._held.values()), {}
            return lines
        call_id = getattr(event, "tool_call_id", None)
        if call_id is None or isinstance(event, (ev.ToolCallArgs, ev.ToolCallEnd)):
            return []
        line = self._held.pop(call_id, None)
        if isinstance(event, ev.ToolState) and event.state == "waiting for approval":
            return []
        return [line] if line is not None else []

    def flush(self) -> list[str]:
        lines, self._held = list(self._held.values()), {}
        return lines
