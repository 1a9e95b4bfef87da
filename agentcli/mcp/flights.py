"""The calls a server has in flight, so that an answer the SDK could not read as JSON-RPC
ends the call it must be for as soon as that call can be told, not at its `tool_timeout`
(120 s by default).

The SDK drops such a message before anyone sees which request it answers (without a
readable `id` it cannot tell); agentcli is handed the validation error instead. When it
looks like an answer (a JSON object with `result` or `error`), it answers one of the calls
in flight when it came: those are its suspects. JSON-RPC answers each request once, so a
suspect that later gets an answer of its own was not the one; once no more suspects are
left than unreadable answers came for them, each one left is a call whose answer was
unreadable, and ends at once, quoted. With one call in flight that is at once; with
several, when the others have their answers. A suspect that leaves with no answer (its
timeout, a cancel) may have been the one: it is counted as such, so no call is ever ended
for an answer that was another's. Anything else on stdout that is not JSON-RPC (a stray
line of output) is no answer, and ends nothing."""

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
    """`answered_by(error)`: whether a call that raised `error` had its answer (an error
    the server sent, say) rather than none (a timeout, a cancel, a closed connection)."""

    def __init__(self, answered_by: Callable[[BaseException], bool]) -> None:
        self._answered_by = answered_by
        self._flying: list[Flight] = []
        self._suspects: list[Flight] = []  # in flight when an unreadable answer came
        self._unclaimed: list[str] = []  # those answers (quoted), not yet put to a call

    @contextlib.contextmanager
    def flying(self, flight: Flight) -> Iterator[None]:
        """`flight` is in flight while this lasts (while its call waits for its answer)."""
        self._flying.append(flight)
        answered = False
        try:
            yield
            answered = True
        except BaseException as error:
            answered = self._answered_by(error)
            raise
        finally:
            self._flying.remove(flight)
            self._left(flight, answered)

    def unreadable(self, error: Exception, quoted: str) -> None:
        """The SDK could not read a message (`error`, its validation error; `quoted`: the
        message as shown): the call it answers ends, when that call can be told."""
        if not answer_like(error) or all(f.garbled is not None for f in self._flying):
            return
        # A call already ended by an unreadable answer is no suspect of another.
        fresh = [f for f in self._flying if f.garbled is None and not _held(self._suspects, f)]
        self._suspects.extend(fresh)
        self._unclaimed.append(quoted)
        self._settle()

    def _left(self, flight: Flight, answered: bool) -> None:
        if not _held(self._suspects, flight):
            return
        self._suspects = [f for f in self._suspects if f is not flight]
        if not answered and self._unclaimed:
            self._unclaimed.pop()  # it may have been the one: claim one answer fewer
        self._settle()

    def _settle(self) -> None:
        if not self._unclaimed or len(self._suspects) > len(self._unclaimed):
            return
        ended, quotes = self._suspects, self._unclaimed
        self._suspects, self._unclaimed = [], []
        quoted = quotes[0] if len(quotes) == 1 else "; ".join(quotes)
        for flight in ended:
            if flight.garbled is None:
                flight.garbled = quoted
                flight.end_now()


def _held(flights: list[Flight], flight: Flight) -> bool:
    return any(f is flight for f in flights)


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
