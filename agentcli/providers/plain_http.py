"""An httpx transport for plain `http://` model servers (Ollama, llama.cpp, vLLM on this
machine; the test suite's scripted servers): one connection per request over asyncio
streams. The request is framed by h11 (httpcore's own HTTP/1.1 library); the response is
parsed by httptools (llhttp, Node.js's parser in C; uvicorn's), which reads a streamed
body's chunks at a fraction of h11's cost per chunk: a streaming server sends one chunk
per event, so this is paid once for every piece of an answer (bench/README.md).

httpx's default transport is httpcore on anyio, whose import and set-up cost a one-shot
run more than the request itself to a local server (bench/standins.py measures it; figures
in bench/README.md). The
provider's client uses this transport only for an `http://` base URL: TLS, HTTP/2 and
connection pooling stay with httpcore, and httpx still sends a request through a proxy
named in the environment (HTTP_PROXY, ALL_PROXY) with its own transport. Failures are
raised as the httpx exceptions httpcore's would be, with the OS error as the cause, so
the provider describes them the same way.
"""

from __future__ import annotations

import asyncio
import errno
from collections.abc import AsyncIterator

import h11
import httptools
import httpx

READ_SIZE = 64 * 1024
MAX_HEAD_BYTES = 16 * 1024  # a response head larger than h11's own limit is refused


class PlainHttpTransport(httpx.AsyncBaseTransport):
    """Plain HTTP/1.1, a new connection for each request, closed when its response is."""

    def __init__(self) -> None:
        self._open: set[_Exchange] = set()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme != "http":
            raise httpx.UnsupportedProtocol(
                f"this transport speaks plain http://, not {request.url.scheme}://",
                request=request,
            )
        exchange = await _Exchange.connect(request, self._open)
        try:
            return await exchange.send()
        except BaseException:
            exchange.close()
            raise

    async def aclose(self) -> None:
        for exchange in list(self._open):
            exchange.close()


def _refusal(exc: OSError) -> OSError:
    """The cause to report: a ConnectionRefusedError when every address refused (asyncio
    reports one refusal per address as a plain OSError), else the error itself."""
    if exc.errno is None and f"[Errno {errno.ECONNREFUSED}]" in str(exc):
        return ConnectionRefusedError(errno.ECONNREFUSED, str(exc))
    return exc


class _Exchange:
    """One request and its response on one connection. The parser calls the `on_*`
    methods as it reads; `body` holds the data read and not yet handed up."""

    def __init__(
        self,
        request: httpx.Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        registry: set[_Exchange],
    ) -> None:
        self.request, self.reader, self.writer = request, reader, writer
        self.timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        self.parser = httptools.HttpResponseParser(self)
        self.reason = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.received = 0  # bytes read, counted until the response's head is complete
        self.status: int | None = None  # of the final response, once its head is read
        self.body: list[bytes] = []
        self.complete = False  # the whole response is read
        self.registry = registry
        registry.add(self)

    @classmethod
    async def connect(cls, request: httpx.Request, registry: set[_Exchange]) -> _Exchange:
        url = request.url
        timeouts = request.extensions.get("timeout", {})
        try:
            async with asyncio.timeout(timeouts.get("connect")):
                reader, writer = await asyncio.open_connection(url.host, url.port or 80)
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(
                f"timed out connecting to {url.host}", request=request
            ) from exc
        except OSError as exc:
            message = str(exc) or type(exc).__name__
            raise httpx.ConnectError(message, request=request) from _refusal(exc)
        return cls(request, reader, writer, registry)

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
            raise httpx.ReadError(str(exc) or type(exc).__name__, request=self.request) from exc
        if not data:
            self._closed()
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            if not self.complete:  # anything after a complete response is not read
                raise httpx.RemoteProtocolError(str(exc), request=self.request) from exc
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
        self.complete = True

    # httptools' callbacks
    def on_message_begin(self) -> None:
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
            self.complete = self.request.method == "HEAD"

    def on_body(self, data: bytes) -> None:
        if not self.complete:
            self.body.append(data)

    def on_message_complete(self) -> None:
        if self.status is not None:
            self.complete = True

    def close(self) -> None:
        self.registry.discard(self)
        self.writer.close()


class _Body(httpx.AsyncByteStream):
    """The response body as it arrives; the connection closes with it."""

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
