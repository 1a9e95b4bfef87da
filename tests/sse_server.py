"""Shared plumbing of the scripted SSE test servers (:mod:`tests.scripted_server`,
:mod:`tests.scripted_anthropic`).

Stdlib only. :class:`SSEServer` runs a threaded HTTP server on 127.0.0.1 (a free port), records
every POST to its route, and answers each with the next queued reply (FIFO). Streaming replies
use HTTP/1.1 chunked transfer encoding with one chunk per SSE event: every event reaches the
client as soon as it is written, and an abrupt close (a ``cut`` reply) is a protocol error for
the client ("incomplete chunked read") instead of looking like a clean end of stream, as it
would with a close-delimited body. Stopping the server wakes replies that hang or pause and
drops every open connection, so a test never waits on its fixture.

A protocol subclasses :class:`SSEHandler` (route, error bodies, how a reply's steps render) and
:class:`SSEServer` (which handler, names, ``base_url``).
"""

from __future__ import annotations

import contextlib
import json
import socket
import socketserver
import ssl
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, Self, TypeVar

__all__ = [
    "Gate",
    "Pause",
    "Raw",
    "RawReplies",
    "RecordedRequest",
    "ReplyLike",
    "SSEHandler",
    "SSEServer",
    "dumps",
    "header_items",
    "merge_headers",
    "parse_json",
]

R = TypeVar("R")


# --- Recording ---


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: bytes
    json: Any  # parsed body (a dict for any sane client); None if it was not valid JSON
    time: float = field(default_factory=time.monotonic)


# --- Steps every protocol shares (each adds its own event steps) ---


@dataclass(frozen=True)
class Raw:
    """Exact text (or bytes: a piece of a multi-byte character, say) written as is, as one
    HTTP chunk (no framing added)."""

    text: str | bytes


@dataclass(frozen=True)
class Pause:
    """Wait (interruptibly: server shutdown ends the wait and aborts the reply)."""

    seconds: float


@dataclass(frozen=True)
class Gate:
    """Wait until the test opens the gate (`gate.set()`): a stream held at a point the test
    chose, bounded by `timeout` (then the reply is aborted, never left hanging)."""

    event: threading.Event = field(default_factory=threading.Event, compare=False)
    timeout: float = 60.0

    def set(self) -> None:
        self.event.set()


class ReplyLike(Protocol):
    """What :meth:`SSEHandler.play` needs of a reply (``Reply`` and ``AReply`` both fit)."""

    @property
    def kind(self) -> str: ...  # "json": status + headers + body; "stream": chunked SSE

    @property
    def status(self) -> int: ...

    @property
    def headers(self) -> tuple[tuple[str, str], ...]: ...

    @property
    def body(self) -> bytes: ...

    @property
    def ending(self) -> str: ...  # "abort" drops the socket mid-body; anything else ends it


