"""A scripted Anthropic Messages server for end-to-end tests (protocols.md §2).

Stdlib only, the same shape as :mod:`tests.scripted_server` and on the same machinery
(:mod:`tests.sse_server`): each POST to ``/v1/messages`` is recorded, then answered with the
next queued :class:`AReply` (FIFO). Streams are Anthropic SSE
(``event: NAME`` + ``data: {"type": NAME, ...}``) sent with HTTP/1.1 chunked transfer
encoding, one chunk per event, so every event reaches the client as soon as it is written and
an abrupt close (``AReply.cut``) is a protocol error for the client, not a clean end.

    with ScriptedAnthropic() as server:
        server.enqueue(AReply.text(["Hel", "lo"]))
        ...  # ANTHROPIC_BASE_URL=server.base_url (the client appends /v1/messages)
        assert server.requests[0].headers["x-api-key"] == "sk-ant-test"

Replies are lists of content blocks rendered at play time (the model name in
``message_start`` echoes the request). Block builders (:func:`text_block`,
:func:`tool_use_block`, :func:`thinking_block`, :func:`server_tool_use_block`,
:func:`server_tool_result_block`) compose with :meth:`AReply.message`; the other
classmethods are shortcuts for the usual shapes.
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal
from urllib.parse import parse_qs, urlsplit

from tests.sse_server import (
    Pause,
    Raw,
    RawReplies,
    RecordedRequest,
    SSEHandler,
    SSEServer,
    dumps,
    header_items,
)

__all__ = [
    "DEFAULT_MODEL",
    "MESSAGES_PATH",
    "NO_REPLY_MESSAGE",
    "AReply",
    "Block",
    "RecordedRequest",
    "ScriptedAnthropic",
    "server_tool_result_block",
    "server_tool_use_block",
    "text_block",
    "thinking_block",
    "tool_use_block",
]

DEFAULT_MODEL = "claude-scripted"
NO_REPLY_MESSAGE = "scripted anthropic: no reply queued"
MESSAGES_PATH = "/v1/messages"
MODELS_PATH = "/v1/models"
DEFAULT_SIGNATURE = "c2lnbmF0dXJlLW9mLXRoZS10aGlua2luZw=="
UNKNOWN_EVENT = "scripted_future_event"  # an event type no client knows: must be ignored

# Global so generated ids stay unique across the turns of one conversation.
_ids = itertools.count(1)


def _new_id(prefix: str) -> str:
    return f"{prefix}_scripted{next(_ids):04d}"


# --- Content blocks: what one assistant message holds, in order ---


@dataclass(frozen=True)
class Block:
    """One content block: the ``content_block_start`` payload and the deltas that follow."""

    start: dict[str, Any]
    deltas: tuple[dict[str, Any], ...] = ()


def _fragments(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _pieces(text: str | Sequence[str]) -> list[str]:
    return [text] if isinstance(text, str) else list(text)


def _input_text(value: Mapping[str, Any] | str | None) -> str:
    # A str is sent verbatim so tests can send malformed JSON on purpose.
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(dict(value))


def text_block(pieces: str | Sequence[str]) -> Block:
    deltas = tuple({"type": "text_delta", "text": p} for p in _pieces(pieces))
    return Block({"type": "text", "text": ""}, deltas)


def tool_use_block(
    name: str,
    input: Mapping[str, Any] | str | None,
    id: str | None = None,
    *,
    fragment: int = 8,
    server: bool = False,
) -> Block:
    """A ``tool_use`` (or ``server_tool_use``) block whose input streams as
    ``input_json_delta`` fragments of ``fragment`` characters."""
    if fragment < 1:
        raise ValueError("fragment must be >= 1")
    kind = "server_tool_use" if server else "tool_use"
    block_id = id or _new_id("srvtoolu" if server else "toolu")
    start = {"type": kind, "id": block_id, "name": name, "input": {}}
    deltas = tuple(
        {"type": "input_json_delta", "partial_json": piece}
        for piece in _fragments(_input_text(input), fragment)
    )
    return Block(start, deltas)


def thinking_block(text: str | Sequence[str], signature: str = DEFAULT_SIGNATURE) -> Block:
    """Extended thinking: ``thinking_delta`` pieces, then one ``signature_delta``."""
    deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(text)]
    deltas.append({"type": "signature_delta", "signature": signature})
    return Block({"type": "thinking", "thinking": ""}, tuple(deltas))


def server_tool_use_block(
    name: str, input: Mapping[str, Any] | str, id: str | None = None, *, fragment: int = 8
) -> Block:
    return tool_use_block(name, input, id, fragment=fragment, server=True)


def server_tool_result_block(
    tool_use_id: str, content: Any, type_: str = "web_search_tool_result"
) -> Block:
    """A provider-executed tool's result: all in ``content_block_start``, no deltas."""
    return Block({"type": type_, "tool_use_id": tool_use_id, "content": content})


