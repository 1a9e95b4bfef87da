"""Subagents through the installed CLI against the scripted model server: the parent's
model calls `task`, the subagent (a fresh agent, its own context and tools) does the work,
and its final answer is the call's result. Its calls are decided by the same policy; its
tools are its definition's and never more; its events nest under the call in
`--output jsonl` and in the session file; --max-steps bounds the whole."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from tests.conftest import RunCli
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_process import sleeper_token


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


def test_a_call_outside_the_subagents_tools_is_refused_even_with_yes(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    agent_file(cli_home / "agentcli" / "agents", "reader.md", READER)
    server.enqueue(
        task("Write a file.", "reader"),
        calls(("write_file", {"path": "made.txt", "content": "x"}), ("task", {"prompt": "p"})),
        Reply.text(["I could not."]),
        Reply.text(["done"]),
    )
    result = run_cli(["run", "--yes", "go"], server=server)
    assert result.returncode == 4, result.stderr  # refused by the subagent's tools: counted
    refused = tool_results(server.requests[2])
    for call_id, tool in (("c0", "write_file"), ("c1", "task")):
        assert refused[call_id] == (
            "Error: the subagent reader lets only its tools run (read_file, search_content); "
            f"this {tool} call is not among them"
        )
    assert not (workspace / "made.txt").exists()
    assert tool_results(server.requests[3]) == {"t1": "I could not."}


def test_a_subagents_command_is_denied_under_deny_as_the_parents_would_be(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    """The built-in general-purpose subagent has the session's tools, under its policy:
    with --deny the command that would ask is refused, and the run's exit code says a call
    was denied (4), as for the parent's own calls."""
    server.enqueue(
        task("Make a file."),
        calls(("run_shell", {"command": "touch made.txt"})),
        Reply.text(["It was denied."]),
        Reply.text(["done"]),
    )
    result = run_cli(["run", "--deny", "-o", "json", "go"], server=server)
    assert result.returncode == 4, result.stderr
    assert tool_results(server.requests[2])["c0"].startswith("denied: ")
    assert not (workspace / "made.txt").exists()
    doc = json.loads(result.stdout)
    assert [call["name"] for call in doc["toolCalls"]] == ["task"]  # the parent's own
    assert doc["toolCalls"][0]["result"] == "It was denied."


