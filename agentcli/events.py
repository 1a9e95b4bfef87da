"""The one event stream of a run, named after AG-UI's event types.

Providers produce these events, the loop consumes them, and every output (text, json,
jsonl, the REPL, session files) only consumes them. `to_wire()` gives AG-UI's wire form:
camelCase names, optional fields omitted (never null).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

PROTOCOL_VERSION = "1.0"


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(kw_only=True, slots=True)
class Event:
    type: ClassVar[str] = ""
    timestamp: int = field(default_factory=now_ms)
    metadata: dict[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"type": self.type}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                wire[_camel(f.name)] = value
        return wire


@dataclass(kw_only=True, slots=True)
class RunStarted(Event):
    type: ClassVar[str] = "RUN_STARTED"
    thread_id: str
    run_id: str
    protocol_version: str = PROTOCOL_VERSION


@dataclass(kw_only=True, slots=True)
class RunFinished(Event):
    type: ClassVar[str] = "RUN_FINISHED"
    thread_id: str
    run_id: str
    outcome: dict[str, Any] | None = None
    result: Any = None
    usage: list[dict[str, Any]] | None = None


@dataclass(kw_only=True, slots=True)
class RunError(Event):
    type: ClassVar[str] = "RUN_ERROR"
    message: str
    code: str | None = None
    usage: list[dict[str, Any]] | None = None


@dataclass(kw_only=True, slots=True)
class StepStarted(Event):
    type: ClassVar[str] = "STEP_STARTED"
    step_name: str


@dataclass(kw_only=True, slots=True)
class StepFinished(Event):
    type: ClassVar[str] = "STEP_FINISHED"
    step_name: str


@dataclass(kw_only=True, slots=True)
class TextMessageStart(Event):
    type: ClassVar[str] = "TEXT_MESSAGE_START"
    message_id: str
    role: str = "assistant"


@dataclass(kw_only=True, slots=True)
class TextMessageContent(Event):
    type: ClassVar[str] = "TEXT_MESSAGE_CONTENT"
    message_id: str
    delta: str


@dataclass(kw_only=True, slots=True)
class TextMessageEnd(Event):
    type: ClassVar[str] = "TEXT_MESSAGE_END"
    message_id: str


@dataclass(kw_only=True, slots=True)
class ToolCallStart(Event):
    type: ClassVar[str] = "TOOL_CALL_START"
    tool_call_id: str
    tool_call_name: str
    parent_message_id: str | None = None


@dataclass(kw_only=True, slots=True)
class ToolCallArgs(Event):
    type: ClassVar[str] = "TOOL_CALL_ARGS"
    tool_call_id: str
    delta: str


@dataclass(kw_only=True, slots=True)
class ToolCallEnd(Event):
    type: ClassVar[str] = "TOOL_CALL_END"
    tool_call_id: str


@dataclass(kw_only=True, slots=True)
class ToolCallResult(Event):
    """A tool's result. A failed or refused call carries `metadata.error` (AG-UI's
    ToolMessage.error); latency rides in `metadata.latencyMs`."""

    type: ClassVar[str] = "TOOL_CALL_RESULT"
    message_id: str
    tool_call_id: str
    content: str
    role: str = "tool"


@dataclass(kw_only=True, slots=True)
class ReasoningStart(Event):
    type: ClassVar[str] = "REASONING_START"
    message_id: str


@dataclass(kw_only=True, slots=True)
class ReasoningMessageStart(Event):
    type: ClassVar[str] = "REASONING_MESSAGE_START"
    message_id: str
    role: str = "reasoning"


@dataclass(kw_only=True, slots=True)
class ReasoningMessageContent(Event):
    type: ClassVar[str] = "REASONING_MESSAGE_CONTENT"
    message_id: str
    delta: str


@dataclass(kw_only=True, slots=True)
class ReasoningMessageEnd(Event):
    type: ClassVar[str] = "REASONING_MESSAGE_END"
    message_id: str


@dataclass(kw_only=True, slots=True)
class ReasoningEnd(Event):
    type: ClassVar[str] = "REASONING_END"
    message_id: str


@dataclass(kw_only=True, slots=True)
class Custom(Event):
    """What AG-UI has no name for: `usage`, `retry`, `approval`, `warning`, `progress`."""

    type: ClassVar[str] = "CUSTOM"
    name: str
    value: Any


@dataclass(slots=True)
class StepEnd:
    """Not an event: the provider's last item for one model step, read by the loop only.
    `extra` is provider-specific state the assistant message must carry back (Anthropic's
    content blocks with thinking signatures and server-tool results)."""

    finish_reason: str  # stop | tool_calls | length | pause | refusal
    usage: Usage | None = None
    extra: dict[str, Any] | None = None


@dataclass(slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens

    def to_wire(self, provider: str | None = None, model: str | None = None) -> dict[str, Any]:
        wire: dict[str, Any] = {}
        if provider:
            wire["provider"] = provider
        if model:
            wire["model"] = model
        wire["inputTokens"] = self.input_tokens
        wire["outputTokens"] = self.output_tokens
        wire["totalTokens"] = self.total_tokens
        return wire
