"""Who may draw on the terminal: while an approval prompt or a question owns it, the
renderers' output (a running command's live line, another call's result) waits and is
drawn, in order, once the prompt is answered, instead of landing inside the prompt."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import Any


class TerminalGate:
    """One per terminal: the front end makes it and gives it to its renderer and its
    approver."""

    def __init__(self) -> None:
        self._holds = 0
        self._waiting: list[Callable[[], Any]] = []
        self._slots: dict[Hashable, int] = {}  # key → index in _waiting, for coalescing
        self._clearers: list[weakref.WeakMethod[Callable[[], Any]]] = []

    @property
    def held(self) -> bool:
        return self._holds > 0

    def on_hold(self, clear: Callable[[], Any]) -> None:
        """`clear` (a bound method: held weakly) is called when a prompt takes the
        terminal, to take a live line off it first."""
        self._clearers.append(weakref.WeakMethod(clear))  # type: ignore[arg-type]

    def hold(self) -> None:
        self._holds += 1
        if self._holds == 1:
            alive = [(ref, ref()) for ref in self._clearers]
            self._clearers = [ref for ref, method in alive if method is not None]
            for _, method in alive:
                if method is not None:
                    method()

    def release(self) -> None:
        self._holds = max(0, self._holds - 1)
        while not self.held and self._waiting:
            waiting, self._waiting, self._slots = self._waiting, [], {}
            for draw in waiting:
                draw()

    def defer(self, draw: Callable[[], Any], key: Hashable | None = None) -> bool:
        """True when held: `draw` runs at release instead (replacing the waiting draw of
        the same `key`, so a chatty command's progress does not pile up)."""
        if not self.held:
            return False
        if key is not None and key in self._slots:
            self._waiting[self._slots[key]] = draw
        else:
            if key is not None:
                self._slots[key] = len(self._waiting)
            self._waiting.append(draw)
        return True


def progress_key(event: Any) -> Hashable | None:
    """Events that only redraw a live line coalesce per tool call while held."""
    from agentcli.conversation import events as ev

    if isinstance(event, ev.Custom) and event.name == "progress":
        value = event.value if isinstance(event.value, dict) else {}
        return ("progress", value.get("toolCallId"))
    return None
