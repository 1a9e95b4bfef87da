"""What `agentcli mcp serve` does with a line on stdin that is not a JSON-RPC message: the
SDK hands it on as an exception and then drops it without a word, so a client with a bug
waits for an answer that never comes. Here each such line gets JSON-RPC 2.0's own answer
(a parse error, or an invalid request, with a null id) and one line on stderr."""

from __future__ import annotations

from typing import Any

from agentcli.mcp_serve.stdin_end import InFlight

PARSE_ERROR = -32700  # JSON-RPC 2.0: not JSON
INVALID_REQUEST = -32600  # JSON-RPC 2.0: JSON, but not a request, notification or response


def not_json(error: Exception) -> bool:
    errors = getattr(error, "errors", None)
    try:
        kinds = {entry.get("type") for entry in errors()} if callable(errors) else set()
    except Exception:
        kinds = set()
    return "json_invalid" in kinds


def error_reply(error: Exception) -> Any:
    """The answer to a line that could not be read as a message, with a null id (its id
    cannot be trusted): JSON-RPC's parse error or invalid request."""
    from mcp import types
    from mcp.shared.message import SessionMessage

    if not_json(error):
        code, message = PARSE_ERROR, "Parse error: the line is not JSON"
    else:
        code, message = INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message"
    reply = types.JSONRPCError(
        jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message)
    )
    return SessionMessage(reply)


async def answer_bad_lines(
    source: Any, sink: Any, write: Any, notice: Any, in_flight: InFlight
) -> None:
    """Forwards what the transport read from `source` to `sink`; a line it could not read
    is answered on `write` and said once on stderr through `notice`. At the end of
    `source`, `sink` is closed once the requests `in_flight` are answered."""
    import anyio

    bad = 0
    async with sink:
        async for item in source:
            if not isinstance(item, Exception):
                in_flight.read(item)
                await sink.send(item)
                continue
            bad += 1
            if bad == 1:
                notice(
                    "a line on stdin is not a JSON-RPC message; answered with an error (id null)"
                )
            try:
                await write.send(error_reply(item))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return  # the client is gone: nobody to answer
        await in_flight.drained(sink)  # the end of stdin: what was asked is answered first