def jsonl(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def test_the_subagents_events_nest_under_the_call_in_jsonl_and_the_session(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    (workspace / "notes.txt").write_text("hello\n")
    server.enqueue(
        task("Read notes.txt."),
        calls(("read_file", {"path": "notes.txt"})),
        Reply.text(["It says hello."]),
        Reply.text(["done"]),
    )
    result = run_cli(["run", "-o", "jsonl", "go"], server=server)
    assert result.returncode == 0, result.stderr
    events = jsonl(result.stdout)
    starts = [e for e in events if e["type"] == "RUN_STARTED"]
    assert len(starts) == 2
    parent, child = starts
    assert "parentRunId" not in parent
    assert child["parentRunId"] == parent["runId"]
    assert child["threadId"] == parent["threadId"]
    assert child["metadata"] == {"toolCallId": "t1", "subagent": "general-purpose"}
    first = events.index(child)
    last = next(
        i
        for i, e in enumerate(events)
        if e["type"] == "RUN_FINISHED" and e["runId"] == child["runId"]
    )
    call_end = next(i for i, e in enumerate(events) if e.get("toolCallId") == "t1")
    result_at = next(
        i
        for i, e in enumerate(events)
        if e["type"] == "TOOL_CALL_RESULT" and e["toolCallId"] == "t1"
    )
    assert call_end < first < last < result_at  # nested inside the parent's call
    inside = events[first + 1 : last + 1]
    assert {e["metadata"]["runId"] for e in inside} == {child["runId"]}
    kinds = [e["type"] for e in inside]
    assert "TOOL_CALL_RESULT" in kinds and "TEXT_MESSAGE_CONTENT" in kinds
    outside = events[:first] + events[last + 1 :]
    assert all("runId" not in (e.get("metadata") or {}) for e in outside)
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["runId"] == parent["runId"]

    # the session file records the same events under the call; resumed, the conversation
    # is the parent's alone (the subagent's answer is the call's result, nothing more)
    [path] = (cli_home / "agentcli" / "data" / "sessions").glob("*.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    recorded = [r["e"] for r in records if r.get("t") == "event"]
    assert any(e.get("parentRunId") == parent["runId"] for e in recorded)
    nested = [e for e in recorded if (e.get("metadata") or {}).get("runId") == child["runId"]]
    assert any(e["type"] == "TOOL_CALL_RESULT" and "hello" in e["content"] for e in nested)
    messages = [r["m"] for r in records if r.get("t") == "message"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    server.enqueue(Reply.text(["again"]))
    assert run_cli(["run", "--continue", "and now?"], server=server).returncode == 0
    resumed = server.requests[-1].json["messages"]
    assert [m["role"] for m in resumed[1:]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert resumed[3]["content"] == "It says hello."


def test_max_steps_bounds_the_parent_and_its_subagents_together(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    step = calls(("list_directory", {"path": "."}))
    server.enqueue(task("Look around."), step, step, step, Reply.text(["never"]))
    result = run_cli(["run", "--max-steps", "3", "-o", "json", "go"], server=server)
    assert result.returncode == 3, result.stderr
    assert len(server.requests) == 3  # one of the parent's, two of the subagent's
    doc = json.loads(result.stdout)
    assert doc["status"] == "max_steps"
    assert "stopped after 3 steps (with its subagents' steps)" in doc["error"]
    said = doc["toolCalls"][0]["error"]
    assert "the run reached --max-steps" in said


def test_a_definitions_own_step_limit_stops_it_and_the_parent_goes_on(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    agent_file(
        cli_home / "agentcli" / "agents",
        "brief.md",
        "---\nname: brief\ndescription: Short looks.\nmaxTurns: 1\n---\nBe brief.\n",
    )
    server.enqueue(
        task("Look.", "brief"),
        calls(("list_directory", {"path": "."}), prefix="s"),
        Reply.text(["the parent goes on"]),
    )
    result = run_cli(["run", "go"], server=server)
    assert result.returncode == 0, result.stderr
    said = tool_results(server.requests[2])["t1"]
    assert said.startswith(
        "Error: the subagent brief stopped before it finished: it used the 1 step its "
        "definition gives it"
    )


def test_a_subagent_cannot_start_another(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    server.enqueue(
        task("Delegate."),
        calls(("task", {"prompt": "deeper"})),
        Reply.text(["I had to do it myself."]),
        Reply.text(["done"]),
    )
    result = run_cli(["run", "--yes", "go"], server=server)
    assert result.returncode == 0, result.stderr
    child = server.requests[1].json
    assert "task" not in [t["function"]["name"] for t in child["tools"]]
    assert "read_file" in [t["function"]["name"] for t in child["tools"]]
    assert (
        "cannot start another subagent here (agents.max_depth is 1)"
        in (tool_results(server.requests[2])["c0"])
    )


CLAUDE_AGENT = """---
name: code-reviewer
description: Reviews code for quality. Use PROACTIVELY after code changes.
tools: Read, Grep, Glob
model: sonnet
color: cyan
---
You are a senior code reviewer. Read the changed files and list the problems.
"""


def test_claude_codes_agent_file_works_unchanged_once_the_project_is_trusted(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    agent_file(workspace, ".claude/agents/code-reviewer.md", CLAUDE_AGENT)
    server.enqueue(Reply.text(["ok"]))
    assert run_cli(["run", "go"], server=server).returncode == 0
    spec = next(t for t in server.requests[0].json["tools"] if t["function"]["name"] == "task")
    assert spec["function"]["parameters"]["properties"]["subagent_type"]["enum"] == [
        "general-purpose"
    ]  # an untrusted project's definitions are not read

    assert run_cli(["trust"]).returncode == 0
    server.enqueue(task("Review app.py", "code-reviewer"), Reply.text(["no problems"]))
    server.enqueue(Reply.text(["done"]))
    result = run_cli(["run", "review"], server=server)
    assert result.returncode == 0, result.stderr
    child = server.requests[2].json
    assert child["model"] == server.requests[1].json["model"]  # `sonnet`: the session's
    assert "You are a senior code reviewer." in child["messages"][0]["content"]
    assert sorted(t["function"]["name"] for t in child["tools"]) == [
        "read_file",
        "search_content",
        "search_files",
    ]
    assert tool_results(server.requests[3]) == {"t1": "no problems"}


def test_opencodes_agent_file_takes_tools_away(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    agent_file(
        workspace,
        ".opencode/agent/planner.md",
        "---\ndescription: Plans without changing anything.\nmode: subagent\n"
        "tools:\n  write: false\n  edit: false\n  bash: false\n---\nPlan only.\n",
    )
    agent_file(
        workspace, ".opencode/agent/build.md", "---\ndescription: Builds.\nmode: primary\n---\n"
    )
    assert run_cli(["trust"]).returncode == 0
    server.enqueue(
        task("Plan.", "planner"),
        calls(("write_file", {"path": "x.txt", "content": "x"})),
        Reply.text(["planned"]),
        Reply.text(["done"]),
    )
    assert run_cli(["run", "--yes", "go"], server=server).returncode == 4  # write refused
    spec = next(t for t in server.requests[0].json["tools"] if t["function"]["name"] == "task")
    assert spec["function"]["parameters"]["properties"]["subagent_type"]["enum"] == [
        "planner",
        "general-purpose",
    ]  # `mode: primary` is not a subagent
    offered = [t["function"]["name"] for t in server.requests[1].json["tools"]]
    assert "read_file" in offered
    assert not {"write_file", "edit_file", "run_shell", "task"} & set(offered)
    assert "lets only its tools run" in tool_results(server.requests[2])["c0"]
    assert not (workspace / "x.txt").exists()


# --- on a terminal ------------------------------------------------------------------------

PTY_TIMEOUT = 20


def running(argv: list[str]) -> list[int]:
    """The processes running `argv` (a zombie no reaper took yet counts as ended; the
    sandbox's PID namespace hides their own numbers from them, not from /proc here)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")[:-1]
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if [part.decode(errors="replace") for part in cmdline] == argv and state not in "ZX":
            found.append(int(entry.name))
    return found


def test_ctrl_c_stops_the_subagent_and_its_parent_together(
    pty_cli, server: ScriptedServer, workspace: Path
) -> None:
    """Ctrl-C while the subagent's command runs: the command's process is killed, the
    subagent's run and the parent's end cancelled (in that order), and agentcli exits 130."""
    token = sleeper_token()
    server.enqueue(
        task("Wait a while."),
        calls(("run_shell", {"command": f"echo started; exec sleep {token}"})),
        Reply.text(["never"]),
        Reply.text(["never"]),
    )
    child = pty_cli(["run", "--yes", "-o", "jsonl", "go"], timeout=PTY_TIMEOUT)
    # The call's arguments ("echo started; …") are printed before the command runs: wait
    # for the process itself (an event), not for the word.
    deadline = time.monotonic() + PTY_TIMEOUT
    while not running(["sleep", token]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running(["sleep", token])
    child.sendintr()
    child.expect(pexpect_eof())
    shown = (child.before or "").replace("^C", "")  # the terminal echoes Ctrl-C
    lines = [line for line in shown.splitlines() if line.startswith("{")]
    child.close()
    assert child.exitstatus == 130
    assert running(["sleep", token]) == []
    finished = [json.loads(line) for line in lines if '"RUN_FINISHED"' in line]
    assert [e["outcome"]["type"] for e in finished] == ["cancelled", "cancelled"]
    assert "runId" in finished[0]["metadata"]  # the subagent's, then the parent's
    assert "metadata" not in finished[1]
    assert len(server.requests) == 2  # nothing was asked after Ctrl-C


def pexpect_eof():
    import pexpect

    return pexpect.EOF


def test_a_person_asked_sees_that_the_subagent_asks(
    pty_cli, server: ScriptedServer, workspace: Path
) -> None:
    server.enqueue(
        task("Make a file."),
        calls(("write_file", {"path": "made.txt", "content": "x"})),
        Reply.text(["The person said no."]),
        Reply.text(["done"]),
    )
    child = pty_cli(["run", "go"], timeout=PTY_TIMEOUT, width=160)
    child.expect_exact("subagent general-purpose: Allow write_file?")
    child.expect_exact("choose [")
    child.send("n")
    child.expect_exact("reason for the model")
    child.send("\r")
    child.expect_exact("done")
    child.expect(pexpect_eof())
    child.close()
    assert not (workspace / "made.txt").exists()
    assert "the user denied it" in tool_results(server.requests[2])["c0"]
    assert tool_results(server.requests[3]) == {"t1": "The person said no."}


def test_the_terminal_shows_a_line_for_each_of_the_subagents_calls(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    agent_file(cli_home / "agentcli" / "agents", "reader.md", READER)
    (workspace / "notes.txt").write_text("one\ntwo\n")
    server.enqueue(
        task("Read it.", "reader"),
        calls(("read_file", {"path": "notes.txt"}), ("write_file", {"path": "x", "content": ""})),
        Reply.text(["SUBAGENT-TEXT"]),
        Reply.text(["PARENT-TEXT"]),
    )
    result = run_cli(["run", "go"], server=server, env={"NO_COLOR": "1"})
    assert result.returncode == 4, result.stderr  # write_file refused
    assert result.stdout.strip() == "PARENT-TEXT"  # the subagent's text is its result only
    lines = result.stderr.splitlines()
    assert any(line.startswith("  ↳ reader  ✓ read_file: ") for line in lines)
    assert any(line.startswith("  ↳ reader  ✗ write_file denied: ") for line in lines)
    assert any("✓ task: reader answered after 2 steps" in line for line in lines)


def test_agents_max_depth_lets_subagents_nest_or_removes_the_task_tool(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[agents]\nmax_depth = 0\n", encoding="utf-8")
    server.enqueue(Reply.text(["ok"]))
    assert run_cli(["run", "go"], server=server).returncode == 0
    assert "task" not in [t["function"]["name"] for t in server.requests[0].json["tools"]]

    config.write_text("[agents]\nmax_depth = 2\n", encoding="utf-8")
    server.enqueue(
        task("Delegate."),
        task("Deeper.", call_id="t2"),  # the subagent starts one of its own
        Reply.text(["from the deepest"]),
        Reply.text(["passed on"]),
        Reply.text(["done"]),
    )
    result = run_cli(["run", "-o", "jsonl", "go"], server=server)
    assert result.returncode == 0, result.stderr
    top_request, middle_request, deepest_request = server.requests[1:4]
    offered = [
        [t["function"]["name"] for t in request.json["tools"]]
        for request in (top_request, middle_request, deepest_request)
    ]
    assert ["task" in names for names in offered] == [True, True, False]
    starts = [e for e in jsonl(result.stdout) if e["type"] == "RUN_STARTED"]
    top, middle, deepest = starts
    assert middle["parentRunId"] == top["runId"]
    assert deepest["parentRunId"] == middle["runId"]
    assert deepest["metadata"]["toolCallId"] == "t2"
    assert tool_results(server.requests[4]) == {"t2": "from the deepest"}
    assert tool_results(server.requests[5]) == {"t1": "passed on"}


def test_a_commands_allowed_tools_narrow_the_subagents_it_starts(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    command = cli_home / "agentcli" / "commands" / "look.md"
    command.parent.mkdir(parents=True)
    command.write_text("---\nallowed-tools: task, Read\n---\nLook around.\n", encoding="utf-8")
    server.enqueue(
        task("Write it."),
        calls(("write_file", {"path": "made.txt", "content": "x"})),
        Reply.text(["refused"]),
        Reply.text(["done"]),
    )
    assert run_cli(["run", "--yes", "/look"], server=server).returncode == 4  # refused: not allowed
    said = tool_results(server.requests[2])["c0"]
    assert "/look lets only its allowed-tools run (task, read_file)" in said
    assert not (workspace / "made.txt").exists()


def test_timeout_bounds_the_parent_and_its_subagent_together(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    token = sleeper_token()
    server.enqueue(
        task("Wait."),
        calls(("run_shell", {"command": f"exec sleep {token}"})),
        Reply.text(["never"]),
    )
    result = run_cli(["run", "--yes", "--timeout", "2", "-o", "jsonl", "go"], server=server)
    assert result.returncode == 3, result.stderr
    events = jsonl(result.stdout)
    child = next(e for e in events if e["type"] == "RUN_STARTED" and "parentRunId" in e)
    [ended] = [e for e in events if e["type"] == "RUN_FINISHED"]
    assert ended["runId"] == child["runId"] and ended["outcome"] == {"type": "cancelled"}
    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "timeout"
    assert running(["sleep", token]) == []
    assert len(server.requests) == 2


def test_two_subagents_at_once_keep_their_events_apart(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    both = Reply.tool_calls(
        [
            {"id": "t1", "name": "task", "arguments": {"prompt": "one"}},
            {"id": "t2", "name": "task", "arguments": {"prompt": "two"}},
        ]
    )
    server.enqueue(both, Reply.text(["answered"]), Reply.text(["answered"]), Reply.text(["ok"]))
    result = run_cli(["run", "-o", "jsonl", "go"], server=server)
    assert result.returncode == 0, result.stderr
    events = jsonl(result.stdout)
    top, *children = [e for e in events if e["type"] == "RUN_STARTED"]
    assert sorted(c["metadata"]["toolCallId"] for c in children) == ["t1", "t2"]
    assert {c["parentRunId"] for c in children} == {top["runId"]}
    runs = {c["runId"] for c in children}
    assert len(runs) == 2
    for run in runs:
        own = [e for e in events if (e.get("metadata") or {}).get("runId") == run]
        assert [e["type"] for e in own][-1] == "RUN_FINISHED"
        assert sum(e["type"] == "TEXT_MESSAGE_CONTENT" for e in own) >= 1
    assert tool_results(server.requests[3]) == {"t1": "answered", "t2": "answered"}


def test_a_definitions_model_takes_its_requests(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    agent_file(
        cli_home / "agentcli" / "agents",
        "small.md",
        "---\ndescription: Small jobs.\nmodel: openai:tiny-model\n---\nBe quick.\n",
    )
    server.enqueue(task("Quick.", "small"), Reply.text(["quick answer"]), Reply.text(["ok"]))
    result = run_cli(["run", "--model", "openai:big-model", "go"], server=server)
    assert result.returncode == 0, result.stderr
    models = [request.json["model"] for request in server.requests]
    assert models == ["big-model", "tiny-model", "big-model"]


def test_a_subagents_changes_are_kept_in_its_parents_turn_and_rewound_with_it(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    notes = workspace / "notes.txt"
    before = notes.read_text()
    server.enqueue(
        task("Rewrite the notes."),
        calls(("write_file", {"path": "notes.txt", "content": "by the subagent\n"})),
        Reply.text(["rewritten"]),
        Reply.text(["done"]),
    )
    assert run_cli(["run", "--yes", "go"], server=server).returncode == 0
    assert notes.read_text() == "by the subagent\n"
    [session] = (cli_home / "agentcli" / "data" / "sessions").glob("*.jsonl")
    kept = list((cli_home / "agentcli" / "data" / "checkpoints").iterdir())
    assert [path.name for path in kept] == [session.stem]  # the parent's, none of its own
    rewound = run_cli(["sessions", "rewind", session.stem, "--to", "1", "--files"])
    assert rewound.returncode == 0, rewound.stdout + rewound.stderr
    assert notes.read_text() == before


def test_tools_list_shows_the_task_tool(run_cli: RunCli, cli_home: Path) -> None:
    agent_file(cli_home / "agentcli" / "agents", "reader.md", READER)
    result = run_cli(["tools", "list", "--json"])
    assert result.returncode == 0, result.stderr
    [row] = [row for row in json.loads(result.stdout) if row["name"] == "task"]
    assert row["source"] == "builtin" and row["risk"].startswith("low")
    assert "- reader: Reads files and reports what they say." in row["description"]


# A public collection of Claude Code subagents (.ci/run installs it from npm and names its
# agents/ folder); the test skips without it.
COLLECTION = os.environ.get("AGENTCLI_TEST_AGENTS_COLLECTION", "")


@pytest.mark.skipif(not COLLECTION, reason="AGENTCLI_TEST_AGENTS_COLLECTION is not set")
def test_a_public_collection_of_claude_code_subagents_works_as_it_is(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    files = sorted(Path(COLLECTION).glob("*.md"))
    assert files
    shutil.copytree(COLLECTION, workspace / ".claude" / "agents")
    assert run_cli(["trust"]).returncode == 0
    reviewer = workspace / ".claude" / "agents" / "principal-code-reviewer.md"
    body = reviewer.read_text(encoding="utf-8").split("---", 2)[2].strip()
    server.enqueue(
        task("Review app.py.", "principal-code-reviewer"), Reply.text(["fine"]), Reply.text(["ok"])
    )
    result = run_cli(["run", "review it"], server=server)
    assert result.returncode == 0, result.stderr
    spec = next(t for t in server.requests[0].json["tools"] if t["function"]["name"] == "task")
    names = spec["function"]["parameters"]["properties"]["subagent_type"]["enum"]
    assert names == [*(path.stem for path in files), "general-purpose"]  # none skipped
    assert body[:200] in server.requests[1].json["messages"][0]["content"]
    assert tool_results(server.requests[2]) == {"t1": "fine"}


def test_a_definition_naming_a_model_agentcli_cannot_use_is_the_calls_error(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    agent_file(
        cli_home / "agentcli" / "agents",
        "odd.md",
        "---\ndescription: Odd.\nmodel: nosuch:model\n---\nOdd.\n",
    )
    server.enqueue(task("Go.", "odd"), Reply.text(["ok"]))
    result = run_cli(["run", "go"], server=server)
    assert result.returncode == 0, result.stderr
    said = tool_results(server.requests[1])["t1"]
    assert "the subagent odd (~/agentcli/agents) names the model 'nosuch:model'" in said
    assert len(server.requests) == 2  # nothing was sent for the subagent
