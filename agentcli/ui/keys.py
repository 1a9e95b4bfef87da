"""Keys during a turn, while no prompt owns the terminal: Esc stops the answer. Ctrl-C
stays a signal (the terminal keeps ISIG), handled by the REPL."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import termios
import tty
from collections.abc import Callable, Iterator


class EscWatcher:
    """Puts the terminal in cbreak mode (no echo, keys one by one, signals still on) and
    calls `on_escape` for a lone Esc. `pause()` hands the terminal back, e.g. to an
    approval prompt, and `resume()` takes it again."""

    def __init__(self, on_escape: Callable[[], object]) -> None:
        self.on_escape = on_escape
        self.fd = sys.stdin.fileno()
        self._saved: list | None = None
        self._active = False

    def _readable(self) -> None:
        try:
            data = os.read(self.fd, 64)
        except OSError:
            data = b""
        if not data:  # the terminal hung up: stop watching, or this fires again and again
            asyncio.get_running_loop().remove_reader(self.fd)
            return
        if data == b"\x1b":  # a lone Esc; arrow keys and the like come as longer sequences
            self.on_escape()

    def resume(self) -> None:
        if self._active or not os.isatty(self.fd):
            return
        self._saved = termios.tcgetattr(self.fd)
        tty.setcbreak(self.fd)
        asyncio.get_running_loop().add_reader(self.fd, self._readable)
        self._active = True

    def pause(self) -> None:
        if not self._active:
            return
        asyncio.get_running_loop().remove_reader(self.fd)
        if self._saved is not None:
            with contextlib.suppress(termios.error):  # a terminal that hung up is gone
                termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
        self._active = False

    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        self.resume()
        try:
            yield
        finally:
            self.pause()
