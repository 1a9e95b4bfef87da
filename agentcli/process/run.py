"""Runs one command to completion under a timeout, reading its output incrementally into
bounded buffers, and leaves nothing running behind it."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from agentcli.process.capture import OutputCapture
from agentcli.process.tree import PipeReader, ProcessTree, start
from agentcli.records import dataclass, field


class Confined(Protocol):
    """A command the sandbox wrapped (agentcli.sandbox.confine makes them): what starts in
    its place, and the clean-up once it ended. Named here so that running a command does
    not depend on how it was confined."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...]
    profile: Any  # agentcli.sandbox.profiles.Profile

    @property
    def kept(self) -> bool: ...

    def leftovers(self) -> int | None: ...

    def finish(self) -> list[str]: ...


DRAIN_SECONDS = 0.3  # how long to keep reading after exit while orphans hold the pipe
TIMEOUT_EXIT_CODE = 124  # what timeout(1) reports


@dataclass(slots=True)
class CommandResult:
    exit_code: int
    duration: float
    timed_out: bool
    leftovers_killed: int
    capture: OutputCapture
    profile: str = "none"  # the sandbox profile it ran in
    restored: list[str] = field(default_factory=list)  # protected paths it changed, put back


class LiveTrees:
    """Every process tree a run (or a server's runs) has started and not yet stopped, so
    that all of them can be stopped when it ends, however it ends. The runner owns one and
    hands it to what starts processes (ToolContext.processes, JobManager)."""

    def __init__(self) -> None:
        self.trees: set[ProcessTree] = set()

    async def stop_all(self) -> None:
        import asyncio

        trees, self.trees = list(self.trees), set()
        await asyncio.gather(*(tree.stop(grace=0.5) for tree in trees), return_exceptions=True)


def start_tree(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    confined: Confined | None,
    live: LiveTrees | None = None,
) -> ProcessTree:
    """Starts `argv`, or its sandbox's command line when `confined`; kept in `live`, so the
    run's end stops it."""
    if confined is not None:
        tree = start(
            confined.argv,
            cwd=cwd,
            env=confined.env,
            pass_fds=confined.pass_fds,
            kept=confined.contains_tree,
        )
    else:
        tree = start(argv, cwd=cwd, env=env)
    if live is not None:
        live.trees.add(tree)
    return tree


async def run_command(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout: float,
    capture: OutputCapture,
    on_output: Callable[[OutputCapture], None] | None = None,
    confined: Confined | None = None,
    live: LiveTrees | None = None,
) -> CommandResult:
    """With `confined`, its command line (the sandbox's, wrapping `argv`) is what starts;
    `live`: the run's trees, which hold it while it runs."""
    import asyncio

    started = time.monotonic()
    try:
        tree = start_tree(argv, cwd=cwd, env=env, confined=confined, live=live)
    except BaseException:
        if confined is not None:
            confined.finish()  # it never ran: its protected paths' watch ends now
        raise

    def on_chunk(chunk: bytes) -> None:
        capture.feed(chunk)
        if on_output is not None:
            on_output(capture)

    assert tree.popen.stdout is not None
    reader = PipeReader(tree.popen.stdout, on_chunk)
    timed_out = False
    try:
        try:
            await asyncio.wait_for(tree.wait(), timeout)
        except TimeoutError:
            timed_out = True
            await tree.stop()
        # Keep what is still in the pipe, but do not wait on orphans that hold it open.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(reader.done), DRAIN_SECONDS)
        leftovers = tree.kill_leftovers()
        if confined is not None:
            leftovers += confined.leftovers() or 0
    except asyncio.CancelledError:
        await asyncio.shield(tree.stop())
        raise
    finally:
        reader.close()
        if live is not None:
            live.trees.discard(tree)
        capture.close()
        restored = confined.finish() if confined is not None else []
    code = TIMEOUT_EXIT_CODE if timed_out else tree.returncode
    return CommandResult(
        exit_code=code if code is not None else -1,
        duration=time.monotonic() - started,
        timed_out=timed_out,
        leftovers_killed=leftovers,
        capture=capture,
        profile=confined.profile.value if confined is not None else "none",
        restored=restored,
    )
