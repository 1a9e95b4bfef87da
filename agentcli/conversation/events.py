"""The one event stream of a run, named after AG-UI's event types.

Providers produce these events, the loop consumes them, and every output (text, json,
jsonl, the REPL, session files) only consumes them. `to_wire()` gives AG-UI's wire form:
camelCase names, optional fields omitted (never null).
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from agentcli.records import dataclass, field, fields

PROTOCOL_VERSION = "1.0"


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _wire_names(cls: type) -> tuple[tuple[str, str], ...]:
    """(attribute, wire name) of each field of an event class, worked out once per class:
    a long answer writes every one of its pieces to the session file."""
    names = _WIRE_NAMES.get(cls)
    if names is None:
        names = _WIRE_NAMES[cls] = tuple((f.name, _camel(f.name)) for f in fields(cls))
    return names


_WIRE_NAMES: dict[type, tuple[tuple[str, str], ...]] = {}


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(kw_only=True, slots=True)
class Event:
    type: ClassVar[str] = ""
    timestamp: int = field(default_factory=now_ms)
    metadata: dict[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"type": self.type}
        for name, key in _wire_names(type(self)):
            value = getattr(self, name)
            if value is not None:
                wire[key] = value
        return wire


@dataclass(kw_only=True, slots=True)
class RunStarted(Event):
    type: ClassVar[str] = "RUN_STARTED"
    thread_id: str
    run_id: str
    protocol_version: str = PROTOCOL_VERSION
    parent_run_id: str | None = None  # a subagent's run: the run whose tool call started it


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
class StateSnapshot(Event):
    type: ClassVar[str] = "STATE_SNAPSHOT"
    snapshot: Any

    def to_wire(self) -> dict[str, Any]:
        wire = Event.to_wire(self)
        wire.setdefault("snapshot", None)  # a null state is a state: the field is required
        return wire


@dataclass(kw_only=True, slots=True)
class StateDelta(Event):
    type: ClassVar[str] = "STATE_DELTA"
    delta: list[Any]


@dataclass(kw_only=True, slots=True)
class MessagesSnapshot(Event):
    """A served thread's messages, in AG-UI's wire form (sent by `serve` only)."""

    type: ClassVar[str] = "MESSAGES_SNAPSHOT"
    messages: list[dict[str, Any]]


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
    """AG-UI's CUSTOM event: what AG-UI has no name for. agentcli's own kinds are the typed
    subclasses below, one JSON shape each (`value`, camelCase, optional keys omitted); a
    plain `Custom` carries any other name (a remote agent's, say) as it came."""

    type: ClassVar[str] = "CUSTOM"
    name: str
    value: Any

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"type": self.type, "timestamp": self.timestamp}
        if self.metadata is not None:
            wire["metadata"] = self.metadata
        wire["name"] = self.name
        wire["value"] = self.value
        return wire


_CUSTOM_BASE = {"timestamp", "metadata", "name", "value"}


def _typed(name: str) -> Any:
    """Class decorator: a typed CUSTOM event named `name`; `value` is its own fields."""

    def wrap(cls: Any) -> Any:
        cls.NAME = name
        CUSTOM_KINDS[name] = cls
        return cls

    return wrap


CUSTOM_KINDS: dict[str, type[TypedCustom]] = {}


@dataclass(kw_only=True, slots=True)
class TypedCustom(Custom):
    NAME: ClassVar[str] = ""
    name: str = field(default="", init=False)
    value: Any = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.name = self.NAME
        value: dict[str, Any] = {}
        for f in fields(self):
            if f.name not in _CUSTOM_BASE:
                item = getattr(self, f.name)
                if item is not None:
                    value[_camel(f.name)] = item
        self.value = value

    @classmethod
    def from_value(cls, value: Any, **base: Any) -> TypedCustom | None:
        """The typed event for a received value, or None when it does not fit the shape."""
        if not isinstance(value, dict):
            return None
        known = {_camel(f.name): f.name for f in fields(cls) if f.name not in _CUSTOM_BASE}
        if not set(value) <= set(known):
            return None
        try:
            return cls(**{known[k]: v for k, v in value.items()}, **base)
        except TypeError:
            return None


@_typed("approval")
@dataclass(kw_only=True, slots=True)
class Approval(TypedCustom):
    """How a tool call was decided, before it runs: `{"toolCallId", "tool", "risk":
    "low|medium|high", "decision": "allow|deny", "by": "auto|rule|user|flag|...",
    "reason", "rule"?, "sandbox"?}` — `sandbox`: the profile a command runs in
    (read-only, workspace-write, network, none), for tools that run commands."""

    tool_call_id: str
    tool: str
    risk: str
    decision: str
    by: str
    reason: str
    rule: str | None = None
    sandbox: str | None = None


@_typed("tool_state")
@dataclass(kw_only=True, slots=True)
class ToolState(TypedCustom):
    """A call's state between its END and its RESULT: `{"toolCallId", "state": "waiting for
    approval" | "running"}`."""

    tool_call_id: str
    state: str


@_typed("progress")
@dataclass(kw_only=True, slots=True)
class Progress(TypedCustom):
    """A running call's news: a command's latest output `{"toolCallId", "lines": [str],
    "bytes": int}`; an MCP server's progress notification `{"toolCallId", "lines": [the
    line shown], "progress", "total"?, "message"?}`."""

    tool_call_id: str
    lines: list[str] | None = None
    bytes: int | None = None
    progress: float | None = None
    total: float | None = None
    message: str | None = None