# --- Steps: what a streaming reply writes ---


@dataclass(frozen=True)
class Event:
    """``event: NAME`` + ``data: {"type": NAME, **data}``; ``model`` is filled in at play time
    for ``message_start``."""

    name: str
    data: dict[str, Any]


# Raw and Pause come from tests.sse_server: the server writes/waits them itself.
Step = Event | Raw | Pause


def _event(name: str, **data: Any) -> Event:
    return Event(name, {"type": name, **data})


def _message_start(input_tokens: int) -> Event:
    message = {
        "id": None,  # filled in at play time, one per response
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": None,  # filled in at play time: the request's model
        "stop_reason": None,
        "stop_sequence": None,
        # As the real API: the output count starts at 1 and message_delta gives the total.
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    }
    return _event("message_start", message=message)


def _block_events(index: int, block: Block, delay: float, ping: bool) -> list[Step]:
    steps: list[Step] = [_event("content_block_start", index=index, content_block=block.start)]
    for position, delta in enumerate(block.deltas):
        if position and delay > 0:
            steps.append(Pause(delay))
        if ping and position == 0:
            steps.append(_event("ping"))
        steps.append(_event("content_block_delta", index=index, delta=delta))
    return steps


def _unknown(where: str) -> Event:
    return _event(UNKNOWN_EVENT, where=where, payload={"nested": [1, 2, 3]})


def _render_blocks(
    blocks: Sequence[Block], *, delay: float, ping: bool, unknown_events: bool
) -> list[Step]:
    steps: list[Step] = []
    for index, block in enumerate(blocks):
        if index and delay > 0:
            steps.append(Pause(delay))
        if unknown_events:
            steps.append(_unknown(f"before block {index}"))
        steps += _block_events(index, block, delay, ping)
        steps.append(_event("content_block_stop", index=index))
    return steps


# --- Replies ---


