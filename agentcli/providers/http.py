"""HTTP plumbing shared by the providers: one SSE request, error translation into one
clear line, and retries before the first byte with backoff and the server's hints."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any

from agentcli import __version__
from agentcli.conversation import events as ev
from agentcli.errors import ProviderError, StreamCutError
from agentcli.providers.retry import (
    MAX_HONOURED_WAIT,
    backoff_delay,
    is_retryable_status,
    server_hint,
)
from agentcli.providers.sse import LineTooLong, SSEDecoder, SSEMessage
from agentcli.records import dataclass
from agentcli.text.decoding import NotJson, loads, writable

if TYPE_CHECKING:
    import httpx  # imported by the first request: the REPL's prompt does not wait for it

    from agentcli.providers.base import StreamItem

DEFAULT_MAX_RETRIES = 3
TIMEOUT_SECONDS = {"connect": 15.0, "read": 300.0, "write": 60.0, "pool": 15.0}
LISTING_TIMEOUT = 10.0  # seconds, any phase: a model listing is quick, or not coming
# A server that says nothing at all is stalled, not thinking: each attempt gets this long
# for the first byte of its answer, and one model request this long for its answer to
# begin, retries and their pauses included (`requests.*` in the configuration).
DEFAULT_FIRST_BYTE_TIMEOUT = 90.0
DEFAULT_MAX_WAIT = 300.0
_SNIPPET_CHARS = 120
_START_CHARS = 4096  # of the body kept to describe it when it holds no events


class RetryableError(ProviderError):
    """A failure before anything reached the user; worth another attempt. `advice` (what to
    check) is said once, after the attempt count, not with every retry."""

    def __init__(
        self, message: str, *, status: int | None = None, headers=None, detail="", advice=""
    ):
        super().__init__(
            f"{message}; {advice}" if advice else message,
            status=status,
            retryable=True,
            detail=detail,
        )
        self.headers: Mapping[str, str] = headers or {}
        self.reason, self.advice = message, advice

    def after(self, attempts: int) -> str:
        """The message once `attempts` attempts have failed."""
        text = f"{self.reason} ({attempts} attempts)"
        return f"{text}; {self.advice}" if self.advice else text


def new_client(base_url: str = "") -> httpx.AsyncClient:
    import httpx

    headers = {"user-agent": f"agentcli/{__version__}"}
    timeout = httpx.Timeout(**TIMEOUT_SECONDS)
    transport = light_transport(base_url)
    if transport is not None:
        return httpx.AsyncClient(timeout=timeout, headers=headers, transport=transport)
    if base_url.startswith("http://"):
        # httpx routes through the proxy (and honours NO_PROXY) only with its own
        # transports. No CA bundle is loaded for them (tens of milliseconds): the server is
        # plain HTTP, and a context with no CA is not "unverified": any TLS would fail.
        import ssl

        verify = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        return httpx.AsyncClient(timeout=timeout, headers=headers, verify=verify)
    return httpx.AsyncClient(timeout=timeout, headers=headers)


def light_transport(base_url: str) -> httpx.AsyncBaseTransport | None:
    """agentcli's light transport for a model server at `base_url` (http:// or https://),
    or None where httpx's own must carry it: a proxy for that scheme in the environment
    (httpx honours HTTP(S)_PROXY, ALL_PROXY and NO_PROXY only with its own transports), any
    other scheme, or a machine with no httptools wheel."""
    scheme = base_url.partition("://")[0].lower()
    if scheme not in ("http", "https") or proxy_in_environment(scheme):
        return None
    try:
        from agentcli.providers.light_http import LightTransport
    except ImportError:
        return None
    if scheme == "http":
        return LightTransport()
    import httpx

    # The context httpx's own transport would verify with: SSL_CERT_FILE, SSL_CERT_DIR
    # (certifi's bundle when neither is set), SSLKEYLOGFILE; hostnames checked.
    tls = httpx.create_ssl_context()
    tls.set_alpn_protocols(["http/1.1"])
    return LightTransport(tls)


def proxy_in_environment(scheme: str) -> bool:
    """Whether httpx would look for a proxy for `scheme` URLs: the environment names one
    for that scheme or for all (read as httpx reads it, through urllib's getproxies)."""
    from urllib.request import getproxies  # already imported by httpx

    proxies = getproxies()
    return bool(proxies.get(scheme) or proxies.get("all"))


def error_detail(body: bytes) -> str:
    """The server's own words for an error body, as short as possible."""
    text = body.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:300] or "(empty body)"
    if isinstance(data, dict):
        error = data.get("error", data.get("detail", data.get("message")))
        if isinstance(error, dict):
            error = error.get("message") or error.get("type") or json.dumps(error)
        if error:
            return str(error)[:500]
    return text[:300]


