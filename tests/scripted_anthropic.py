"""A scripted Anthropic Messages server for end-to-end tests (protocols.md §2).

Stdlib only, the same shape as :mod:`tests.scripted_server`: each POST to ``/v1/messages`` is
recorded, then answered with the next queued :class:`AReply` (FIFO). Streams are Anthropic SSE
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
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal, Self

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


@dataclass(frozen=True)
class Raw:
    """Exact text written as is (no framing added)."""

    text: str


@dataclass(frozen=True)
class Pause:
    """Wait (interruptibly: server shutdown ends the wait and aborts the reply)."""

    seconds: float


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
class AReply:
    """One scripted answer. Build with the classmethods; the server plays it back."""

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
            body = _dumps({"type": "error", "error": error})
        return cls(kind="json", status=status, headers=_header_items(headers), body=body.encode())

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

    @classmethod
    def hang(cls, seconds: float) -> AReply:
        """Send 200 headers and nothing else for ``seconds``, then drop the connection."""
        return cls(kind="stream", steps=(Pause(seconds),), ending="abort")

    @classmethod
    def raw(
        cls,
        lines: Sequence[str],
        *,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> AReply:
        """Write these exact lines (each + ``\\n``) as the body, one chunk per line."""
        return cls(
            kind="stream",
            status=status,
            headers=_header_items(headers),
            steps=tuple(Raw(line + "\n") for line in lines),
            ending="none",
        )

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


def _header_items(headers: Mapping[str, str] | None) -> tuple[tuple[str, str], ...]:
    return tuple((headers or {}).items())


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
    # Compact and UTF-8, like the real API.
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class _StreamContext:
    """Per-response values: the model echoed from the request and the message id."""

    model: str
    id: str = field(default_factory=lambda: f"msg_scripted{uuid.uuid4().hex[:20]}")

    @classmethod
    def of(cls, body: Any) -> _StreamContext:
        model = body.get("model") if isinstance(body, dict) else None
        return cls(model=model if isinstance(model, str) else DEFAULT_MODEL)

    def render(self, step: Step) -> str:
        if isinstance(step, Raw):
            return step.text
        assert isinstance(step, Event)
        data = step.data
        if step.name == "message_start":
            data = {**data, "message": {**data["message"], "id": self.id, "model": self.model}}
        return f"event: {step.name}\ndata: {_dumps(data)}\n\n"


class _Aborted(Exception):
    """The server is stopping: drop the reply in progress."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # needed for chunked transfer encoding
    server: _HTTPServer
    timeout = 10  # a stalled client must not pin a handler thread forever

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    @property
    def owner(self) -> ScriptedAnthropic:
        return self.server.owner

    def do_GET(self) -> None:
        self.close_connection = True
        self._send_not_found()

    def do_POST(self) -> None:
        self.close_connection = True
        arrived = time.monotonic()
        raw = self._read_body()
        path = self.path.split("?", 1)[0]
        if path != MESSAGES_PATH:
            self._send_not_found()
            return
        parsed = _parse_json(raw)
        self.owner._record(
            RecordedRequest(
                method=self.command,
                path=path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=raw,
                json=parsed,
                time=arrived,
            )
        )
        if not isinstance(parsed, dict):
            self._send_error_json(400, "invalid_request_error", "request body is not JSON")
            return
        reply = self.owner._next_reply()
        if reply is None:
            self._send_error_json(500, "api_error", NO_REPLY_MESSAGE)
            return
        self._play(reply, _StreamContext.of(parsed))

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send_not_found(self) -> None:
        message = f"scripted anthropic: no route for {self.command} {self.path}"
        self._send_error_json(404, "not_found_error", message)

    def _send_error_json(self, status: int, type_: str, message: str) -> None:
        body = {"type": "error", "error": {"type": type_, "message": message}}
        self._send_json(status, _dumps(body).encode())

    def _send_json(self, status: int, data: bytes, extra: Iterable[tuple[str, str]] = ()) -> None:
        defaults = {"Content-Type": "application/json", "Connection": "close"}
        length = ("Content-Length", str(len(data)))
        self._send_head(status, [*_merge_headers(defaults, extra), length])
        self.wfile.write(data)

    def _send_head(self, status: int, headers: list[tuple[str, str]]) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("request-id", f"req_scripted{uuid.uuid4().hex[:16]}")
        self.end_headers()  # flushes the status line and headers to the socket

    def _play(self, reply: AReply, ctx: _StreamContext) -> None:
        if reply.kind == "json":
            self._send_json(reply.status, reply.body, reply.headers)
            return
        defaults = {
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-cache",
            "Connection": "close",
            "Transfer-Encoding": "chunked",
        }
        self._send_head(reply.status, _merge_headers(defaults, reply.headers))
        try:
            for text in self._rendered(reply.render(), ctx):
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


def _merge_headers(
    defaults: Mapping[str, str], extra: Iterable[tuple[str, str]]
) -> list[tuple[str, str]]:
    """Defaults, each replaced by a same-named (case-insensitive) extra header."""
    extra = list(extra)
    overridden = {name.lower() for name, _ in extra}
    kept = [(n, v) for n, v in defaults.items() if n.lower() not in overridden]
    return [*kept, *extra]


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

    def __init__(self, owner: ScriptedAnthropic) -> None:
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


class ScriptedAnthropic:
    """Context manager: starts on enter, stops on exit (dropping every open connection)."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.errors: list[str] = []  # unexpected handler exceptions (tracebacks)
        self._replies: deque[AReply] = deque()
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
            name="scripted-anthropic",
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
            raise RuntimeError("scripted anthropic server is not running")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What ANTHROPIC_BASE_URL takes: the client appends /v1/messages."""
        return self.url

    @property
    def pending(self) -> int:
        """Replies queued but not yet consumed."""
        with self._cond:
            return len(self._replies)

    def enqueue(self, *replies: AReply) -> None:
        with self._cond:
            self._replies.extend(replies)

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> bool:
        """True once at least ``n`` message requests have arrived; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self.requests) >= n, timeout)

    def _record(self, request: RecordedRequest) -> None:
        with self._cond:
            self.requests.append(request)
            self._cond.notify_all()

    def _next_reply(self) -> AReply | None:
        with self._cond:
            return self._replies.popleft() if self._replies else None
