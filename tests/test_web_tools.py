"""fetch_url and web_search against servers started here on 127.0.0.1 (never any other
address): readable text from HTML, plain text and JSON, cuts, redirects, the size cap while
reading, timeouts, refusals, the local-network risk (including after a redirect), the search
backends, and both tools end to end through `agentcli run` with the scripted model."""

from __future__ import annotations

import asyncio
import gzip
import json
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from agentcli.risk import Risk
from agentcli.tools import web
from agentcli.tools.base import ToolContext, ToolFailure, ToolOutput
from agentcli.tools.web import FetchUrl, WebSearch
from agentcli.workspace.root import Workspace
from tests.conftest import RunCli
from tests.scripted_server import Reply, ScriptedServer

# --- a local web site --------------------------------------------------------------------

PAGE = """<!doctype html>
<html><head><title>Test Page</title>
<style>body { color: red; } .hidden-style-marker {}</style>
<script>var secret = "SCRIPT_MARKER";</script></head>
<body>
<h1>Main Heading</h1>
<p>First paragraph with a <a href="https://example.org/docs">docs link</a>.</p>
<h2>Sub Heading</h2>
<ul><li>item one</li><li>item two</li></ul>
<noscript>NOSCRIPT_MARKER</noscript>
<script>alert("SCRIPT_MARKER_TWO")</script>
<p>Last words.</p>
</body></html>
"""
STREAM_TOTAL = 64 * 1024 * 1024  # what the streaming routes would send if nobody stopped them
SMALL_CAP = 1024 * 1024  # MAX_BODY_BYTES while the size tests run
TRICKLE_BYTES = 25  # one every 0.1 s: 2.5 s in all


@dataclass
class Seen:
    """One request the site received."""

    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


@dataclass
class Transfer:
    """How far a streaming route got before the client hung up."""

    sent: int = 0
    aborted: bool = False
    done: threading.Event = field(default_factory=threading.Event)


class Site:
    def __init__(self) -> None:
        self.requests: list[Seen] = []
        self.stop = threading.Event()
        self.transfers: dict[str, Transfer] = {}
        self.routes: dict[str, Callable[[_Handler], None]] = dict(ROUTES)
        self.httpd = _Server(self)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def paths(self) -> list[str]:
        return [seen.path for seen in self.requests]

    def transfer(self, name: str) -> Transfer:
        return self.transfers.setdefault(name, Transfer())

    def close(self) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, site: Site) -> None:
        self.site = site
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hanging up on purpose is what several tests are about


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # bodies without Content-Length end when the socket closes
    timeout = 10
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        site = self.server.site
        parts = urlsplit(self.path)
        headers = {name.lower(): value for name, value in self.headers.items()}
        site.requests.append(Seen(parts.path, parse_qs(parts.query), headers))
        route = site.routes.get(parts.path)
        if route is None:
            send(self, 404, "text/plain", b"not found")
        else:
            route(self)


def send(
    handler: _Handler,
    status: int,
    content_type: str | None,
    body: bytes,
    headers: dict[str, str] | None = None,
) -> None:
    handler.send_response(status)
    if content_type is not None:
        handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


def redirect(handler: _Handler, location: str, status: int = 302) -> None:
    send(handler, status, "text/plain", b"moved", {"Location": location})


def _chain(handler: _Handler) -> None:
    """/chain/N redirects N more times (mixing codes and relative/absolute), then the page."""
    left = int(handler.path.rsplit("/", 1)[1])
    if left == 0:
        send(handler, 200, "text/html; charset=utf-8", PAGE.encode())
        return
    status = (301, 302, 303, 307, 308)[left % 5]
    target = f"/chain/{left - 1}"
    if left % 2:
        target = f"http://127.0.0.1:{handler.server.server_address[1]}{target}"
    redirect(handler, target, status)


def _stream(name: str, declared: int | None) -> Callable[[_Handler], None]:
    def route(handler: _Handler) -> None:
        transfer = handler.server.site.transfer(name)
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain")
        if declared is not None:
            handler.send_header("Content-Length", str(declared))
        handler.end_headers()
        chunk = b"x" * 65536
        try:
            while transfer.sent < STREAM_TOTAL:
                handler.wfile.write(chunk)
                transfer.sent += len(chunk)
        except OSError:
            transfer.aborted = True
        finally:
            transfer.done.set()

    return route


