"""A scripted OpenAI-compatible Chat Completions server for end-to-end tests.

Stdlib only. Each POST to ``/v1/chat/completions`` is recorded, then answered with the next
queued :class:`Reply` (FIFO). Streaming replies use HTTP/1.1 chunked transfer encoding with one
chunk per SSE event: every event reaches the client as soon as it is written, and an abrupt
close (``Reply.cut``) is a protocol error for the client ("incomplete chunked read") instead of
looking like a clean end of stream, as it would with a close-delimited body. The server
machinery (shared with :mod:`tests.scripted_anthropic`) lives in :mod:`tests.sse_server`; this
module is the Chat Completions protocol: the replies, their chunks and the error shapes.

    with ScriptedServer() as server:
        server.enqueue(Reply.text(["Hel", "lo"]))
        ...  # point the client at server.base_url
        assert server.requests[0].json["model"] == "m"
"""

from __future__ import annotations

import itertools
import json
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any, AnyStr, ClassVar, Literal

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
    "NO_REPLY_MESSAGE",
    "RecordedRequest",
    "Reply",
    "ScriptedServer",
    "cut_at",
]

DEFAULT_MODEL = "scripted-model"
NO_REPLY_MESSAGE = "scripted server: no reply queued"
CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"

ToolStyle = Literal[
    "canonical",
    "parallel_interleaved",
    "ollama_same_index",
    "no_index",
    "whole",
    "vllm_no_id",
    "args_object",
]

# Global so generated tool-call ids stay unique across the turns of one conversation.
_call_ids = itertools.count(1)


# --- Steps: what a streaming reply writes, rendered per request (model, include_usage) ---


@dataclass(frozen=True)
class Chunk:
    """A ``chat.completion.chunk`` with one choice; id/created/model are filled in at play time."""

    delta: dict[str, Any]
    finish_reason: str | None = None


@dataclass(frozen=True)
class Usage:
    """The final usage chunk; only written when the request asked for ``include_usage``."""

    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class Data:
    """A ``data: <json>`` event with an arbitrary object (e.g. an in-stream error)."""

    obj: Any


@dataclass(frozen=True)
class Done:
    """The ``data: [DONE]`` terminator."""


@dataclass(frozen=True)
class Comment:
    """An SSE comment line (``: text``), as proxies and servers send for keep-alive."""

    text: str


# Raw and Pause come from tests.sse_server: the server writes/waits them itself.
Step = Chunk | Usage | Data | Done | Comment | Raw | Pause


# --- Replies ---


@dataclass(frozen=True)
class _Call:
    name: str
    arguments: str | dict[str, Any] | None
    id: str

    @classmethod
    def of(cls, spec: Mapping[str, Any]) -> _Call:
        call_id = spec.get("id") or f"call_{next(_call_ids)}"
        return cls(name=spec["name"], arguments=spec.get("arguments"), id=call_id)

    def args_text(self) -> str:
        # A str is sent verbatim so tests can send malformed JSON on purpose.
        if self.arguments is None:
            return ""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)

    def args_object(self) -> Any:
        if self.arguments is None:
            return {}
        if isinstance(self.arguments, str):
            try:
                return json.loads(self.arguments)
            except ValueError:
                return self.arguments  # malformed on purpose: pass through unchanged
        return self.arguments


