"""Web tools: fetch a URL as readable text, and search the web through a configured backend.

Requests to the user's own machine and network (loopback, link-local, private and other
non-public addresses) are high risk, including when a redirect leads there; bodies are
refused over a size cap while they are read, not after."""

from __future__ import annotations

import ipaddress
import zlib
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from agentcli.risk import Assessment, Risk, Subjects
from agentcli.text.words import plural
from agentcli.tools.base import Tool, ToolContext, ToolFailure, ToolOutput

MAX_REDIRECTS = 5
MAX_BODY_BYTES = 5 * 1024 * 1024
DEFAULT_MAX_CHARS = 20_000
TIMEOUT_SECONDS = 20.0
TEXT_TYPES = (
    "text/",
    "application/json",
    "application/xml",
    "application/xhtml+xml",
    "application/javascript",
    "application/x-yaml",
)


_IPV4_IN_LOW_BITS = tuple(
    ipaddress.IPv6Network(n) for n in ("::/96", "::ffff:0:0/96", "::ffff:0:0:0/96", "64:ff9b::/96")
)  # IPv4-compatible, -mapped, SIIT-translated and NAT64 forms: the last 32 bits
_LOCAL_V6 = tuple(
    ipaddress.IPv6Network(n) for n in ("64:ff9b:1::/48", "fec0::/10")
)  # local-use NAT64 (RFC 8215) and the old site-local range