def describe_status(
    status: int, detail: str, *, label: str, key_env: str, key_sent: bool, base_url: str, model: str
) -> str:
    """One line for an HTTP error from a provider, naming what to check."""
    if status in (401, 403):
        sent = (
            f"the key in {key_env} was refused"
            if key_sent
            else (f"no key was sent ({key_env} is not set)")
        )
        return (
            f"{label}: authentication failed (HTTP {status}: {detail}); {sent}. "
            f"Set {key_env} to a valid key."
        )
    if status == 404:
        return (
            f"{label}: not found (HTTP 404: {detail}) at {base_url}. "
            f"Check the model name ({model!r}) and the base URL."
        )
    kinds = {429: "rate limited", 529: "overloaded"}
    if status in kinds:
        return f"{label}: {kinds[status]} (HTTP {status}: {detail})"
    if status >= 500:
        return f"{label}: server error (HTTP {status}: {detail})"
    return f"{label}: the server rejected the request (HTTP {status}: {detail})"


def connect_failure(url: str, exc: Exception, base_url_hint: str) -> ProviderError:
    """One short line for a server that could not be reached (`url`: the base URL the user
    gave), with what to check after it. A TLS failure (a certificate not trusted, or for
    another name) is not retried: it would fail the same way every time."""
    import socket
    import ssl

    reason = str(exc) or type(exc).__name__
    cause: BaseException | None = exc
    while cause is not None:  # httpx's words ("All connection attempts failed") hide why
        if isinstance(cause, ssl.SSLCertVerificationError):
            return ProviderError(f"cannot connect to {url}: {_untrusted(cause)}")
        if isinstance(cause, ssl.SSLError):
            why = cause.reason or cause.strerror or str(cause)
            return ProviderError(
                f"cannot connect to {url}: the TLS handshake failed ({why}); check that the "
                "server speaks https:// at that address"
            )
        if isinstance(cause, ConnectionRefusedError) or "refused" in str(cause).lower():
            reason = "connection refused"
            break
        if isinstance(cause, socket.gaierror):
            reason = "unknown host"
            break
        if isinstance(cause, TimeoutError) or "timeout" in type(cause).__name__.lower():
            reason = "timed out"
            break
        cause = cause.__cause__ or cause.__context__
    return RetryableError(
        f"cannot connect to {url}: {reason}",
        advice=f"is it running? ({base_url_hint})",
    )


def _untrusted(error: Exception) -> str:
    """What a refused certificate means to the user, and what to do."""
    why = getattr(error, "verify_message", "") or str(error)
    if "hostname" in why.lower() or "ip address mismatch" in why.lower():
        return f"its certificate is for another name ({why.rstrip('.')}); check the base URL"
    return (
        f"its certificate is not trusted ({why}); if a private CA signed it, set "
        "SSL_CERT_FILE (or SSL_CERT_DIR) to that CA's certificate"
    )


@dataclass(frozen=True, slots=True)
class EncodedValue:
    """A body's value already encoded as JSON (`text`), put in the body as it is: a long
    conversation's messages, most of them encoded for an earlier request. `plain()` gives
    the value itself, for the rare body that must be written anew (a lone surrogate)."""

    text: str
    plain: Callable[[], Any]


def compact_json(value: Any) -> str:
    """A request's JSON, as the APIs take it: compact, UTF-8 text, no NaN."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def json_body(headers: Mapping[str, str], body: dict[str, Any] | None) -> dict[str, Any]:
    """The request's headers and content for a JSON `body`, encoded as httpx's `json=`
    would, except that a lone surrogate that slipped past every edge is written as
    agentcli.text.decoding shows it instead of failing the request with UnicodeEncodeError.
    An `EncodedValue` of the body's top level is spliced in as its text."""
    if body is None:
        return {"headers": headers}

    def spliced(value: dict[str, Any]) -> str:
        encoded = [
            f"{compact_json(k)}:{v.text}" for k, v in value.items() if isinstance(v, EncodedValue)
        ]
        if not encoded:
            return compact_json(value)
        rest = compact_json({k: v for k, v in value.items() if not isinstance(v, EncodedValue)})
        return "{" + ",".join(encoded) + ("," + rest[1:] if rest != "{}" else "}")

    try:
        content = spliced(body).encode("utf-8")
    except UnicodeEncodeError:
        plain = {k: v.plain() if isinstance(v, EncodedValue) else v for k, v in body.items()}
        content = compact_json(writable(plain)).encode("utf-8")
    return {"headers": {**headers, "content-type": "application/json"}, "content": content}


