"""A light httpx transport for model servers, `http://` and `https://`: HTTP/1.1 over
asyncio streams (TLS by the standard ssl module, with the context httpx itself would
build). The request is framed by h11 (httpcore's own HTTP/1.1 library); the response is
parsed by httptools (llhttp, Node.js's parser in C; uvicorn's), which reads a streamed
body's chunks at a fraction of h11's cost per chunk: a streaming server sends one chunk
per event, so this is paid once for every piece of an answer (bench/README.md).

httpx's default transport is httpcore on anyio, whose import and set-up cost a one-shot
run more than the request itself to a local server, and whose body is read and handed up
one HTTP chunk at a time, each through h11, an anyio cancel scope and httpx's iterators:
over TLS about five times what the whole piece costs here (bench/https.py, profiled in
bench/README.md). Here every chunk already read goes up as one piece.

What it does not do stays with httpx's transport (agentcli.providers.http chooses): a
proxy named in the environment, HTTP/2. A connection whose response was read to its end
and that the server keeps alive is reused for the next request to the same origin within
KEEPALIVE_SECONDS (httpx's own default expiry), as httpcore's pool would; a request that
finds such a connection closed by the server before any answer is sent again once on a
new one. Failures are raised as the httpx exceptions httpcore's would be, with the OS (or
TLS) error as the cause, so the provider describes them the same way.
"""

from __future__ import annotations

import asyncio
import errno
import ssl
import time
from collections.abc import AsyncIterator

import h11
import httptools
import httpx

READ_SIZE = 64 * 1024
MAX_HEAD_BYTES = 16 * 1024  # a response head larger than h11's own limit is refused
KEEPALIVE_SECONDS = 5.0  # httpx.Limits' default keepalive_expiry
DEFAULT_PORTS = {"http": 80, "https": 443}

Origin = tuple[str, str, int]


class LightTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 to `http://` and, given a TLS context, `https://` origins."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.tls = tls
        self.in_flight: set[_Exchange] = set()  # closed with the transport
        self._idle: dict[Origin, list[_Connection]] = {}

    @property
    def open_connections(self) -> int:
        """Connections in use or kept for reuse (what the tests check is released)."""
        return len(self.in_flight) + sum(len(kept) for kept in self._idle.values())

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        scheme = request.url.scheme
        if scheme not in DEFAULT_PORTS or (scheme == "https" and self.tls is None):
            raise httpx.UnsupportedProtocol(
                f"this transport does not speak {scheme}://", request=request
            )
        origin = (scheme, request.url.host, request.url.port or DEFAULT_PORTS[scheme])
        kept = self._take_idle(origin)
        if kept is not None:
            try:
                return await self._exchange(request, kept)
            except _NotAnswered:  # the server had closed it while it was idle
                pass
        return await self._exchange(request, await self._connect(request, origin))

    async def _exchange(self, request: httpx.Request, connection: _Connection) -> httpx.Response:
        exchange = _Exchange(request, connection, self)
        try:
            return await exchange.send()
        except BaseException:
            exchange.close()
            raise

    async def _connect(self, request: httpx.Request, origin: Origin) -> _Connection:
        scheme, host, port = origin
        timeout = request.extensions.get("timeout", {}).get("connect")
        tls = {"ssl": self.tls, "server_hostname": host} if scheme == "https" else {}
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(host, port, **tls)
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(f"timed out connecting to {host}", request=request) from exc
        except OSError as exc:  # ssl.SSLError (a certificate refused) is one too
            message = str(exc) or type(exc).__name__
            raise httpx.ConnectError(message, request=request) from _refusal(exc)
        return _Connection(origin, reader, writer)

    def _take_idle(self, origin: Origin) -> _Connection | None:
        kept = self._idle.get(origin, [])
        while kept:
            connection = kept.pop()
            if connection.reusable():
                return connection
            connection.close()
        return None

    def release(self, connection: _Connection) -> None:
        """A connection whose response is read to its end: kept, or closed."""
        if connection.keep:
            connection.idle_since = time.monotonic()
            self._idle.setdefault(connection.origin, []).append(connection)
        else:
            connection.close()

    async def aclose(self) -> None:
        for exchange in list(self.in_flight):
            exchange.close()
        for kept in self._idle.values():
            for connection in kept:
                connection.close()
        self._idle.clear()


class _NotAnswered(Exception):
    """A kept connection the server closed before sending anything for this request."""


def _refusal(exc: OSError) -> OSError:
    """The cause to report: a ConnectionRefusedError when every address refused (asyncio
    reports one refusal per address as a plain OSError), else the error itself."""
    if exc.errno is None and f"[Errno {errno.ECONNREFUSED}]" in str(exc):
        return ConnectionRefusedError(errno.ECONNREFUSED, str(exc))
    return exc


