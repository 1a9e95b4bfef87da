"""Subagents through the installed CLI against the scripted model server: the parent's
model calls `task`, the subagent (a fresh agent, its own context and tools) does the work,
and its final answer is the call's result. Its calls are decided by the same policy; its
tools are its definition's and never more; its events nest under the call in
`--output jsonl` and in the session file; --max-steps bounds the whole."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import RunCli
from tests.scripted_server import Reply, ScriptedServer


def agent_file(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def task(prompt: str, agent: str | None = None, call_id: str = "t1") -> Reply:
    args: dict = {"prompt": prompt}
    if agent is not None:
        args["subagent_type"] = agent
    return Reply.tool_calls([{"id": call_id, "name": "task", "arguments": args}])


def calls(*specs: tuple[str, dict], prefix: str = "c") -> Reply:
    return Reply.tool_calls(
        [
            {"id": f"{prefix}{i}", "name": name, "arguments": args}
            for i, (name, args) in enumerate(specs)
        ]
    )


def tool_results(request) -> dict[str, str]:
    return {
        m["tool_call_id"]: m["content"] for m in request.json["messages"] if m["role"] == "tool"
    }


READER = """---
name: reader
description: Reads files and reports what they say.
tools: Read, Grep
---
You read files for another agent and answer with what they say.
"""


def test_the_parent_hands_a_task_and_gets_the_subagents_answer(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    agent_file(cli_home / "agentcli" / "agents", "reader.md", READER)
    (workspace / "notes.txt").write_text("the launch is on Tuesday\n")
    server.enqueue(
        task("What does notes.txt say?", "reader"),
        calls(("read_file", {"path": "notes.txt"})),  # the subagent's first step
        Reply.text(["notes.txt says the launch is on Tuesday"]),  # its answer
        Reply.text(["The launch is on Tuesday."]),  # the parent's
    )
    result = run_cli(["run", "when is the launch?"], server=server)
    assert result.returncode == 0, result.stderr
    assert "The launch is on Tuesday." in result.stdout
    parent, child, child_again, parent_again = server.requests
    offered = [t["function"]["name"] for t in parent.json["tools"]]
    assert "task" in offered
    spec = next(t["function"] for t in parent.json["tools"] if t["function"]["name"] == "task")
    assert spec["parameters"]["properties"]["subagent_type"]["enum"] == [
        "reader",
        "general-purpose",
    ]
    assert "Reads files and reports what they say." in spec["description"]
    # the subagent: its own context (only the task), its own system prompt, its tools
    system, *rest = child.json["messages"]
    assert "You read files for another agent" in system["content"]
    assert [m["role"] for m in rest] == ["user"]
    assert rest[0]["content"] == "What does notes.txt say?"
    assert sorted(t["function"]["name"] for t in child.json["tools"]) == [
        "read_file",
        "search_content",
    ]
    assert "the launch is on Tuesday" in tool_results(child_again)["c0"]
    # the parent sees the subagent's final answer as the call's result, nothing else
    assert tool_results(parent_again) == {"t1": "notes.txt says the launch is on Tuesday"}
    assert [m["role"] for m in parent_again.json["messages"][1:]] == [
        "user",
        "assistant",
        "tool",
    ]