async def open_sse(
    client: httpx.AsyncClient,
    url: str,
    *,
    headers: Mapping[str, str],
    body: dict[str, Any],
    describe_status: Callable[[int, str], str],
    label: str,
    base_url_hint: str,
    first_byte_timeout: float = DEFAULT_FIRST_BYTE_TIMEOUT,
    auth: tuple[str, str] | None = None,
    base_url: str | None = None,
    json_answers: bool = True,
) -> AsyncIterator[list[SSEMessage]]:
    """POSTs `body` and yields its SSE messages, as lists: the messages each received
    piece of the body completes (never an empty list), so a caller handles every event
    that arrived together in one pass, not one await apiece. HTTP errors and transport
    failures become ProviderErrors; those raised before any message are retryable where
    it makes sense. Silence for `first_byte_timeout` seconds before the body's first bytes
    is a retryable stall. The body is decoded as it comes, by the SSE decoder itself (not
    line by line through httpx, whose lines also end at characters JSON carries inside
    strings). `json_answers`: a JSON body instead of events is left to the provider (one
    that can read an answer without streaming), not refused here."""
    import httpx

    received = False
    extra: dict[str, Any] = {"auth": httpx.BasicAuth(*auth)} if auth else {}
    started = time.monotonic()
    try:
        request = client.build_request("POST", url, **json_body(headers, body))
        async with asyncio.timeout(first_byte_timeout) as first_byte:
            response = await client.send(request, stream=True, **extra)
        try:
            await _check_status(response, describe_status)
            decoder = SSEDecoder()
            pieces = response.aiter_text()
            async with asyncio.timeout_at(first_byte.when()):
                first = await anext(pieces, None)
            start = first or ""  # the body's start, to say what it was if it held no events
            messages = decoder.decode(start)
            if messages:
                received = True
                yield messages
            async for piece in pieces:
                if len(start) < _START_CHARS:
                    start += piece
                messages = decoder.decode(piece)
                if messages:
                    received = True
                    yield messages
            tail = decoder.flush()
            if tail is not None:
                received = True
                yield [tail]
            if not received:
                seen = start[:_START_CHARS].splitlines()[:3]
                not_events(
                    response,
                    seen,
                    label=label,
                    base_url_hint=base_url_hint,
                    json_answers=json_answers,
                )
        finally:
            await response.aclose()
    except LineTooLong as error:
        raise ProviderError(f"{label} sent {error}; agentcli stopped reading the stream") from None
    except httpx.DecodingError as exc:
        raise undecodable(label, exc) from None
    except TimeoutError:
        waited = time.monotonic() - started
        raise RetryableError(
            f"{label} sent nothing for {waited:.0f}s after the request "
            f"(requests.first_byte_timeout is {first_byte_timeout:g}s)"
        ) from None
    except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
        raise connect_failure(base_url or url, exc, base_url_hint) from None
    except (httpx.ReadTimeout, httpx.ReadError, httpx.RemoteProtocolError, httpx.WriteError) as exc:
        what = "timed out" if isinstance(exc, httpx.ReadTimeout) else "was cut"
        if not received:
            raise RetryableError(
                f"the connection to {label} {what} before the answer began"
            ) from None
        raise StreamCutError(
            f"the {label} stream {what} in the middle of the answer "
            f"({type(exc).__name__}); the text received so far is kept"
        ) from None


def undecodable(label: str, error: Exception) -> ProviderError:
    """A body its Content-Encoding does not describe (a "gzip" that is not gzip): the
    server's or a proxy's fault, so said as such, and not retried."""
    return ProviderError(
        f"{label} sent a body that its Content-Encoding does not describe ({error}); "
        "the server, or a proxy on the way, is at fault"
    )


