"""What `agentcli mcp serve` does when its client closes stdin with requests still in
flight (a script that writes its requests and closes the pipe, as `printf ... | agentcli
mcp serve` does): each of them is answered first, then the server ends. The SDK ends the
session at the end of stdin, so a `tools/call` still running was answered "Connection
closed" and its work lost.

After the end of stdin no one can answer the server's own requests (an elicitation asking
whether a call may run): each is answered here with an error, so the call it asks for is
denied as if declined, and nothing waits on a client that is gone."""

from __future__ import annotations

import contextlib
from typing import Any

CLIENT_GONE = -32000  # a server error of JSON-RPC's own range: the client closed stdin
CANCELLED = "notifications/cancelled"


class InFlight:
    """The client's requests not yet answered, and the end of stdin."""

    def __init__(self) -> None:
        import anyio

        self.ids: set[Any] = set()
        self.asked: set[Any] = set()  # the server's requests the client has not answered
        self.ended = False  # stdin has ended
        self._changed = anyio.Event()

    def read(self, item: Any) -> None:
        """A message from the client (forwarded to the SDK)."""
        from mcp import types

        message = getattr(item, "message", None)
        if isinstance(message, types.JSONRPCRequest):
            self.ids.add(message.id)
        elif isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self.asked.discard(message.id)
        elif isinstance(message, types.JSONRPCNotification) and message.method == CANCELLED:
            # A request the client cancelled gets no answer (MCP): none is waited for.
            params = message.params if isinstance(message.params, dict) else {}
            self._answered(params.get("requestId"))

    def _answered(self, request_id: Any) -> None:
        if isinstance(request_id, str | int | float):  # a JSON-RPC id; anything else is none
            self.ids.discard(request_id)
        self._changed.set()

    async def drained(self, sink: Any) -> None:
        """Stdin has ended: the server's requests the client left unanswered are answered
        on `sink` (what the SDK reads) with an error; returns once every request read is
        answered."""
        import anyio

        self.ended = True
        for request_id in sorted(self.asked, key=repr):
            await sink.send(_gone(request_id))
        self.asked.clear()
        while self.ids:
            await self._changed.wait()
            self._changed = anyio.Event()

    async def relay(self, answers: Any, write: Any, sink: Any) -> None:
        """Forwards what the SDK writes (`answers`) to stdout (`write`), noting answers;
        after the end of stdin, a request of the server's own is answered on `sink` (what
        the SDK reads; closed by its owner once the client's requests are answered) with
        an error: the client cannot answer it."""
        import anyio
        from mcp import types

        async with answers, write:  # stdout's stream ends with the SDK's, as it did before
            async for item in answers:
                message = getattr(item, "message", None)
                if isinstance(message, types.JSONRPCRequest) and self.ended:
                    with contextlib.suppress(anyio.ClosedResourceError):
                        await sink.send(_gone(message.id))
                    continue
                if isinstance(message, types.JSONRPCRequest):
                    self.asked.add(message.id)
                await write.send(item)
                if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
                    self._answered(message.id)


def _gone(request_id: Any) -> Any:
    from mcp import types
    from mcp.shared.message import SessionMessage

    error = types.ErrorData(code=CLIENT_GONE, message="the client closed stdin: no answer")
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))
