"""A served run's end closes its session file off the event loop: the close waits for the
file's fsync, which a slow disk makes long, and the other runs (and /health) go on
meanwhile. Bound by events: the fsync below waits until a coroutine on the loop has run;
closed on the loop itself, it could not, and the wait would end at its bound instead."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest

from agentcli.assembly.session import open_agent
from agentcli.sessions.session import Session
from tests.test_watch_in_a_run import agent_settings


def test_an_agents_close_leaves_the_event_loop_free_while_the_file_syncs(
    tmp_path: Path, isolated_agentcli_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = agent_settings(workspace, "http://127.0.0.1:9/v1")  # never asked: no turn is run
    session = Session.create(workspace, "openai:m")
    syncing, released = threading.Event(), threading.Event()
    real_fsync = os.fsync
    held: list[bool] = []

    def slow_fsync(fd: int) -> None:
        if threading.current_thread().name != "session-fsync":  # the close's own fsync
            syncing.set()
            held.append(released.wait(timeout=20))  # True: the loop ran meanwhile
        real_fsync(fd)

    async def close() -> None:
        agent = open_agent(settings, session, [])
        monkeypatch.setattr(os, "fsync", slow_fsync)
        closing = asyncio.ensure_future(agent.aclose())
        while not syncing.is_set():  # the loop runs while the close waits for the disk
            await asyncio.sleep(0)
            if closing.done():
                break
        released.set()
        await closing

    asyncio.run(close())
    assert held == [True]
    assert session.writer is None  # closed