@_typed("warning")
@dataclass(kw_only=True, slots=True)
class RunWarning(TypedCustom):
    """Something the user should know that did not stop the run: `{"message", "code"?}` —
    `code` names the kind when a program may act on it (`no_streaming`: the server is asked
    without streaming from here on)."""

    message: str
    code: str | None = None


@_typed("hook")
@dataclass(kw_only=True, slots=True)
class HookRan(TypedCustom):
    """What one of the user's hooks decided: `{"hookEvent", "command", "origin", "outcome":
    "ok" | "allow" | "deny" | "ask" | "block" | "failed", "reason"?, "exitCode"?,
    "toolCallId"?, "changedInput"?, "addedContext"?}` — `ok`: it let things go on;
    `failed`: it timed out, could not start, exited other than 0 or 2, or answered what
    is not its JSON (`reason` says which)."""

    hook_event: str
    command: str
    origin: str
    outcome: str
    reason: str | None = None
    exit_code: int | None = None
    tool_call_id: str | None = None
    changed_input: bool | None = None
    added_context: bool | None = None


@_typed("mcp_log")
@dataclass(kw_only=True, slots=True)
class McpLog(TypedCustom):
    """A log message an MCP server sent (notifications/message), at or above its
    configured level: `{"server", "level", "message", "logger"?}`."""

    server: str
    level: str
    message: str
    logger: str | None = None


@_typed("mcp_request")
@dataclass(kw_only=True, slots=True)
class McpRequest(TypedCustom):
    """What became of an MCP server's request to agentcli (sampling, elicitation):
    `{"server", "kind": "sampling" | "elicitation", "outcome": "accept" | "decline" |
    "cancel" | "error", "by": "user" | "rule" | "flag" | "auto", "reason"?, "rule"?,
    "usage"?}` — `usage`: the tokens a sampling request took of the session's model
    (`{"inputTokens", "outputTokens", "totalTokens"}`), beside the turn's own."""

    server: str
    kind: str
    outcome: str
    by: str
    reason: str | None = None
    rule: str | None = None
    usage: dict[str, Any] | None = None


@_typed("instructions")
@dataclass(kw_only=True, slots=True)
class Instructions(TypedCustom):
    """The instruction files (AGENTS.md, ...) this run follows: `{"files": [path]}`."""

    files: list[str]


@_typed("usage")
@dataclass(kw_only=True, slots=True)
class UsageReport(TypedCustom):
    """One model step's tokens, AG-UI's TokenUsage shape: `{"provider"?, "model"?,
    "inputTokens", "outputTokens", "totalTokens"}`."""

    provider: str | None = None
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0

    @classmethod
    def of(cls, usage: Usage, provider: str | None, model: str | None) -> UsageReport:
        return cls(provider=provider or None, model=model or None, **usage.counts())


@_typed("retry")
@dataclass(kw_only=True, slots=True)
class Retry(TypedCustom):
    """A provider request failed and is tried again: `{"attempt", "delaySeconds", "reason",
    "status"?}`."""

    attempt: int
    delay_seconds: float
    reason: str
    status: int | None = None


@_typed("compaction")
@dataclass(kw_only=True, slots=True)
class Compaction(TypedCustom):
    """Earlier messages were summarised: `{"summarisedMessages", "keptMessages",
    "summaryChars", "requests"?}` — `requests`: how many summary requests it took (a
    history beyond the window is summarised in pieces)."""

    summarised_messages: int
    kept_messages: int
    summary_chars: int
    requests: int | None = None


@_typed("compacting")
@dataclass(kw_only=True, slots=True)
class Compacting(TypedCustom):
    """Said before the older messages are summarised: `{"window", "usedTokens"?}` —
    `usedTokens`: the estimate that passed the threshold (absent for `/compact`)."""

    window: int
    used_tokens: int | None = None

    @property
    def notice(self) -> str:
        """The one line a person reads."""
        if self.used_tokens is None:
            return "compacting older turns…"
        percent = round(100 * self.used_tokens / self.window) if self.window else 0
        return f"context {percent}% full: compacting older turns…"


def custom_event(name: str, value: Any, **base: Any) -> Custom:
    """A received CUSTOM event: typed when agentcli knows the name and the shape fits."""
    kind = CUSTOM_KINDS.get(name)
    typed = kind.from_value(value, **base) if kind is not None else None
    return typed if typed is not None else Custom(name=name, value=value, **base)


# In a CUSTOM event's metadata: a remote party (an AG-UI agent) wrote it, not agentcli. Such
# an event is never read as agentcli's own kind (an `approval` a remote agent sends is not
# agentcli's audit record of one), wherever it is read again: outputs, folds, session files.
RELAYED_FROM = "relayedFrom"


def relayed(name: str, value: Any, source: str, **base: Any) -> Custom:
    """A CUSTOM event from a remote party, kept as theirs."""
    metadata = {**(base.pop("metadata", None) or {}), RELAYED_FROM: source}
    return Custom(name=name, value=value, metadata=metadata, **base)


def typed(event: Event) -> Event:
    """`event`, or its typed form when it is a plain CUSTOM of a kind agentcli knows (and
    agentcli wrote it: a relayed one stays plain)."""
    if type(event) is Custom and RELAYED_FROM not in (event.metadata or {}):
        return custom_event(
            event.name, event.value, timestamp=event.timestamp, metadata=event.metadata
        )
    return event


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

    def counts(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
        }

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
