"""An httpx transport for plain `http://` model servers (Ollama, llama.cpp, vLLM on this
machine; the test suite's scripted servers): one connection per request over asyncio
streams, with HTTP/1.1 framed by h11, the parser httpcore itself uses.

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
from typing import Any

import h11
import httpx

READ_SIZE = 64 * 1024


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
    """One request and its response on one connection."""

    def __init__(
        self,
        request: httpx.Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        registry: set[_Exchange],
    ) -> None:
        self.request, self.reader, self.writer = request, reader, writer
        self.timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        self.h11 = h11.Connection(h11.CLIENT)
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
            head = h11.Request(
                method=request.method,
                target=request.url.raw_path,
                headers=list(request.headers.raw),
            )
            wire = self.h11.send(head) or b""
            if body:
                wire += self.h11.send(h11.Data(data=body)) or b""
            wire += self.h11.send(h11.EndOfMessage()) or b""
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
        while True:
            event = await self.next_event()
            if isinstance(event, h11.Response):
                break
            if isinstance(event, h11.ConnectionClosed):
                raise httpx.RemoteProtocolError(
                    "Server disconnected without sending a response.", request=request
                )
        return httpx.Response(
            event.status_code,
            headers=list(event.headers.raw_items()),
            stream=_Body(self),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": event.reason},
        )

    def received_event(self) -> Any:
        """The next event from what was already read, or None when it needs more data."""
        try:
            event = self.h11.next_event()
        except h11.RemoteProtocolError as exc:
            raise httpx.RemoteProtocolError(str(exc), request=self.request) from exc
        return None if event is h11.NEED_DATA else event

    async def next_event(self) -> Any:
        while True:
            event = self.received_event()
            if event is not None:
                return event
            try:
                async with asyncio.timeout(self.timeouts.get("read")):
                    data = await self.reader.read(READ_SIZE)
            except TimeoutError as exc:
                raise httpx.ReadTimeout(
                    "timed out reading the response", request=self.request
                ) from exc
            except OSError as exc:
                raise httpx.ReadError(str(exc) or type(exc).__name__, request=self.request) from exc
            self.h11.receive_data(data)  # b"": the server closed its side

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
                event = await exchange.next_event()
                data = []
                while isinstance(event, h11.Data):
                    data.append(bytes(event.data))
                    event = exchange.received_event()
                if data:
                    yield b"".join(data)
                if isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                    return
        finally:
            exchange.close()

    async def aclose(self) -> None:
        self.exchange.close()