def _reaches_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 form carries traffic to, if any."""
    if ip.sixtofour is not None:  # 2002::/16
        return ip.sixtofour
    if any(ip in network for network in _IPV4_IN_LOW_BITS):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _address_is_local(address: str) -> bool:
    """Whether `address` is this machine or a local network, whatever form it takes: an
    IPv6 form of an IPv4 address counts as that IPv4 address, and a zone id (`%eth0`)
    means a link-local scope."""
    text, zone = address.split("%", 1)[0], "%" in address
    ip = ipaddress.ip_address(text)
    if isinstance(ip, ipaddress.IPv6Address):
        if zone or any(ip in network for network in _LOCAL_V6):
            return True
        if ip in (ipaddress.IPv6Address("::"), ipaddress.IPv6Address("::1")):
            return True
        inner = _reaches_ipv4(ip)
        if inner is not None and (not inner.is_global or inner.is_multicast):
            return True
    return not ip.is_global or ip.is_multicast


def local_reason(url: str) -> str | None:
    """Why fetching `url` reaches the user's own machine or network, or None."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = host.rstrip(".")  # `localhost.` is localhost
    if host in ("localhost",) or host.endswith((".localhost", ".local", ".internal")):
        return f"{host} is this machine or the local network"
    if "%" in host:  # `[fe80::1%25eth0]`: a zone id scopes an address to a local link
        return f"{unquote(host)} is a link-local address: this machine or the local network"
    try:
        import socket  # here: `policy explain` builds this tool, never resolves a name

        infos = socket.getaddrinfo(host, parts.port or 443, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return None  # it does not resolve: the request will fail on its own
    for info in infos:
        address = info[4][0]
        if _address_is_local(address):
            return f"{host} resolves to {address}, on this machine or the local network"
    return None


def check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ToolFailure(f"only http and https URLs can be fetched, not {parts.scheme or url!r}")
    if not parts.hostname:
        raise ToolFailure(f"{url!r} has no host")


DEEP_PAGE = "(the page nests its elements too deeply for Markdown: its text alone)\n\n"


def html_to_text(html: str) -> tuple[str, str]:
    """(title, readable Markdown-ish text) of an HTML page."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for noise in soup(["script", "style", "noscript", "template", "svg", "iframe"]):
        noise.decompose()
    try:
        text = MarkdownConverter(heading_style="ATX", strip=["img"]).convert_soup(soup.body or soup)
    except RecursionError:  # markdownify recurses per element: 200,000 nested <div>s
        text = DEEP_PAGE + (soup.body or soup).get_text("\n")  # bs4's walk is iterative
    lines = [line.rstrip() for line in text.splitlines()]
    compact: list[str] = []
    for line in lines:
        if line or (compact and compact[-1]):
            compact.append(line)
    return title, "\n".join(compact).strip()


async def fetch(url: str, *, allow_local: bool) -> tuple[str, str, bytes]:
    """(final URL, content type, body). Redirects are followed one by one so that each hop
    is checked; a hop into the local network needs the call to have been approved as such."""
    import asyncio

    try:
        async with asyncio.timeout(TIMEOUT_SECONDS):  # the whole fetch, however it trickles
            return await _fetch(url, allow_local=allow_local)
    except TimeoutError:
        raise ToolFailure(
            f"timed out after {TIMEOUT_SECONDS:g}s fetching {url}", "timeout"
        ) from None


def checked_transport(*, allow_local: bool) -> Any:
    """An httpx transport that resolves each host itself when it connects and connects
    only to the addresses it checked: a name that resolved to a public address when the
    call was assessed cannot answer with a local one a moment later (DNS rebinding)."""
    import asyncio

    import httpcore
    import httpx

    class CheckedBackend(httpcore.AsyncNetworkBackend):
        def __init__(self) -> None:
            self.inner = httpcore.AnyIOBackend()

        async def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Any = None,
        ) -> httpcore.AsyncNetworkStream:
            import socket

            loop = asyncio.get_running_loop()
            try:
                infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except (OSError, UnicodeError) as exc:
                raise httpcore.ConnectError(f"{host} does not resolve: {exc}") from None
            addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
            local = next((a for a in addresses if _address_is_local(a)), None)
            if local is not None and not allow_local:
                raise httpcore.ConnectError(
                    f"refused: {host} resolves to {local}, on this machine or the local network"
                )
            failure: Exception = httpcore.ConnectError(f"{host} has no address")
            for address in addresses:
                try:
                    return await self.inner.connect_tcp(
                        address, port, timeout, local_address, socket_options
                    )
                except httpcore.ConnectError as exc:
                    failure = exc
            raise failure

        async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> Any:
            raise httpcore.ConnectError("fetch_url does not use Unix sockets")

        async def sleep(self, seconds: float) -> None:
            await self.inner.sleep(seconds)

    from agentcli.adapters.httpx_backend import transport_with_backend

    # TLS still verifies the URL's host name: httpcore passes it to the handshake, not the
    # address connected to.
    return transport_with_backend(httpx.create_ssl_context(trust_env=False), CheckedBackend())


async def _fetch(url: str, *, allow_local: bool) -> tuple[str, str, bytes]:
    import asyncio

    import httpx

    timeout = httpx.Timeout(TIMEOUT_SECONDS, connect=10.0)
    async with httpx.AsyncClient(
        timeout=timeout,
        follow_redirects=False,
        trust_env=False,
        transport=checked_transport(allow_local=allow_local),
    ) as client:
        for _ in range(MAX_REDIRECTS + 1):
            check_url(url)
            if not allow_local:
                reason = await asyncio.to_thread(local_reason, url)
                if reason:
                    raise ToolFailure(
                        f"refused: a redirect leads to {url}, and {reason}; fetch that URL "
                        "directly if you need it (it will ask for approval)"
                    )
            try:
                headers = {"accept": "*/*", "accept-encoding": "gzip, deflate"}
                async with client.stream("GET", url, headers=headers) as response:
                    if response.is_redirect and "location" in response.headers:
                        url = urljoin(url, response.headers["location"])
                        continue
                    if response.status_code >= 400:
                        raise ToolFailure(f"HTTP {response.status_code} from {url}")
                    length = int(response.headers.get("content-length") or 0)
                    if length > MAX_BODY_BYTES:
                        raise ToolFailure(_too_large(url, length))
                    body = BoundedBody(url, response.headers.get("content-encoding", ""))
                    async for chunk in response.aiter_raw():
                        body.feed(chunk)
                    content = body.finish()
                    return str(response.url), response.headers.get("content-type", ""), content
            except httpx.TimeoutException:
                raise ToolFailure(
                    f"timed out after {TIMEOUT_SECONDS:g}s fetching {url}", "timeout"
                ) from None
            except httpx.HTTPError as exc:
                raise ToolFailure(f"could not fetch {url}: {exc}") from None
    raise ToolFailure(f"more than {MAX_REDIRECTS} redirects, stopped at {url}")


class BoundedBody:
    """A response body as it arrives, decoded (gzip, deflate) a bounded piece at a time:
    a few compressed kilobytes that inflate to gigabytes are refused at the cap, never
    inflated whole (httpx would inflate each network chunk at once)."""

    def __init__(self, url: str, content_encoding: str) -> None:
        self.url = url
        self.body = bytearray()
        encodings = [e.strip().lower() for e in content_encoding.split(",") if e.strip()]
        encodings = [e for e in encodings if e != "identity"]
        self.decoder: Any = None
        if encodings in (["gzip"], ["x-gzip"], ["deflate"]):
            self.decoder = zlib.decompressobj(32 + zlib.MAX_WBITS)  # gzip or zlib header
        elif encodings:
            raise ToolFailure(
                f"{url} is sent with the content encoding {content_encoding!r}, which "
                "fetch_url does not decode"
            )

    def feed(self, raw: bytes) -> None:
        if self.decoder is None:
            self._add(raw)
            return
        data = raw
        while data:
            room = MAX_BODY_BYTES + 1 - len(self.body)
            try:
                self._add(self.decoder.decompress(data, room))
            except zlib.error as exc:
                raise ToolFailure(f"could not decode the body of {self.url}: {exc}") from None
            data = self.decoder.unconsumed_tail

    def finish(self) -> bytes:
        if self.decoder is not None:
            self._add(self.decoder.flush(MAX_BODY_BYTES + 1 - len(self.body)))
        return bytes(self.body)

    def _add(self, piece: bytes) -> None:
        self.body += piece
        if len(self.body) > MAX_BODY_BYTES:
            raise ToolFailure(_too_large(self.url, len(self.body)))


def _too_large(url: str, size: int) -> str:
    cap = MAX_BODY_BYTES // (1024 * 1024)
    return f"refused: {url} is larger than {cap} MB ({size:,} bytes so far)"


class FetchUrl(Tool):
    network = True
    name = "fetch_url"
    read_only = True
    description = (
        "Fetch a web page (http or https) and return its title, final URL, content type and "
        "readable text (HTML converted to Markdown), cut to max_chars."
    )
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "The http or https URL."},
            "max_chars": {
                "type": "integer",
                "minimum": 100,
                "maximum": 200_000,
                "description": f"Most characters of text (default {DEFAULT_MAX_CHARS}).",
            },
        },
        "required": ["url"],
        "additionalProperties": False,
    }
    risk_summary = "medium; high for this machine and the local network"

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        url = args["url"]
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return Assessment(Risk.MEDIUM, "fetches a URL (it is not http or https: it will fail)")
        reason = local_reason(url)
        if reason:
            return Assessment(Risk.HIGH, reason, protected=True)
        return Assessment(Risk.MEDIUM, f"fetches {parts.hostname} from the internet")

    def rule_subjects(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        return Subjects("text", values=(args["url"],))

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        import asyncio

        url = args["url"]
        check_url(url)
        allow_local = self.assess(args, ctx).risk is Risk.HIGH  # approved as such
        final, content_type, body = await fetch(url, allow_local=allow_local)
        kind = content_type.split(";", 1)[0].strip().lower()
        if kind and not kind.startswith(TEXT_TYPES):
            raise ToolFailure(
                f"{final} is {kind} ({len(body):,} bytes), not text; fetch_url returns text only"
            )
        text = body.decode(_charset(content_type), errors="replace")
        title = ""
        if "html" in kind or (not kind and "<html" in text[:1000].lower()):
            title, text = await asyncio.to_thread(html_to_text, text)
        limit = args.get("max_chars", DEFAULT_MAX_CHARS)
        cut = ""
        if len(text) > limit:
            cut = f"\n[… cut at {limit:,} of {len(text):,} characters]"
            text = text[:limit]
        header = [f"URL: {final}", f"Content-Type: {kind or 'unknown'}"]
        if title:
            header.insert(0, f"Title: {title}")
        return ToolOutput(
            content="\n".join(header) + "\n\n" + text + cut,
            summary=f"{len(body):,} bytes from {urlsplit(final).hostname}",
        )


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset" and value:
            try:
                import codecs

                return codecs.lookup(value.strip('"')).name
            except LookupError:
                break
    return "utf-8"


class WebSearch(Tool):
    network = True
    name = "web_search"
    read_only = True
    description = "Search the web. Returns title, URL and snippet for each result."
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "max_results": {"type": "integer", "minimum": 1, "maximum": 20},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    risk_summary = "medium"

    def __init__(self, backend: dict[str, Any] | None = None) -> None:
        self.backend = backend or {}

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return Assessment(Risk.MEDIUM, "sends the query to a search service")

    def rule_subjects(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        return Subjects("text", values=(args["query"],))

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        from agentcli.tools.search_backends import search

        results = await search(self.backend, args["query"], args.get("max_results", 5))
        if not results:
            return ToolOutput(content=f"no results for {args['query']!r}", summary="no results")
        lines = []
        for number, item in enumerate(results, start=1):
            lines += [f"{number}. {item.title}", f"   {item.url}", f"   {item.snippet}", ""]
        return ToolOutput(content="\n".join(lines).rstrip(), summary=plural(len(results), "result"))
