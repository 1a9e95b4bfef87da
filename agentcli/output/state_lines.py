"""A remote agent's state changes (`--agent`: STATE_SNAPSHOT / STATE_DELTA) as lines on
stderr, at most one each EVERY seconds. An agent may send a change per keystroke of its
own (20,000 in one run were seen): a line each buried the answer. The latest change held
back is drawn when the next other line is, or when the run ends, saying how many it
stands for; every change still reaches the session and `-o jsonl`."""

from __future__ import annotations

import time
from collections.abc import Callable

from agentcli.conversation import events as ev
from agentcli.output.style import state_line

EVERY = 0.25  # seconds between two state lines


class StateLines:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._drawn_at: float | None = None
        self._held: str | None = None  # the latest change not drawn
        self._skipped = 0  # changes since the last line drawn, the held one among them

    def take(self, event: ev.StateSnapshot | ev.StateDelta) -> str | None:
        """The line to draw now, or None when it is held for later."""
        now = self.clock()
        if self._drawn_at is None or now - self._drawn_at >= EVERY:
            self._drawn_at, self._held, self._skipped = now, None, 0
            return state_line(event)
        self._held, self._skipped = state_line(event), self._skipped + 1
        return None

    def release(self) -> str | None:
        """The change held back, if any, saying how many it stands for; then none."""
        if self._held is None:
            return None
        line, more = self._held, self._skipped - 1
        self._held, self._skipped = None, 0
        self._drawn_at = self.clock()
        return f"{line} (and {more:,} earlier change(s) not shown)" if more else line