class _Connection:
    """One TCP (or TLS) connection to an origin; `keep` once a response on it has ended in
    a way that lets another request follow."""

    def __init__(
        self, origin: Origin, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.origin, self.reader, self.writer = origin, reader, writer
        self.keep = False
        self.used = False  # a request was sent on it before
        self.idle_since = 0.0

    def reusable(self) -> bool:
        fresh = time.monotonic() - self.idle_since < KEEPALIVE_SECONDS
        return fresh and not self.reader.at_eof() and not self.writer.is_closing()

    def close(self) -> None:
        self.keep = False
        self.writer.close()


class _Exchange:
    """One request and its response on one connection. The parser calls the `on_*`
    methods as it reads; `body` holds the data read and not yet handed up."""

    def __init__(
        self, request: httpx.Request, connection: _Connection, transport: LightTransport
    ) -> None:
        self.request, self.connection, self.transport = request, connection, transport
        self.reader, self.writer = connection.reader, connection.writer
        self.reused = connection.used
        connection.used, connection.keep = True, False
        self.timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        self.parser = httptools.HttpResponseParser(self)
        self.reason = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.received = 0  # bytes read, counted until the response's head is complete
        self.status: int | None = None  # of the final response, once its head is read
        self.body: list[bytes] = []
        self.complete = False  # the whole response is read
        self.trailing = False  # bytes came after the response's end
        self.done = False  # the connection was released or closed
        transport.in_flight.add(self)

    async def send(self) -> httpx.Response:
        request = self.request
        body = await request.aread()
        try:
            framing = h11.Connection(h11.CLIENT)
            head = h11.Request(
                method=request.method,
                target=request.url.raw_path,
                headers=list(request.headers.raw),
            )
            wire = framing.send(head) or b""
            if body:
                wire += framing.send(h11.Data(data=body)) or b""
            wire += framing.send(h11.EndOfMessage()) or b""
        except h11.LocalProtocolError as exc:  # a request HTTP/1.1 cannot carry
            raise httpx.LocalProtocolError(str(exc), request=request) from exc
        try:
            async with asyncio.timeout(self.timeouts.get("write")):
                self.writer.write(wire)
                await self.writer.drain()
        except TimeoutError as exc:
            raise httpx.WriteTimeout("timed out sending the request", request=request) from exc
        except OSError as exc:
            if self.reused:
                raise _NotAnswered from exc
            raise httpx.WriteError(str(exc) or type(exc).__name__, request=request) from exc
        while self.status is None:
            await self.receive()
        return httpx.Response(
            self.status,
            headers=self.headers,
            stream=_Body(self),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": self.reason},
        )

    async def receive(self) -> None:
        """Reads what has arrived and parses it; at the end of the connection, the
        response ends there or is cut."""
        try:
            async with asyncio.timeout(self.timeouts.get("read")):
                data = await self.reader.read(READ_SIZE)
        except TimeoutError as exc:
            raise httpx.ReadTimeout("timed out reading the response", request=self.request) from exc
        except OSError as exc:
            if self.reused and self.received == 0 and self.status is None:
                raise _NotAnswered from exc
            raise httpx.ReadError(str(exc) or type(exc).__name__, request=self.request) from exc
        if not data:
            if self.reused and self.received == 0 and self.status is None:
                raise _NotAnswered
            self._closed()
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            if not self.complete:  # anything after a complete response is not read
                raise httpx.RemoteProtocolError(str(exc), request=self.request) from exc
            self.trailing = True
        if self.status is None:  # all that came is a head (or informational responses)
            self.received += len(data)
            if self.received > MAX_HEAD_BYTES:
                raise httpx.RemoteProtocolError(
                    "the response head is too long", request=self.request
                )

    def _closed(self) -> None:
        """The server closed its side: a body framed by the connection's end (neither a
        length nor chunks) is complete; any other response is cut."""
        if self.status is None:
            raise httpx.RemoteProtocolError(
                "Server disconnected without sending a response.", request=self.request
            )
        framing = (b"content-length", b"transfer-encoding")
        framed = any(name.lower() in framing for name, _ in self.headers)
        if not self.complete and framed:
            raise httpx.RemoteProtocolError(
                "peer closed connection without sending complete message body",
                request=self.request,
            )
        self.complete, self.trailing = True, True  # nothing can follow on it

    # httptools' callbacks
    def on_message_begin(self) -> None:
        if self.complete:  # a second response where none was asked for
            self.trailing = True
        self.headers, self.reason = [], b""

    def on_status(self, reason: bytes) -> None:
        self.reason += reason

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        if status >= 200:  # 1xx: informational, the response itself follows
            self.status = status
            # The parser cannot know the method: the answer to a HEAD has no body.
            if self.request.method == "HEAD":
                self.complete = True

    def on_body(self, data: bytes) -> None:
        if not self.complete:
            self.body.append(data)

    def on_message_complete(self) -> None:
        if self.status is not None and not self.complete:
            self.complete = True
            self.connection.keep = self.parser.should_keep_alive()

    def close(self) -> None:
        """The response is done with: its connection kept for the next request when it
        ended cleanly and the server keeps it alive, else closed."""
        if self.done:
            return
        self.done = True
        self.transport.in_flight.discard(self)
        if not (self.complete and not self.trailing and not self.body):
            self.connection.keep = False
        self.transport.release(self.connection)


class _Body(httpx.AsyncByteStream):
    """The response body as it arrives; the connection is released with it."""

    def __init__(self, exchange: _Exchange) -> None:
        self.exchange = exchange

    async def __aiter__(self) -> AsyncIterator[bytes]:
        """The data of every chunk already received, joined: a streaming server sends one
        chunk per event, and each piece handed up costs every layer above (decoding,
        lines, events) once, so one read's worth goes up as one piece."""
        exchange = self.exchange
        try:
            while True:
                if exchange.body:
                    data, exchange.body = exchange.body, []
                    yield data[0] if len(data) == 1 else b"".join(data)
                if exchange.complete:
                    return
                await exchange.receive()
        finally:
            exchange.close()

    async def aclose(self) -> None:
        self.exchange.close()
