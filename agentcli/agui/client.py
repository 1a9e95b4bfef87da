"""`--agent URL`: a remote AG-UI agent in the place of the model. Each model step is one
AG-UI run: agentcli POSTs a RunAgentInput (the conversation, and its local tools as frontend
tools) and reads the run's events. A call of a local tool ends the step like a model's tool
call: agentcli's executor runs it under agentcli's own policy and sandbox, and the next run
carries the result. The remote agent's own tool calls and results are shown, never run here.
Needs httpx and the `ag-ui-protocol` models (agentcli.agui.inbound), no serve extra."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from agentcli import records
from agentcli.agui.inbound import checked_event
from agentcli.agui.state import StateError
from agentcli.agui.thread_view import EXTRA_KEY, ThreadView, added, wire_history
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
    elif kind == "TOOL_CALL_RESULT":
        fields["content"] = parts_text(fields.get("content"))
        cls = ev.ToolCallResult
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
    json_answers = False  # an agent always streams: a JSON body is said to be one

    def describe_status(self, status: int, detail: str) -> str:
        if status == 404:  # an agent has no model name to check: only its URL
            return (
                f"agent: not found (HTTP 404: {detail}) at {self.base_url}. Check the --agent URL."
            )
        return super().describe_status(status, detail)

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None,
        thread_id: str | None = None,
        context: list[dict[str, str]] | None = None,
        state_limit: int | None = None,
    ) -> None:
        super().__init__(url, name="agent", base_url=url, api_key=api_key, api_key_env=TOKEN_ENV)
        self.thread_id = thread_id or new_id("thread")
        self.context = list(context or [])  # the workspace and its instructions, each run
        self.state_limit = state_limit  # limits.state, for the remote's STATE_DELTAs

    def _attempt(self, request: ModelRequest) -> AsyncIterator[ev.Event | ev.StepEnd]:
        return self._run(request)

    def run_input(self, request: ModelRequest) -> dict[str, Any]:
        """The next run: the thread as the agent last described it (its own tool calls and
        results, what its snapshots replaced) and what agentcli added since; the state
        it last had (null until it has sent one); the workspace and its instructions as
        context."""
        messages, state = wire_history(request.messages)
        return {
            "threadId": self.thread_id,
            "runId": new_id("run"),
            "messages": messages,
            "tools": request.tools,
            "context": self.context,
            "state": state,
            "forwardedProps": {},
        }

    async def _run(self, request: ModelRequest) -> AsyncIterator[ev.Event | ev.StepEnd]:
        headers = {"Accept": "text/event-stream"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        local = {tool["name"] for tool in request.tools}
        body = self.run_input(request)
        run = RemoteRun(body["messages"], body["state"], local, self.base_url)
        if self.state_limit is not None:
            run.view.state_limit = self.state_limit
        chunks = ChunkExpander()
        usage = ev.Usage()
        finished = False
        async for batch in self._open_stream("", headers=headers, body=body):
            for message in batch:
                try:
                    raw = loads(message.data)
                except ValueError as error:
                    raise ProviderError(not_json(message.data, error)) from None
                raw = checked_event(raw)  # a wrong shape ends the run here, unrecorded
                if raw is None:
                    continue  # an event type AG-UI's SDK does not know
                for item in chunks.feed(raw):
                    finished = self._finished(item, usage) or finished
                    for event in run.feed(item):
                        yield event
        for item in chunks.close():
            for event in run.feed(item):
                yield event
        if not finished:
            raise ProviderError("the agent's stream ended without RUN_FINISHED or RUN_ERROR")
        record = added(body["messages"], run.view)
        pending = False
        for event in run.finish(record):
            pending = pending or run.is_local_call(event)
            yield event
        reason = "tool_calls" if pending else "stop"
        yield ev.StepEnd(finish_reason=reason, usage=usage, extra={EXTRA_KEY: record})

    @staticmethod
    def _finished(raw: dict[str, Any], usage: ev.Usage) -> bool:
        """RUN_FINISHED (adding its usage) or RUN_ERROR (raised); False for the rest."""
        kind = raw.get("type")
        if kind == "RUN_ERROR":
            said = raw.get("message") or raw.get("code") or "it gave no message"
            raise ProviderError(f"the agent failed: {said}")
        if kind != "RUN_FINISHED":
            return False
        for item in raw.get("usage") or []:  # checked: a list of AG-UI's TokenUsage
            usage.add(ev.Usage(item.get("inputTokens") or 0, item.get("outputTokens") or 0))
        return True


def not_json(data: str, error: ValueError) -> str:
    """One line for an event's data that does not parse: why (a syntax error, a number
    too long to read, nesting too deep), and how it begins."""
    why = str(error).split(": line ")[0]  # json's position is in the snippet's place
    return f"the agent sent an event that is not JSON ({why}): {data[:200]!r}"


class RemoteRun:
    """One run's events on their way to agentcli. What the agent's own side did passes
    through as it comes; calls of local tools are held until the run ends and then given
    with the arguments of the agent's last word on them (a MESSAGES_SNAPSHOT may be the
    only place a call, or its arguments, appear); what only a snapshot showed is shown."""

    def __init__(
        self, messages: list[dict[str, Any]], state: Any, local: set[str], source: str
    ) -> None:
        self.view = ThreadView(messages, state)
        self.fold = StreamFold()  # what the stream showed
        self.local = local
        self.source = source
        self._held: set[str] = set()  # local calls seen, not passed on yet
        self._answered = {m.get("toolCallId") for m in messages if m.get("role") == "tool"}
        self._sent = {m.get("id") for m in messages}  # a snapshot repeats them: not new

    def feed(self, item: dict[str, Any]) -> list[ev.Event]:
        try:
            self.view.apply(item)
        except StateError as error:
            return [ev.RunWarning(message=str(error))]  # the state stays as it was
        if item.get("type") == "MESSAGES_SNAPSHOT":
            return []  # applied to the thread; what it adds is shown when the run ends
        event = event_from_wire(item, self.local, self.source)
        if event is None:
            return []
        call_id = getattr(event, "tool_call_id", None)
        if isinstance(event, ev.ToolCallStart) and event.tool_call_name in self.local:
            self._held.add(event.tool_call_id)
            return []
        if call_id in self._held:
            return []
        return [self.fold.apply(event)]

    def finish(self, record: dict[str, Any]) -> list[ev.Event]:
        """What the run added that the stream did not show, then the local calls left for
        agentcli to run (a local call the agent answered itself is shown as its own)."""
        results = {m.get("toolCallId"): m for m in self.view.messages if m.get("role") == "tool"}
        out: list[ev.Event] = []
        for message in record["messages"]:
            if message.get("id") in self._sent:
                continue
            if message.get("role") == "tool":
                out += self._result(message)
                continue
            if message.get("role") != "assistant":
                continue
            if message.get("content") and message.get("id") not in self.fold.texts:
                out += _text(message)
            for call in message.get("toolCalls") or []:
                if not isinstance(call, dict) or not call.get("id"):
                    continue
                if call["id"] in self._answered:
                    continue
                mine = _function(call)[0] in self.local and call["id"] not in results
                if mine or call["id"] in self._held or call["id"] not in self.fold.calls:
                    out += self._call(message, call, remote=not mine)
        return [self.fold.apply(event) for event in out]

    def _result(self, message: dict[str, Any]) -> list[ev.Event]:
        call = self.fold.calls.get(message.get("toolCallId") or "")
        if call is not None and call.result is not None:
            return []  # the stream showed it
        if message.get("toolCallId") in self._answered:
            return []
        return [
            ev.ToolCallResult(
                message_id=str(message.get("id") or new_id("msg")),
                tool_call_id=str(message.get("toolCallId")),
                content=parts_text(message.get("content")),
            )
        ]

    def _call(self, message: dict[str, Any], call: dict[str, Any], *, remote: bool) -> list:
        name, arguments = _function(call)
        meta = {"executedBy": "provider"} if remote else None
        start = ev.ToolCallStart(
            tool_call_id=call["id"],
            tool_call_name=name,
            parent_message_id=message.get("id"),
            metadata=meta,
        )
        return [
            start,
            ev.ToolCallArgs(tool_call_id=call["id"], delta=arguments),
            ev.ToolCallEnd(tool_call_id=call["id"]),
        ]

    def is_local_call(self, event: ev.Event) -> bool:
        return (
            isinstance(event, ev.ToolCallStart)
            and event.tool_call_name in self.local
            and (event.metadata or {}).get("executedBy") != "provider"
        )


def _function(call: dict[str, Any]) -> tuple[str, str]:
    function = call.get("function") or {}
    arguments = function.get("arguments")
    return str(function.get("name") or ""), arguments if isinstance(arguments, str) else ""


def parts_text(content: Any) -> str:
    """A result's content as text: AG-UI allows a string or a list of parts (the text
    parts are kept; an image or a file is not text agentcli can show or send on)."""
    if isinstance(content, str):
        return content
    texts = [p.get("text") for p in content or [] if isinstance(p, dict)]
    return "\n".join(t for t in texts if isinstance(t, str))


def _text(message: dict[str, Any]) -> list[ev.Event]:
    ident = str(message["id"])
    return [
        ev.TextMessageStart(message_id=ident),
        ev.TextMessageContent(message_id=ident, delta=str(message["content"])),
        ev.TextMessageEnd(message_id=ident),
    ]


def agent_context(settings: RunSettings) -> list[dict[str, str]]:
    """What the remote agent is told of this side, each run: where agentcli's tools act,
    the project's instructions (AGENTS.md and the like) and the user's --system."""
    from agentcli.context.instructions import find_instructions, instructions_block

    workspace = settings.workspace
    context = [
        {
            "description": "The user's workspace: agentcli's tools (offered as frontend "
            "tools) act in this directory; their paths are relative to it",
            "value": str(workspace),
        }
    ]
    found = find_instructions(workspace, settings.config.get("instructions.files"))
    if found:
        context.append(
            {
                "description": "Instructions the user's project gives agents working in it",
                "value": instructions_block(found, workspace),
            }
        )
    if settings.system:
        told = {"description": "The user's instructions (--system)", "value": settings.system}
        context.append(told)
    return context


def from_settings(settings: RunSettings) -> AguiProvider:
    """`--agent URL`: the remote agent at the provider's base URL."""
    return AguiProvider(
        settings.provider.base_url or "",
        api_key=settings.api_key,
        context=agent_context(settings),
        state_limit=settings.config.get("limits.state"),
    )
