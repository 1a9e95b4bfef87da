"""An httpx transport whose connections go through a network backend of agentcli's: httpx's
transport takes no backend, but the httpcore connection pool inside it does (httpcore's
public AsyncConnectionPool), so the pool it made is replaced by one that has it."""

from __future__ import annotations

from typing import Any


def transport_with_backend(ssl_context: Any, network_backend: Any) -> Any:
    """An httpx.AsyncHTTPTransport (no proxies from the environment) that connects through
    `network_backend` (an httpcore.AsyncNetworkBackend) and verifies TLS with
    `ssl_context` — the URL's host name is still the one checked in the handshake."""
    import httpcore
    import httpx

    transport = httpx.AsyncHTTPTransport(verify=ssl_context, trust_env=False)
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=ssl_context, network_backend=network_backend
    )
    return transport
