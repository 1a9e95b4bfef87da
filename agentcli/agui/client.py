"""`--agent URL`: a remote AG-UI agent in the place of the model. Each model step is one
AG-UI run: agentcli POSTs a RunAgentInput (the conversation, and its local tools as frontend
tools) and reads the run's events. A call of a local tool ends the step like a model's tool
call: agentcli's executor runs it under agentcli's own policy and sandbox, and the next run
carries the result. The remote agent's own tool calls and results are shown, never run here.
Needs only httpx (no serve extra)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from agentcli import records
from agentcli.agui.wire import message_to_wire
from agentcli.conversation import events as ev
from agentcli.conversation.fold import StreamFold
from agentcli.conversation.messages import new_id
from agentcli.errors import ProviderError
from agentcli.providers.base import ModelRequest
from agentcli.providers.http import HttpProvider
from agentcli.text.decoding import loads

if TYPE_CHECKING:
    from agentcli.settings import RunSettings

TOKEN_ENV = "AGENTCLI_AGENT_TOKEN"  # a bearer token for the remote agent, when it wants one

_PASSED = {
    "TEXT_MESSAGE_START": ev.TextMessageStart,
    "TEXT_MESSAGE_CONTENT": ev.TextMessageContent,
    "TEXT_MESSAGE_END": ev.TextMessageEnd,
    "TOOL_CALL_ARGS": ev.ToolCallArgs,
    "TOOL_CALL_END": ev.ToolCallEnd,
    "TOOL_CALL_RESULT": ev.ToolCallResult,
    "REASONING_START": ev.ReasoningStart,
    "REASONING_MESSAGE_START": ev.ReasoningMessageStart,
    "REASONING_MESSAGE_CONTENT": ev.ReasoningMessageContent,
    "REASONING_MESSAGE_END": ev.ReasoningMessageEnd,
    "REASONING_END": ev.ReasoningEnd,
    "STATE_SNAPSHOT": ev.StateSnapshot,
    "STATE_DELTA": ev.StateDelta,
}


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def event_from_wire(
    raw: dict[str, Any], local_tools: set[str], source: str = "a remote agent"
) -> ev.Event | None:
    """A received event as agentcli's, or None for what agentcli's own run already says
    (RUN_*, STEP_*) or does not know. A call of a tool that is not local is marked as run
    by the remote side, so it is shown and never executed here; a CUSTOM event stays the
    remote's (`source`), never one of agentcli's own records."""
    kind = raw.get("type")
    fields = {_snake(k): v for k, v in raw.items() if k not in ("type", "rawEvent")}
    if kind == "TOOL_CALL_START":
        remote = fields.get("tool_call_name") not in local_tools
        if remote:
            fields["metadata"] = {**(fields.get("metadata") or {}), "executedBy": "provider"}
        cls: Any = ev.ToolCallStart
    elif kind == "CUSTOM":
        base = {k: fields[k] for k in ("timestamp", "metadata") if k in fields}
        return ev.relayed(str(fields.get("name")), fields.get("value"), source, **base)
    else:
        cls = _PASSED.get(str(kind))
        if cls is None:
            return None
    known = {f.name for f in records.fields(cls)}
    try:
        return cls(**{k: v for k, v in fields.items() if k in known})  # newer fields dropped
    except TypeError:
        return None  # a required field missing: not shown rather than a crash


class ChunkExpander:
    """TEXT_MESSAGE_CHUNK and TOOL_CALL_CHUNK (AG-UI's convenience events) as the
    START / CONTENT|ARGS / END events they stand for: a chunk with a new id opens a message
    or call, and whatever comes next that is not its chunk closes it."""

    def __init__(self) -> None:
        self._open: tuple[str, str] | None = None  # ("text" | "tool", id)

    def feed(self, raw: dict[str, Any]) -> list[dict[str, Any]]:
        kind = raw.get("type")
        if kind == "TEXT_MESSAGE_CHUNK":
            return self._chunk("text", raw.get("messageId"), raw, "messageId")
        if kind == "TOOL_CALL_CHUNK":
            return self._chunk("tool", raw.get("toolCallId"), raw, "toolCallId")
        return [*self.close(), raw]

    def _chunk(self, what: str, ident: Any, raw: dict[str, Any], key: str) -> list[dict]:
        out: list[dict[str, Any]] = []
        current = self._open[1] if self._open and self._open[0] == what else None
        if ident is None:
            ident = current
        if ident is None:
            return out  # a chunk of nothing open: nothing to show
        if ident != current:
            out += self.close()
            if what == "text":
                out.append({"type": "TEXT_MESSAGE_START", key: ident, "role": "assistant"})
            else:
                start = {
                    "type": "TOOL_CALL_START",
                    key: ident,
                    "toolCallName": raw.get("toolCallName", ""),
                }
                if raw.get("parentMessageId"):
                    start["parentMessageId"] = raw["parentMessageId"]
                out.append(start)
            self._open = (what, ident)
        if raw.get("delta"):
            kind = "TEXT_MESSAGE_CONTENT" if what == "text" else "TOOL_CALL_ARGS"
            out.append({"type": kind, key: ident, "delta": raw["delta"]})
        return out

    def close(self) -> list[dict[str, Any]]:
        if self._open is None:
            return []
        what, ident = self._open
        self._open = None
        if what == "text":
            return [{"type": "TEXT_MESSAGE_END", "messageId": ident}]
        return [{"type": "TOOL_CALL_END", "toolCallId": ident}]


class AguiProvider(HttpProvider):
    base_url_hint = "--agent"

    def __init__(self, url: str, *, api_key: str | None, thread_id: str | None = None) -> None:
        super().__init__(url, name="agent", base_url=url, api_key=api_key, api_key_env=TOKEN_ENV)
        self.thread_id = thread_id or new_id("thread")

    def _attempt(self, request: ModelRequest) -> AsyncIterator[ev.Event | ev.StepEnd]:
        return self._run(request)

    def run_input(self, request: ModelRequest) -> dict[str, Any]:
        messages = [message_to_wire(m) for m in request.messages if m.role != "system"]
        return {
            "threadId": self.thread_id,
            "runId": new_id("run"),
            "messages": messages,
            "tools": request.tools,
            "context": [],
            "state": {},
            "forwardedProps": {},
        }

    async def _run(self, request: ModelRequest) -> AsyncIterator[ev.Event | ev.StepEnd]:
        headers = {"Accept": "text/event-stream"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        local = {tool["name"] for tool in request.tools}
        fold = StreamFold()  # which local calls the agent left for agentcli to answer
        chunks = ChunkExpander()
        usage = ev.Usage()
        finished = False
        async for batch in self._open_stream("", headers=headers, body=self.run_input(request)):
            for message in batch:
                try:
                    raw = loads(message.data)
                except ValueError:
                    raise ProviderError(
                        f"the agent sent an event that is not JSON: {message.data[:200]!r}"
                    ) from None
                if not isinstance(raw, dict):
                    continue
                for item in chunks.feed(raw):
                    finished = self._finished(item, usage) or finished
                    event = event_from_wire(item, local, self.base_url)
                    if event is not None:
                        yield fold.apply(event)
        for item in chunks.close():
            yield fold.apply(event_from_wire(item, local, self.base_url))  # type: ignore[arg-type]
        if not finished:
            raise ProviderError("the agent's stream ended without RUN_FINISHED or RUN_ERROR")
        pending = [c for c in fold.calls.values() if c.name in local and not c.finished]
        reason = "tool_calls" if pending else "stop"
        yield ev.StepEnd(finish_reason=reason, usage=usage)

    @staticmethod
    def _finished(raw: dict[str, Any], usage: ev.Usage) -> bool:
        """RUN_FINISHED (adding its usage) or RUN_ERROR (raised); False for the rest."""
        kind = raw.get("type")
        if kind == "RUN_ERROR":
            raise ProviderError(f"the agent failed: {raw.get('message', 'no message')}")
        if kind != "RUN_FINISHED":
            return False
        for item in raw.get("usage") or []:
            usage.add(ev.Usage(item.get("inputTokens", 0), item.get("outputTokens", 0)))
        return True


def from_settings(settings: RunSettings) -> AguiProvider:
    """`--agent URL`: the remote agent at the provider's base URL."""
    return AguiProvider(settings.provider.base_url or "", api_key=settings.api_key)
