"""The plain-HTTP transport (agentcli.providers.plain_http) against httpx's own transport
(httpcore), side by side: the same raw server answers both, byte for byte, and each
scenario must end the same way through either (the body, or the kind of error)."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
import pytest

from agentcli.providers.http import connect_failure, new_client
from agentcli.providers.plain_http import PlainHttpTransport


@dataclass
class RawServer:
    """A TCP server on 127.0.0.1 that reads one request head (and its Content-Length body)
    per connection, records it, and plays `script`: bytes to send, or a float to pause."""

    script: list[bytes | float] = field(default_factory=list)
    requests: list[bytes] = field(default_factory=list)
    client_closed: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.stopping = False
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            while len(body) < length:
                body += conn.recv(65536)
            self.requests.append(head + b"\r\n\r\n" + body)
            with contextlib.suppress(OSError):  # the client may have given up already
                for step in self.script:
                    if isinstance(step, float):
                        time.sleep(step)
                    else:
                        conn.sendall(step)
                conn.settimeout(3)
                if conn.recv(1) == b"":
                    self.client_closed.set()

    def stop(self) -> None:
        self.stopping = True
        self.sock.close()


@pytest.fixture
def server() -> Iterator[RawServer]:
    made = RawServer()
    yield made
    made.stop()


def chunked(*parts: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts)


OK_HEAD = b"HTTP/1.1 200 OK\r\n"
SCENARIOS: dict[str, list[bytes | float]] = {
    "content-length": [OK_HEAD + b"Content-Length: 5\r\n\r\nhello"],
    "chunked, one event a chunk": [
        OK_HEAD + b"Content-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
        chunked(b"data: 1\n\n"),
        0.05,
        chunked(b"data: 2\n\n"),
        b"0\r\n\r\n",
    ],
    "close-delimited": [OK_HEAD + b"Connection: close\r\n\r\nuntil the end", b""],
    "gzip": [
        OK_HEAD
        + b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(gzip.compress(b"hi"))
        + gzip.compress(b"hi")
    ],
    "an error status with its body": [
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 14\r\nRetry-After: 2\r\n\r\n"
        b'{"error":"no"}'
    ],
    "a 100 Continue first": [
        b"HTTP/1.1 100 Continue\r\n\r\n",
        OK_HEAD,
        b"Content-Length: 2\r\n\r\nok",
    ],
    "cut in the middle of a chunked body": [
        OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n",
        chunked(b"data: 1\n\n"),
    ],
    "cut before the body's length": [OK_HEAD + b"Content-Length: 50\r\n\r\nshort"],
    "closed without a response": [],
    "silent past the read timeout": [OK_HEAD + b"Content-Length: 4\r\n\r\n", 1.5, b"late"],
    "not HTTP at all": [b"SSH-2.0-OpenSSH_9.6\r\n"],
    "a head longer than 16 KiB": [OK_HEAD + b"X-Long: " + b"a" * 20_000 + b"\r\n\r\n"],
    "a chunk split across reads": [
        OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(b"data: 1\n\n")[:3],
        0.05,
        chunked(b"data: 1\n\n")[3:] + chunked(b"data: 2\n\n")[:-4],
        0.05,
        chunked(b"data: 2\n\n")[-4:] + b"0\r\n\r\n",
    ],
    "head and body in one read, bytes after the end": [
        OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(b"one") + b"0\r\n\r\nXYZ"
    ],
}

BODIES = {  # what the scenarios that end well deliver
    "content-length": b"hello",
    "gzip": b"hi",
    "a chunk split across reads": b"data: 1\n\ndata: 2\n\n",
    "head and body in one read, bytes after the end": b"one",
}


async def outcome(
    transport: httpx.AsyncBaseTransport, url: str, method: str = "POST"
) -> tuple[object, ...]:
    """What a client sees: (status, headers that matter, body) or the httpx error's kind."""
    timeout = httpx.Timeout(5.0, read=0.5)
    async with httpx.AsyncClient(transport=transport, timeout=timeout) as client:
        try:
            request = client.build_request(method, f"{url}/v1/chat?x=1", json={"a": "é"})
            response = await client.send(request, stream=True)
            try:
                body = b"".join([part async for part in response.aiter_bytes()])
            finally:
                await response.aclose()
        except httpx.HTTPError as error:
            kind = type(error)
            return ("error", "TransportError" if kind.__name__ == "TransportError" else kind)
    return response.status_code, response.headers.get("retry-after"), body


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_each_scenario_ends_the_same_through_both_transports(name: str) -> None:
    results, requests = [], []
    for transport in (PlainHttpTransport(), httpx.AsyncHTTPTransport()):
        server = RawServer(script=SCENARIOS[name])
        try:
            results.append(asyncio.run(outcome(transport, server.url)))
            requests.append(server.requests[0] if server.requests else b"")
        finally:
            server.stop()
    ours, theirs = results
    if name == "not HTTP at all":  # both refuse it; httpcore's words for it differ
        assert ours[0] == theirs[0] == "error"
    else:
        assert ours == theirs
    if name in BODIES:
        assert ours[-1] == BODIES[name]
    line, *_ = requests[0].split(b"\r\n")
    assert line == b"POST /v1/chat?x=1 HTTP/1.1"
    assert requests[0].endswith(b'{"a":"\xc3\xa9"}')
    assert requests[0].split(b"\r\n\r\n")[1] == requests[1].split(b"\r\n\r\n")[1]


