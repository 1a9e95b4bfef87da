"""The HTTP transports an MCP server is reached by: streamable HTTP (MCP 2025-03-26 on) and
the legacy HTTP+SSE transport (2024-11-05: a GET opens an event stream whose first event,
`endpoint`, names the URL messages are POSTed to), both the SDK's.

`transport` unset tries streamable HTTP first and falls back to SSE when the answer is a
legacy server's, as the spec's backwards-compatibility section says: the first POST (the
initialize request) gets 400, 404 or 405; the SSE attempt then GETs the same URL and waits
for the `endpoint` event."""

from __future__ import annotations

import contextlib
from typing import Any

from agentcli.mcp.config import ServerConfig

STREAMABLE, SSE = "streamable-http", "sse"
LEGACY_STATUSES = frozenset({400, 404, 405})  # a POST a legacy server does not take
CONNECT_TIMEOUT = 30.0  # seconds to connect, write, or wait for a pool connection
READ_TIMEOUT = 300.0  # a server may hold an event stream open this long between events
# One SSE event (one message: a result) may be this large, as a stdio line may: the SDK's
# own limit, 1 MiB, failed the connection at a result a stdio server sends whole.
MAX_EVENT_BYTES = 256 * 1024 * 1024


class HttpAnswers:
    """What the server's responses said, for the fallback and for the error message."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.unauthorized = False  # some response was a 401
        self.legacy = False  # the first POST was refused as a legacy server refuses it
        self._posted = False

    async def saw(self, response: Any) -> None:
        if response.status_code == 401:
            self.unauthorized = True
            return  # authorization comes first; the POST that follows it is the first
        import httpx2

        request = response.request
        if request.method != "POST" or self._posted or request.url != httpx2.URL(self.url):
            return  # (an OAuth flow's own requests go to other URLs)
        self._posted = True
        self.legacy = response.status_code in LEGACY_STATUSES


def chosen_transport(config: ServerConfig) -> str:
    """The transport the configuration names; unset: streamable HTTP, with the fallback."""
    return SSE if config.http_transport == SSE else STREAMABLE


def may_fall_back(config: ServerConfig, answers: HttpAnswers) -> bool:
    return config.http_transport is None and answers.legacy and not answers.unauthorized


async def open_http(
    stack: contextlib.AsyncExitStack,
    config: ServerConfig,
    transport: str,
    headers: dict[str, str],
    answers: HttpAnswers,
    auth: Any = None,
) -> tuple[Any, Any]:
    """The read and write streams of `transport` to the server, entered in `stack`."""
    import httpx2

    def client(
        headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = auth
    ) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(
            headers=headers,
            auth=auth,
            timeout=timeout or httpx2.Timeout(CONNECT_TIMEOUT, read=READ_TIMEOUT),
            event_hooks={"response": [answers.saw]},
        )

    url = config.url or ""
    if transport == SSE:
        from mcp.client.sse import sse_client

        from agentcli.adapters import mcp_sse_events

        mcp_sse_events.install(MAX_EVENT_BYTES)  # (the SDK's legacy client takes no limit)

        return await stack.enter_async_context(
            sse_client(
                url,
                headers=headers,
                timeout=CONNECT_TIMEOUT,
                sse_read_timeout=READ_TIMEOUT,
                httpx_client_factory=client,
                auth=auth,
            )
        )
    from mcp.client.streamable_http import streamable_http_client

    http = await stack.enter_async_context(client(headers))
    opened = streamable_http_client(url, http_client=http, max_sse_event_size=MAX_EVENT_BYTES)
    return await stack.enter_async_context(opened)


def explain_http(config: ServerConfig, answers: HttpAnswers | None) -> str:
    """One line for a legacy server that streamable HTTP was chosen for; "" otherwise."""
    if answers is None or not answers.legacy or config.http_transport != STREAMABLE:
        return ""
    return (
        f"{config.url} refused the streamable HTTP POST as a legacy HTTP+SSE server does; "
        f'set mcp.servers.{config.name}.transport = "sse" (or leave it unset)'
    )