class RawReplies:
    """The reply builders every protocol shares: exact bytes, and a hang.

    Mixed into the frozen reply dataclasses (``Reply``, ``AReply``), whose ``kind``, ``status``,
    ``headers``, ``steps`` and ``ending`` fields these fill in.
    """

    _raw_ending: ClassVar[str]  # the ``ending`` of a raw() reply: each protocol names its own

    if TYPE_CHECKING:
        # The dataclass that mixes this in supplies the real __init__.
        def __init__(self, **fields: Any) -> None: ...

    @classmethod
    def hang(cls, seconds: float) -> Self:
        """Send 200 headers and nothing else for ``seconds``, then drop the connection."""
        return cls(kind="stream", steps=(Pause(seconds),), ending="abort")

    @classmethod
    def raw(
        cls,
        lines: Sequence[str],
        *,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> Self:
        """Write these exact lines (each + ``\\n``) as the body, one chunk per line."""
        return cls(
            kind="stream",
            status=status,
            headers=header_items(headers),
            steps=tuple(Raw(line + "\n") for line in lines),
            ending=cls._raw_ending,
        )


# --- Small helpers ---


def dumps(obj: Any) -> str:
    # Compact and UTF-8, like the real APIs.
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def parse_json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


def header_items(headers: Mapping[str, str] | None) -> tuple[tuple[str, str], ...]:
    # A tuple so the frozen reply dataclasses stay hashable.
    return tuple((headers or {}).items())


def merge_headers(
    defaults: Mapping[str, str], extra: Iterable[tuple[str, str]]
) -> list[tuple[str, str]]:
    """Defaults overridden case-insensitively by the reply's own headers."""
    merged = {name.lower(): (name, value) for name, value in defaults.items()}
    for name, value in extra:
        merged[name.lower()] = (name, value)
    return list(merged.values())


def _shutdown_socket(sock: socket.socket) -> None:
    # shutdown() rather than close(): it also unblocks a thread stuck in recv/send on it.
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


# --- Handler ---


class _Aborted(Exception):
    """The server is stopping: drop the reply in progress."""


class SSEHandler(BaseHTTPRequestHandler):
    """One connection, one request: record it, then play the next reply.

    Subclasses set the class attributes below and implement :meth:`send_error_json`,
    :meth:`send_no_reply` and :meth:`respond`.
    """

    protocol_version = "HTTP/1.1"  # needed for chunked transfer encoding
    server: _HTTPServer
    timeout = 10  # a stalled client must not pin a handler thread forever

    post_path: ClassVar[str]  # the one recorded route, e.g. "/v1/messages"
    models_path: ClassVar[str | None] = None  # GET: the model listing (see `models_listing`)
    label: ClassVar[str]  # prefix of the server's own error messages
    not_found_type: ClassVar[str]  # error type of a 404
    bad_body_message: ClassVar[str]  # message of the 400 for an unusable body
    sse_content_type: ClassVar[str] = "text/event-stream"
    # Whether RecordedRequest.path keeps the query string (the two servers always differed).
    record_query: ClassVar[bool] = True

    # -- protocol hooks --

    def send_error_json(self, status: int, type_: str, message: str) -> None:
        """An error the server itself raises (404, 400), in the protocol's error shape."""
        raise NotImplementedError

    def send_no_reply(self) -> None:
        """The answer when a request arrives with nothing queued."""
        raise NotImplementedError

    def respond(self, reply: Any, body: Any) -> None:
        """Play ``reply`` for a request whose parsed body is ``body`` (see :meth:`play`)."""
        raise NotImplementedError

    def accepts(self, body: Any) -> bool:
        """Whether the parsed body is usable; otherwise 400 (after recording it)."""
        return body is not None

    def head_extras(self) -> Iterable[tuple[str, str]]:
        """Headers added to every response after the others (e.g. a request id)."""
        return ()

    # -- request flow --

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    @property
    def owner(self) -> SSEServer[Any]:
        return self.server.owner

    def models_listing(self, models: list[str]) -> Any:
        """The body of a 200 answer to ``GET models_path``, in the protocol's shape."""
        raise NotImplementedError

    def do_GET(self) -> None:
        # The model listing is the one GET route; everything else is a 404.
        self.close_connection = True
        if self.models_path is None or self.route() != self.models_path:
            self.send_not_found()
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.owner._record_listing(RecordedRequest(self.command, self.path, headers, b"", None))
        reply = self.owner.models_reply
        if reply is not None:
            self.respond(reply, None)
        else:
            self.send_json(200, dumps(self.models_listing(list(self.owner.models))))

    def do_POST(self) -> None:
        self.close_connection = True
        arrived = time.monotonic()
        raw = self.read_body()
        path = self.route()
        if path != self.post_path:
            self.send_not_found()
            return
        parsed = parse_json(raw)
        headers = {name.lower(): value for name, value in self.headers.items()}
        recorded_path = self.path if self.record_query else path
        recorded = RecordedRequest(self.command, recorded_path, headers, raw, parsed, arrived)
        self.owner._record(recorded)
        if not self.accepts(parsed):
            self.send_error_json(400, "invalid_request_error", self.bad_body_message)
            return
        reply = self.owner.reply_for(recorded)
        if reply is None:
            self.send_no_reply()
            return
        self.respond(reply, parsed)

    def route(self) -> str:
        return self.path.split("?", 1)[0]

    def read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    # -- writing --

    def send_not_found(self) -> None:
        message = f"{self.label}: no route for {self.command} {self.path}"
        self.send_error_json(404, self.not_found_type, message)

    def send_json(
        self, status: int, body: str | bytes, extra: Iterable[tuple[str, str]] = ()
    ) -> None:
        data = body.encode() if isinstance(body, str) else body
        defaults = {"Content-Type": "application/json", "Connection": "close"}
        length = ("Content-Length", str(len(data)))
        self.send_head(status, [*merge_headers(defaults, extra), length])
        self.wfile.write(data)

    def send_head(self, status: int, headers: Iterable[tuple[str, str]]) -> None:
        self.send_response(status)
        for name, value in [*headers, *self.head_extras()]:
            self.send_header(name, value)
        self.end_headers()  # flushes the status line and headers to the socket

    def play(
        self, reply: ReplyLike, steps: Iterable[Any], render: Callable[[Any], str | None]
    ) -> None:
        """A json reply as is; a stream reply as chunked SSE, one chunk per rendered step.

        ``render`` turns a protocol step into text (None or "" = nothing for this request);
        :class:`Raw` and :class:`Pause` are handled here.
        """
        if reply.kind == "json":
            self.send_json(reply.status, reply.body, reply.headers)
            return
        defaults = {
            "Content-Type": self.sse_content_type,
            "Cache-Control": "no-cache",
            "Connection": "close",
            "Transfer-Encoding": "chunked",
        }
        self.send_head(reply.status, merge_headers(defaults, reply.headers))
        try:
            for text in self._rendered(steps, render):
                self._write_chunk(text if isinstance(text, bytes) else text.encode())
        except _Aborted:
            self._abort()
            return
        if reply.ending == "abort":
            self._abort()
        else:
            self.wfile.write(b"0\r\n\r\n")

    def _rendered(
        self, steps: Iterable[Any], render: Callable[[Any], str | None]
    ) -> Iterator[str | bytes]:
        stopping = self.owner._stopping
        for step in steps:
            if isinstance(step, Pause):
                if stopping.wait(step.seconds):
                    raise _Aborted
                continue
            if isinstance(step, Gate):
                deadline = time.monotonic() + step.timeout
                while not step.event.wait(0.05):
                    if stopping.is_set() or time.monotonic() > deadline:
                        raise _Aborted
                continue
            if stopping.is_set():
                raise _Aborted
            text = step.text if isinstance(step, Raw) else render(step)
            if text:
                yield text

    def _write_chunk(self, data: bytes) -> None:
        # One HTTP chunk per event, written straight to the (unbuffered) socket.
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _abort(self) -> None:
        """Shut the socket down mid-body: the client sees an incomplete chunked body."""
        _shutdown_socket(self.connection)


# --- HTTP server ---

# Client hang-ups are normal in tests (cancelled streams, timeouts): not worth reporting.
# So are failed TLS handshakes: a test that checks a wrong certificate is refused makes them.
_QUIET_ERRORS = (
    BrokenPipeError,
    ConnectionResetError,
    ConnectionAbortedError,
    TimeoutError,
    ssl.SSLError,
)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(
        self, owner: SSEServer[Any], handler: type[SSEHandler], tls: ssl.SSLContext | None
    ) -> None:
        self.owner = owner
        self.tls = tls
        # Tracked so stop() can drop connections whose handler is still writing or waiting.
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), handler)

    def server_bind(self) -> None:
        # Skip HTTPServer's getfqdn() lookup, which can stall on a misconfigured resolver.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = super().get_request()
        if self.tls is None:
            return sock, address
        # The handshake happens on the handler's first read, in its own thread: a client
        # that never completes one holds up its connection only, not the accepting loop.
        return self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

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


