"""Bounded streams: how much one model step may stream before agentcli stops reading.

A model that never ends a tool call's arguments (or an answer) would otherwise grow the
run's memory without a bound. `limits.tool_arguments` caps each call's arguments and
`limits.text_message` each text (and reasoning) message, in characters; the piece that
passes a cap is cut to what fits, the step ends there, and the loop says why."""

from __future__ import annotations

from typing import Any

from agentcli.config.schema import SETTINGS
from agentcli.conversation import events as ev
from agentcli.records import dataclass, field, replace

# Characters; the defaults are beyond any model's output limit today.
DEFAULT_TOOL_ARGUMENTS: int = SETTINGS["limits.tool_arguments"].default
DEFAULT_TEXT_MESSAGE: int = SETTINGS["limits.text_message"].default


@dataclass(frozen=True, slots=True)
class StreamLimits:
    tool_arguments: int = DEFAULT_TOOL_ARGUMENTS
    text_message: int = DEFAULT_TEXT_MESSAGE


@dataclass(frozen=True, slots=True)
class Overflow:
    """The cap a step passed: `kind` text | reasoning | arguments, and the call's id."""

    kind: str
    limit: int
    tool_call_id: str | None = None

    @property
    def setting(self) -> str:
        return "limits.tool_arguments" if self.kind == "arguments" else "limits.text_message"

    def describe(self) -> str:
        what = {"text": "answer", "reasoning": "reasoning", "arguments": "tool call's arguments"}
        return (
            f"the model's {what[self.kind]} passed {self.setting} ({self.limit:,} characters), "
            f"so agentcli stopped reading it there and ended the step (raise {self.setting} "
            "if this much is expected)"
        )


@dataclass(slots=True)
class StreamMeter:
    """Counts one step's streamed pieces against the limits, and knows what is still open
    (ids only: the pieces themselves are kept once, by the collector)."""

    limits: StreamLimits
    sizes: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, id) -> chars
    open: dict[tuple[str, str], ev.Event] = field(default_factory=dict)  # -> its END

    def admit(self, item: ev.Event) -> tuple[ev.Event | None, Overflow | None]:
        """The item as it may pass (a piece cut to what fits; None: nothing fits) and the
        cap it passed, if it passed one."""
        counted = _COUNTED.get(type(item))
        if counted is None:
            self._track(item)
            return item, None
        kind, attribute = counted
        key = (kind, getattr(item, attribute))
        limit = self.limits.tool_arguments if kind == "arguments" else self.limits.text_message
        delta: str = item.delta  # type: ignore[attr-defined]
        used = self.sizes.get(key, 0) + len(delta)
        if used <= limit:
            self.sizes[key] = used
            return item, None
        room = limit - (used - len(delta))
        self.sizes[key] = limit
        cut = replace(item, delta=delta[:room]) if room > 0 else None
        return cut, Overflow(kind, limit, key[1] if kind == "arguments" else None)

    def _track(self, item: ev.Event) -> None:
        """Starts open a key (with the END that closes it), ends close it."""
        opened = _OPENS.get(type(item))
        if opened is not None:
            what, end = opened
            self.open[(what, _key(item))] = end(item)
            return
        closed = _CLOSES.get(type(item))
        if closed is not None:
            self.open.pop((closed, _key(item)), None)

    def ends(self) -> list[ev.Event]:
        """The ENDs of what the cut step left open, innermost first."""
        return list(reversed(self.open.values()))


def _key(item: Any) -> str:
    """The call or message an event belongs to."""
    call = getattr(item, "tool_call_id", None)
    return call if call is not None else item.message_id  # "" is an id a remote may give


_COUNTED = {  # the pieces counted: what they are, and the field naming their call or message
    ev.ToolCallArgs: ("arguments", "tool_call_id"),
    ev.TextMessageContent: ("text", "message_id"),
    ev.ReasoningMessageContent: ("reasoning", "message_id"),
}
_OPENS: dict[type, tuple[str, Any]] = {
    ev.TextMessageStart: ("text", lambda e: ev.TextMessageEnd(message_id=e.message_id)),
    ev.ToolCallStart: ("call", lambda e: ev.ToolCallEnd(tool_call_id=e.tool_call_id)),
    ev.ReasoningStart: ("reasoning", lambda e: ev.ReasoningEnd(message_id=e.message_id)),
    ev.ReasoningMessageStart: (
        "reasoning-message",
        lambda e: ev.ReasoningMessageEnd(message_id=e.message_id),
    ),
}
_CLOSES = {
    ev.TextMessageEnd: "text",
    ev.ToolCallEnd: "call",
    ev.ReasoningEnd: "reasoning",
    ev.ReasoningMessageEnd: "reasoning-message",
}
