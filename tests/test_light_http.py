"""The light transport (agentcli.providers.light_http) against httpx's own transport
(httpcore), side by side: the same raw server answers both, byte for byte, and each
scenario must end the same way through either (the body, or the kind of error). Over TLS:
tests/test_light_https.py."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import socket
import ssl
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
import pytest

from agentcli.providers import light_http
from agentcli.providers.http import connect_failure, light_transport, new_client
from agentcli.providers.light_http import LightTransport


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
    for transport in (LightTransport(), httpx.AsyncHTTPTransport()):
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
    for transport in (LightTransport(), httpx.AsyncHTTPTransport()):
        server = RawServer(script=[OK_HEAD + b"Content-Length: 5\r\n\r\n"])  # no body
        try:
            results.append(asyncio.run(outcome(transport, server.url, method="HEAD")))
        finally:
            server.stop()
    assert results[0] == results[1] == (200, None, b"")


def test_the_connection_is_closed_once_the_response_is_read(server: RawServer) -> None:
    server.script = SCENARIOS["content-length"]
    transport = LightTransport()
    assert asyncio.run(outcome(transport, server.url))[-1] == b"hello"
    assert server.client_closed.wait(3)
    assert transport.open_connections == 0


def test_a_refused_connection_is_described_as_refused() -> None:
    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()

    async def attempt() -> httpx.ConnectError:
        async with httpx.AsyncClient(transport=LightTransport()) as client:
            with pytest.raises(httpx.ConnectError) as caught:
                await client.get(f"http://127.0.0.1:{port}/")
        return caught.value

    error = asyncio.run(attempt())
    assert isinstance(error.__cause__, ConnectionRefusedError)
    assert "connection refused" in str(connect_failure("http://x", error, "--base-url"))


PROXY_NAMES = ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")


def clear_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*PROXY_NAMES, "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)


def test_the_light_transport_carries_http_and_https_and_nothing_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clear_proxies(monkeypatch)
    plain, tls = light_transport("http://127.0.0.1:1/v1"), light_transport("https://x.test/v1")
    assert isinstance(plain, LightTransport) and plain.tls is None
    assert isinstance(tls, LightTransport) and tls.tls is not None
    assert tls.tls.verify_mode == ssl.CERT_REQUIRED and tls.tls.check_hostname
    assert light_transport("ws://127.0.0.1:1/v1") is None


@pytest.mark.parametrize("name", PROXY_NAMES)
def test_a_proxy_for_the_scheme_leaves_it_to_httpx(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_proxies(monkeypatch)
    monkeypatch.setenv(name, "http://127.0.0.1:9")
    scheme = name.lower().removesuffix("_proxy")
    carried = {s: light_transport(f"{s}://x.test/v1") is None for s in ("http", "https")}
    assert carried == {"http": scheme in ("http", "all"), "https": scheme in ("https", "all")}


def test_the_providers_client_reads_a_body_a_read_at_a_time(
    server: RawServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What marks the light transport from outside: the chunks that arrived together go up
    as one piece (httpx's own transport hands up one per chunk)."""
    clear_proxies(monkeypatch)
    head = OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n"
    server.script = [head + chunked(b"a", b"b", b"c") + b"0\r\n\r\n"]
    assert asyncio.run(pieces(new_client(server.url), server.url)) == [b"abc"]


async def pieces(client: httpx.AsyncClient, url: str) -> list[bytes]:
    try:
        async with client.stream("POST", f"{url}/x", json={}) as response:
            return [piece async for piece in response.aiter_raw()]
    finally:
        await client.aclose()


