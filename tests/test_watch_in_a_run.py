"""A real agent's turns (the loop, the executor, tools run in parallel, the session file)
never edit a message once caches have seen it (agentcli.conversation.watch): so a long
thread's caches stay on their cheap path run after run. The agent is assembled as every
command assembles it, against the scripted model server on loopback."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentcli.assembly import resolve_settings
from agentcli.assembly.session import open_agent
from agentcli.conversation import watch
from agentcli.sessions.session import Session
from tests.scripted_server import Reply, ScriptedServer


def agent_settings(workspace: Path, base_url: str) -> Any:
    """A run's settings as the commands resolve them: an OpenAI-compatible model at
    `base_url`, `--yes`, JSONL output."""
    return resolve_settings(
        model="openai:m",
        base_url=base_url,
        cwd=str(workspace),
        system=None,
        max_steps=None,
        timeout=None,
        output="jsonl",
        yes=True,
        deny=False,
        debug=False,
        env={"OPENAI_API_KEY": "x"},
    )


def test_turns_with_tools_edit_no_watched_message(tmp_path: Path, isolated_agentcli_home: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (workspace / name).write_text(f"{name}\n" * 50)
    with ScriptedServer() as server:
        for turn in range(3):
            reads = [
                {"id": f"call_{turn}_{n}", "name": "read_file", "arguments": {"path": name}}
                for n, name in enumerate(("a.txt", "b.txt", "c.txt"))
            ]
            server.enqueue(Reply.tool_calls(reads), Reply.text([f"read them, turn {turn}"]))
        settings = agent_settings(workspace, server.base_url)
        session = Session.create(workspace, "openai:m")
        conversation = session.conversation

        async def turns() -> list[tuple[int, int]]:
            seen = []
            agent = open_agent(settings, session, [])  # in the loop: its parts are the loop's
            try:
                for turn in range(3):
                    await agent.run_turn(f"read the files, turn {turn}")
                    seen.append((watch.edits(), conversation.indexed().generation))
            finally:
                await agent.aclose()
            return seen

        before = watch.edits()
        seen = asyncio.run(turns())
    roles = [m.role for m in conversation.messages]
    assert roles.count("tool") == 9 and roles.count("user") == 3  # the turns did run
    assert all(m.watched for m in conversation.messages)  # the caches saw every message
    assert [edits for edits, _ in seen] == [before] * 3  # and none was edited since
    generations = {generation for _, generation in seen}
    assert len(generations) == 1  # nor was the index made again: the thread only grew
