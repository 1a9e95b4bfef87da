"""The signals that end agentcli, each with its exit code. A hang-up (the terminal window
closed) is handled like SIGTERM: the turn is cancelled, the tools' process trees are
killed (they run in their own sessions, so the hang-up never reaches them) and the ending
is written to every output that is still there."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator

from agentcli.errors import ExitCode

ENDING_SIGNALS: dict[signal.Signals, int] = {
    signal.SIGINT: ExitCode.INTERRUPTED,
    signal.SIGTERM: ExitCode.TERMINATED,
    signal.SIGHUP: ExitCode.HANGUP,
}


def terminal_streams() -> list[int]:
    """stdout and stderr when they are the terminal (asked early: once the terminal has
    hung up, isatty() no longer says so)."""
    found = []
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            if os.isatty(stream.fileno()):
                found.append(stream.fileno())
    return found


def forget_lost_terminal(descriptors: list[int]) -> None:
    """After a hang-up the terminal is gone and writing to it fails (EIO): the standard
    streams that were the terminal now go to /dev/null, so the cleanup and the ending still
    run (a --output file or pipe keeps receiving them)."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for descriptor in descriptors:
        with contextlib.suppress(OSError):
            os.dup2(devnull, descriptor)
    os.close(devnull)


@contextlib.contextmanager
def ending_signals(
    on_signal: Callable[[int], object], signals: tuple[signal.Signals, ...] | None = None
) -> Iterator[None]:
    """Routes the ending signals (all of them, or `signals`) to `on_signal(exit_code)` while
    the block runs; a hang-up first lets go of the terminal."""
    loop = asyncio.get_running_loop()
    chosen = signals or tuple(ENDING_SIGNALS)
    terminal = terminal_streams()

    def handle(code: int) -> None:
        if code == ExitCode.HANGUP:
            forget_lost_terminal(terminal)
        on_signal(code)

    for number in chosen:
        loop.add_signal_handler(number, handle, ENDING_SIGNALS[number])
    try:
        yield
    finally:
        for number in chosen:
            loop.remove_signal_handler(number)