@dataclass(frozen=True)
class AReply(RawReplies):
    """One scripted answer. Build with the classmethods; the server plays it back."""

    _raw_ending: ClassVar[str] = "none"  # what raw() replies end with
    kind: Literal["stream", "json"]
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""  # json replies
    # stream replies: either structured (blocks ...) or exact steps (raw, hang)
    blocks: tuple[Block, ...] = ()
    stop_reason: str | None = "end_turn"
    usage: tuple[int, int] = (10, 5)
    ping: bool = False
    delay: float = 0.0
    unknown_events: bool = False
    # "message" = message_delta + message_stop; "error" = an error event instead (then the
    # stream ends cleanly); "abort" = the socket is shut down mid-body; "none" = the body just
    # ends (no message_delta, no message_stop).
    ending: Literal["message", "error", "abort", "none"] = "message"
    error_event: dict[str, Any] | None = None  # the ``error`` event's payload (ending="error")
    open_last_block: bool = False  # no content_block_stop for the last block (mid-stream end)
    partial: str | None = None  # text written just before an abort, e.g. half an event
    steps: tuple[Step, ...] | None = None  # exact steps: overrides everything above

    # -- shapes --

    @classmethod
    def message(
        cls,
        blocks: Sequence[Block],
        *,
        stop_reason: str | None = "end_turn",
        usage: tuple[int, int] = (10, 5),
        ping: bool = False,
        delay: float = 0.0,
        unknown_events: bool = False,
    ) -> AReply:
        """A whole message with these content blocks, in order."""
        return cls(
            kind="stream",
            blocks=tuple(blocks),
            stop_reason=stop_reason,
            usage=usage,
            ping=ping,
            delay=delay,
            unknown_events=unknown_events,
        )

    @classmethod
    def text(
        cls,
        pieces: str | Sequence[str],
        *,
        stop_reason: str = "end_turn",
        usage: tuple[int, int] = (10, 5),
        ping: bool = False,
        delay: float = 0.0,
        unknown_events: bool = False,
        thinking: str | Sequence[str] | None = None,
        signature: str = DEFAULT_SIGNATURE,
    ) -> AReply:
        """One text block; ``thinking`` prepends a thinking block with its signature."""
        blocks = [text_block(pieces)]
        if thinking is not None:
            blocks.insert(0, thinking_block(thinking, signature))
        return cls.message(
            blocks,
            stop_reason=stop_reason,
            usage=usage,
            ping=ping,
            delay=delay,
            unknown_events=unknown_events,
        )

    @classmethod
    def tool_use(
        cls,
        calls: Sequence[Mapping[str, Any]],
        *,
        text_before: str | Sequence[str] | None = None,
        fragment: int = 8,
        stop_reason: str = "tool_use",
        usage: tuple[int, int] = (10, 5),
        ping: bool = False,
        unknown_events: bool = False,
        thinking: str | Sequence[str] | None = None,
        signature: str = DEFAULT_SIGNATURE,
    ) -> AReply:
        """Calls ``{"name", "input": dict | str (raw partial_json text), "id"?}``, one
        ``tool_use`` block each (several = parallel tool use), after optional text."""
        blocks = [
            tool_use_block(c["name"], c.get("input"), c.get("id"), fragment=fragment) for c in calls
        ]
        if text_before is not None:
            blocks.insert(0, text_block(text_before))
        if thinking is not None:
            blocks.insert(0, thinking_block(thinking, signature))
        return cls.message(
            blocks, stop_reason=stop_reason, usage=usage, ping=ping, unknown_events=unknown_events
        )

    @classmethod
    def thinking(
        cls, text: str | Sequence[str], signature: str = DEFAULT_SIGNATURE, *, then: AReply
    ) -> AReply:
        """``then`` with a thinking block (deltas + signature) before its blocks."""
        if then.kind != "stream" or then.steps is not None:
            raise ValueError("thinking() needs a block reply (text, tool_use, message, ...)")
        return replace(then, blocks=(thinking_block(text, signature), *then.blocks))

    @classmethod
    def server_tool(
        cls,
        name: str,
        input: Mapping[str, Any] | str,
        result_content: Any,
        *,
        text: str | Sequence[str] | None = ("Here is what I found.",),
        id: str | None = None,
        result_type: str = "web_search_tool_result",
        calls: Sequence[Mapping[str, Any]] = (),
        stop_reason: str | None = None,
        usage: tuple[int, int] = (10, 5),
    ) -> AReply:
        """A provider-executed tool: ``server_tool_use`` + its result block, then text, then
        optional client ``calls`` (stop_reason ``tool_use`` then, else ``end_turn``)."""
        tool_id = id or _new_id("srvtoolu")
        blocks = [
            server_tool_use_block(name, input, tool_id),
            server_tool_result_block(tool_id, result_content, result_type),
        ]
        if text is not None:
            blocks.append(text_block(text))
        blocks += [tool_use_block(c["name"], c.get("input"), c.get("id")) for c in calls]
        reason = stop_reason or ("tool_use" if calls else "end_turn")
        return cls.message(blocks, stop_reason=reason, usage=usage)

    @classmethod
    def max_tokens(cls, pieces: str | Sequence[str], **options: Any) -> AReply:
        """Text that stops at the output token limit (stop_reason ``max_tokens``)."""
        return cls.text(pieces, stop_reason="max_tokens", **options)

    # -- failures --

    @classmethod
    def error(
        cls,
        status: int,
        type_: str | None = None,
        message: str | None = None,
        headers: Mapping[str, str] | None = None,
        *,
        body: str | None = None,
    ) -> AReply:
        """A non-streaming JSON error ``{"type":"error","error":{"type","message"}}``;
        ``body`` replaces the whole body when given."""
        if body is None:
            error = {
                "type": type_ or _error_type(status),
                "message": message or f"scripted error (HTTP {status})",
            }
            body = dumps({"type": "error", "error": error})
        return cls(kind="json", status=status, headers=header_items(headers), body=body.encode())

    @classmethod
    def stream_error(
        cls,
        after_pieces: str | Sequence[str] = (),
        type_: str = "overloaded_error",
        message: str = "Overloaded",
    ) -> AReply:
        """``message_start``, then some text (none: no block at all), then an ``event: error``
        and the end of the body."""
        pieces = _pieces(after_pieces)
        return cls(
            kind="stream",
            blocks=(text_block(pieces),) if pieces else (),
            ending="error",
            error_event={"type": type_, "message": message},
            open_last_block=True,
        )

    @classmethod
    def cut(
        cls,
        pieces: str | Sequence[str],
        *,
        partial: str | None = None,
        delay: float = 0.0,
    ) -> AReply:
        """Stream some text, then drop the connection: no block stop, message_delta or
        message_stop. ``partial``: text written just before the cut (half an event)."""
        return cls(
            kind="stream",
            blocks=(text_block(pieces),),
            delay=delay,
            ending="abort",
            open_last_block=True,
            partial=partial,
        )

    # hang() and raw() come from RawReplies.

    # -- rendering --

    def render(self) -> list[Step]:
        """The steps this reply writes (ids and the model are filled in at play time)."""
        if self.steps is not None:
            return list(self.steps)
        input_tokens, output_tokens = self.usage
        steps: list[Step] = [_message_start(input_tokens)]
        if self.ping:
            steps.append(_event("ping"))
        if self.unknown_events:
            steps.append(_unknown("after message_start"))
        steps += _render_blocks(
            self.blocks, delay=self.delay, ping=self.ping, unknown_events=self.unknown_events
        )
        if self.open_last_block and self.blocks:
            steps.pop()  # the last content_block_stop: the stream ends inside the block
        if self.ending == "error":
            steps.append(_event("error", error=dict(self.error_event or {})))
        elif self.ending == "message":
            if self.unknown_events:
                steps.append(_unknown("before message_delta"))
            delta = {"stop_reason": self.stop_reason, "stop_sequence": None}
            usage = {"output_tokens": output_tokens}
            steps.append(_event("message_delta", delta=delta, usage=usage))
            if self.ping:
                steps.append(_event("ping"))
            steps.append(_event("message_stop"))
        elif self.partial is not None:
            steps.append(Raw(self.partial))
        return steps