@dataclass(frozen=True)
class Reply(RawReplies):
    """One scripted answer. Build with the classmethods; the server plays it back."""

    _raw_ending: ClassVar[str] = "clean"  # what raw() replies end with
    kind: Literal["stream", "json"]
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    steps: tuple[Step, ...] = ()
    # "abort" shuts the socket down without the terminating zero-length chunk.
    ending: Literal["clean", "abort"] = "clean"
    body: bytes = b""

    @classmethod
    def text(
        cls,
        pieces: Sequence[str],
        *,
        finish_reason: str | None = "stop",
        usage: tuple[int, int] | None = (10, 5),
        delay: float = 0.0,
        keepalive: bool = False,
        done: bool = True,
    ) -> Reply:
        """Content deltas, a finish chunk (omitted if finish_reason is None), usage, [DONE]."""
        chunks = _content_chunks(pieces)
        if finish_reason is not None:
            chunks.append(Chunk({}, finish_reason))
        steps = _pace(_with_role(chunks), delay, keepalive) + _tail(usage, done)
        return cls(kind="stream", steps=tuple(steps))

    @classmethod
    def text_cut(cls, pieces: Sequence[str], cuts: Iterable[int]) -> Reply:
        """The stream `text(pieces)` sends, its bytes then cut into HTTP chunks at the
        offsets `cuts`: inside an event, a JSON string or a multi-byte character, as a proxy
        or a busy server may flush them."""
        context = _StreamContext(model=DEFAULT_MODEL, include_usage=False)
        body = "".join(context.render(step) or "" for step in cls.text(pieces).steps).encode()
        return cls(kind="stream", steps=tuple(Raw(part) for part in cut_at(body, cuts)))

    @classmethod
    def tool_calls(
        cls,
        calls: Sequence[Mapping[str, Any]],
        *,
        text_before: Sequence[str] | None = None,
        style: ToolStyle = "canonical",
        fragment: int = 8,
        finish_reason: str | None = None,
        usage: tuple[int, int] | None = (10, 5),
    ) -> Reply:
        """Tool calls shaped like a given server family; finish_reason None = the style's own."""
        if style not in _TOOL_STYLES:
            raise ValueError(f"unknown tool-call style {style!r}")
        if fragment < 1:
            raise ValueError("fragment must be >= 1")
        specs = [_Call.of(call) for call in calls]
        render, default_reason = _TOOL_STYLES[style]
        chunks = [Chunk({"content": piece}) for piece in text_before or ()]
        chunks += [Chunk({"tool_calls": [call]}) for call in render(specs, fragment)]
        chunks.append(Chunk({}, finish_reason or default_reason))
        return cls(kind="stream", steps=tuple(_with_role(chunks) + _tail(usage, True)))

    @classmethod
    def error(
        cls,
        status: int,
        message: str | None = None,
        *,
        type_: str | None = None,
        headers: Mapping[str, str] | None = None,
        body: str | None = None,
    ) -> Reply:
        """A non-streaming JSON error; ``body`` replaces the whole body when given."""
        if body is None:
            error = {
                "message": message or f"scripted error (HTTP {status})",
                "type": type_ or _error_type(status),
                "param": None,
                "code": None,
            }
            body = dumps({"error": error})
        return cls(
            kind="json",
            status=status,
            headers=header_items(headers),
            body=body.encode(),
        )

    @classmethod
    def cut(
        cls,
        pieces: Sequence[str],
        *,
        after: int | None = None,
        delay: float = 0.0,
        partial: str | None = None,
    ) -> Reply:
        """Stream content, then drop the connection: no finish_reason, usage, [DONE] or end.

        ``after``: cut after this many pieces (None = all). ``partial``: text written just
        before the cut, e.g. half an event such as ``'data: {"id": "x'``.
        """
        kept = list(pieces) if after is None else list(pieces)[:after]
        steps = _pace(_with_role(_content_chunks(kept)), delay, keepalive=False)
        if partial is not None:
            steps.append(Raw(partial))
        return cls(kind="stream", steps=tuple(steps), ending="abort")

    @classmethod
    def stream_error(
        cls,
        pieces: Sequence[str],
        error: Mapping[str, Any] | None = None,
    ) -> Reply:
        """Stream content, then a ``data: {"error": {...}}`` event, then end the stream."""
        error = dict(error or {"message": "scripted stream error", "type": "server_error"})
        steps: list[Step] = [*_with_role(_content_chunks(pieces)), Data({"error": error})]
        return cls(kind="stream", steps=tuple(steps))

    @classmethod
    def role_only(cls, *, ending: Literal["clean", "abort"] = "clean") -> Reply:
        """The role chunk, then the end of the body (``abort``: the connection drops): what
        llama-cpp-python's server sends when it cannot stream the answer with tools."""
        return cls(kind="stream", steps=tuple(_with_role([])), ending=ending)

    @classmethod
    def completion(
        cls,
        text: str | None = None,
        *,
        tool_calls: Sequence[Mapping[str, Any]] = (),
        finish_reason: str | None = None,
        usage: tuple[int, int] | None = (10, 5),
    ) -> Reply:
        """A whole answer, as a server sends it for ``stream: false``: one ``chat.completion``
        object; finish_reason None = ``tool_calls`` with calls, else ``stop``."""
        calls = [_Call.of(call) for call in tool_calls]
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = [_whole_call(None, c, c.args_text()) for c in calls]
        reason = finish_reason or ("tool_calls" if calls else "stop")
        body: dict[str, Any] = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": DEFAULT_MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": reason}],
        }
        if usage is not None:
            prompt, completion = usage
            body["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        return cls(kind="json", body=dumps(body).encode())

    # hang() and raw() come from RawReplies.


def cut_at(whole: AnyStr, cuts: Iterable[int]) -> list[AnyStr]:
    """`whole` (text or bytes) cut at the offsets `cuts` (duplicates and offsets at or past
    either end ignored)."""
    edges = sorted({cut for cut in cuts if 0 < cut < len(whole)})
    return [whole[a:b] for a, b in zip([0, *edges], [*edges, len(whole)], strict=True)]


def _content_chunks(pieces: Iterable[str]) -> list[Chunk]:
    # With no pieces there is still a first chunk, so the role is always announced.
    return [Chunk({"content": piece}) for piece in pieces] or [Chunk({"content": ""})]


def _with_role(chunks: list[Chunk]) -> list[Step]:
    """The first chunk's delta carries ``role: assistant``, as every real server does."""
    if not chunks:
        return [Chunk({"role": "assistant"})]
    first = chunks[0]
    return [Chunk({"role": "assistant", **first.delta}, first.finish_reason), *chunks[1:]]


def _pace(steps: list[Step], delay: float, keepalive: bool) -> list[Step]:
    paced: list[Step] = []
    for position, step in enumerate(steps):
        if position:
            if delay > 0:
                paced.append(Pause(delay))
            if keepalive:
                paced.append(Comment("keep-alive"))
        paced.append(step)
    return paced


def _tail(usage: tuple[int, int] | None, done: bool) -> list[Step]:
    tail: list[Step] = [Usage(*usage)] if usage is not None else []
    return [*tail, Done()] if done else tail


def _error_type(status: int) -> str:
    types = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        429: "rate_limit_error",
    }
    return types.get(status, "server_error" if status >= 500 else "invalid_request_error")


