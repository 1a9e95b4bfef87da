"""The legacy HTTP+SSE transport's events allowed the size a result may have.

The SDK reads every SSE event through `sse_within_origin` (mcp.shared), whose limit on one
event is 1 MiB: a result larger than that failed the whole connection ("Server-sent event
exceeded the 1048576 byte limit"), where the same result over stdio is read whole. Its
streamable HTTP client takes the limit as an argument (agentcli passes
agentcli.mcp.transports.MAX_EVENT_BYTES); its legacy `sse_client` takes none, and opens the
stream through the name `sse_within_origin` in its module. agentcli puts there the same
function with the limit given, as the streamable client is given it.

The SDK has no hook for that limit, so this replaces a name in its module: the one such
place, pinned by tests/test_adapters.py (a release that renames it fails there). Once
`sse_client` takes the limit, this module can go."""

from __future__ import annotations

from typing import Any


def install(limit: int) -> None:
    """The SDK's legacy SSE client reads events of up to `limit` bytes (idempotent)."""
    import mcp.client.sse as sse

    opened = sse.sse_within_origin
    if getattr(opened, "event_limit", None) == limit:
        return
    original = getattr(opened, "original", opened)

    def within_limit(client: Any, url: Any, **options: Any) -> Any:
        return original(client, url, **{**options, "max_event_size": limit})

    within_limit.original = original  # type: ignore[attr-defined]
    within_limit.event_limit = limit  # type: ignore[attr-defined]
    sse.sse_within_origin = within_limit