def _slow_headers(handler: _Handler) -> None:
    handler.server.site.stop.wait(5)  # longer than the patched timeout, cut short at teardown
    send(handler, 200, "text/plain", b"too late")


def _stalled_body(handler: _Handler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    handler.send_header("Content-Length", "1000")
    handler.end_headers()
    handler.wfile.write(b"a few bytes, then nothing")
    handler.server.site.stop.wait(5)


def _trickle(handler: _Handler) -> None:
    """A byte every 0.1 s: each read is quick, the whole response is not."""
    transfer = handler.server.site.transfer("trickle")
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    handler.send_header("Content-Length", str(TRICKLE_BYTES))
    handler.end_headers()
    try:
        for _ in range(TRICKLE_BYTES):
            if handler.server.site.stop.wait(0.1):
                break
            handler.wfile.write(b"x")
            transfer.sent += 1
    except OSError:
        transfer.aborted = True
    finally:
        transfer.done.set()


BOMB = gzip.compress(b"\0" * (64 * SMALL_CAP))  # about 64 KB that inflate to 64 MB


def _gzip_bomb(handler: _Handler) -> None:
    send(handler, 200, "text/plain", BOMB, {"Content-Encoding": "gzip"})


def _encoded(encoding: str, body: bytes) -> Callable[[_Handler], None]:
    return lambda h: send(h, 200, "text/plain", body, {"Content-Encoding": encoding})


def _searx(handler: _Handler) -> None:
    query = parse_qs(urlsplit(handler.path).query)
    q = query.get("q", [""])[0]
    results = [
        {"title": f"Result {n} for {q}", "url": f"https://r{n}.example/", "content": f"snip {n}"}
        for n in range(1, 8)
    ]
    send(handler, 200, "application/json", json.dumps({"results": results}).encode())


def _brave(handler: _Handler) -> None:
    results = [
        {"title": f"Brave {n}", "url": f"https://b{n}.example/", "description": f"desc {n}"}
        for n in range(1, 4)
    ]
    body = {"type": "search", "web": {"results": results}}
    send(handler, 200, "application/json", json.dumps(body).encode())


ROUTES: dict[str, Callable[[_Handler], None]] = {
    "/page.html": lambda h: send(h, 200, "text/html; charset=utf-8", PAGE.encode()),
    "/notes.txt": lambda h: send(h, 200, "text/plain; charset=utf-8", b"plain text notes\n"),
    "/latin1.txt": lambda h: send(h, 200, "text/plain; charset=iso-8859-1", "café".encode("l1")),
    "/data.json": lambda h: send(h, 200, "application/json", b'{"answer": 42, "list": [1, 2]}'),
    "/long.txt": lambda h: send(h, 200, "text/plain", ("0123456789" * 500).encode()),
    "/image.png": lambda h: send(h, 200, "image/png", b"\x89PNG\r\n\x1a\n" + b"\0" * 2040),
    "/gone": lambda h: send(h, 404, "text/html", b"<h1>Not Found</h1>"),
    "/broken": lambda h: send(h, 500, "text/plain", b"oops"),
    "/loop": lambda h: redirect(h, "/loop"),
    "/to-file": lambda h: redirect(h, "file:///etc/passwd"),
    "/public/start": lambda h: redirect(h, "/public/next"),
    "/public/next": lambda h: redirect(h, "/private/page.html"),
    "/public/hop": lambda h: redirect(h, "/public/page.html"),
    "/public/page.html": lambda h: send(h, 200, "text/plain", b"public page text"),
    "/private/page.html": lambda h: send(h, 200, "text/plain", b"PRIVATE DATA"),
    "/stream": _stream("stream", None),
    "/declared-huge": _stream("declared-huge", 1_000_000_000),
    "/slow": _slow_headers,
    "/stalled": _stalled_body,
    "/trickle": _trickle,
    "/bomb": _gzip_bomb,
    "/gzip": _encoded("gzip", gzip.compress(b"hello from gzip")),
    "/deflate": _encoded("deflate", zlib.compress(b"hello from deflate")),
    "/brotli": _encoded("br", b"\x0b\x02\x80hi\x03"),
    "/corrupt": _encoded("gzip", b"\x1f\x8b not really gzip"),
    "/search": _searx,
    "/brave": _brave,
    "/search-500": lambda h: send(h, 500, "application/json", b'{"error": "boom"}'),
    "/html-not-json/search": lambda h: send(h, 200, "text/html", b"<html>no api</html>"),
    "/json-list/search": lambda h: send(h, 200, "application/json", b"[1, 2, 3]"),
}
for _n in range(0, 8):
    ROUTES[f"/chain/{_n}"] = _chain


@pytest.fixture
def site() -> Iterator[Site]:
    site = Site()
    site.thread.start()
    try:
        yield site
    finally:
        site.close()


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(tmp_path))


