"""The one fold of the event stream: runs, messages, tool calls and their states, rebuilt
from events as they arrive. Every consumer (the text output, the REPL renderer, the JSON
summary, the AG-UI server and client) reads this instead of keeping its own maps."""

from __future__ import annotations

import json
from typing import Any

from agentcli.conversation import events as ev
from agentcli.conversation.error_kinds import DENIED, FAILED, INTERRUPTED
from agentcli.records import dataclass, field


@dataclass(slots=True)
class ToolCallState:
    """One call from START to RESULT. `state`: streaming (arguments arriving) → called
    (END seen) → waiting for approval → running → done | error."""

    id: str
    name: str
    parent_message_id: str | None = None
    parts: list[str] = field(default_factory=list)
    state: str = "streaming"
    metadata: dict[str, Any] = field(default_factory=dict)  # START/ARGS/END, merged
    approval: dict[str, Any] | None = None
    result: str | None = None
    error: str | None = None
    error_kind: str | None = None
    summary: str | None = None
    latency_ms: int | None = None
    output: list[str] = field(default_factory=list)  # a running command's latest lines
    running_since: int | None = None  # when it began to run (ms, as event timestamps)

    @property
    def arguments_text(self) -> str:
        return "".join(self.parts)

    def arguments(self) -> Any:
        """The parsed arguments; what was sent, verbatim, when it is not JSON."""
        raw = self.arguments_text
        if not raw.strip():
            return {}
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):  # not JSON, or nested beyond the parser
            return raw

    @property
    def ended(self) -> bool:
        return self.state != "streaming"

    @property
    def finished(self) -> bool:
        return self.state in ("done", "error")


@dataclass(slots=True)
class TextState:
    id: str
    role: str
    parts: list[str] = field(default_factory=list)
    open: bool = True

    @property
    def text(self) -> str:
        return "".join(self.parts)


@dataclass(slots=True)
class RunState:
    thread_id: str
    run_id: str
    status: str = "running"  # running | finished | error
    outcome: dict[str, Any] | None = None
    error: str | None = None
    error_code: str | None = None


