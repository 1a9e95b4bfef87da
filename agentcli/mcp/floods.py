"""What a flood of notifications from an MCP server becomes: bounded work and bounded lines.

- **progress**: each call keeps only its latest value, sent on (drawn and recorded) at
  most every PROGRESS_INTERVAL seconds; the latest is sent when the interval ends and
  when the call ends, so nothing newer than what is shown is lost.
- **logs**: each server may say LOG_BURST messages at once, then LOG_RATE a second (a
  token bucket); what is dropped beyond that is counted and said in one line when the
  call ends, when the server stops, or DROPPED_EVERY seconds after the first drop.

Both run on the event loop the SDK's callbacks run on (one thread: no locks)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

PROGRESS_INTERVAL = 0.25  # seconds: at most four progress updates a second per call
LOG_BURST = 20  # log messages a server may send at once
LOG_RATE = 2.0  # then this many a second
DROPPED_EVERY = 5.0  # seconds after the first drop at most, the count of the dropped is said


def _later(delay: float, callback: Callable[[], None]) -> asyncio.TimerHandle | None:
    try:
        return asyncio.get_running_loop().call_later(delay, callback)
    except RuntimeError:  # no loop: said at the next chance (the call's end, the close)
        return None


class LatestValue:
    """One call's progress: the latest value, sent on at most every `interval` seconds."""

    def __init__(
        self,
        send: Callable[[Any], None],
        interval: float = PROGRESS_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._send, self._interval, self._clock = send, interval, clock
        self._sent_at: float | None = None
        self._pending: Any = None
        self._timer: asyncio.TimerHandle | None = None
        self.received = 0  # notifications offered (what a bench counts)
        self.sent = 0

    def offer(self, value: Any) -> None:
        self.received += 1
        now = self._clock()
        if self._sent_at is None or now - self._sent_at >= self._interval:
            self._pending = None
            self._emit(value, now)
            return
        self._pending = value  # an older one waiting is superseded
        if self._timer is None:
            self._timer = _later(self._interval - (now - self._sent_at), self.flush)

    def flush(self) -> None:
        """Sends the value waiting, if any (the interval ended, or the call did)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending is not None:
            value, self._pending = self._pending, None
            self._emit(value, self._clock())

    def _emit(self, value: Any, now: float) -> None:
        self._sent_at = now
        self.sent += 1
        self._send(value)


class LogLimit:
    """One server's log messages: LOG_BURST at once, then LOG_RATE a second; the rest are
    counted, and the count is said in one line (`dropped(count)` makes it)."""

    def __init__(
        self,
        send: Callable[[Any], None],
        dropped: Callable[[int], Any],
        burst: int = LOG_BURST,
        rate: float = LOG_RATE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._send, self._dropped_line = send, dropped
        self._burst, self._rate, self._clock = burst, rate, clock
        self._tokens = float(burst)
        self._at = clock()
        self.dropped = 0  # since the count was last said
        self._timer: asyncio.TimerHandle | None = None

    def offer(self, message: Any) -> None:
        now = self._clock()
        self._tokens = min(self._burst, self._tokens + (now - self._at) * self._rate)
        self._at = now
        if self._tokens >= 1:
            self._tokens -= 1
            self._send(message)
            return
        self.dropped += 1
        if self._timer is None:
            self._timer = _later(DROPPED_EVERY, self.flush)

    def flush(self) -> None:
        """Says how many were dropped since it was last said (nothing if none were)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.dropped:
            count, self.dropped = self.dropped, 0
            self._send(self._dropped_line(count))