def test_without_httptools_plain_http_goes_through_httpxs_transport(
    server: RawServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A machine with no httptools wheel still reaches a plain-HTTP server."""
    clear_proxies(monkeypatch)
    head = OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n"
    server.script = [head + chunked(b"a", b"b", b"c") + b"0\r\n\r\n"]
    monkeypatch.setitem(sys.modules, "httptools", None)  # its import fails
    monkeypatch.delitem(sys.modules, "agentcli.providers.light_http")
    assert light_transport(server.url) is None
    assert asyncio.run(pieces(new_client(server.url), server.url)) == [b"a", b"b", b"c"]


def test_a_proxy_named_in_the_environment_still_carries_plain_http(
    server: RawServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """httpx routes through HTTP_PROXY only with its own transports, so with a proxy in the
    environment the client keeps them: the proxy gets the request in absolute form."""
    server.script = SCENARIOS["content-length"]
    clear_proxies(monkeypatch)
    monkeypatch.setenv("HTTP_PROXY", server.url)

    async def through_proxy() -> bytes:
        client = new_client("http://model.invalid:8080/v1")
        try:
            return (await client.post("http://model.invalid:8080/v1/chat", json={})).content
        finally:
            await client.aclose()

    assert asyncio.run(through_proxy()) == b"hello"
    assert server.requests[0].startswith(b"POST http://model.invalid:8080/v1/chat HTTP/1.1")


def test_a_request_http_1_1_cannot_carry_is_httpxs_local_protocol_error(server: RawServer) -> None:
    server.script = SCENARIOS["content-length"]

    async def attempt() -> None:
        async with httpx.AsyncClient(transport=LightTransport()) as client:
            request = client.build_request("POST", f"{server.url}/x", content=b"abc")
            request.headers["content-length"] = "5"  # claims more than it carries
            await client.send(request)

    with pytest.raises(httpx.LocalProtocolError):
        asyncio.run(attempt())


class KeepAliveServer:
    """Answers request after request on each connection (HTTP/1.1 keeps it alive), over
    TLS given a context. After `answers` requests on a connection it reads the next one and
    closes without a word: a server that dropped an idle connection as the request came."""

    ANSWER = OK_HEAD + b"Content-Length: 2\r\n\r\nok"

    def __init__(self, tls: ssl.SSLContext | None = None, answers: int = 100) -> None:
        self.tls, self.answers = tls, answers
        self.connections = 0
        self.requests = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            with conn:
                buffered, answered = b"", 0
                while True:
                    while b"\r\n\r\n" not in buffered:
                        data = conn.recv(65536)
                        if not data:
                            return
                        buffered += data
                    head, _, buffered = buffered.partition(b"\r\n\r\n")
                    length = int(head.lower().split(b"content-length: ")[1].split(b"\r")[0])
                    while len(buffered) < length:
                        buffered += conn.recv(65536)
                    buffered = buffered[length:]
                    self.requests += 1
                    if answered == self.answers:
                        return
                    conn.sendall(self.ANSWER)
                    answered += 1

    def stop(self) -> None:
        self.sock.close()


async def post_each(transport: LightTransport, url: str, times: int) -> list[bytes]:
    async with httpx.AsyncClient(transport=transport) as client:
        return [(await client.post(f"{url}/x", json={})).content for _ in range(times)]


def test_a_kept_alive_connection_carries_the_next_request() -> None:
    server = KeepAliveServer()
    try:
        assert asyncio.run(post_each(LightTransport(), server.url, 3)) == [b"ok"] * 3
    finally:
        server.stop()
    assert (server.connections, server.requests) == (1, 3)


def test_a_connection_the_server_closes_is_not_used_again() -> None:
    server = KeepAliveServer()
    server.ANSWER = OK_HEAD + b"Connection: close\r\nContent-Length: 2\r\n\r\nok"
    try:
        assert asyncio.run(post_each(LightTransport(), server.url, 2)) == [b"ok"] * 2
    finally:
        server.stop()
    assert (server.connections, server.requests) == (2, 2)


def test_a_request_the_kept_connection_drops_goes_again_on_a_new_one() -> None:
    server = KeepAliveServer(answers=1)
    try:
        assert asyncio.run(post_each(LightTransport(), server.url, 2)) == [b"ok"] * 2
    finally:
        server.stop()
    assert (server.connections, server.requests) == (2, 3)  # the dropped one, sent again


def test_a_connection_idle_past_the_keepalive_expiry_is_not_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(light_http, "KEEPALIVE_SECONDS", 0.0)
    server = KeepAliveServer()
    try:
        assert asyncio.run(post_each(LightTransport(), server.url, 2)) == [b"ok"] * 2
    finally:
        server.stop()
    assert (server.connections, server.requests) == (2, 2)