def fetch(ctx: ToolContext, url: str, **extra: Any) -> ToolOutput:
    return asyncio.run(FetchUrl().execute({"url": url, **extra}, ctx))


def fetch_error(ctx: ToolContext, url: str, **extra: Any) -> str:
    with pytest.raises(ToolFailure) as failure:
        fetch(ctx, url, **extra)
    return str(failure.value)


def header_and_text(content: str) -> tuple[dict[str, str], str]:
    head, _, text = content.partition("\n\n")
    fields = dict(line.split(": ", 1) for line in head.splitlines())
    return fields, text


# --- fetch_url: content ------------------------------------------------------------------


def test_html_page_becomes_readable_markdown(site: Site, ctx: ToolContext) -> None:
    out = fetch(ctx, site.url("/page.html"))

    assert not out.error
    fields, text = header_and_text(out.content)
    assert fields == {
        "Title": "Test Page",
        "URL": site.url("/page.html"),
        "Content-Type": "text/html",
    }
    assert "# Main Heading" in text.splitlines()
    assert "## Sub Heading" in text.splitlines()
    assert "[docs link](https://example.org/docs)" in text
    assert "First paragraph with a" in text
    assert any(line.lstrip("*-+ ").strip() == "item one" for line in text.splitlines())
    assert "Last words." in text
    for noise in ("SCRIPT_MARKER", "color: red", "hidden-style-marker", "NOSCRIPT_MARKER", "<"):
        assert noise not in text, noise
    assert out.summary == f"{len(PAGE.encode()):,} bytes from 127.0.0.1"


def test_plain_text_is_returned_as_is(site: Site, ctx: ToolContext) -> None:
    out = fetch(ctx, site.url("/notes.txt"))

    fields, text = header_and_text(out.content)
    assert fields == {"URL": site.url("/notes.txt"), "Content-Type": "text/plain"}
    assert text == "plain text notes\n"


def test_charset_from_the_content_type_is_used(site: Site, ctx: ToolContext) -> None:
    _, text = header_and_text(fetch(ctx, site.url("/latin1.txt")).content)
    assert text == "café"


def test_json_is_returned_as_text(site: Site, ctx: ToolContext) -> None:
    fields, text = header_and_text(fetch(ctx, site.url("/data.json")).content)
    assert fields["Content-Type"] == "application/json"
    assert json.loads(text) == {"answer": 42, "list": [1, 2]}


def test_max_chars_cuts_with_a_marker(site: Site, ctx: ToolContext) -> None:
    out = fetch(ctx, site.url("/long.txt"), max_chars=100)

    _, text = header_and_text(out.content)
    body, marker = text.split("\n", 1)
    assert body == ("0123456789" * 10)
    assert marker == "[… cut at 100 of 5,000 characters]"
    whole = fetch(ctx, site.url("/long.txt"))
    assert "cut at" not in whole.content
    assert whole.content.endswith("0123456789" * 500)


# --- fetch_url: redirects ----------------------------------------------------------------


def test_five_redirects_are_followed_and_the_final_url_reported(
    site: Site, ctx: ToolContext
) -> None:
    out = fetch(ctx, site.url("/chain/5"))

    fields, text = header_and_text(out.content)
    assert fields["URL"] == site.url("/chain/0")
    assert fields["Title"] == "Test Page"
    assert "# Main Heading" in text
    assert site.paths() == [f"/chain/{n}" for n in range(5, -1, -1)]


