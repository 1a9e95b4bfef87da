"""Cancellation that reaches the server every time.

When a call's task is cancelled (`--timeout`, Ctrl-C, a turn stopped), the SDK writes
notifications/cancelled with the call's request id. But the run then ends at once, and a
server signalled right after may die before it reads the line. So a server with calls
cancelled since is stopped gently: a ping round trip first (the server reads its input in
order: its answer proves the cancellations were read), then the protocol's shutdown
(stdin closed, a grace, then signals) instead of SIGTERM first."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

FLUSH_TIMEOUT = 2.0  # seconds the ping may take; a server that does not answer is stopped


class CancelledCalls:
    def __init__(self) -> None:
        self.pending = 0  # calls cancelled since the last flush

    @contextlib.contextmanager
    def watch(self) -> Iterator[None]:
        """Around a call: counts it when its task is cancelled."""
        try:
            yield
        except asyncio.CancelledError:
            self.pending += 1
            raise

    async def flush(self, session: Any) -> bool:
        """Before the server stops: True when calls were cancelled (after a ping round
        trip, bounded, so the server has read their notifications/cancelled)."""
        if not self.pending:
            return False
        self.pending = 0
        if session is not None:
            with contextlib.suppress(Exception):  # a dead or silent server: stopped anyway
                await asyncio.wait_for(session.send_ping(), FLUSH_TIMEOUT)
        return True
