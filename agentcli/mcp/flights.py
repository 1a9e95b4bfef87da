"""The calls a server has in flight, so that an answer the SDK could not read as JSON-RPC
ends the call it must be for at once, not at its `tool_timeout` (120 s by default).

The SDK drops such a message before anyone sees which request it answers (without a
readable `id` it cannot tell); agentcli is handed the validation error instead. When it
looks like an answer (a JSON object with `result` or `error`) and the server has one call
in flight, that call is the one it was for. With several in flight, which one cannot be
told: they keep their limits, as before. Anything else on stdout that is not JSON-RPC (a
stray line of output) is no answer, and ends nothing."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any


class Flight:
    """One call: how to end it now, and the answer that ended it (quoted), if any."""

    def __init__(self, end_now: Callable[[], None]) -> None:
        self.end_now = end_now
        self.garbled: str | None = None


class Flights:
    def __init__(self) -> None:
        self._flying: list[Flight] = []

    @contextlib.contextmanager
    def flying(self, flight: Flight) -> Iterator[None]:
        """`flight` is in flight while this lasts (while its call waits for its answer)."""
        self._flying.append(flight)
        try:
            yield
        finally:
            self._flying.remove(flight)

    def unreadable(self, error: Exception, quoted: str) -> None:
        """The SDK could not read a message (`error`, its validation error; `quoted`: the
        message as shown): the call it answers ends, when that call can be told."""
        if len(self._flying) == 1 and answer_like(error):
            flight = self._flying[0]
            if flight.garbled is None:
                flight.garbled = quoted
                flight.end_now()


def answer_like(error: Exception) -> bool:
    """Whether the message the SDK could not read is an answer: a JSON object with a
    `result` or an `error` (pydantic's errors carry the message read as JSON)."""
    errors = getattr(error, "errors", None)
    try:
        listed = errors() if callable(errors) else []
    except Exception:  # not pydantic's: nothing is known of the message
        return False
    for item in listed:
        found: Any = item.get("input") if isinstance(item, dict) else None
        if isinstance(found, dict) and ("result" in found or "error" in found):
            return True
    return False