def test_more_than_five_redirects_is_a_clear_error(site: Site, ctx: ToolContext) -> None:
    message = fetch_error(ctx, site.url("/chain/6"))
    assert "more than 5 redirects" in message
    assert len(site.requests) == 6  # stopped, not followed on

    message = fetch_error(ctx, site.url("/loop"))
    assert "more than 5 redirects" in message
    assert site.url("/loop") in message


def test_a_redirect_to_another_scheme_is_refused(site: Site, ctx: ToolContext) -> None:
    message = fetch_error(ctx, site.url("/to-file"))
    assert "only http and https" in message


def test_redirect_from_a_public_host_into_the_local_network_is_refused(
    site: Site, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first URL counts as public (approved at medium risk); the redirect target is
    local: the hop is refused and never requested."""

    def fake_local_reason(url: str) -> str | None:
        return None if urlsplit(url).path.startswith("/public/") else "pretend-private network"

    monkeypatch.setattr(web, "local_reason", fake_local_reason)
    monkeypatch.setattr(web, "_address_is_local", lambda address: False)  # connecting too
    tool = FetchUrl()
    assert tool.assess({"url": site.url("/public/start")}, ctx).risk is Risk.MEDIUM

    message = fetch_error(ctx, site.url("/public/start"))

    assert message.startswith("refused: a redirect leads to")
    assert site.url("/private/page.html") in message
    assert "pretend-private network" in message
    assert site.paths() == ["/public/start", "/public/next"]  # the private page never asked


def test_redirect_between_public_urls_is_followed_when_not_local(
    site: Site, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web, "local_reason", lambda url: None)
    monkeypatch.setattr(web, "_address_is_local", lambda address: False)
    out = fetch(ctx, site.url("/public/hop"))
    fields, text = header_and_text(out.content)
    assert fields["URL"] == site.url("/public/page.html")
    assert text == "public page text"


def test_a_name_that_changes_its_address_after_the_check_is_refused_when_connecting(
    site: Site, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: the name looked public when the call was assessed (medium, so no
    local access approved), and resolves to this machine when the connection is made.
    The connection is checked and refused; the server never sees a request."""
    monkeypatch.setattr(web, "local_reason", lambda url: None)  # what the first lookup saw
    url = site.url("/public/page.html").replace("127.0.0.1", "localhost")
    assert FetchUrl().assess({"url": url}, ctx).risk is Risk.MEDIUM

    message = fetch_error(ctx, url)

    assert "refused: localhost resolves to" in message
    assert "on this machine or the local network" in message
    assert site.paths() == []
    # approved as local, the same fetch connects
    assert asyncio.run(web.fetch(url, allow_local=True))[2] == b"public page text"


# --- fetch_url: size, time, refusals ------------------------------------------------------


def test_a_streamed_body_over_the_cap_is_refused_while_reading(
    site: Site, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web, "MAX_BODY_BYTES", SMALL_CAP)
    started = time.monotonic()
    message = fetch_error(ctx, site.url("/stream"))

    assert time.monotonic() - started < 5
    assert message.startswith(f"refused: {site.url('/stream')} is larger than 1 MB")
    transfer = site.transfer("stream")
    assert transfer.done.wait(5), "the server is still sending: the client did not hang up"
    assert transfer.aborted, "the server could send everything"
    assert transfer.sent < STREAM_TOTAL // 2, transfer.sent


def test_a_declared_length_over_the_cap_is_refused_before_reading(
    site: Site, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web, "MAX_BODY_BYTES", SMALL_CAP)
    message = fetch_error(ctx, site.url("/declared-huge"))

    # the size reported is the declared one: nothing of the body was counted
    assert message == f"refused: {site.url('/declared-huge')} is larger than 1 MB " + (
        "(1,000,000,000 bytes so far)"
    )
    transfer = site.transfer("declared-huge")
    assert transfer.done.wait(5)
    assert transfer.aborted
    assert transfer.sent < STREAM_TOTAL // 2


def test_a_compressed_body_is_capped_by_its_inflated_size(
    site: Site, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web, "MAX_BODY_BYTES", SMALL_CAP)
    tracemalloc.start()
    try:
        message = fetch_error(ctx, site.url("/bomb"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "is larger than 1 MB" in message
    # inflated a bounded piece at a time: never near the 64 MB the body inflates to
    assert peak < 8 * SMALL_CAP, f"peak {peak:,} bytes"


def test_compressed_bodies_are_decoded_and_unknown_encodings_refused(
    site: Site, ctx: ToolContext
) -> None:
    assert header_and_text(fetch(ctx, site.url("/gzip")).content)[1] == "hello from gzip"
    assert header_and_text(fetch(ctx, site.url("/deflate")).content)[1] == "hello from deflate"
    assert "content encoding 'br'" in fetch_error(ctx, site.url("/brotli"))
    assert "could not decode the body" in fetch_error(ctx, site.url("/corrupt"))


def test_a_server_that_does_not_answer_times_out(
    site: Site, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web, "TIMEOUT_SECONDS", 0.3)
    for path in ("/slow", "/stalled"):
        started = time.monotonic()
        message = fetch_error(ctx, site.url(path))
        assert time.monotonic() - started < 2.5, path
        assert message == f"timed out after 0.3s fetching {site.url(path)}"


def test_a_trickling_server_is_stopped_by_the_timeout(
    site: Site, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A byte every 0.1 s never trips a per-read timeout of 0.5 s; the message promises
    `timed out after 0.5s`, so the whole fetch must end around then, not after 2.5 s."""
    monkeypatch.setattr(web, "TIMEOUT_SECONDS", 0.5)
    started = time.monotonic()
    try:
        outcome = fetch(ctx, site.url("/trickle")).content
    except ToolFailure as failure:
        outcome = str(failure)
    elapsed = time.monotonic() - started

    assert "timed out" in outcome and elapsed < 1.5, (
        f"after {elapsed:.1f}s the fetch returned {outcome[:80]!r}"
    )


def test_non_text_content_is_refused_with_type_and_size(site: Site, ctx: ToolContext) -> None:
    message = fetch_error(ctx, site.url("/image.png"))
    assert message == (
        f"{site.url('/image.png')} is image/png (2,048 bytes), not text; "
        "fetch_url returns text only"
    )


def test_http_errors_are_errors(site: Site, ctx: ToolContext) -> None:
    assert fetch_error(ctx, site.url("/gone")) == f"HTTP 404 from {site.url('/gone')}"
    assert fetch_error(ctx, site.url("/broken")) == f"HTTP 500 from {site.url('/broken')}"


def test_a_closed_port_is_a_clear_error(ctx: ToolContext) -> None:
    site = Site()  # bound, never served, then closed: nobody listens on the port
    url = site.url("/x")
    site.httpd.server_close()
    assert fetch_error(ctx, url).startswith(f"could not fetch {url}")


@pytest.mark.parametrize(
    "url",
    ["ftp://127.0.0.1/file.txt", "file:///etc/passwd", "javascript:alert(1)", "127.0.0.1/x"],
)
def test_only_http_and_https(ctx: ToolContext, url: str) -> None:
    message = fetch_error(ctx, url)
    assert "only http and https" in message
    assessment = FetchUrl().assess({"url": url}, ctx)
    assert assessment.risk is Risk.MEDIUM
    assert "will fail" in assessment.reason


def test_a_url_without_host_is_an_error(ctx: ToolContext) -> None:
    assert "has no host" in fetch_error(ctx, "http:///path")


# --- fetch_url: risk --------------------------------------------------------------------


def test_loopback_server_is_high_risk(site: Site, ctx: ToolContext) -> None:
    assessment = FetchUrl().assess({"url": site.url("/page.html")}, ctx)
    assert assessment.risk is Risk.HIGH
    assert assessment.protected
    assert "127.0.0.1" in assessment.reason


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost/",
        "http://LOCALHOST:8080/admin",
        "http://app.localhost/",
        "http://printer.local/",
        "http://metadata.google.internal/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://127.0.0.1/",
        "http://127.1/",
        "http://2130706433/",
        "http://0.0.0.0/",
        "http://0/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://172.16.0.1/",
        "http://192.168.1.1/",
        "http://100.64.0.1/",
        "http://[fe80::1]/",
        "http://[fd00::1]/",
        "https://user:pw@192.168.1.1:8443/x?y=1",
        # IPv6 forms of local IPv4 addresses and scopes
        "http://[::127.0.0.1]/",  # IPv4-compatible
        "http://[::10.0.0.1]/",
        "http://[::ffff:0:127.0.0.1]/",  # SIIT-translated
        "http://[64:ff9b::127.0.0.1]/",  # NAT64
        "http://[64:ff9b::a9fe:a9fe]/",  # NAT64 of 169.254.169.254
        "http://[64:ff9b:1::a00:1]/",  # local-use NAT64
        "http://[2002:7f00:1::1]/",  # 6to4 of 127.0.0.1
        "http://[2002:c0a8:101::]/",  # 6to4 of 192.168.1.1
        "http://[fe80::1%25eth0]/",  # link-local with a zone id
        "http://[fe80::1%251]/",
        "http://[fec0::1]/",  # site-local
    ],
)
def test_this_machine_and_the_local_network_are_high_risk(ctx: ToolContext, url: str) -> None:
    """Assessed only: nothing is ever sent to these addresses."""
    assessment = FetchUrl().assess({"url": url}, ctx)
    assert assessment.risk is Risk.HIGH, assessment
    assert assessment.protected
    assert "this machine or the local network" in assessment.reason


@pytest.mark.parametrize(
    "address", ["64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8", "2606:4700::1111"]
)
def test_ipv6_forms_of_public_addresses_are_not_local(address: str) -> None:
    assert not web._address_is_local(address)


def test_a_public_looking_name_that_does_not_resolve_is_medium(ctx: ToolContext) -> None:
    """`.invalid` never resolves: local_reason cannot tell where it points and says None
    ("the request will fail on its own"), so the call is medium, like any public host."""
    assert web.local_reason("https://example.invalid/") is None
    assessment = FetchUrl().assess({"url": "https://example.invalid/"}, ctx)
    assert assessment.risk is Risk.MEDIUM
    assert not assessment.protected
    assert assessment.reason == "fetches example.invalid from the internet"


def test_a_name_resolving_to_a_private_address_is_high(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a public-looking name resolves to decides (resolution faked: no DNS is used)."""
    import socket

    def fake_getaddrinfo(host: str, *args: Any, **kwargs: Any) -> list[Any]:
        address = {"intranet.example.com": "10.1.2.3", "www.example.com": "93.184.215.14"}
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address[host], 443))]

    monkeypatch.setattr(socket, "getaddrinfo", fake_getaddrinfo)  # web imports it when used
    tool = FetchUrl()
    inside = tool.assess({"url": "https://intranet.example.com/wiki"}, ctx)
    assert inside.risk is Risk.HIGH
    assert "10.1.2.3" in inside.reason
    assert tool.assess({"url": "https://www.example.com/"}, ctx).risk is Risk.MEDIUM


# --- web_search --------------------------------------------------------------------------


def search(backend: dict[str, Any] | None, query: str, **extra: Any) -> ToolOutput:
    ctx = ToolContext(workspace=Workspace("."))
    return asyncio.run(WebSearch(backend).execute({"query": query, **extra}, ctx))


def search_error(backend: dict[str, Any] | None, query: str = "q") -> str:
    with pytest.raises(ToolFailure) as failure:
        search(backend, query)
    return str(failure.value)


@pytest.mark.parametrize("backend", [None, {}, {"url": "http://127.0.0.1:1"}])
def test_no_backend_configured_tells_how_to_configure_one(backend: Any) -> None:
    message = search_error(backend)
    assert message.startswith("no web search backend is configured")
    assert "agentcli config set web_search.backend searxng" in message
    assert "web_search.url" in message
    assert "brave" in message and "web_search.api_key_env" in message


def test_web_search_is_medium_risk() -> None:
    ctx = ToolContext(workspace=Workspace("."))
    assert WebSearch().assess({"query": "x"}, ctx).risk is Risk.MEDIUM


def test_searxng_results_are_numbered_with_title_url_and_snippet(site: Site) -> None:
    query = "exact arithmetic & ünïcode?"
    out = search({"backend": "searxng", "url": site.url("/") + "/"}, query, max_results=3)

    assert not out.error
    assert out.summary == "3 results"
    assert out.content == "\n".join(
        [
            f"1. Result 1 for {query}",
            "   https://r1.example/",
            "   snip 1",
            "",
            f"2. Result 2 for {query}",
            "   https://r2.example/",
            "   snip 2",
            "",
            f"3. Result 3 for {query}",
            "   https://r3.example/",
            "   snip 3",
        ]
    )
    [seen] = site.requests
    assert seen.path == "/search"
    assert seen.query == {"q": [query], "format": ["json"]}


def test_searxng_default_is_five_results(site: Site) -> None:
    out = search({"backend": "searxng", "url": site.url("")}, "anything")
    assert out.summary == "5 results"
    assert "5. Result 5" in out.content
    assert "6. " not in out.content


def test_brave_backend_sends_the_key_from_the_named_variable(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCLI_TEST_BRAVE_KEY", "secret-token-123")
    backend = {"backend": "brave", "api_key_env": "AGENTCLI_TEST_BRAVE_KEY"}
    backend["url"] = site.url("/brave")
    out = search(backend, "brave query", max_results=2)

    assert out.content == (
        "1. Brave 1\n   https://b1.example/\n   desc 1\n\n"
        "2. Brave 2\n   https://b2.example/\n   desc 2"
    )
    [seen] = site.requests
    assert seen.path == "/brave"
    assert seen.headers["x-subscription-token"] == "secret-token-123"
    assert seen.query == {"q": ["brave query"], "count": ["2"]}


def test_brave_without_the_key_says_which_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTCLI_TEST_BRAVE_KEY", raising=False)
    backend = {"backend": "brave", "api_key_env": "AGENTCLI_TEST_BRAVE_KEY"}
    backend["url"] = "http://127.0.0.1:1/never-asked"
    message = search_error(backend)
    assert message == "web_search uses Brave, but AGENTCLI_TEST_BRAVE_KEY is not set"


def test_searxng_without_url_and_unknown_backend_are_clear_errors() -> None:
    assert "web_search.url is not set" in search_error({"backend": "searxng"})
    assert "unknown web_search.backend 'bing'" in search_error({"backend": "bing"})


def test_backend_failures_are_clear_errors(site: Site) -> None:
    site.routes["/broken-searx/search"] = site.routes["/search-500"]
    message = search_error({"backend": "searxng", "url": site.url("/broken-searx")})
    assert message == "the search backend answered HTTP 500"

    message = search_error({"backend": "searxng", "url": site.url("/html-not-json")})
    assert message == "the search backend did not answer with JSON"

    closed = Site()
    url = closed.url("")
    closed.httpd.server_close()
    message = search_error({"backend": "searxng", "url": url})
    assert message.startswith(f"the search backend at {url}/search did not answer")


def test_backend_answering_json_that_is_not_an_object_is_a_clear_error(site: Site) -> None:
    """`[1, 2, 3]` is JSON but not a result page: a clear ToolFailure, not AttributeError."""
    try:
        message = search_error({"backend": "searxng", "url": site.url("/json-list")})
    except AttributeError as exc:  # pytest.raises(ToolFailure) lets other errors through
        pytest.fail(f"a JSON array crashed the backend: AttributeError: {exc}")
    assert "search backend" in message


# --- end to end: agentcli run with the scripted model --------------------------------------


def fetch_call(url: str) -> dict[str, Any]:
    return {"id": "f1", "name": "fetch_url", "arguments": {"url": url}}


def tool_messages(server: ScriptedServer, index: int) -> list[dict[str, Any]]:
    return [m for m in server.requests[index].json["messages"] if m["role"] == "tool"]


def test_e2e_fetch_of_loopback_is_denied_without_a_flag(
    run_cli: RunCli, server: ScriptedServer, site: Site
) -> None:
    server.enqueue(Reply.tool_calls([fetch_call(site.url("/page.html"))]), Reply.text(["ok"]))
    result = run_cli(["run", "--output", "json", "read the page"], server=server, timeout=20)

    assert result.returncode == 4, result.stderr
    [tool] = tool_messages(server, 1)
    assert tool["content"].startswith("denied")
    assert site.requests == []
    [call] = json.loads(result.stdout)["toolCalls"]
    assert (call["approval"]["risk"], call["approval"]["decision"]) == ("high", "deny")


def test_e2e_fetch_with_yes_gives_the_page_text_to_the_model(
    run_cli: RunCli, server: ScriptedServer, site: Site
) -> None:
    server.enqueue(Reply.tool_calls([fetch_call(site.url("/page.html"))]), Reply.text(["ok"]))
    result = run_cli(
        ["run", "--yes", "--allow-network", "read the page"], server=server, timeout=20
    )

    assert result.returncode == 0, result.stderr
    [tool] = tool_messages(server, 1)
    assert tool["content"].startswith("Title: Test Page\nURL: " + site.url("/page.html"))
    assert "# Main Heading" in tool["content"]
    assert "SCRIPT_MARKER" not in tool["content"]
    assert site.paths() == ["/page.html"]


def test_e2e_yes_alone_does_not_grant_fetch_the_network(
    run_cli: RunCli, server: ScriptedServer, site: Site
) -> None:
    """`--yes` grants what the workspace-write sandbox grants, for every tool: commands
    get no network without --allow-network, and neither do the tools that fetch."""
    server.enqueue(Reply.tool_calls([fetch_call(site.url("/page.html"))]), Reply.text(["ok"]))
    result = run_cli(["run", "--yes", "read the page"], server=server, timeout=20)
    assert result.returncode == 4, result.stderr
    [tool] = tool_messages(server, 1)
    assert "--allow-network" in tool["content"] and "Main Heading" not in tool["content"]
    assert site.requests == []


def test_e2e_web_search_through_the_configured_backend(
    run_cli: RunCli, server: ScriptedServer, site: Site, cli_home: Path
) -> None:
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[web_search]\nbackend = "searxng"\nurl = "{site.url("")}"\n')
    call = {"id": "s1", "name": "web_search", "arguments": {"query": "hi", "max_results": 2}}
    server.enqueue(Reply.tool_calls([call]), Reply.text(["ok"]))
    result = run_cli(["run", "--yes", "--allow-network", "search"], server=server, timeout=20)

    assert result.returncode == 0, result.stderr
    [tool] = tool_messages(server, 1)
    assert tool["content"].startswith("1. Result 1 for hi\n   https://r1.example/\n   snip 1")
    assert "2. Result 2 for hi" in tool["content"]
    assert "3. " not in tool["content"]
    assert site.requests[0].query == {"q": ["hi"], "format": ["json"]}


def test_e2e_web_search_without_a_backend_tells_the_model_how_to_configure(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    call = {"id": "s1", "name": "web_search", "arguments": {"query": "hi"}}
    server.enqueue(Reply.tool_calls([call]), Reply.text(["ok"]))
    result = run_cli(["run", "--yes", "--allow-network", "search"], server=server, timeout=20)

    assert result.returncode == 0, result.stderr
    [tool] = tool_messages(server, 1)
    assert "no web search backend is configured" in tool["content"]
    assert "agentcli config set web_search.backend searxng" in tool["content"]


def test_a_page_nested_too_deeply_for_markdown_gives_its_text_not_a_recursion_error():
    """200,000 nested <div>s (2.2 MB, under the size cap) were `fetch_url failed:
    RecursionError` (markdownify recurses per element); bs4's own walk reads its text."""
    from agentcli.tools.web import DEEP_PAGE, html_to_text

    page = "<html><body>" + "<div>" * 200_000 + "needle" + "</div>" * 200_000 + "</body></html>"
    _, text = html_to_text(page)
    assert text.startswith(DEEP_PAGE.strip()) and text.endswith("needle")
    assert html_to_text("<p>plain <b>page</b></p>")[1] == "plain **page**"  # unchanged