def _error_type(status: int) -> str:
    types = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        529: "overloaded_error",
    }
    return types.get(status, "api_error" if status >= 500 else "invalid_request_error")


# --- Playback ---


@dataclass(frozen=True)
class _StreamContext:
    """Per-response values: the model echoed from the request and the message id."""

    model: str
    id: str = field(default_factory=lambda: f"msg_scripted{uuid.uuid4().hex[:20]}")

    @classmethod
    def of(cls, body: Any) -> _StreamContext:
        model = body.get("model") if isinstance(body, dict) else None
        return cls(model=model if isinstance(model, str) else DEFAULT_MODEL)

    def render(self, step: Event) -> str:
        # Raw and Pause never get here: the server plays them itself.
        data = step.data
        if step.name == "message_start":
            data = {**data, "message": {**data["message"], "id": self.id, "model": self.model}}
        return f"event: {step.name}\ndata: {dumps(data)}\n\n"


class _Handler(SSEHandler):
    post_path = MESSAGES_PATH
    label = "scripted anthropic"
    not_found_type = "not_found_error"
    bad_body_message = "request body is not JSON"
    sse_content_type = "text/event-stream; charset=utf-8"
    record_query = False

    models_path = MODELS_PATH

    def accepts(self, body: Any) -> bool:
        return isinstance(body, dict)  # the Messages API only takes a JSON object

    def models_listing(self, models: list[str]) -> Any:
        # Paged like the real endpoint: `limit` (default 20) models after `after_id`.
        query = parse_qs(urlsplit(self.path).query)
        limit = int(query.get("limit", ["20"])[0])
        after = query.get("after_id", [""])[0]
        start = models.index(after) + 1 if after in models else 0
        page = models[start : start + limit]
        data = [
            {
                "type": "model",
                "id": m,
                "display_name": m.replace("-", " ").title(),
                "created_at": "2025-01-01T00:00:00Z",
            }
            for m in page
        ]
        first, last = (page[0], page[-1]) if page else (None, None)
        return {
            "data": data,
            "has_more": start + limit < len(models),
            "first_id": first,
            "last_id": last,
        }

    def head_extras(self) -> Iterable[tuple[str, str]]:
        # Every real API response carries one; clients log it with errors.
        return [("request-id", f"req_scripted{uuid.uuid4().hex[:16]}")]

    def send_error_json(self, status: int, type_: str, message: str) -> None:
        body = {"type": "error", "error": {"type": type_, "message": message}}
        self.send_json(status, dumps(body))

    def send_no_reply(self) -> None:
        self.send_error_json(500, "api_error", NO_REPLY_MESSAGE)

    def respond(self, reply: AReply, body: Any) -> None:
        self.play(reply, reply.render(), _StreamContext.of(body).render)


# --- The server ---


class ScriptedAnthropic(SSEServer[AReply]):
    """Context manager: starts on enter, stops on exit (dropping every open connection)."""

    _handler_class = _Handler
    _label = "scripted anthropic server"
    _thread_name = "scripted-anthropic"
    _default_models = (DEFAULT_MODEL,)

    @property
    def base_url(self) -> str:
        """What ANTHROPIC_BASE_URL takes: the client appends /v1/messages."""
        return self.url