def not_events(
    response: httpx.Response,
    seen: list[str],
    *,
    label: str,
    base_url_hint: str,
    json_answers: bool = True,
) -> None:
    """A 200 whose body held no event at all: say what came instead (a web page, a proxy's
    login form...) rather than that the stream ended early. A JSON body is left to a
    provider that reads answers without streaming (`json_answers`)."""
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "application/json" and json_answers:
        return
    if kind == "text/event-stream" and all(not s.strip() or s.startswith(":") for s in seen):
        return  # an event stream that ended with only keep-alives: the provider decides
    start = " ".join(" ".join(seen).split())[:_SNIPPET_CHARS]
    if kind == "text/event-stream":
        what = f"no events, only {start!r}" if start else "an empty event stream"
    else:
        sent = f"`{kind}`" if kind else "a body with no content type"
        what = f"{sent}, not an event stream (it begins {start!r})"
    raise ProviderError(
        f"{label}: the server at {response.url} sent {what}; check the base URL ({base_url_hint})"
    )


async def request_json(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str],
    body: dict[str, Any] | None = None,
    describe_status: Callable[[int, str], str],
    label: str,
    base_url_hint: str,
    timeout: float | None = None,
    auth: tuple[str, str] | None = None,
    base_url: str | None = None,
) -> Any:
    """One request whose whole answer is a JSON document (a completion without streaming,
    a model listing). Errors are translated as for `open_sse`; nothing has reached the
    user before the answer is complete, so every transport failure is retryable."""
    import httpx

    try:
        response = await client.request(
            method,
            url,
            **json_body(headers, body),
            timeout=timeout or client.timeout,
            auth=httpx.BasicAuth(*auth) if auth else httpx.USE_CLIENT_DEFAULT,
        )
    except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
        raise connect_failure(base_url or url, exc, base_url_hint) from None
    except (httpx.ReadTimeout, httpx.ReadError, httpx.RemoteProtocolError, httpx.WriteError) as exc:
        what = "timed out" if isinstance(exc, httpx.ReadTimeout) else "was cut"
        raise RetryableError(
            f"the connection to {label} {what} before the answer arrived"
        ) from None
    except httpx.DecodingError as exc:
        raise undecodable(label, exc) from None
    await _check_status(response, describe_status)
    try:
        return loads(response.content, finite=True)  # NaN: kept, it would stop every request
    except ValueError as error:
        why = f" ({error})" if isinstance(error, NotJson) else ""
        raise ProviderError(
            f"{label}: the server's answer is not JSON{why}: {response.text[:200]!r}"
        ) from None


async def _check_status(
    response: httpx.Response, describe_status: Callable[[int, str], str]
) -> None:
    """An HTTP error becomes a ProviderError (retryable for 408, 409, 429 and 5xx) that
    carries the server's own words as `detail`."""
    if response.status_code == 200:
        return
    detail = error_detail(await response.aread())
    message = describe_status(response.status_code, detail)
    status = response.status_code
    if is_retryable_status(status):
        raise RetryableError(message, status=status, headers=response.headers, detail=detail)
    raise ProviderError(message, status=status, detail=detail)


async def with_retries(
    attempt: Callable[[], AsyncIterator[StreamItem]],
    *,
    max_retries: int = DEFAULT_MAX_RETRIES,
    max_wait: float = DEFAULT_MAX_WAIT,
) -> AsyncIterator[StreamItem]:
    """Runs `attempt` again after a retryable failure, as long as it has yielded nothing.
    Each wait is announced as a CUSTOM `retry` event. The answer must begin within
    `max_wait` seconds, all attempts and pauses included; a server that asks for a longer
    pause than that (or than we ever honour) is not retried against."""
    retry_number = 0
    deadline = time.monotonic() + max_wait
    while True:
        yielded = False
        try:
            async with contextlib.aclosing(attempt()) as items:
                try:
                    async with asyncio.timeout_at(_loop_time(deadline)):
                        item = await anext(items, None)
                except TimeoutError:
                    raise _gave_up(max_wait, retry_number, None) from None
                if item is None:
                    return
                yielded = True
                yield item
                async for item in items:  # the answer has begun: no deadline, no retry
                    yield item
                return
        except RetryableError as error:
            if yielded or retry_number >= max_retries:
                if retry_number:
                    raise ProviderError(
                        error.after(retry_number + 1), status=error.status
                    ) from None
                raise ProviderError(str(error), status=error.status) from None
            hint = server_hint(error.headers)
            if hint is not None and hint > min(MAX_HONOURED_WAIT, deadline - time.monotonic()):
                raise ProviderError(
                    f"{error}; the server asked to wait {_wait_words(hint)} before trying "
                    "again, longer than agentcli waits: try again later",
                    status=error.status,
                ) from None
            delay = backoff_delay(retry_number, error.headers)
            if time.monotonic() + delay >= deadline:
                raise _gave_up(max_wait, retry_number, error) from None
            retry_number += 1
            yield ev.Custom(
                name="retry",
                value={
                    "attempt": retry_number + 1,
                    "delaySeconds": round(delay, 3),
                    "reason": error.reason,  # the advice comes once, with the error
                    **({"status": error.status} if error.status else {}),
                },
            )
            await asyncio.sleep(delay)


