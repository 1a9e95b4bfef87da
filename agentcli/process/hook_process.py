"""Runs one hook program: its command line by the shell, one JSON object on its stdin, its
stdout and stderr kept apart (the answer and the reason), in its own session (process
group) so that a timeout or a cancelled turn stops everything it started."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from agentcli.process.tree import MARKER_VARIABLE, ProcessTree
from agentcli.records import dataclass

MAX_OUTPUT = 1024 * 1024  # bytes of stdout, and of stderr, a hook's answer may use


@dataclass(frozen=True, slots=True)
class HookProcess:
    exit_code: int | None  # None: it could not start, or was killed at its timeout
    stdout: str
    stderr: str
    timed_out: bool = False
    duration: float = 0.0
    not_started: str | None = None  # why it did not start


def shell() -> str:
    """The shell Claude Code runs hooks with, bash, where there is one; else sh."""
    return shutil.which("bash") or "/bin/sh"


async def run_hook_process(
    command: str, stdin: bytes, *, cwd: Path, env: Mapping[str, str], timeout: float
) -> HookProcess:
    import asyncio

    started = time.monotonic()
    marker = os.urandom(8).hex()
    try:
        popen = subprocess.Popen(
            [shell(), "-c", command],
            cwd=cwd,
            env={**env, MARKER_VARIABLE: marker},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as error:
        return HookProcess(None, "", "", not_started=error.strerror or str(error))
    tree = ProcessTree(popen, marker)
    talking = asyncio.ensure_future(asyncio.to_thread(_communicate, popen, stdin))
    timed_out = False
    try:
        try:
            await asyncio.wait_for(asyncio.shield(tree.wait()), timeout)
        except TimeoutError:
            timed_out = True
        if timed_out:
            await tree.stop(grace=0.5)  # its group and every descendant
        else:
            tree.kill_leftovers()  # what it left running holds its pipes open
        stdout, stderr = await talking
    except asyncio.CancelledError:
        await asyncio.shield(tree.stop(grace=0.5))
        raise
    return HookProcess(
        None if timed_out else popen.returncode,
        _text(stdout),
        _text(stderr),
        timed_out=timed_out,
        duration=time.monotonic() - started,
    )


def _communicate(popen: subprocess.Popen[bytes], stdin: bytes) -> tuple[bytes, bytes]:
    """Writes stdin (a hook that does not read it is fine), reads both pipes to their end."""
    with contextlib.suppress(BrokenPipeError, OSError):
        stdout, stderr = popen.communicate(stdin)
        return stdout[:MAX_OUTPUT], stderr[:MAX_OUTPUT]
    return b"", b""


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")
