"""HTTP plumbing shared by the providers: one SSE request, error translation into one
clear line, and retries before the first byte with backoff and the server's hints."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import httpx

from agentcli import __version__
from agentcli import events as ev
from agentcli.errors import ProviderError, StreamCutError
from agentcli.providers.retry import backoff_delay, is_retryable_status
from agentcli.providers.sse import SSEDecoder, SSEMessage

DEFAULT_MAX_RETRIES = 3
TIMEOUT = httpx.Timeout(connect=15.0, read=300.0, write=60.0, pool=15.0)


class RetryableError(ProviderError):
    """A failure before anything reached the user; worth another attempt."""

    def __init__(self, message: str, *, status: int | None = None, headers=None):
        super().__init__(message, status=status, retryable=True)
        self.headers: Mapping[str, str] = headers or {}


def new_client() -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=TIMEOUT, headers={"user-agent": f"agentcli/{__version__}"})


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
            f"Check the model name ({model!r}, --model) and the base URL."
        )
    kinds = {429: "rate limited", 529: "overloaded"}
    if status in kinds:
        return f"{label}: {kinds[status]} (HTTP {status}: {detail})"
    if status >= 500:
        return f"{label}: server error (HTTP {status}: {detail})"
    return f"{label}: the server rejected the request (HTTP {status}: {detail})"


def connect_failure(label: str, url: str, exc: Exception, base_url_hint: str) -> RetryableError:
    reason = str(exc) or type(exc).__name__
    if "refused" in reason.lower():
        reason = "connection refused"
    return RetryableError(
        f"cannot connect to {label} at {url}: {reason}. Is the server running? "
        f"Check the base URL ({base_url_hint})."
    )


async def open_sse(
    client: httpx.AsyncClient,
    url: str,
    *,
    headers: Mapping[str, str],
    body: dict[str, Any],
    describe_status: Callable[[int, str], str],
    label: str,
    base_url_hint: str,
    auth: tuple[str, str] | None = None,
) -> AsyncIterator[SSEMessage]:
    """POSTs `body` and yields SSE messages. HTTP errors and transport failures become
    ProviderErrors; those raised before any message are retryable where it makes sense."""
    received = False
    extra: dict[str, Any] = {"auth": httpx.BasicAuth(*auth)} if auth else {}
    try:
        async with client.stream("POST", url, headers=headers, json=body, **extra) as response:
            if response.status_code != 200:
                detail = error_detail(await response.aread())
                message = describe_status(response.status_code, detail)
                if is_retryable_status(response.status_code):
                    raise RetryableError(
                        message, status=response.status_code, headers=response.headers
                    )
                raise ProviderError(message, status=response.status_code)
            decoder = SSEDecoder()
            async for line in response.aiter_lines():
                message = decoder.feed(line)
                if message is not None:
                    received = True
                    yield message
            tail = decoder.flush()
            if tail is not None:
                yield tail
    except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
        raise connect_failure(label, url, exc, base_url_hint) from None
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


async def with_retries(
    attempt: Callable[[], AsyncIterator[ev.Event | ev.StepEnd]],
    *,
    max_retries: int = DEFAULT_MAX_RETRIES,
) -> AsyncIterator[ev.Event | ev.StepEnd]:
    """Runs `attempt` again after a retryable failure, as long as it has yielded nothing.
    Each wait is announced as a CUSTOM `retry` event."""
    retry_number = 0
    while True:
        yielded = False
        try:
            async with contextlib.aclosing(attempt()) as items:
                async for item in items:
                    yielded = True
                    yield item
            return
        except RetryableError as error:
            if yielded or retry_number >= max_retries:
                if retry_number:
                    raise ProviderError(
                        f"{error} (gave up after {retry_number + 1} attempts)",
                        status=error.status,
                    ) from None
                raise ProviderError(str(error), status=error.status) from None
            delay = backoff_delay(retry_number, error.headers)
            retry_number += 1
            yield ev.Custom(
                name="retry",
                value={
                    "attempt": retry_number + 1,
                    "delaySeconds": round(delay, 3),
                    "reason": str(error),
                    **({"status": error.status} if error.status else {}),
                },
            )
            await asyncio.sleep(delay)


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

    def stream(self, request: Any) -> AsyncIterator[ev.Event | ev.StepEnd]:
        return with_retries(lambda: self._attempt(request), max_retries=self.max_retries)

    def _attempt(self, request: Any) -> AsyncIterator[ev.Event | ev.StepEnd]:
        raise NotImplementedError

    def describe_status(self, status: int, detail: str) -> str:
        return describe_status(
            status, detail, label=self.name, key_env=self.api_key_env,
            key_sent=bool(self.api_key), base_url=self.base_url, model=self.model,
        )  # fmt: skip

    def _open_stream(
        self, path: str, *, headers: Mapping[str, str], body: dict[str, Any]
    ) -> AsyncIterator[SSEMessage]:
        if self._client is None:
            self._client = new_client()
        return open_sse(
            self._client,
            f"{self.base_url}{path}",
            headers=headers,
            body=body,
            describe_status=self.describe_status,
            label=self.name,
            base_url_hint=self.base_url_hint,
            auth=self._auth,
        )

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
