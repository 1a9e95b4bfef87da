"""A notice while the model's server says nothing: a CUSTOM `waiting` event after a few
seconds of silence, then again every few seconds, so a stalled server is visible on the
terminal and in the event stream instead of a screen that just stops."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from agentcli.conversation import events as ev

FIRST_NOTICE_SECONDS = 5.0
NOTICE_EVERY_SECONDS = 10.0


def waiting_line(value: dict[str, Any]) -> str:
    """How the terminal shows a `waiting` event: what the model is doing, when its
    provider says (the embedded model: "choosing a tool"), else that the server is
    silent."""
    doing = value.get("doing")
    said = doing if isinstance(doing, str) and doing else "waiting for the server"
    return f"{said}… {value.get('seconds', 0)}s"


def retry_line(event: ev.Retry, previous_reason: str | None) -> str:
    """How the terminal shows a `retry` event: the reason only when it is not the previous
    retry's (a refused connection is said once, not with every attempt)."""
    said = "" if event.reason == previous_reason else f": {event.reason}"
    return f"retrying in {event.delay_seconds:.1f}s (attempt {event.attempt}){said}"


class WaitingNotice:
    """Use as `with WaitingNotice(emit) as waiting:` around reading a model stream, and call
    `waiting.touch()` for each item received; silence between items is announced."""

    def __init__(
        self,
        emit: Callable[[ev.Event], None],
        *,
        first: float = FIRST_NOTICE_SECONDS,
        every: float = NOTICE_EVERY_SECONDS,
        doing: Callable[[], str | None] | None = None,
    ) -> None:
        self.emit = emit
        # What the model is doing meanwhile, when its provider knows (an in-process model
        # is never "waiting for a server")
        self.doing = doing
        self.first, self.every = first, every
        self._since = time.monotonic()
        self._timer: asyncio.TimerHandle | None = None

    def __enter__(self) -> WaitingNotice:
        self.touch()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._cancel()

    def touch(self) -> None:
        """Something arrived: the silence starts again from now. Called for every piece of
        a stream, so it only notes the time; the timer, armed once, looks at that note
        when it fires and waits again for what is left of the silence."""
        self._since = time.monotonic()
        if self._timer is None:
            self._schedule(self.first)

    def _schedule(self, delay: float) -> None:
        self._cancel()
        self._timer = asyncio.get_running_loop().call_later(delay, self._fire)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _fire(self) -> None:
        self._timer = None
        silent = time.monotonic() - self._since
        if silent < self.first:  # something came meanwhile: the first notice is due later
            self._schedule(self.first - silent)
            return
        self._schedule(self.every)
        value: dict[str, Any] = {"seconds": round(silent)}
        doing = self.doing() if self.doing is not None else None
        if doing:
            value["doing"] = doing
        self.emit(ev.Custom(name="waiting", value=value))
