"""A terminal for the tests to judge by: the installed `agentcli` on a pseudo-terminal, its
output fed as it comes into pyte (a VT100-compatible emulator), so a test reads what a
person would see — the screen and the lines scrolled above it — not the bytes written.

The emulator answers the program's questions as a terminal does (where is the cursor:
prompt-toolkit asks before drawing its toolbar), keys are sent to the program, and a
resize changes the pseudo-terminal and the emulator together, at the same point of the
output. pyte cuts lines on a resize (as xterm does): a test that resizes tells the program
so (`XTERM_VERSION` in its environment, as a real xterm sets it)."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pexpect
import psutil
import pyte

from tests.conftest import AGENTCLI

ROWS = 40
HISTORY = 20_000
TIMEOUT = 20.0


class _Emulator(pyte.HistoryScreen):
    """pyte's screen with scrollback, whose answers (a cursor position report) go back to
    the program."""

    def __init__(self, columns: int, lines: int, reply: Callable[[str], None]) -> None:
        super().__init__(columns, lines, history=HISTORY, ratio=0.5)
        self._reply = reply

    def write_process_input(self, data: str) -> None:
        self._reply(data)


def row_text(row: Any, columns: int) -> str:
    """A screen row as text: a wide character's second cell adds nothing."""
    return "".join(row[x].data for x in range(columns)).rstrip()


def row_cells(row: Any, columns: int) -> tuple[Any, ...]:
    """A screen row as pyte's cells (character, colours, bold...), blanks at the end
    dropped: what a colour comparison compares."""
    cells = [row[x] for x in range(columns)]
    while cells and cells[-1].data in (" ", "") and cells[-1].bg == "default":
        cells.pop()
    return tuple(cells)


class Terminal:
    """`agentcli ARGS` on a pseudo-terminal of `columns` × `rows`, judged by pyte."""

    def __init__(
        self,
        args: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: Path,
        columns: int,
        rows: int = ROWS,
        executable: str | None = None,
    ) -> None:
        self.columns, self.rows = columns, rows
        self.child = pexpect.spawn(
            executable or str(AGENTCLI),
            list(args),
            env=dict(env),
            cwd=str(cwd),
            dimensions=(rows, columns),
            encoding=None,
            timeout=TIMEOUT,
        )
        self.screen = _Emulator(columns, rows, self._answer)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = bytearray()  # everything the program wrote, for failure messages
        self.ended = False

    # --- the program's output

    def _answer(self, data: str) -> None:
        if not self.ended:
            self.child.send(data.encode())

    def pump(self, wait: float = 0.05) -> bool:
        """Feeds what the program wrote (waiting up to `wait` for the first of it) into the
        emulator; False once the program has ended and all of it is read."""
        if self.ended:
            return False
        try:
            data = self.child.read_nonblocking(65536, timeout=wait)
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            self.ended = True
            return False
        self.raw += data
        self.stream.feed(data)
        return True

    def wait_for(
        self, wanted: str | re.Pattern[str] | Callable[[], bool], timeout: float = TIMEOUT
    ) -> None:
        """Until `wanted` (text, a pattern, or a test) is on the screen or in the lines
        above it."""
        if callable(wanted) and not isinstance(wanted, re.Pattern):
            done = wanted
        elif isinstance(wanted, re.Pattern):
            done = lambda: bool(wanted.search(self.text()))  # noqa: E731
        else:
            done = lambda: wanted in self.text()  # noqa: E731
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline or not self.pump():
                if done():
                    return
                state = "ended" if self.ended else "timed out"
                raise AssertionError(
                    f"{state} waiting for {wanted!r}; the terminal shows:\n{self.text()}"
                )

    def settle(self, quiet: float = 0.3, timeout: float = TIMEOUT) -> None:
        """Until the program has written nothing for `quiet` seconds."""
        deadline = time.monotonic() + timeout
        last = len(self.raw)
        quiet_since = time.monotonic()
        while time.monotonic() < deadline and self.pump(0.05):
            if len(self.raw) != last:
                last, quiet_since = len(self.raw), time.monotonic()
            elif time.monotonic() - quiet_since >= quiet:
                return

    def finish(self, timeout: float = TIMEOUT) -> int | None:
        """Reads to the end; the exit status."""
        deadline = time.monotonic() + timeout
        while self.pump(0.2):
            if time.monotonic() > deadline:
                raise AssertionError(f"still running; the terminal shows:\n{self.text()}")
        self.child.close()
        return self.child.exitstatus

    # --- keys and size

    def send(self, keys: str) -> None:
        self.child.send(keys.encode())

    def resize(self, columns: int, rows: int | None = None) -> None:
        """The terminal changes size now: what was written before is laid out at the old
        size, what comes after at the new one."""
        rows = rows or self.rows
        while self.child.isalive() and self._pending():
            self.pump(0)
        self.child.setwinsize(rows, columns)
        self.screen.resize(rows, columns)
        self.columns, self.rows = columns, rows

    def _pending(self) -> bool:
        import select

        readable, _, _ = select.select([self.child.child_fd], [], [], 0)
        return bool(readable)

    # --- what is shown

    def _rows(self) -> list[Any]:
        return [*self.screen.history.top, *(self.screen.buffer[y] for y in range(self.rows))]

    def lines(self) -> list[str]:
        """The lines scrolled above the screen, then the screen's, trailing blanks gone."""
        lines = [row_text(row, self.columns) for row in self._rows()]
        while lines and not lines[-1]:
            lines.pop()
        return lines

    def cells(self) -> list[tuple[Any, ...]]:
        """The same lines as cells, colours and attributes included."""
        rows = [row_cells(row, self.columns) for row in self._rows()]
        while rows and not rows[-1]:
            rows.pop()
        return rows

    def text(self) -> str:
        return "\n".join(self.lines())

    def cursor_line(self) -> str:
        """The screen line the cursor is on, up to the cursor."""
        cursor = self.screen.cursor
        row = self.screen.buffer[cursor.y]
        return "".join(row[x].data for x in range(min(cursor.x, self.columns)))

    def at_prompt(self) -> bool:
        """The REPL waits at an empty prompt (`› `, the cursor after it)."""
        return self.cursor_line() == "› "

    def wait_prompt(self, timeout: float = TIMEOUT) -> None:
        self.wait_for(self.at_prompt, timeout)

    def close(self) -> None:
        self.ended = True
        kill_child(self.child)


def kill_child(child: pexpect.spawn, extra_pids: Sequence[int] = ()) -> None:
    """Kills what is left: the program, every process under it, and `extra_pids` (processes
    a test learnt of that may have left the tree)."""
    procs: list[psutil.Process] = []
    for pid in extra_pids:
        with contextlib.suppress(psutil.Error):
            procs.append(psutil.Process(pid))
    if child.isalive():
        with contextlib.suppress(psutil.Error):
            procs += psutil.Process(child.pid).children(recursive=True)
        child.terminate(force=True)
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    if not child.closed:
        child.close(force=True)