class SSEServer(Generic[R]):
    """Context manager: starts on enter, stops on exit (dropping every open connection).

    Subclasses set the class attributes below and define ``base_url``; private names so the
    public surface of the subclasses stays theirs.
    """

    _handler_class: ClassVar[type[SSEHandler]]
    _label: ClassVar[str]  # for the "not running" error
    _thread_name: ClassVar[str]
    _default_models: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *, tls: ssl.SSLContext | None = None) -> None:
        """`tls`: a server-side context (its certificate loaded) to serve https:// instead."""
        self.tls = tls
        self.requests: list[RecordedRequest] = []
        # The model listing (GET): what it lists, or a reply played instead (an error, a
        # hang); every GET to it is recorded in `listings`.
        self.models: list[str] = list(self._default_models)
        self.models_reply: R | None = None
        self.listings: list[RecordedRequest] = []
        self.errors: list[str] = []  # unexpected handler exceptions (tracebacks)
        self._replies: deque[R] = deque()
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
        self._httpd = _HTTPServer(self, self._handler_class, self.tls)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.01},  # so shutdown() returns quickly
            name=self._thread_name,
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
            raise RuntimeError(f"{self._label} is not running")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    @property
    def pending(self) -> int:
        """Replies queued but not yet consumed."""
        with self._cond:
            return len(self._replies)

    def enqueue(self, *replies: R) -> None:
        with self._cond:
            self._replies.extend(replies)

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> bool:
        """True once at least ``n`` requests to the route have arrived; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self.requests) >= n, timeout)

    def _record(self, request: RecordedRequest) -> None:
        with self._cond:
            self.requests.append(request)
            self._cond.notify_all()

    def _record_listing(self, request: RecordedRequest) -> None:
        with self._cond:
            self.listings.append(request)

    def reply_for(self, request: RecordedRequest) -> R | None:
        """The reply to `request`: the next one queued (None: none is). A subclass may
        choose it from the request instead, for requests that cannot be queued in order."""
        return self._next_reply()

    def _next_reply(self) -> R | None:
        with self._cond:
            return self._replies.popleft() if self._replies else None