class StreamFold:
    """Apply each event in order; read runs, texts and calls at any time."""

    def __init__(self) -> None:
        self.runs: list[RunState] = []
        self.texts: dict[str, TextState] = {}
        self.calls: dict[str, ToolCallState] = {}
        self.state: dict[str, Any] | None = None  # the last STATE_SNAPSHOT
        self.usage: list[dict[str, Any]] = []  # per-step usage reports

    @property
    def run(self) -> RunState | None:
        return self.runs[-1] if self.runs else None

    def call(self, call_id: str) -> ToolCallState | None:
        return self.calls.get(call_id)

    def name_of(self, call_id: str) -> str:
        call = self.calls.get(call_id)
        return call.name if call is not None else "?"

    def apply(self, event: ev.Event) -> ev.Event:
        """Folds `event` in; returns it in its typed form (see `events.typed`)."""
        event = ev.typed(event)
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)
        return event

    def unclosed(self) -> list[ev.Event]:
        """The ENDs of what is still open (a run cut short mid-message or mid-call), so that
        a stream can close everything before its RUN_FINISHED or RUN_ERROR."""
        ends: list[ev.Event] = [
            ev.TextMessageEnd(message_id=t.id) for t in self.texts.values() if t.open
        ]
        ends += [ev.ToolCallEnd(tool_call_id=c.id) for c in self.calls.values() if not c.ended]
        return ends

    # --- runs

    def _run_started(self, event: ev.RunStarted) -> None:
        self.runs.append(RunState(event.thread_id, event.run_id))

    def _run_finished(self, event: ev.RunFinished) -> None:
        if self.run is not None:
            self.run.status, self.run.outcome = "finished", event.outcome

    def _run_error(self, event: ev.RunError) -> None:
        if self.run is not None:
            self.run.status, self.run.error, self.run.error_code = (
                "error",
                event.message,
                event.code,
            )

    # --- text

    def _text_start(self, event: ev.TextMessageStart) -> None:
        self.texts[event.message_id] = TextState(event.message_id, event.role)

    def _text_content(self, event: ev.TextMessageContent) -> None:
        text = self.texts.get(event.message_id)
        if text is None:  # content without a START (TEXT_MESSAGE_CHUNK style)
            text = self.texts[event.message_id] = TextState(event.message_id, "assistant")
        text.parts.append(event.delta)

    def _text_end(self, event: ev.TextMessageEnd) -> None:
        text = self.texts.get(event.message_id)
        if text is not None:
            text.open = False

    # --- tool calls

    def _merge(self, call: ToolCallState, event: ev.Event) -> None:
        if event.metadata:
            call.metadata.update(event.metadata)  # key by key, last write wins

    def _call_start(self, event: ev.ToolCallStart) -> None:
        call = ToolCallState(event.tool_call_id, event.tool_call_name, event.parent_message_id)
        self.calls[event.tool_call_id] = call
        self._merge(call, event)

    def _call_args(self, event: ev.ToolCallArgs) -> None:
        call = self.calls.get(event.tool_call_id)
        if call is not None:
            call.parts.append(event.delta)
            self._merge(call, event)

    def _call_end(self, event: ev.ToolCallEnd) -> None:
        call = self.calls.get(event.tool_call_id)
        if call is not None:
            call.state = "called"
            self._merge(call, event)

    def _call_result(self, event: ev.ToolCallResult) -> None:
        call = self.calls.get(event.tool_call_id)
        if call is None:  # a result for a call this stream did not show (an earlier run's)
            call = self.calls[event.tool_call_id] = ToolCallState(event.tool_call_id, "?")
        meta = event.metadata or {}
        call.result = event.content
        call.latency_ms = meta.get("latencyMs")
        if "error" in meta:
            call.state = "error"
            call.error = meta["error"]
            call.error_kind = meta.get("errorKind") or _kind_from_text(str(meta["error"]))
        else:
            call.state = "done"
            call.summary = meta.get("summary")

    def _approval(self, event: ev.Approval) -> None:
        call = self.calls.get(event.tool_call_id)
        if call is not None:
            call.approval = {k: v for k, v in event.value.items() if k != "toolCallId"}

    def _tool_state(self, event: ev.ToolState) -> None:
        call = self.calls.get(event.tool_call_id)
        if call is not None and not call.finished:
            call.state = event.state
            if event.state == "running":
                call.running_since = event.timestamp

    def _progress(self, event: ev.Progress) -> None:
        call = self.calls.get(event.tool_call_id)
        if call is not None and event.lines:
            call.output = list(event.lines)

    def stopped(self) -> list[ToolCallState]:
        """The calls a cancel caught before their result: running, or not begun yet."""
        return [call for call in self.calls.values() if call.ended and not call.finished]

    # --- other

    def _usage(self, event: ev.UsageReport) -> None:
        self.usage.append(event.value)

    def _state_snapshot(self, event: ev.StateSnapshot) -> None:
        self.state = event.snapshot


def _kind_from_text(error: str) -> str:
    """For results recorded before error kinds existed (old session files, old peers)."""
    if error.startswith("denied"):
        return DENIED
    if error.startswith("interrupted"):
        return INTERRUPTED
    return FAILED


_HANDLERS: dict[type, Any] = {
    ev.RunStarted: StreamFold._run_started,
    ev.RunFinished: StreamFold._run_finished,
    ev.RunError: StreamFold._run_error,
    ev.TextMessageStart: StreamFold._text_start,
    ev.TextMessageContent: StreamFold._text_content,
    ev.TextMessageEnd: StreamFold._text_end,
    ev.ToolCallStart: StreamFold._call_start,
    ev.ToolCallArgs: StreamFold._call_args,
    ev.ToolCallEnd: StreamFold._call_end,
    ev.ToolCallResult: StreamFold._call_result,
    ev.Approval: StreamFold._approval,
    ev.ToolState: StreamFold._tool_state,
    ev.Progress: StreamFold._progress,
    ev.UsageReport: StreamFold._usage,
    ev.StateSnapshot: StreamFold._state_snapshot,
}
