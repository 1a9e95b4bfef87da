"""A scripted OpenAI-compatible Chat Completions server for end-to-end tests.

Stdlib only. Each POST to ``/v1/chat/completions`` is recorded, then answered with the next
queued :class:`Reply` (FIFO). Streaming replies use HTTP/1.1 chunked transfer encoding with one
chunk per SSE event: every event reaches the client as soon as it is written, and an abrupt
close (``Reply.cut``) is a protocol error for the client ("incomplete chunked read") instead of
looking like a clean end of stream, as it would with a close-delimited body.

    with ScriptedServer() as server:
        server.enqueue(Reply.text(["Hel", "lo"]))
        ...  # point the client at server.base_url
        assert server.requests[0].json["model"] == "m"
"""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import socketserver
import sys
import threading
import time
import traceback
import uuid
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import zip_longest
from types import TracebackType
from typing import Any, Literal, Self

__all__ = ["DEFAULT_MODEL", "NO_REPLY_MESSAGE", "RecordedRequest", "Reply", "ScriptedServer"]

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


@dataclass(frozen=True)
class Raw:
    """Exact text written as is (no framing added)."""

    text: str


@dataclass(frozen=True)
class Pause:
    """Wait (interruptibly: server shutdown ends the wait and aborts the reply)."""

    seconds: float


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
class Reply:
    """One scripted answer. Build with the classmethods; the server plays it back."""

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
            body = _dumps({"error": error})
        return cls(
            kind="json",
            status=status,
            headers=_header_items(headers),
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
    def hang(cls, seconds: float) -> Reply:
        """Send 200 headers and nothing else for ``seconds``, then drop the connection."""
        return cls(kind="stream", steps=(Pause(seconds),), ending="abort")

    @classmethod
    def raw(
        cls,
        lines: Sequence[str],
        *,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """Write these exact lines (each + ``\\n``) as the body, one chunk per line."""
        return cls(
            kind="stream",
            status=status,
            headers=_header_items(headers),
            steps=tuple(Raw(line + "\n") for line in lines),
        )


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


def _header_items(headers: Mapping[str, str] | None) -> tuple[tuple[str, str], ...]:
    return tuple((headers or {}).items())


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


# --- Recording ---


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: bytes
    json: Any  # parsed body (a dict for any sane client); None if it was not valid JSON
    time: float = field(default_factory=time.monotonic)


# --- Playback ---


def _dumps(obj: Any) -> str:
    # Compact and UTF-8, like real servers.
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


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
            case Raw(text):
                return text
        return None


def _event(obj: Any) -> str:
    return f"data: {_dumps(obj)}\n\n"


def _merge_headers(
    defaults: dict[str, str], extra: Iterable[tuple[str, str]]
) -> list[tuple[str, str]]:
    """Defaults overridden case-insensitively by the reply's own headers."""
    merged = {name.lower(): (name, value) for name, value in defaults.items()}
    for name, value in extra:
        merged[name.lower()] = (name, value)
    return list(merged.values())


class _Aborted(Exception):
    """The server is stopping: drop the reply in progress."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # needed for chunked transfer encoding
    server: _HTTPServer
    timeout = 10  # a stalled client must not pin a handler thread forever

    @property
    def owner(self) -> ScriptedServer:
        return self.server.owner

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_GET(self) -> None:
        self.close_connection = True
        if self._route() == MODELS_PATH:
            listing = {"object": "list", "data": [{"id": DEFAULT_MODEL, "object": "model"}]}
            self._send_json(200, _dumps(listing))
        else:
            self._send_not_found()

    def do_POST(self) -> None:
        self.close_connection = True
        arrived = time.monotonic()
        raw = self._read_body()
        if self._route() != CHAT_PATH:
            self._send_not_found()
            return
        parsed = _parse_json(raw)
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.owner._record(RecordedRequest("POST", self.path, headers, raw, parsed, arrived))
        if parsed is None:
            self._send_error_json(
                400, "scripted server: request body is not JSON", "invalid_request_error"
            )
            return
        reply = self.owner._next_reply()
        if reply is None:
            body = {"error": {"message": NO_REPLY_MESSAGE, "type": "server_error"}}
            self._send_json(500, _dumps(body))
            return
        self._play(reply, _StreamContext.of(parsed))

    def _route(self) -> str:
        return self.path.split("?", 1)[0]

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send_not_found(self) -> None:
        message = f"scripted server: no route for {self.command} {self.path}"
        self._send_error_json(404, message, "invalid_request_error")

    def _send_error_json(self, status: int, message: str, type_: str) -> None:
        error = {"message": message, "type": type_, "param": None, "code": None}
        self._send_json(status, _dumps({"error": error}))

    def _send_json(
        self, status: int, body: str | bytes, extra: Iterable[tuple[str, str]] = ()
    ) -> None:
        data = body.encode() if isinstance(body, str) else body
        defaults = {"Content-Type": "application/json", "Connection": "close"}
        length = ("Content-Length", str(len(data)))
        self._send_head(status, [*_merge_headers(defaults, extra), length])
        self.wfile.write(data)

    def _send_head(self, status: int, headers: list[tuple[str, str]]) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()  # flushes the status line and headers to the socket

    def _play(self, reply: Reply, ctx: _StreamContext) -> None:
        if reply.kind == "json":
            self._send_json(reply.status, reply.body, reply.headers)
            return
        defaults = {
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "Connection": "close",
            "Transfer-Encoding": "chunked",
        }
        self._send_head(reply.status, _merge_headers(defaults, reply.headers))
        try:
            for text in self._rendered(reply.steps, ctx):
                self._write_chunk(text.encode())
        except _Aborted:
            self._abort()
            return
        if reply.ending == "abort":
            self._abort()
        else:
            self.wfile.write(b"0\r\n\r\n")

    def _rendered(self, steps: Iterable[Step], ctx: _StreamContext) -> Iterator[str]:
        for step in steps:
            if isinstance(step, Pause):
                if self.owner._stopping.wait(step.seconds):
                    raise _Aborted
                continue
            if self.owner._stopping.is_set():
                raise _Aborted
            text = ctx.render(step)
            if text:
                yield text

    def _write_chunk(self, data: bytes) -> None:
        # One HTTP chunk per event, written straight to the (unbuffered) socket.
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _abort(self) -> None:
        """Shut the socket down mid-body: the client sees an incomplete chunked body."""
        _shutdown_socket(self.connection)


def _shutdown_socket(sock: socket.socket) -> None:
    # shutdown() rather than close(): it also unblocks a thread stuck in recv/send on it.
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _parse_json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


# Client hang-ups are normal in tests (cancelled streams, timeouts): not worth reporting.
_QUIET_ERRORS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, owner: ScriptedServer) -> None:
        self.owner = owner
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def server_bind(self) -> None:
        # Skip HTTPServer's getfqdn() lookup, which can stall on a misconfigured resolver.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self.connections_lock:
            open_now = list(self.connections)
        for sock in open_now:
            _shutdown_socket(sock)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Never print into (or raise at) the test; keep unexpected errors for inspection.
        exc = sys.exc_info()[1]
        if not isinstance(exc, _QUIET_ERRORS) and not self.owner._stopping.is_set():
            self.owner.errors.append(traceback.format_exc())


# --- The server ---


class ScriptedServer:
    """Context manager: starts on enter, stops on exit (dropping every open connection)."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.errors: list[str] = []  # unexpected handler exceptions (tracebacks)
        self._replies: deque[Reply] = deque()
        self._cond = threading.Condition()
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> Self:
        self._httpd = _HTTPServer(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.01},  # so shutdown() returns quickly
            name="scripted-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()  # wakes hanging/delayed replies
        httpd.shutdown()
        httpd.server_close()
        httpd.close_connections()
        if self._thread is not None:
            self._thread.join(timeout=2)

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("scripted server is not running")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def pending(self) -> int:
        """Replies queued but not yet consumed."""
        with self._cond:
            return len(self._replies)

    def enqueue(self, *replies: Reply) -> None:
        with self._cond:
            self._replies.extend(replies)

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> bool:
        """True once at least ``n`` chat requests have arrived; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self.requests) >= n, timeout)

    def _record(self, request: RecordedRequest) -> None:
        with self._cond:
            self.requests.append(request)
            self._cond.notify_all()

    def _next_reply(self) -> Reply | None:
        with self._cond:
            return self._replies.popleft() if self._replies else None
