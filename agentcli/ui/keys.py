"""Keys during a turn, while no prompt owns the terminal: Esc stops the answer, and what
is typed meanwhile is kept — a line ended by Enter is queued as the next message, the rest
is the draft the next prompt starts with. Ctrl-C stays a signal (the terminal keeps ISIG),
handled by the REPL."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import sys
import termios
import tty
from collections.abc import Callable, Iterator

ENTER = ("\r", "\n")
ERASE = ("\x7f", "\x08")
KILL_LINE = "\x15"  # Ctrl-U


class EscWatcher:
    """Puts the terminal in cbreak mode (no echo, keys one by one, signals still on) and
    calls `on_escape` for a lone Esc, and `on_line` with each line typed and ended by
    Enter. `pause()` hands the terminal back, e.g. to an approval prompt, and `resume()`
    takes it again."""

    def __init__(
        self,
        on_escape: Callable[[], object],
        on_line: Callable[[str], object] | None = None,
    ) -> None:
        self.on_escape = on_escape
        self.on_line = on_line
        self.fd = sys.stdin.fileno()
        self.draft = ""  # typed since the last Enter
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._saved: list | None = None
        self._active = False

    def _readable(self) -> None:
        try:
            data = os.read(self.fd, 1024)
        except OSError:
            data = b""
        if not data:  # the terminal hung up: stop watching, or this fires again and again
            asyncio.get_running_loop().remove_reader(self.fd)
            return
        if data == b"\x1b":  # a lone Esc; arrow keys and the like come as longer sequences
            self.on_escape()
            return
        if data.startswith(b"\x1b"):
            return  # a key's escape sequence (an arrow, a function key): not text
        self.typed(self._decoder.decode(data))

    def typed(self, text: str) -> None:
        """Keys as text: printable characters go into the draft, Enter queues it."""
        for char in text:
            if char in ENTER:
                line, self.draft = self.draft.strip(), ""
                if line and self.on_line is not None:
                    self.on_line(line)
            elif char in ERASE:
                self.draft = self.draft[:-1]
            elif char == KILL_LINE:
                self.draft = ""
            elif char.isprintable() or char == "\t":
                self.draft += char

    def take_draft(self) -> str:
        draft, self.draft = self.draft, ""
        return draft

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
