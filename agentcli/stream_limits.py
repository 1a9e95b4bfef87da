"""Bounded streams: how much one model step may stream before agentcli stops reading.

A model that never ends a tool call's arguments (or an answer) would otherwise grow the
run's memory without a bound. `limits.tool_arguments` caps each call's arguments and
`limits.text_message` each text (and reasoning) message, in characters; the piece that
passes a cap is cut to what fits, the step ends there, and the loop says why."""

from __future__ import annotations

from agentcli import events as ev
from agentcli.config.schema import SETTINGS
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
        self._track(item)
        if isinstance(item, ev.ToolCallArgs):
            return self._count(item, "arguments", item.tool_call_id, self.limits.tool_arguments)
        if isinstance(item, ev.TextMessageContent):
            return self._count(item, "text", item.message_id, self.limits.text_message)
        if isinstance(item, ev.ReasoningMessageContent):
            return self._count(item, "reasoning", item.message_id, self.limits.text_message)
        return item, None

    def _count(
        self, item: ev.Event, kind: str, key: str, limit: int
    ) -> tuple[ev.Event | None, Overflow | None]:
        delta: str = item.delta  # type: ignore[attr-defined]
        used = self.sizes.get((kind, key), 0)
        if used + len(delta) <= limit:
            self.sizes[(kind, key)] = used + len(delta)
            return item, None
        room = limit - used
        self.sizes[(kind, key)] = limit
        cut = replace(item, delta=delta[:room]) if room > 0 else None
        return cut, Overflow(kind, limit, key if kind == "arguments" else None)

    def _track(self, item: ev.Event) -> None:
        if isinstance(item, ev.TextMessageStart):
            self.open[("text", item.message_id)] = ev.TextMessageEnd(message_id=item.message_id)
        elif isinstance(item, ev.ToolCallStart):
            end = ev.ToolCallEnd(tool_call_id=item.tool_call_id)
            self.open[("call", item.tool_call_id)] = end
        elif isinstance(item, ev.ReasoningStart):
            self.open[("reasoning", item.message_id)] = ev.ReasoningEnd(message_id=item.message_id)
        elif isinstance(item, ev.ReasoningMessageStart):
            end = ev.ReasoningMessageEnd(message_id=item.message_id)
            self.open[("reasoning-message", item.message_id)] = end
        elif isinstance(item, ev.TextMessageEnd):
            self.open.pop(("text", item.message_id), None)
        elif isinstance(item, ev.ToolCallEnd):
            self.open.pop(("call", item.tool_call_id), None)
        elif isinstance(item, ev.ReasoningEnd):
            self.open.pop(("reasoning", item.message_id), None)
        elif isinstance(item, ev.ReasoningMessageEnd):
            self.open.pop(("reasoning-message", item.message_id), None)

    def ends(self) -> list[ev.Event]:
        """The ENDs of what the cut step left open, innermost first."""
        return list(reversed(self.open.values()))