def _wait_words(seconds: float) -> str:
    """A server's asked wait in words: a header may say 10**300 seconds, or infinity."""
    if seconds < 3600:
        return f"{seconds:.0f}s"
    if seconds < 86400:
        return f"{seconds / 3600:.0f} h"
    return "more than a day"


def _loop_time(monotonic_deadline: float) -> float:
    """A time.monotonic() deadline on the event loop's clock."""
    loop = asyncio.get_running_loop()
    return loop.time() + (monotonic_deadline - time.monotonic())


def _gave_up(max_wait: float, retries: int, error: Exception | None) -> ProviderError:
    attempts = f" and {retries + 1} attempts" if retries else ""
    last = f"; last: {error}" if error is not None else ""
    return ProviderError(
        f"no answer from the server after {max_wait:g}s{attempts} (requests.max_wait){last}"
    )


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """`url` without its user:password, and those (decoded), if it had any."""
    from urllib.parse import unquote, urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    host = parts.netloc.rpartition("@")[2]
    clean = urlunsplit(parts._replace(netloc=host))
    return clean, (unquote(parts.username or ""), unquote(parts.password or ""))


class HttpProvider:
    """What every HTTP provider shares: one client, retries around each attempt, the
    errors described the same way. Subclasses build requests and read their wire format
    in `_attempt`, opening the stream with `_open_stream`."""

    base_url_hint = "--base-url"
    # A JSON body in the place of the stream is an answer this provider reads (OpenAI's:
    # a server that does not stream); False: it is said to be no stream at all.
    json_answers = True

    def __init__(
        self,
        model: str,
        *,
        name: str,
        base_url: str,
        api_key: str | None,
        api_key_env: str,
        max_retries: int = DEFAULT_MAX_RETRIES,
    ) -> None:
        self.name, self.model = name, model
        # Credentials in the URL (http://user:pass@host) are sent as HTTP basic auth and
        # kept out of the URL, which errors, events and session files may show.
        self.base_url, self._auth = split_credentials(base_url)
        self.api_key, self.api_key_env = api_key, api_key_env
        self.max_retries = max_retries
        self._client: httpx.AsyncClient | None = None
        self.first_byte_timeout = DEFAULT_FIRST_BYTE_TIMEOUT
        self.max_wait = DEFAULT_MAX_WAIT

    def stream(self, request: Any) -> AsyncIterator[StreamItem]:
        return with_retries(
            lambda: self._attempt(request), max_retries=self.max_retries, max_wait=self.max_wait
        )

    def warm(self) -> None:
        """Builds the HTTP client (its TLS context takes a while) before the first request,
        while something else is awaited (MCP servers starting)."""
        if self._client is None:
            self._client = new_client(self.base_url)

    def _attempt(self, request: Any) -> AsyncIterator[StreamItem]:
        raise NotImplementedError

    def describe_status(self, status: int, detail: str) -> str:
        return describe_status(
            status,
            detail,
            label=self.name,
            key_env=self.api_key_env,
            key_sent=bool(self.api_key),
            base_url=self.base_url,
            model=self.model,
        )

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = new_client(self.base_url)
        return self._client

    def _open_stream(
        self, path: str, *, headers: Mapping[str, str], body: dict[str, Any]
    ) -> AsyncIterator[list[SSEMessage]]:
        url = f"{self.base_url}{path}"
        return open_sse(
            self._http(),
            url,
            headers=headers,
            body=body,
            first_byte_timeout=self.first_byte_timeout,
            auth=self._auth,
            json_answers=self.json_answers,
            **self._wording(),
        )

    async def _request_json(
        self,
        path: str,
        *,
        headers: Mapping[str, str],
        body: dict[str, Any] | None = None,
        method: str = "POST",
        timeout: float | None = None,
    ) -> Any:
        url = f"{self.base_url}{path}"
        return await request_json(
            self._http(),
            method,
            url,
            headers=headers,
            body=body,
            timeout=timeout,
            auth=self._auth,
            **self._wording(),
        )

    def _wording(self) -> dict[str, Any]:
        """How errors name this provider and what to check."""
        return {
            "describe_status": self.describe_status,
            "label": self.name,
            "base_url_hint": self.base_url_hint,
            "base_url": self.base_url,
        }

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