def test_the_answer_to_a_head_request_has_no_body_through_both_transports() -> None:
    results = []
    for transport in (PlainHttpTransport(), httpx.AsyncHTTPTransport()):
        server = RawServer(script=[OK_HEAD + b"Content-Length: 5\r\n\r\n"])  # no body
        try:
            results.append(asyncio.run(outcome(transport, server.url, method="HEAD")))
        finally:
            server.stop()
    assert results[0] == results[1] == (200, None, b"")


def test_the_connection_is_closed_once_the_response_is_read(server: RawServer) -> None:
    server.script = SCENARIOS["content-length"]
    transport = PlainHttpTransport()
    assert asyncio.run(outcome(transport, server.url))[-1] == b"hello"
    assert server.client_closed.wait(3)
    assert transport._open == set()


def test_a_refused_connection_is_described_as_refused() -> None:
    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()

    async def attempt() -> httpx.ConnectError:
        async with httpx.AsyncClient(transport=PlainHttpTransport()) as client:
            with pytest.raises(httpx.ConnectError) as caught:
                await client.get(f"http://127.0.0.1:{port}/")
        return caught.value

    error = asyncio.run(attempt())
    assert isinstance(error.__cause__, ConnectionRefusedError)
    assert "connection refused" in str(connect_failure("http://x", error, "--base-url"))


def test_the_providers_client_uses_it_for_http_only(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)

    async def transports() -> tuple[object, object]:
        plain, tls = new_client("http://127.0.0.1:1/v1"), new_client("https://example.test/v1")
        try:
            return plain._transport, tls._transport
        finally:
            await plain.aclose()
            await tls.aclose()

    plain, tls = asyncio.run(transports())
    assert isinstance(plain, PlainHttpTransport)
    assert not isinstance(tls, PlainHttpTransport)


def test_without_httptools_plain_http_goes_through_httpxs_transport(
    server: RawServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A machine with no httptools wheel still reaches a plain-HTTP server."""
    server.script = SCENARIOS["content-length"]
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setitem(sys.modules, "httptools", None)  # its import fails
    monkeypatch.delitem(sys.modules, "agentcli.providers.plain_http")

    async def fetch() -> tuple[object, bytes]:
        client = new_client(server.url)
        try:
            return client._transport, (await client.post(f"{server.url}/x", json={})).content
        finally:
            await client.aclose()

    transport, body = asyncio.run(fetch())
    assert isinstance(transport, httpx.AsyncHTTPTransport)
    assert body == b"hello"


def test_a_proxy_named_in_the_environment_still_carries_plain_http(
    server: RawServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """httpx routes through HTTP_PROXY only with its own transports, so with a proxy in the
    environment the client keeps them: the proxy gets the request in absolute form."""
    server.script = SCENARIOS["content-length"]
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", server.url)

    async def through_proxy() -> tuple[object, bytes]:
        client = new_client("http://model.invalid:8080/v1")
        try:
            answer = await client.post("http://model.invalid:8080/v1/chat", json={})
            return client._transport, answer.content
        finally:
            await client.aclose()

    transport, body = asyncio.run(through_proxy())
    assert not isinstance(transport, PlainHttpTransport)
    assert body == b"hello"
    assert server.requests[0].startswith(b"POST http://model.invalid:8080/v1/chat HTTP/1.1")


def test_a_request_http_1_1_cannot_carry_is_httpxs_local_protocol_error(server: RawServer) -> None:
    server.script = SCENARIOS["content-length"]

    async def attempt() -> None:
        async with httpx.AsyncClient(transport=PlainHttpTransport()) as client:
            request = client.build_request("POST", f"{server.url}/x", content=b"abc")
            request.headers["content-length"] = "5"  # claims more than it carries
            await client.send(request)

    with pytest.raises(httpx.LocalProtocolError):
        asyncio.run(attempt())