# --- Tool-call styles: each returns the tool_calls entries, one entry per chunk ---


def _fragments(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _streamed_call(index: int, call: _Call, fragment: int, with_id: bool) -> list[dict[str, Any]]:
    """One call as OpenAI streams it: a head with the name, then argument fragments."""
    function: dict[str, Any] = {"name": call.name}
    if with_id or call.arguments is not None:
        function["arguments"] = ""
    head: dict[str, Any] = {"index": index, "type": "function", "function": function}
    if with_id:
        head = {"index": index, "id": call.id, **head}
    frags = [
        {"index": index, "function": {"arguments": piece}}
        for piece in _fragments(call.args_text(), fragment)
    ]
    return [head, *frags]


def _whole_call(index: int | None, call: _Call, arguments: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {} if index is None else {"index": index}
    entry |= {"id": call.id, "type": "function"}
    entry["function"] = {"name": call.name, "arguments": arguments}
    return entry


def _canonical(calls: list[_Call], fragment: int) -> list[dict[str, Any]]:
    return [e for i, c in enumerate(calls) for e in _streamed_call(i, c, fragment, True)]


def _parallel_interleaved(calls: list[_Call], fragment: int) -> list[dict[str, Any]]:
    per_call = [_streamed_call(i, c, fragment, True) for i, c in enumerate(calls)]
    return [entry for row in zip_longest(*per_call) for entry in row if entry is not None]


def _ollama_same_index(calls: list[_Call], fragment: int) -> list[dict[str, Any]]:
    return [_whole_call(0, c, c.args_text()) for c in calls]


def _no_index(calls: list[_Call], fragment: int) -> list[dict[str, Any]]:
    return [_whole_call(None, c, c.args_text()) for c in calls]


def _whole(calls: list[_Call], fragment: int) -> list[dict[str, Any]]:
    return [_whole_call(i, c, c.args_text()) for i, c in enumerate(calls)]


def _vllm_no_id(calls: list[_Call], fragment: int) -> list[dict[str, Any]]:
    return [e for i, c in enumerate(calls) for e in _streamed_call(i, c, fragment, False)]


def _args_object(calls: list[_Call], fragment: int) -> list[dict[str, Any]]:
    return [_whole_call(i, c, c.args_object()) for i, c in enumerate(calls)]


_TOOL_STYLES = {
    "canonical": (_canonical, "tool_calls"),
    "parallel_interleaved": (_parallel_interleaved, "tool_calls"),
    "ollama_same_index": (_ollama_same_index, "stop"),
    "no_index": (_no_index, "stop"),
    "whole": (_whole, "tool_calls"),
    "vllm_no_id": (_vllm_no_id, "tool_calls"),
    "args_object": (_args_object, "tool_calls"),
}


# --- Playback ---


@dataclass(frozen=True)
class _StreamContext:
    """Per-response values shared by every chunk of one stream."""

    model: str
    include_usage: bool
    id: str = field(default_factory=lambda: f"chatcmpl-{uuid.uuid4().hex[:24]}")
    created: int = field(default_factory=lambda: int(time.time()))

    @classmethod
    def of(cls, body: Any) -> _StreamContext:
        body = body if isinstance(body, dict) else {}
        model = body.get("model")
        options = body.get("stream_options")
        include = isinstance(options, dict) and options.get("include_usage") is True
        return cls(model=model if isinstance(model, str) else DEFAULT_MODEL, include_usage=include)

    def chunk(self, choices: list[Any], **extra: Any) -> dict[str, Any]:
        head = {"id": self.id, "object": "chat.completion.chunk", "created": self.created}
        return {**head, "model": self.model, "choices": choices, **extra}

    def render(self, step: Step) -> str | None:
        """The text a step writes, or None when it writes nothing for this request."""
        match step:
            case Chunk(delta, finish_reason):
                choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
                return _event(self.chunk([choice]))
            case Usage(prompt, completion):
                if not self.include_usage:
                    return None
                usage = {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                }
                return _event(self.chunk([], usage=usage))
            case Data(obj):
                return _event(obj)
            case Done():
                return "data: [DONE]\n\n"
            case Comment(text):
                return f": {text}\n\n"
        return None  # Raw and Pause are played by the server itself


def _event(obj: Any) -> str:
    return f"data: {dumps(obj)}\n\n"


class _Handler(SSEHandler):
    post_path = CHAT_PATH
    label = "scripted server"
    not_found_type = "invalid_request_error"
    bad_body_message = "scripted server: request body is not JSON"

    models_path = MODELS_PATH

    def models_listing(self, models: list[str]) -> Any:
        return {"object": "list", "data": [{"id": m, "object": "model"} for m in models]}

    def send_error_json(self, status: int, type_: str, message: str) -> None:
        error = {"message": message, "type": type_, "param": None, "code": None}
        self.send_json(status, dumps({"error": error}))

    def send_no_reply(self) -> None:
        # Deliberately without param/code, unlike send_error_json: tests match it as is.
        body = {"error": {"message": NO_REPLY_MESSAGE, "type": "server_error"}}
        self.send_json(500, dumps(body))

    def respond(self, reply: Reply, body: Any) -> None:
        self.play(reply, reply.steps, _StreamContext.of(body).render)


# --- The server ---


class ScriptedServer(SSEServer[Reply]):
    """Context manager: starts on enter, stops on exit (dropping every open connection)."""

    _handler_class = _Handler
    _label = "scripted server"
    _thread_name = "scripted-server"
    _default_models = (DEFAULT_MODEL,)

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"
